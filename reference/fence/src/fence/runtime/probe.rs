//! The probe: before any fence is claimed, a real jail of the chosen backend runs two legs
//! (a forbidden write outside must fail, an allowed write inside must succeed) plus the
//! truncate and chmod legs where the posture would claim them, and the launcher checks the
//! files from outside. The helper's own report is informative; the files are the judge.
//! Results are cached per process and per backend configuration.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::fence::coverage::Coverage;
use crate::fence::error::FenceError;
use crate::fence::plan::Enforcement;
use crate::fence::posture::Posture;

/// Name of the file the legs attack in the outside directory.
pub const VICTIM: &str = "victim";
const VICTIM_TEXT: &str = "gatehouse probe: must survive\n";
pub(crate) const TIMEOUT: Duration = Duration::from_secs(20);

/// One leg's result, as seen from inside.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leg {
    /// The operation succeeded.
    pub succeeded: bool,
    /// The error when it did not.
    pub error: Option<String>,
}

impl Leg {
    fn of(r: std::io::Result<()>) -> Leg {
        match r {
            Ok(()) => Leg {
                succeeded: true,
                error: None,
            },
            Err(e) => Leg {
                succeeded: false,
                error: Some(e.to_string()),
            },
        }
    }
}

/// The legs' report, printed by the helper as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegReport {
    /// Create a file in the outside directory.
    pub write_outside: Leg,
    /// Create a file in the writable directory.
    pub write_inside: Leg,
    /// `truncate(2)` the outside victim to zero.
    pub truncate_outside: Leg,
    /// `chmod(2)` the outside victim.
    pub chmod_outside: Leg,
    /// What the helper enforced.
    pub enforcement: Enforcement,
}

/// The `probe` action of the helper: runs the legs and prints their report as one JSON
/// line; returns the helper's exit code.
pub fn report_legs(outside: &Path, inside: &Path, enforcement: Enforcement) -> i32 {
    let report = run_legs(outside, inside, "", enforcement);
    match serde_json::to_string(&report) {
        Ok(json) => {
            println!("{json}");
            0
        }
        Err(e) => {
            eprintln!("gatehouse jail: probe report: {e}");
            crate::exit::SETUP_FAILED
        }
    }
}

/// The victim of the legs tagged `tag` (each preflight in a shared outside directory has
/// its own, [`PreflightDirs`]).
pub fn victim_name(tag: &str) -> String {
    format!("{VICTIM}{tag}")
}

/// The file the forbidden write leg tagged `tag` tries to create.
pub fn written_name(tag: &str) -> String {
    format!("written-from-inside{tag}")
}

/// Run the legs in this (fenced) process, against the victim tagged `tag`.
pub fn run_legs(outside: &Path, inside: &Path, tag: &str, enforcement: Enforcement) -> LegReport {
    use crate::sys::legs;
    let write = |p: &Path| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(p)
            .map(drop)
    };
    LegReport {
        write_outside: Leg::of(write(&outside.join(written_name(tag)))),
        write_inside: Leg::of(write(&inside.join("probe-inside"))),
        truncate_outside: Leg::of(legs::truncate(&outside.join(victim_name(tag)), 0)),
        chmod_outside: Leg::of(legs::chmod(&outside.join(victim_name(tag)), 0o600)),
        enforcement,
    }
}

/// What the probe established.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// The helper's report.
    pub report: LegReport,
    /// Whether truncate outside went through (expected only where not covered).
    pub truncate_went_through: bool,
    /// Whether chmod outside went through (expected only where not covered).
    pub chmod_went_through: bool,
}

/// The probes this process ran, by key: the verdict, or the failure as it was reported.
type Probed = HashMap<String, Result<Verdict, std::sync::Arc<FenceError>>>;

fn cache() -> &'static Mutex<Probed> {
    static CACHE: OnceLock<Mutex<Probed>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Run the probe for `key` unless this process already did; `run` spawns the jail on a
