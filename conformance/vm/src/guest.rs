//! One guest: boots QEMU on a kernel and the suite's initramfs, watches its report port,
//! bounds it with a timeout, and turns what came back into a [`GuestResult`]. A guest
//! that hangs, panics, or writes garbage is `errored` with the reason; it never takes
//! the other guests down.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::kernels::GuestPlan;
use super::serial::{self, Port};

/// Which users the suite runs as inside the guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Users {
    /// Root only.
    Root,
    /// The unprivileged user (uid 1000) only.
    Unprivileged,
    /// Both, one after the other in the same guest.
    Both,
}

impl Users {
    /// The names the init takes.
    pub fn names(self) -> &'static [&'static str] {
        match self {
            Users::Root => &["root"],
            Users::Unprivileged => &["unprivileged"],
            Users::Both => &["root", "unprivileged"],
        }
    }

    fn arg(self) -> &'static str {
        match self {
            Users::Root => "root",
            Users::Unprivileged => "unprivileged",
            Users::Both => "both",
        }
    }
}

/// Everything needed to boot one guest.
#[derive(Debug, Clone)]
pub struct Boot {
    /// What to boot and what it must show.
    pub plan: GuestPlan,
    /// The kernel image.
    pub vmlinuz: PathBuf,
    /// The initramfs.
    pub initramfs: PathBuf,
    /// Guest memory.
    pub memory_mib: u32,
    /// The bound on the whole guest.
    pub timeout: Duration,
    /// Who runs the suite.
    pub users: Users,
    /// The options of the inner `gatehouse-conform run` (without the report options).
    pub run_args: Vec<String>,
    /// `NAME=VALUE` pairs the guest exports before the suite runs.
    pub env: Vec<String>,
    /// `tcg` or `kvm`.
    pub accel: String,
    /// The QEMU executable (`qemu-system-x86_64`, or `GATEHOUSE_QEMU`).
    pub qemu: PathBuf,
    /// Where the console log and the report port's bytes go.
    pub dir: PathBuf,
}

/// One user's suite run inside a guest.
#[derive(Debug, Clone)]
pub struct UserRun {
    /// `root` or `unprivileged`.
    pub user: String,
    /// The inner run's exit code.
    pub exit: Option<i32>,
    /// The canonical JSON report.
    pub report: Option<Value>,
    /// The JUnit report.
    pub junit: Option<Vec<u8>>,
    /// Why there is no usable report, if there is none.
    pub problem: Option<String>,
}

/// How one guest ended.
#[derive(Debug, Clone)]
pub struct GuestResult {
    /// What was booted.
    pub plan: GuestPlan,
    /// The kernel release the guest printed.
    pub release: Option<String>,
    /// Until the init said it booted.
    pub boot: Option<Duration>,
    /// Until the guest stopped.
    pub total: Duration,
    /// Why the guest as a whole is errored (hang, panic, garbage, wrong environment).
    pub error: Option<String>,
    /// Each user's run.
    pub users: Vec<UserRun>,
    /// The console log.
    pub console: PathBuf,
}

/// Progress reported while a guest runs.
pub trait Watch: Sync {
    /// One line about `label`.
    fn line(&self, label: &str, text: &str);
}

/// The QEMU command line for `boot`.
pub fn qemu_command(boot: &Boot, console: &Path, port: &Path) -> Command {
    let mut append = vec![
        "console=ttyS0".to_string(),
        "panic=-1".into(),
        "oops=panic".into(),
        "quiet".into(),
        format!("gatehouse.users={}", boot.users.arg()),
        format!(
            "gatehouse.args={}",
            base64(lines(&boot.run_args).as_bytes())
        ),
    ];
    if !boot.env.is_empty() {
        append.push(format!("gatehouse.env={}", boot.env.join(",")));
    }
    if !boot.plan.sysctls.is_empty() {
        append.push(format!("gatehouse.sysctl={}", boot.plan.sysctls.join(",")));
    }
    if !boot.plan.cmdline.is_empty() {
        append.push(boot.plan.cmdline.clone());
    }
    // Extra kernel parameters for experiments on the guests' cost (benches/README.md).
    if let Some(extra) = std::env::var("GATEHOUSE_VM_APPEND")
        .ok()
        .filter(|e| !e.trim().is_empty())
    {
        append.push(extra);
    }
    let mut cmd = Command::new(&boot.qemu);
    cmd.args(["-accel", &boot.accel, "-M", "q35", "-nic", "none"]);
    if boot.accel == "kvm" {
        cmd.args(["-cpu", "host"]);
    }
    cmd.args(["-nodefaults", "-no-reboot", "-display", "none", "-smp", "1"])
        .args(["-m", &boot.memory_mib.to_string()])
        .arg("-serial")
        .arg(format!("file:{}", console.display()))
        .arg("-serial")
        .arg(format!("file:{}", port.display()))
        .arg("-kernel")
        .arg(&boot.vmlinuz)
        .arg("-initrd")
        .arg(&boot.initramfs)
        .arg("-append")
        .arg(append.join(" "))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// Boots the guest, waits for it within its timeout, and judges what came back.
pub fn run(boot: &Boot, watch: &dyn Watch) -> GuestResult {
    let label = boot.plan.label();
    let stem = format!("{}-{}", boot.plan.kernel, boot.plan.variant);
    let console = boot.dir.join(format!("{stem}.console.log"));
    let port_path = boot.dir.join(format!("{stem}.port"));
    let mut result = GuestResult {
        plan: boot.plan.clone(),
        release: None,
        boot: None,
        total: Duration::ZERO,
        error: None,
        users: Vec::new(),
        console: console.clone(),
    };
    for p in [&console, &port_path] {
        let _ = std::fs::remove_file(p);
    }
    let started = Instant::now();
    let mut child = match qemu_command(boot, &console, &port_path).spawn() {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(format!("cannot start {}: {e}", boot.qemu.display()));
            return result;
        }
    };
    watch.line(&label, &format!("booting ({} accel)", boot.accel));
    let mut seen = 0;
    let (port, stopped) = loop {
        let bytes = std::fs::read(&port_path).unwrap_or_default();
        let exited = child.try_wait().ok().flatten();
        let port = serial::parse(&bytes, exited.is_some());
        for event in &port.events[seen..] {
            if let Some(release) = event.strip_prefix("booted ") {
                result.boot = Some(started.elapsed());
                result.release = Some(release.to_string());
                watch.line(
                    &label,
                    &format!(
                        "booted {release} in {:.1} s",
                        started.elapsed().as_secs_f64()
                    ),
                );
            } else if event.starts_with("suite ") || event.starts_with("error ") {
                watch.line(&label, event);
            }
        }
        seen = port.events.len();
        if let Some(status) = exited {
            break (port, Stopped::Exited(status));
        }
        if port.garbage.is_some() {
            kill(&mut child);
            break (port, Stopped::Garbage);
        }
        if started.elapsed() > boot.timeout {
            kill(&mut child);
            break (port, Stopped::Timeout);
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    result.total = started.elapsed();
    let qemu_stderr = read_stderr(&mut child);
    result.error = judge(boot, &port, stopped, &qemu_stderr, &console);
    result.users = users(boot, &port);
    if result.error.is_none() {
        if let Some(u) = result.users.iter().find(|u| u.problem.is_some()) {
            result.error = Some(format!(
                "{}: {}",
                u.user,
                u.problem.clone().unwrap_or_default()
            ));
        }
    }
    result
}

fn judge(
    boot: &Boot,
    port: &Port,
    stopped: Stopped,
    qemu_stderr: &str,
    console: &Path,
) -> Option<String> {
    let tail = || console_tail(console, 3);
    match stopped {
        Stopped::Timeout => {
            return Some(format!(
                "hung: no power-off within {} s; last console lines: {}",
                boot.timeout.as_secs(),
                tail()
            ))
        }
        Stopped::Garbage => {
            return Some(format!(
                "garbage on the report port: {}",
                port.garbage.clone().unwrap_or_default()
            ))
        }
        Stopped::Exited(status) if !status.success() => {
            return Some(format!("qemu exited with {status}: {}", qemu_stderr.trim()))
        }
        Stopped::Exited(_) => {}
    }
    if let Some(g) = &port.garbage {
        return Some(format!("garbage on the report port: {g}"));
    }
    if let Some(e) = port.events_of("error").next() {
        return Some(format!("the guest's init: {e}"));
    }
    if !port.has("booted") {
        return Some(format!("never booted; last console lines: {}", tail()));
    }
    if !port.has("done") {
        return Some(format!(
            "stopped before the suite finished (panic?); last console lines: {}",
            tail()
        ));
    }
    // The environment must be the declared one: a wrong image never turns into skips.
    let want = if boot.plan.user_namespaces {
        "yes"
    } else {
        "no"
    };
    for probe in port.events_of("probe") {
        if let Some(abi) = probe.strip_prefix("landlock=") {
            if abi != boot.plan.landlock_abi.to_string() {
                return Some(format!(
                    "kernels.toml declares landlock_abi = {} for {}, but the guest's kernel answers {abi}",
                    boot.plan.landlock_abi,
                    boot.plan.label()
                ));
            }
            continue;
        }
        if !probe.ends_with(&format!("userns={want}")) {
            return Some(format!(
                "kernels.toml declares user_namespaces = {} for {}, but the guest's probe says {probe}",
                boot.plan.user_namespaces,
                boot.plan.label()
            ));
        }
    }
    None
}

fn users(boot: &Boot, port: &Port) -> Vec<UserRun> {
    boot.users
        .names()
        .iter()
        .map(|&user| {
            let exit = port
                .events_of("suite")
                .find_map(|e| e.strip_prefix(&format!("user={user} exit=")))
                .and_then(|c| c.parse().ok());
            let junit = port.files.get(&format!("{user}.xml")).cloned();
            let json = match port.files.get(&format!("{user}.json.gz")) {
                Some(gz) => Some(gunzip(gz, REPORT_MAX)),
                None => port.files.get(&format!("{user}.json")).cloned().map(Ok),
            };
            let (report, problem) = match json {
                Some(Err(e)) => (None, Some(format!("the gzipped report: {e}"))),
                None => (
                    None,
                    Some(match exit {
                        Some(code) => format!(
                            "the inner run exited {code} without a report: {}",
                            runner_lines(boot, user)
                        ),
                        None => "the suite never ran".to_string(),
                    }),
                ),
                Some(Ok(bytes)) => match serde_json::from_slice::<Value>(&bytes) {
                    Ok(v) if v.get("scenarios").is_some_and(Value::is_array) => (Some(v), None),
                    Ok(_) => (None, Some("the report has no scenarios".into())),
                    Err(e) => (None, Some(format!("the report is not JSON: {e}"))),
                },
            };
            UserRun {
                user: user.to_string(),
                exit,
                report,
                junit,
                problem,
            }
        })
        .collect()
}

/// The largest report a guest may send, unpacked (the whole suite's is about 8 MB).
const REPORT_MAX: u64 = 256 << 20;

/// Unpacks a gzipped report, refusing one that unpacks beyond `max` bytes.
fn gunzip(gz: &[u8], max: u64) -> Result<Vec<u8>, GunzipError> {
    let mut out = Vec::new();
    let mut reader = flate2::read::GzDecoder::new(gz).take(max + 1);
    reader.read_to_end(&mut out)?;
    if out.len() as u64 > max {
        return Err(GunzipError::TooLarge { max });
    }
    Ok(out)
}

/// Why a guest's gzipped report could not be unpacked.
#[derive(Debug, thiserror::Error)]
enum GunzipError {
    /// It is not gzip, or is cut off.
    #[error(transparent)]
    Corrupt(#[from] std::io::Error),
    /// It unpacks beyond the bound.
    #[error("it unpacks to more than {max} bytes")]
    TooLarge {
        /// The bound.
        max: u64,
    },
}

/// How the guest's QEMU stopped, or why the runner stopped it.
#[derive(Debug)]
enum Stopped {
    /// QEMU exited by itself.
    Exited(std::process::ExitStatus),
    /// The report port carried garbage; QEMU was killed.
    Garbage,
    /// No power-off within the timeout; QEMU was killed.
    Timeout,
}

/// The inner runner's own lines (`gatehouse-conform: ...`) from the console.
fn runner_lines(boot: &Boot, _user: &str) -> String {
    let stem = format!("{}-{}", boot.plan.kernel, boot.plan.variant);
    let text = std::fs::read(boot.dir.join(format!("{stem}.console.log"))).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<_> = text
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        // The runner's own lines, and the implementation's stderr it quotes after them
        // (`  stderr| ...`): the cause of a crash at the handshake is there.
        .filter(|l| l.starts_with("gatehouse-conform:") || l.starts_with("  stderr| "))
        .map(str::trim)
        .collect();
    if lines.is_empty() {
        "see the console log".into()
    } else {
        lines.join(" | ")
    }
}

fn console_tail(console: &Path, n: usize) -> String {
    let text = std::fs::read(console).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<_> = text
        .lines()
        .map(|l| l.trim_end_matches('\r').trim())
        .filter(|l| !l.is_empty())
        .collect();
    let start = lines.len().saturating_sub(n);
    format!("{:?}", &lines[start..])
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn read_stderr(child: &mut Child) -> String {
    let mut s = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut s);
    }
    let _ = child.wait();
    s
}

/// One argument per line, each line ended.
fn lines(args: &[String]) -> String {
    args.iter().map(|a| format!("{a}\n")).collect()
}

/// Standard base64, for the kernel command line.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Quiet;
    impl Watch for Quiet {
        fn line(&self, _: &str, _: &str) {}
    }

    /// Boots a fake QEMU: a shell script that writes `port` (printf format) to the
    /// second serial file, then runs `then`.
    fn boot_fake(port: &str, then: &str, timeout: Duration) -> GuestResult {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let qemu = dir.path().join("qemu");
        std::fs::write(
            &qemu,
            format!(
                "#!/bin/sh\nn=0\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = -serial ]; then n=$((n+1)); [ $n = 2 ] && port=${{2#file:}}; fi\n  shift\ndone\nprintf '{port}' > \"$port\"\n{then}\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&qemu, std::fs::Permissions::from_mode(0o755)).unwrap();
        let boot = Boot {
            plan: GuestPlan {
                kernel: "6.1".into(),
                variant: "base".into(),
                cmdline: String::new(),
                sysctls: vec![],
                landlock_abi: 2,
                user_namespaces: true,
                fence_backend: "native".into(),
                decision_tier: true,
                leaves_out: Vec::new(),
            },
            vmlinuz: "vmlinuz".into(),
            initramfs: "initramfs".into(),
            memory_mib: 64,
            timeout,
            users: Users::Root,
            run_args: vec![],
            env: vec![],
            accel: "tcg".into(),
            qemu,
            dir: dir.path().to_path_buf(),
        };
        let r = run(&boot, &Quiet);
        drop(dir);
        r
    }

    const LONG: Duration = Duration::from_secs(600);

    #[test]
    fn a_complete_report_is_taken() {
        let body = r#"{"scenarios":[],"summary":{}}"#;
        let port = format!(
            "GATEHOUSE booted 6.1.0\\nGATEHOUSE probe user=root userns=yes\\nGATEHOUSE suite user=root exit=0\\nGATEHOUSE file root.json {}\\n{body}\\nGATEHOUSE end root.json\\nGATEHOUSE done\\n",
            body.len()
        );
        let r = boot_fake(&port, "exit 0", LONG);
        assert_eq!(r.error, None);
        assert_eq!(r.users[0].exit, Some(0));
        assert!(r.users[0].report.is_some());
    }

    #[test]
    fn a_guest_that_stops_before_done_is_errored() {
        let r = boot_fake("GATEHOUSE booted 6.1.0\\n", "exit 0", LONG);
        assert!(r
            .error
            .unwrap()
            .contains("stopped before the suite finished"));
    }

    #[test]
    fn garbage_on_the_port_errors_the_guest_and_stops_it() {
        // The fake would sleep for the whole timeout: garbage must end it at once.
        let r = boot_fake(
            "GATEHOUSE booted x\\n\\0\\377junk\\n",
            "exec sleep 600",
            LONG,
        );
        assert!(
            r.error.unwrap().contains("garbage"),
            "not reported as garbage"
        );
        assert!(r.total < LONG);
    }

    #[test]
    fn a_gzipped_report_is_unpacked_within_its_bound_and_garbage_is_named() {
        use std::io::Write as _;
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(br#"{"scenarios": []}"#).unwrap();
        let gz = z.finish().unwrap();
        assert_eq!(gunzip(&gz, REPORT_MAX).unwrap(), br#"{"scenarios": []}"#);
        assert!(matches!(
            gunzip(&gz, 5),
            Err(GunzipError::TooLarge { max: 5 })
        ));
        assert!(gunzip(b"not gzip at all", REPORT_MAX).is_err());
    }

    #[test]
    fn a_guest_that_hangs_is_killed_at_its_timeout() {
        let r = boot_fake(
            "GATEHOUSE booted x\\n",
            "exec sleep 600",
            Duration::from_secs(1),
        );
        assert!(r.error.unwrap().starts_with("hung"));
    }

    #[test]
    fn a_probe_that_contradicts_kernels_toml_fails_loudly() {
        let port =
            "GATEHOUSE booted 6.1.0\\nGATEHOUSE probe user=root userns=no\\nGATEHOUSE done\\n";
        let r = boot_fake(port, "exit 0", LONG);
        assert!(r.error.unwrap().contains("declares user_namespaces = true"));
    }

    #[test]
    fn a_landlock_abi_that_contradicts_kernels_toml_fails_loudly() {
        let port = "GATEHOUSE booted 6.1.0\\nGATEHOUSE probe user=root userns=yes\\nGATEHOUSE probe landlock=0\\nGATEHOUSE done\\n";
        let r = boot_fake(port, "exit 0", LONG);
        assert!(r.error.unwrap().contains("declares landlock_abi = 2"));
        let port = "GATEHOUSE booted 6.1.0\\nGATEHOUSE probe landlock=2\\nGATEHOUSE done\\n";
        let r = boot_fake(port, "exit 0", LONG);
        assert!(!r.error.unwrap_or_default().contains("landlock_abi"));
    }

    #[test]
    fn base64_matches_the_standard_alphabet_and_padding() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"--filter\nfence/"), "LS1maWx0ZXIKZmVuY2Uv");
    }
}