/// policy with the given workspace, scratch and read-only outside directory.
pub fn verify<F>(key: &str, claimed: &Posture, run: F) -> Result<Verdict, FenceError>
where
    F: FnOnce(&Path, &Path, &Path) -> Result<std::process::Command, FenceError>,
{
    let backend = claimed.backend.to_string();
    if let Some(hit) = lock(cache()).get(key) {
        return hit.clone().map_err(|first| FenceError::ProbeFailed {
            backend: backend.clone(),
            leg: "cached".into(),
            detail: first.to_string(),
        });
    }
    let result = probe_once(claimed, run);
    let stored = match &result {
        Ok(v) => Ok(v.clone()),
        // The first failure, kept as it was reported: every later caller is told it.
        Err(FenceError::ProbeFailed {
            backend,
            leg,
            detail,
        }) => Err(std::sync::Arc::new(FenceError::ProbeFailed {
            backend: backend.clone(),
            leg: leg.clone(),
            detail: detail.clone(),
        })),
        Err(other) => Err(std::sync::Arc::new(FenceError::ProbeFailed {
            backend: backend.clone(),
            leg: "setup".into(),
            detail: other.to_string(),
        })),
    };
    lock(cache()).insert(key.to_string(), stored);
    result
}

fn probe_once<F>(claimed: &Posture, run: F) -> Result<Verdict, FenceError>
where
    F: FnOnce(&Path, &Path, &Path) -> Result<std::process::Command, FenceError>,
{
    let backend = claimed.backend.to_string();
    let failed = |leg: &str, detail: String| FenceError::ProbeFailed {
        backend: backend.clone(),
        leg: leg.to_string(),
        detail,
    };
    let dir = tempdir().map_err(|e| failed("setup", e.to_string()))?;
    let (ws, scratch, outside) = (dir.join("ws"), dir.join("scratch"), dir.join("outside"));
    for d in [&ws, &scratch, &outside] {
        std::fs::create_dir_all(d).map_err(|e| failed("setup", e.to_string()))?;
    }
    let victim = outside.join(VICTIM);
    std::fs::write(&victim, VICTIM_TEXT).map_err(|e| failed("setup", e.to_string()))?;
    let mode_before = mode(&victim);
    let outcome = (|| {
        let cmd = run(&ws, &scratch, &outside)?;
        let out = crate::fence::launch::output_bounded(cmd, TIMEOUT)
            .map_err(|e| failed("spawn", e.to_string()))?;
        let report: LegReport = serde_json::from_slice(&out.stdout).map_err(|e| {
            failed(
                "report",
                format!(
                    "{e} (exit {:?}; stderr: {})",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            )
        })?;
        judge(claimed, report, &ws, &outside, "", mode_before)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

/// Judge the legs' report against the files, seen from outside the jail: `inside` is the
/// writable directory the allowed leg wrote in, `outside` the read-only one holding the
/// victim, whose mode was `mode_before`. The helper's report is informative; the files
/// decide.
pub fn judge(
    claimed: &Posture,
    report: LegReport,
    inside: &Path,
    outside: &Path,
    tag: &str,
    mode_before: u32,
) -> Result<Verdict, FenceError> {
    let backend = claimed.backend.to_string();
    let failed = |leg: &str, detail: String| FenceError::ProbeFailed {
        backend: backend.clone(),
        leg: leg.to_string(),
        detail,
    };
    let victim = outside.join(victim_name(tag));
    let ws = inside;
    // The judge is the file system, seen from outside.
    let wrote_outside = std::fs::symlink_metadata(outside.join(written_name(tag))).is_ok();
    let wrote_inside = ws.join("probe-inside").exists();
    let text = read_victim(&victim).unwrap_or_default();
    let truncated = text != VICTIM_TEXT;
    let chmodded = mode(&victim) != mode_before;
    if !wrote_inside || !report.write_inside.succeeded {
        return Err(failed(
            "write-inside",
            format!(
                "an allowed write inside the workspace failed: {}",
                report.write_inside.error.clone().unwrap_or_default()
            ),
        ));
    }
    let claims = |c: Coverage| !claimed.not_covered.contains(&c);
    if claims(Coverage::Write) && (wrote_outside || report.write_outside.succeeded) {
        return Err(failed(
            "write-outside",
            "a forbidden write outside succeeded".into(),
        ));
    }
    if claims(Coverage::Truncate) && truncated {
        return Err(failed(
            "truncate-outside",
            "truncate outside emptied the file".into(),
        ));
    }
    if claims(Coverage::Metadata) && chmodded {
        return Err(failed(
            "chmod-outside",
            "chmod outside changed the mode".into(),
        ));
    }
    let e = &report.enforcement;
    if let Some(abi) = claimed.landlock_abi {
        match &e.landlock {
            Some(l) if l.abi == abi && l.status == "fully-enforced" => {}
            other => {
                return Err(failed(
                    "landlock",
                    format!("claimed ABI {abi}, helper reported {other:?}"),
                ))
            }
        }
    }
    if claims(Coverage::Capabilities)
        && claimed.layers.iter().any(|l| l.name == "capabilities")
        && !e.capabilities_dropped
    {
        return Err(failed(
            "capabilities",
            "capabilities were not verified dropped".into(),
        ));
    }
    Ok(Verdict {
        report,
        truncate_went_through: truncated,
        chmod_went_through: chmodded,
    })
}

/// The network leg of the native jail, judged from outside like the others: where the
/// posture claims `network` (a namespace of the jail's own), the jail's `init`, which runs
/// the legs and then the command, must not be in the launcher's network namespace. Its
/// namespace is the init's own step (`join-network`); one that failed silently would
/// leave it on the host's network. An init that cannot be seen fails the leg. Returns the
/// init's pid where it looked.
#[cfg(target_os = "linux")]
pub fn judge_network(claimed: &Posture, init: u32) -> Result<Option<u32>, FenceError> {
    use crate::sys::ns;
    if claimed.not_covered.contains(&Coverage::Network) {
        return Ok(None);
    }
    let failed = |detail: String| FenceError::ProbeFailed {
        backend: claimed.backend.to_string(),
        leg: "network".into(),
        detail,
    };
    match ns::shares_network_namespace(init) {
        Ok(false) => Ok(Some(init)),
        Ok(true) => Err(failed(
            "the jail's init is in the launcher's network namespace".into(),
        )),
        Err(e) => Err(failed(format!(
            "the jail's network namespace cannot be seen: {e}"
        ))),
    }
}

/// The init of a jail whose helper `helper_pid` stays outside it: the helper's one child.
/// Any other count fails the network leg.
#[cfg(target_os = "linux")]
pub fn init_of_helper(claimed: &Posture, helper_pid: u32) -> Result<u32, FenceError> {
    match crate::sys::ns::children_of(helper_pid).as_slice() {
        [init] => Ok(*init),
        other => Err(FenceError::ProbeFailed {
            backend: claimed.backend.to_string(),
            leg: "network".into(),
            detail: format!(
                "the jail's helper has {} children, not its init alone",
                other.len()
            ),
        }),
    }
}

/// The victim's text, read without waiting: opened non-blocking, so that a lease jailed
/// code took on it answers at once instead of stalling the launcher for the kernel's
/// `lease-break-time`; a victim that is no regular file, or longer than its text, is
/// read as damaged.
fn read_victim(victim: &Path) -> std::io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(victim)?;
    let m = f.metadata()?;
    if !m.is_file() || m.len() > VICTIM_TEXT.len() as u64 {
        return Ok(String::new());
    }
    let mut text = String::new();
    f.take(VICTIM_TEXT.len() as u64).read_to_string(&mut text)?;
    Ok(text)
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.permissions().mode())
        .unwrap_or(0)
}

/// A fresh private directory under the system temp dir.
pub(crate) fn tempdir() -> std::io::Result<std::path::PathBuf> {
    let base = std::env::temp_dir();
    loop {
        let p = base.join(format!("gatehouse{}", fresh_tag()));
        match std::fs::create_dir(&p) {
            Ok(()) => {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700))?;
                return Ok(p);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// How old a directory of a process that is gone must be before [`sweep_stale`] takes it.
pub(crate) const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(600);

/// Removes the directories [`tempdir`] made in `base` for processes that no longer exist
/// (killed before they could clean up: `SIGKILL`, a crash point), this user's only, when
/// untouched for `older_than`. A name is `gatehouse-<pid>-<n>-<nanos>`; a directory whose
/// process still runs in this PID namespace, or whose name or owner is another's, is left.
/// Best effort: an error leaves the directory as it was.
pub(crate) fn sweep_stale(base: &Path, older_than: std::time::Duration) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    let me = rustix::process::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("gatehouse-"))
            .and_then(|rest| {
                let mut parts = rest.split('-');
                let pid = parts.next()?.parse::<u32>().ok()?;
                let n = parts.next()?.parse::<u64>().is_ok();
                let nanos = parts.next()?.parse::<u64>().is_ok();
                (n && nanos && parts.next().is_none()).then_some(pid)
            })
        else {
            continue;
        };
        if Path::new("/proc").join(pid.to_string()).exists() {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age >= older_than);
        if meta.is_dir() && meta.uid() == me && old {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The legs of one command's own jail travel in its plan.
pub use crate::fence::plan::Preflight;

/// The byte that lets a checked command start; anything else, or the channel closing, means
/// the jail was refused and nothing runs.
pub const GO: u8 = b'1';

/// The directories of one preflight, on the launcher's side.
///
/// Where the backend covers metadata (a mount tree of the jail's own: native, bubblewrap)
/// the outside directory is this user's shared one, kept between commands
/// ([`shared_outside`]), and the preflight has a victim of its own in it, named by a tag
/// no other preflight uses: creating and removing a file costs far less than a directory
/// on the host (about 0.15 ms on ext4), and concurrent preflights never touch each other's
/// files. Elsewhere (Landlock alone, where jailed code can `chmod` what the user owns) it
/// is a fresh directory of its own, removed on drop.
#[derive(Debug)]
pub struct PreflightDirs {
    /// A fresh outside directory of this preflight's own, removed on drop.
    fresh: Option<PathBuf>,
    /// The read-only directory holding the victim (bound into the jail read-only).
    pub outside: PathBuf,
    /// The tag of this preflight's victim and forbidden file in `outside`.
    pub tag: String,
    /// The writable directory: the scratch directory itself, fresh for this command (no
    /// directory of its own, which would cost a `mkdir` and a `rmdir` per command).
    pub inside: PathBuf,
    /// Where the launcher sees `inside`: the host path, or for a scratch that exists only
    /// in the jail the same path through `/proc/PID/root` of the jail's helper
    /// ([`PreflightDirs::seen_through`]).
    inside_seen: PathBuf,
    mode_before: u32,
}

impl PreflightDirs {
    /// The outside directory with a fresh victim, and `inside` the fresh `scratch`. A
    /// shared outside directory only where `shared` (the backend covers metadata). A
    /// scratch that exists only in the jail (`in_jail`) is created fresh there and seen
    /// once the jail's helper runs ([`PreflightDirs::seen_through`]).
    pub fn create(scratch: &Path, in_jail: bool, shared: bool) -> std::io::Result<PreflightDirs> {
        let place = if shared { shared_outside().ok() } else { None };
        let (fresh, outside, tag) = match place {
            Some(dir) => (None, dir, fresh_tag()),
            None => {
                let dir = tempdir()?;
                let outside = std::fs::canonicalize(&dir)?;
                (Some(dir), outside, String::new())
            }
        };
        let inside = if in_jail {
            scratch.to_path_buf()
        } else {
            if scratch.join("probe-inside").exists() {
                return Err(std::io::Error::other(
                    "the scratch directory is not fresh (probe-inside exists)",
                ));
            }
            std::fs::canonicalize(scratch)?
        };
        // The victim: never over an existing file, never through a link; its mode is
        // noted, which the judge expects unchanged.
        let victim = outside.join(victim_name(&tag));
        write_victim(&victim)?;
        Ok(PreflightDirs {
            fresh,
            mode_before: mode(&victim),
            inside_seen: inside.clone(),
            inside,
            outside,
            tag,
        })
    }

    /// Look at the writable directory through the root of process `pid` (the jail's
    /// helper, which the jail's `pivot_root` moved into the jail's tree): the file system
    /// of the jail, seen from outside it, judges the allowed write.
    pub fn seen_through(&mut self, pid: u32) {
        let rel = self.inside.strip_prefix("/").unwrap_or(&self.inside);
        self.inside_seen = Path::new(&format!("/proc/{pid}/root")).join(rel);
    }

    /// Judge the helper's report (see [`judge`]). The outside directory must still be
    /// private to this user: jailed code that could change its mode (Landlock alone
    /// leaves `chmod` to the kernel's ownership check) would make the forbidden write fail
    /// by permissions rather than by the fence.
    pub fn judge(&self, claimed: &Posture, report: LegReport) -> Result<Verdict, FenceError> {
        let verdict = if private_dir(&self.outside) {
            judge(
                claimed,
                report,
                &self.inside_seen,
                &self.outside,
                &self.tag,
                self.mode_before,
            )
        } else {
            Err(FenceError::ProbeFailed {
                backend: claimed.backend.to_string(),
                leg: "write-outside".into(),
                detail: format!(
                    "the outside directory {} changed its owner or mode during the probe",
                    self.outside.display()
                ),
            })
        };
        let _ = std::fs::remove_file(self.inside_seen.join("probe-inside"));
        verdict
    }
}

impl Drop for PreflightDirs {
    fn drop(&mut self) {
        match &self.fresh {
            Some(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            None => {
                let _ = std::fs::remove_file(self.outside.join(victim_name(&self.tag)));
                let _ = std::fs::remove_file(self.outside.join(written_name(&self.tag)));
            }
        }
        if self.inside_seen == self.inside {
            let _ = std::fs::remove_file(self.inside.join("probe-inside"));
        }
    }
}

/// A tag no other preflight (or [`tempdir`]) on this machine uses at the same time: the
/// pid, a counter and the clock.
fn fresh_tag() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "-{}-{}-{nanos}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A fresh victim at `victim` (never an existing file, never through a link), with its
/// text and mode 0644 whatever the umask.
fn write_victim(victim: &Path) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(VICTIM_MODE)
        .custom_flags(libc::O_NOFOLLOW)
        .open(victim)?;
    f.write_all(VICTIM_TEXT.as_bytes())?;
    f.set_permissions(std::fs::Permissions::from_mode(VICTIM_MODE))
}

/// Name of the shared outside directory in this user's fence directory.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const SHARED_OUTSIDE: &str = "probe";
/// The victim's mode.
const VICTIM_MODE: u32 = 0o644;

/// This user's shared outside directory (`probe` in [`crate::fence::user_dir::own_dir`]),
/// made when missing; refused unless it is a directory of this user's with mode 0700.
#[cfg(target_os = "linux")]
fn shared_outside() -> std::io::Result<PathBuf> {
    shared_outside_in(&crate::fence::user_dir::own_dir()?)
}

/// [`shared_outside`] in the directory `base`.
#[cfg(target_os = "linux")]
fn shared_outside_in(base: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = base.join(SHARED_OUTSIDE);
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    if private_dir(&dir) {
        Ok(dir)
    } else {
        Err(std::io::Error::other(format!(
            "{}: not a private directory of this user",
            dir.display()
        )))
    }
}

#[cfg(not(target_os = "linux"))]
fn shared_outside() -> std::io::Result<PathBuf> {
    Err(std::io::Error::other("no shared outside directory here"))
}

/// Whether `dir` is a directory (not a link) of this process's user with mode 0700
/// exactly.
fn private_dir(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let me = rustix::process::geteuid().as_raw();
    std::fs::symlink_metadata(dir)
        .map(|m| m.is_dir() && m.uid() == me && m.mode() & 0o7777 == 0o700)
        .unwrap_or(false)
}

/// The helper's side of a preflight: run the legs in this fully fenced process, hand the
/// report out, and wait for the launcher's verdict. `Err` means the command must not run;
/// `Ok` holds the report's channel, on which the init tells the command's end
/// ([`tell_exit`]).
#[cfg(target_os = "linux")]
pub fn preflight_in_jail(
    p: &Preflight,
    enforcement: &Enforcement,
) -> Result<std::os::fd::OwnedFd, PreflightError> {
    use std::io::{Read, Write};
    let channel = |which: &'static str| move |source| PreflightError::Channel { which, source };
    let report = run_legs(&p.outside, &p.inside, &p.tag, enforcement.clone());
    // One line: serde_json never writes a raw newline inside a document.
    let mut json = serde_json::to_vec(&report).map_err(PreflightError::Report)?;
    json.push(b'\n');
    let out = crate::sys::handoff::adopt(p.report_fd).map_err(channel("report"))?;
    let go = crate::sys::handoff::adopt(p.go_fd).map_err(channel("go"))?;
    crate::sys::mark::mark("legs-done");
    let mut out = std::fs::File::from(out);
    out.write_all(&json).map_err(channel("report"))?;
    let mut answer = [0u8; 1];
    let mut go = std::fs::File::from(go);
    match go.read(&mut answer) {
        Ok(1) if answer[0] == GO => Ok(out.into()),
        _ => Err(PreflightError::Refused),
    }
}

/// Why the helper's preflight ends without running the command.
#[cfg(target_os = "linux")]
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    /// The legs' report cannot be written as JSON.
    #[error("probe report: {0}")]
    Report(serde_json::Error),
    /// A channel to the launcher (`report` or `go`) failed.
    #[error("{which} channel: {source}")]
    Channel {
        /// Which channel.
        which: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// The launcher did not say go.
    #[error("the launcher refused this jail after its probe; nothing runs")]
    Refused,
}

/// The init's last word on the report's channel: the code it leaves with (the command's),
/// one line after the report, so that the launcher learns it once the init is gone
/// without waiting for the helper outside, which may still be tearing the jail's mount
/// tree down ([`read_exit`]).
#[cfg(target_os = "linux")]
pub fn tell_exit(report: std::os::fd::OwnedFd, code: i32) {
    // Without SIGPIPE: where nobody listens any more (a launcher that waits for the
    // helper instead), this process must still leave with the command's code.
    let _ = rustix::net::send(
        &report,
        format!("exit {code}\n").as_bytes(),
        rustix::net::SendFlags::NOSIGNAL,
    );
}

/// The init's code once [`tell_exit`] has written it, taken from the channel
/// (`Some(Some(code))`); `Some(None)` where the channel ended or holds anything else, a
/// part of the line included, since the init writes it in one `send` (then only the
/// init's end counts); `None` while there is nothing to read.
#[cfg(target_os = "linux")]
pub fn said_exit(report: &std::os::fd::OwnedFd) -> Option<Option<i32>> {
    let mut buf = [0u8; 32];
    let flags = rustix::net::RecvFlags::DONTWAIT | rustix::net::RecvFlags::PEEK;
    let got = match rustix::net::recv(report, &mut buf, flags) {
        Ok((0, _)) => return Some(None),
        Ok((n, _)) => n,
        Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => return None,
        Err(_) => return Some(None),
    };
    if !b"exit ".starts_with(&buf[..got.min(5)]) {
        return Some(None);
    }
    if buf[..got].last() != Some(&b'\n') {
        return Some(None);
    }
    Some(read_exit(report))
}

/// The init's code as [`tell_exit`] wrote it, read once the init is gone: what is in the
/// channel then is all there will be. `None` for anything but one such line (an init
/// killed before it could say).
#[cfg(target_os = "linux")]
pub fn read_exit(report: &std::os::fd::OwnedFd) -> Option<i32> {
    let mut buf = [0u8; 32];
    let mut got = 0;
    while got < buf.len() {
        match rustix::net::recv(report, &mut buf[got..], rustix::net::RecvFlags::DONTWAIT) {
            Ok((0, _)) => break,
            Ok((n, _)) => got += n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        }
    }
    let line = std::str::from_utf8(&buf[..got]).ok()?;
    let code = line.strip_prefix("exit ")?.strip_suffix('\n')?;
    code.parse().ok().filter(|c| (0..=255).contains(c))
}

/// The data behind `m`, even if a thread panicked while it held the lock: every update
/// made under these locks is one push, one field or one swap, never left half done.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;

    #[test]
    fn a_dead_process_s_old_directory_is_swept_and_nothing_else() {
        let base = tempfile::tempdir().unwrap();
        // A process that has ended and been reaped: its pid names no process now.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let live = std::process::id();
        let make = |name: &str| {
            let p = base.path().join(name);
            std::fs::create_dir_all(p.join("home")).unwrap();
            p
        };
        let stale = make(&format!("gatehouse-{dead}-0-1"));
        let alive = make(&format!("gatehouse-{live}-0-2"));
        let other = make(&format!("gatehouse-scratch-{dead}-3"));
        let file = base.path().join(format!("gatehouse-{dead}-1-4"));
        std::fs::write(&file, "not a directory").unwrap();
        // Fresh ones stay (a session may be opening); a zero age takes every old one.
        sweep_stale(base.path(), std::time::Duration::from_secs(3600));
        assert!(stale.exists());
        sweep_stale(base.path(), std::time::Duration::ZERO);
        if std::path::Path::new("/proc")
            .join(dead.to_string())
            .exists()
        {
            return; // the pid was reused at once: nothing can be said
        }
        assert!(!stale.exists(), "{}", stale.display());
        assert!(alive.exists() && other.exists() && file.exists());
    }

    /// The init's last word: read once it is gone, as written; nothing else counts as a
    /// code (an init killed before it said leaves the helper's code to be waited for).
    #[test]
    fn the_inits_exit_is_read_as_it_told_it() {
        for (said, read) in [
            (Some(0), Some(0)),
            (Some(3), Some(3)),
            (Some(137), Some(137)),
            (None, None),
        ] {
            let h = crate::sys::handoff::channel_from_child().unwrap();
            if let Some(code) = said {
                tell_exit(h.child_end, code);
            } else {
                drop(h.child_end);
            }
            assert_eq!(read_exit(&h.parent_end), read, "said {said:?}");
        }
        for junk in [
            &b"exit 3"[..],
            b"exit -1\n",
            b"exit 300\n",
            b"3\n",
            b"exit 3\nmore",
        ] {
            let h = crate::sys::handoff::channel_from_child().unwrap();
            rustix::io::write(&h.child_end, junk).unwrap();
            drop(h.child_end);
            assert_eq!(read_exit(&h.parent_end), None, "{junk:?}");
        }
    }

    /// The word the launcher goes on with before the init is gone: one whole `exit N`
    /// line. Half a line, an ended channel or anything else sends the launcher back to
    /// waiting for the init itself.
    #[test]
    fn the_inits_word_counts_only_whole() {
        let h = crate::sys::handoff::channel_from_child().unwrap();
        assert_eq!(said_exit(&h.parent_end), None, "nothing yet");
        tell_exit(h.child_end, 42);
        assert_eq!(said_exit(&h.parent_end), Some(Some(42)));
        for junk in [
            &b"exit 4"[..],
            b"3\n",
            b"exit -1\n",
            b"exit 300\n",
            b"exit 3\nmore",
            b"ex1t 3\n",
        ] {
            let h = crate::sys::handoff::channel_from_child().unwrap();
            rustix::io::write(&h.child_end, junk).unwrap();
            drop(h.child_end);
            assert_ne!(said_exit(&h.parent_end), Some(Some(3)), "{junk:?}");
            assert_eq!(read_exit(&h.parent_end), None, "{junk:?}");
        }
        let h = crate::sys::handoff::channel_from_child().unwrap();
        drop(h.child_end);
        assert_eq!(said_exit(&h.parent_end), Some(None), "ended without a word");
    }

    #[test]
    fn the_shared_outside_directory_must_be_private_to_its_user() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let dir = shared_outside_in(base.path()).unwrap();
        assert!(private_dir(&dir));
        // What jailed code that may chmod (Landlock alone) would do to blind the
        // forbidden write: refused, not repaired behind the judge's back.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o500)).unwrap();
        assert!(shared_outside_in(base.path()).is_err());
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        // Each preflight's victim is its own and fresh; a leftover never stands in.
        let tag = fresh_tag();
        let victim = dir.join(victim_name(&tag));
        write_victim(&victim).unwrap();
        assert!(write_victim(&victim).is_err());
        assert_eq!(read_victim(&victim).unwrap(), VICTIM_TEXT);
        assert_ne!(tag, fresh_tag());
    }
}
