//! The helper side of the fence: `gatehouse __jail` reads its plan and applies every step
//! in order in one linear function ([`enter`]); [`crate::helper`] then performs the plan's
//! action (a command run by [`exec`], the plane's executor, or the probe's legs).
//!
//! The helper is a fresh exec of the gatehouse binary, single-threaded, with an environment
//! holding nothing but the plan: no secret of the agent's process is ever in it. A native
//! checked command's jail has no helper: its init is cloned straight from a
//! single-threaded launcher into its namespaces once the plan is made, the plan in its
//! memory from the start ([`run_early`], [`crate::sys::ns::clone_init`]); other native
//! one-shot jails in such a launcher get a helper forked from it ([`run_forked`],
//! [`crate::sys::ns::fork_instead_of_exec`]).
//! Either holds a copy of the launcher's memory: the jail's init is made non-dumpable
//! before any jailed code runs, so no jailed process can read or trace it.

use std::ffi::OsString;
#[cfg(target_os = "linux")]
use std::path::{Path, PathBuf};

use crate::fence::plan::{Enforcement, Plan};

/// The environment variable carrying the plan (JSON) to the helper. An environment variable
/// rather than an argument: `/proc/PID/environ` is readable only by the same user, the
/// command line by everyone.
pub const PLAN_ENV: &str = "GATEHOUSE_JAIL_PLAN";

pub use crate::exit::{
    CANNOT_EXECUTE as EXIT_CANNOT_EXECUTE, NOT_FOUND as EXIT_NOT_FOUND,
    SETUP_FAILED as EXIT_SETUP_FAILED,
};

/// A step that failed, with the object it concerned.
#[derive(Debug)]
pub struct StepError {
    /// Index of the step in the plan.
    pub index: usize,
    /// The step's name.
    pub step: &'static str,
    /// What failed.
    pub detail: String,
}

impl std::fmt::Display for StepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "step {} ({}): {}", self.index, self.step, self.detail)
    }
}

/// The helper's setup: reads the plan from [`PLAN_ENV`], validates it, and applies every
/// step. Returns the plan and what was enforced, for [`crate::helper`] to run the action;
/// or the exit code to leave with (a failed step, or the relayed code of the child when
/// this process stayed outside the PID namespace). Must run before any thread exists.
pub fn enter(args: &[OsString]) -> Result<(Plan, Enforcement), i32> {
    if let Some(extra) = args.first() {
        eprintln!(
            "gatehouse jail: unexpected argument {:?} (the plan comes in {PLAN_ENV})",
            extra
        );
        return Err(EXIT_SETUP_FAILED);
    }
    let plan: Plan = match std::env::var(PLAN_ENV)
        .map_err(|e| e.to_string())
        .and_then(|s| serde_json::from_str(&s).map_err(|e| e.to_string()))
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("gatehouse jail: no usable plan in {PLAN_ENV}: {e}");
            return Err(EXIT_SETUP_FAILED);
        }
    };
    if let Err(e) = plan.validate() {
        eprintln!("gatehouse jail: {e}");
        return Err(EXIT_SETUP_FAILED);
    }
    enter_plan(plan)
}

/// [`enter`] for a validated plan at hand: keep inherited descriptors from the command and
/// apply every step. Also the forked helper's entry ([`run_forked`]), whose plan the
/// launcher validated in this very memory before the fork.
fn enter_plan(plan: Plan) -> Result<(Plan, Enforcement), i32> {
    // Whatever the helper inherited besides its standard streams stays behind (FENCE-JAIL-9).
    #[cfg(target_os = "linux")]
    if let Err(e) = crate::sys::ns::cloexec_from(3) {
        eprintln!("gatehouse jail: cannot mark inherited descriptors close-on-exec: {e}");
        return Err(EXIT_SETUP_FAILED);
    }
    match apply(&plan) {
        Ok(enforcement) => Ok((plan, enforcement)),
        Err(Outcome::Relay(code)) => Err(code),
        Err(Outcome::Failed(e)) => {
            eprintln!("gatehouse jail ({}): {e}", plan.backend);
            Err(EXIT_SETUP_FAILED)
        }
    }
}

/// The helper forked from the launcher rather than executed (the native backend's
/// checked command, see [`crate::sys::ns::fork_instead_of_exec`]): the same steps and the
/// same action as `gatehouse __jail`, from the plan in memory; returns the exit code.
#[cfg(target_os = "linux")]
pub fn run_forked(plan: &Plan) -> i32 {
    match enter_plan(plan.clone()) {
        Ok((plan, enforcement)) => run_checked(&plan, &enforcement),
        Err(code) => code,
    }
}

/// The init of a native checked command, cloned straight from the launcher
/// ([`crate::sys::ns::clone_init`]) once its plan and the host objects the plan names (the
/// placeholders of missing protected paths, the probe's victim) are made: the clone makes
/// the namespaces and the init at once, with no helper between the launcher and the init,
/// and the plan is in the init's memory from its start, a copy of the launcher's, with no
/// channel it could be forged on. The init checks that the plan starts with exactly the
/// steps the clone took and applies the rest ([`run_early`]).
#[cfg(target_os = "linux")]
#[derive(Debug, Clone, Copy)]
pub struct Early {
    /// The launcher's pid, which the plan's [`crate::fence::plan::Plan::parent_pid`] must name.
    pub parent_pid: u32,
    /// The launcher's real uid and gid, which the init maps to themselves.
    pub ids: (u32, u32),
    /// The `host` network mode: no network namespace is made.
    pub host_network: bool,
    /// Whether the init makes its network namespace on a thread of its own, beside the
    /// rest, rather than at its step: where the launcher saw a core free for it
    /// ([`crate::sys::net::core_free`]). Either way the same namespace is joined.
    pub network_thread: bool,
}

/// The body of an init cloned early ([`Early`]), in its new namespaces: its uid and gid
/// maps, death with the launcher, then every step of `plan` after the init's fork, and
/// the checked command's action. The steps of the plan before [`Step::Unshare`] that are
/// not [`Step::DieWithParent`] (missing protected paths made on the host) are the
/// launcher's, done before the clone.
///
/// [`Step::Unshare`]: crate::fence::plan::Step::Unshare
/// [`Step::DieWithParent`]: crate::fence::plan::Step::DieWithParent
#[cfg(target_os = "linux")]
pub fn run_early(early: &Early, plan: Plan) -> i32 {
    // Before the plan its steps have no index of the plan's: named by what they are.
    let failed = |step: &str, e: std::io::Error| {
        eprintln!("gatehouse jail (native): {step}, before the plan: {e}");
        EXIT_SETUP_FAILED
    };
    if let Err(e) = crate::sys::ns::cloexec_from(3) {
        eprintln!("gatehouse jail: cannot mark inherited descriptors close-on-exec: {e}");
        return EXIT_SETUP_FAILED;
    }
    let mut entered = Entered::default();
    // The launcher's pid cannot be checked from here (it lies outside this PID namespace,
    // where the parent's pid reads 0): a launcher gone before this call leaves its go
    // unsaid, and the init leaves without running anything.
    if let Err(e) = crate::sys::ns::die_with_parent(None) {
        return failed("die-with-parent", e);
    }
    crate::sys::mark::mark("id-maps");
    if let Err(e) = crate::sys::ns::write_id_maps(early.ids.0, early.ids.1) {
        return failed("unshare", e);
    }
    entered.enforcement.namespaces = true;
    // A checked command's init is made non-dumpable before the command starts
    // (checked_exec): not here, so that the launcher can still see its network namespace
    // from outside (probe::judge_network).
    entered.enforcement.pid1 = crate::sys::ns::pid() == 1;
    // Made on a thread of this process's own while the mount tree is built, where the
    // launcher saw a core free for it (net::OwnNetwork); else by this thread itself at
    // join-network, since on a busy machine the thread would only take the one free core
    // from the init.
    if !early.host_network {
        entered.network = match early.network_thread {
            true => match crate::sys::net::OwnNetwork::start() {
                Ok(own) => Some(Network::Own(own)),
                Err(e) => return failed("network", e),
            },
            false => Some(Network::OwnHere),
        };
    }
    crate::sys::mark::mark("init-forked");
    // The plan was validated as it was made (Plan::native), and this is the launcher's
    // own copy: only what the clone already did is checked against it.
    let start = match resume_after_fork(&plan, early) {
        Ok(start) => start,
        Err(e) => return failed("plan", std::io::Error::other(e)),
    };
    crate::sys::mark::mark("plan-valid");
    match apply_from(&plan, start, entered) {
        Ok(enforcement) => run_checked(&plan, &enforcement),
        Err(Outcome::Relay(code)) => code,
        Err(Outcome::Failed(e)) => {
            eprintln!("gatehouse jail ({}): {e}", plan.backend);
            EXIT_SETUP_FAILED
        }
    }
}

/// Where an early init resumes `plan`: right after its [`Step::ForkInit`],
/// once the plan is shown to be a native checked command's for this launcher and network
/// mode, starting with exactly the steps taken already (the launcher's missing protected
/// paths aside).
///
/// [`Step::ForkInit`]: crate::fence::plan::Step::ForkInit
#[cfg(target_os = "linux")]
fn resume_after_fork(plan: &Plan, early: &Early) -> Result<usize, NotResumable> {
    use crate::fence::plan::{Action, Step};
    use crate::fence::posture::BackendKind;
    if plan.backend != BackendKind::Native {
        return Err(NotResumable::Backend(plan.backend));
    }
    if plan.parent_pid != Some(early.parent_pid) {
        return Err(NotResumable::OtherLauncher);
    }
    if plan.host_network != early.host_network {
        return Err(NotResumable::OtherNetwork);
    }
    if !matches!(plan.action, Action::CheckedExec { .. }) {
        return Err(NotResumable::NotChecked);
    }
    if plan.steps.first() != Some(&Step::DieWithParent) {
        return Err(NotResumable::NoDieWithParent);
    }
    let unshare = plan
        .steps
        .iter()
        .position(|s| *s == Step::Unshare)
        .ok_or(NotResumable::NoUnshare)?;
    if let Some(other) = plan.steps[1..unshare]
        .iter()
        .find(|s| !matches!(s, Step::PrepareProtected { .. }))
    {
        return Err(NotResumable::BeforeUnshare { step: other.name() });
    }
    if plan.steps.get(unshare + 1) != Some(&Step::ForkInit) {
        return Err(NotResumable::NoForkAfterUnshare);
    }
    Ok(unshare + 2)
}

/// Why an early init cannot resume a plan: the plan is not the one its clone was made
/// for. Each names the step or field of the plan that disagrees.
#[cfg(target_os = "linux")]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum NotResumable {
    /// The plan is another backend's.
    #[error("a {0} plan for a native jail")]
    Backend(crate::fence::posture::BackendKind),
    /// `parent_pid` names another launcher.
    #[error("the plan names another launcher")]
    OtherLauncher,
    /// `host_network` is not the jail's.
    #[error("the plan's network mode is not the one the jail was made for")]
    OtherNetwork,
    /// The action is not a checked command.
    #[error("an early init runs checked commands only")]
    NotChecked,
    /// The first step is not die-with-parent.
    #[error("the plan does not start with die-with-parent")]
    NoDieWithParent,
    /// No unshare step.
    #[error("the plan makes no namespaces")]
    NoUnshare,
    /// A step before unshare that the launcher does not take there.
    #[error("{step} before unshare")]
    BeforeUnshare {
        /// The step's name.
        step: &'static str,
    },
    /// The init is not forked right after unshare.
    #[error("the plan does not fork its init right after unshare")]
    NoForkAfterUnshare,
}

/// A checked command's action, once its plan is applied.
#[cfg(target_os = "linux")]
fn run_checked(plan: &Plan, enforcement: &Enforcement) -> i32 {
    match &plan.action {
        crate::fence::plan::Action::CheckedExec {
            argv,
            preflight,
            listener,
            terminal,
            ..
        } => checked_exec(
            plan,
            argv,
            preflight,
            listener.as_ref(),
            *terminal,
            enforcement,
        ),
        _ => {
            eprintln!("gatehouse jail: a forked helper runs checked commands only");
            EXIT_SETUP_FAILED
        }
    }
}

/// A checked command: hand out the proxy's listener (the `allow-list` mode) and the
/// master of the command's terminal (when asked), run the probe's legs in this fully
/// fenced process, and run the command only on the launcher's go.
#[cfg(target_os = "linux")]
pub fn checked_exec(
    plan: &Plan,
    argv: &[String],
    preflight: &crate::fence::plan::Preflight,
    listener: Option<&crate::fence::plan::ListenerHandoff>,
    terminal: Option<i32>,
    enforcement: &Enforcement,
) -> i32 {
    if let Some(l) = listener {
        if let Err(e) = hand_out_listener(l) {
            eprintln!("gatehouse jail: the proxy's listener: {e}");
            return crate::exit::SETUP_FAILED;
        }
    }
    let slave = match terminal.map(crate::fence::tty::hand_out).transpose() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("gatehouse jail: the command's terminal: {e}");
            return crate::exit::SETUP_FAILED;
        }
    };
    crate::sys::mark::mark("legs-start");
    let report = match crate::fence::probe::preflight_in_jail(preflight, enforcement) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("gatehouse jail: {e}");
            return crate::exit::SETUP_FAILED;
        }
    };
    // The launcher's go is in. This process becomes readable and traceable by no jailed
    // process (they drop CAP_SYS_PTRACE) before the first of them exists (FENCE-PLANE-8):
    // it waits for the command and answers for it, and a native helper may be a fork of
    // the launcher holding a copy of its memory. Not earlier, so that the launcher could
    // look at it from outside (probe::judge_network). The helper outside the native jail
    // stays as the launcher's child, which looks into the jail through its root
    // (probe::PreflightDirs).
    if let Err(e) = crate::sys::ns::not_dumpable() {
        eprintln!("gatehouse jail: not-dumpable: {e}");
        return crate::exit::SETUP_FAILED;
    }
    crate::sys::mark::mark("go-read");
    let code = exec_with(plan, argv, enforcement, slave);
    crate::sys::mark::mark("command-ended");
    // As PID 1 the last word is said only once nothing jailed runs: every other process
    // of the namespace ended and reaped, and the command's streams let go. The launcher
    // goes on as soon as it reads it, while this process and the helper take the jail
    // down. Without the word it waits for this process to be gone.
    if enforcement.pid1 {
        crate::sys::mark::mark("end-namespace");
        if let Err(e) = crate::sys::ns::end_the_rest_of_the_namespace() {
            eprintln!("gatehouse jail: cannot end the jail's other processes: {e}");
            return code;
        }
        crate::sys::mark::mark("namespace-ended");
        crate::sys::ns::streams_to_null();
    }
    crate::fence::probe::tell_exit(report, code);
    code
}

/// How `apply` ends when it does not hand back a fenced process.
enum Outcome {
    /// We are the parent left outside the PID namespace: relay the child's exit code.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Relay(i32),
    /// A step failed; nothing was run.
    Failed(StepError),
}

#[cfg(not(target_os = "linux"))]
fn apply(plan: &Plan) -> Result<Enforcement, Outcome> {
    // Elsewhere the fence (Seatbelt) is applied by the launcher; a plan with steps is a bug.
    if let Some(step) = plan.steps.first() {
        return Err(Outcome::Failed(StepError {
            index: 0,
            step: step.name(),
            detail: "not available on this platform".into(),
        }));
    }
    std::env::set_current_dir(&plan.cwd).map_err(|e| {
        Outcome::Failed(StepError {
            index: 0,
            step: "cwd",
            detail: format!("{}: {e}", plan.cwd.display()),
        })
    })?;
    Ok(Enforcement::default())
}

/// `root` + the absolute path `p`.
#[cfg(target_os = "linux")]
fn under(root: &Path, p: &Path) -> PathBuf {
    root.join(p.strip_prefix("/").unwrap_or(p))
}

/// Create what a bind needs as its mount point: a directory for a directory, an empty file
/// for anything else (the new root's tmpfs is ours, so plain creation is safe here).
/// Returns whether `src` is a directory. `made` holds the directories of the new root
/// known to exist, so that the thirty-odd binds into one directory (`/etc`) do not each
/// ask for it again.
#[cfg(target_os = "linux")]
fn mount_point(
    src: &Path,
    dst: &Path,
    made: &mut std::collections::HashSet<PathBuf>,
) -> std::io::Result<bool> {
    let dir = std::fs::metadata(src)?.is_dir();
    let mut ensure = |d: &Path| -> std::io::Result<()> {
        if !made.contains(d) {
            std::fs::create_dir_all(d)?;
            made.insert(d.to_path_buf());
        }
        Ok(())
    };
    if dir {
        ensure(dst)?;
    } else {
        if let Some(parent) = dst.parent() {
            ensure(parent)?;
        }
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(dst)
            .map(drop)?;
    }
    Ok(dir)
}

/// Pin every parent of `rel` below `root` (a bind of the directory onto itself makes it a
/// mount point, which `rename` and `rmdir` refuse with `EBUSY`), then bind `rel` read-only
/// over itself. Every path is reached through `O_PATH | O_NOFOLLOW` descriptors and mounted
/// through `/proc/self/fd`, so a symlink planted by jailed code redirects nothing.
#[cfg(target_os = "linux")]
fn protect(new_root: &Path, root: &Path, rel: &Path) -> std::io::Result<()> {
    use crate::sys::{fs, mount};
    use rustix::mount::MountFlags;
    let root_in = under(new_root, root);
    let proc_root = new_root.join("proc");
    let comps: Vec<_> = rel.components().collect();
    for k in 1..=comps.len() {
        let prefix: PathBuf = comps[..k].iter().collect();
        let reached = fs::walk_nofollow(&root_in, &prefix, false)?;
        let last = reached
            .last()
            .ok_or_else(|| std::io::Error::other("empty protected path"))?;
        let p = fs::fd_path(&proc_root, &last.fd);
        if k < comps.len() && last.is_dir {
            // A parent pinned onto itself recursively, so that the read-only mount of a
            // protected path beneath it (`.git/hooks` when pinning `.git` for
            // `.git/config`) is kept rather than hidden.
            mount::rbind(&p, &p)?;
        } else {
            mount::bind(&p, &p)?;
        }
        if k == comps.len() || !last.is_dir {
            // Reach the new mount through a fresh descriptor: the old one names the
            // directory underneath it.
            let reached_prefix: PathBuf = comps[..reached.len()].iter().collect();
            let again = fs::walk_nofollow(&root_in, &reached_prefix, false)?;
            let fresh = again
                .last()
                .ok_or_else(|| std::io::Error::other("protected path vanished"))?;
            mount::remount_bind(
                &fs::fd_path(&proc_root, &fresh.fd),
                MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV,
            )?;
            return Ok(());
        }
    }
    Ok(())
}

/// Hide `rel` below the writable root `root` inside bubblewrap's finished tree: reached
/// through `O_PATH | O_NOFOLLOW` descriptors (a symlink anywhere refuses the jail, and
/// nothing is created), then an empty read-only tmpfs over a directory or the null device
/// bound read-only over anything else, mounted through `/proc/self/fd`.
#[cfg(target_os = "linux")]
fn mask_in_jail(root: &Path, rel: &Path, dir: bool) -> std::io::Result<()> {
    use crate::sys::{fs, mount};
    use rustix::mount::MountFlags;
    let reached = fs::walk_nofollow(root, rel, false)?;
    let last = reached
        .last()
        .filter(|_| reached.len() == rel.components().count())
        .ok_or_else(|| std::io::Error::other("the hidden path is not reached"))?;
    if last.is_dir != dir {
        return Err(std::io::Error::other("the hidden path changed its kind"));
    }
    let p = fs::fd_path(Path::new("/proc"), &last.fd);
    let flags = MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
    if dir {
        mount::tmpfs(&p, "0755", flags)
    } else {
        mount::bind(Path::new("/dev/null"), &p)?;
        // The new mount through a fresh descriptor of its parent (the old one names the
        // file underneath, and a walk refuses the device node now there).
        let name = rel
            .file_name()
            .ok_or_else(|| std::io::Error::other("the hidden path has no name"))?;
        let parent_rel = rel.parent().unwrap_or(Path::new(""));
        let parent = if parent_rel.as_os_str().is_empty() {
            rustix::fs::open(
                root,
                rustix::fs::OFlags::PATH
                    | rustix::fs::OFlags::DIRECTORY
                    | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )?
        } else {
            fs::walk_nofollow(root, parent_rel, false)?
                .pop()
                .filter(|r| r.is_dir)
                .ok_or_else(|| std::io::Error::other("the hidden path's parent vanished"))?
                .fd
        };
        let fresh = rustix::fs::openat(
            &parent,
            name,
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )?;
        mount::remount_bind(&fs::fd_path(Path::new("/proc"), &fresh), flags)
    }
}

/// Cover `p` read-only by mount (FENCE-JAIL-14, FENCE-JAIL-16). Where the kernel refuses
/// the mount (bubblewrap run by an unprivileged user leaves its mount namespace to a user
/// namespace the helper has no capability in), that is no failure only if the object is
/// read-only by mount already, or the jailed user is neither root nor its owner and may
/// not write it: then the kernel refuses every metadata change (`utimes` to the current
/// time needs write permission only, so a node anyone may write, `/dev/null`, is not safe
/// by ownership). Otherwise the jail is refused, naming the object.
#[cfg(target_os = "linux")]
fn cover_or_not_ours(p: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(p) else {
        return Ok(());
    };
    match crate::sys::mount::cover_read_only(p) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::PERM.raw_os_error()) => {
            let read_only = rustix::fs::statvfs(p)
                .map(|v| v.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY))
                .unwrap_or(false);
            let uid = rustix::process::geteuid().as_raw();
            let writable = rustix::fs::access(p, rustix::fs::Access::WRITE_OK).is_ok();
            if read_only || (uid != 0 && meta.uid() != uid && !writable) {
                Ok(())
            } else {
                Err(std::io::Error::new(
                    e.kind(),
                    format!(
                        "cannot cover it read-only ({e}), and the jailed user may change \
                         its times: bubblewrap run by an unprivileged user keeps its mount \
                         namespace out of the helper's reach; use the native fence"
                    ),
                ))
            }
        }
        Err(e) => Err(e),
    }
}

/// Prefix an I/O error with the path it concerns.
#[cfg(target_os = "linux")]
fn named(what: &Path) -> impl Fn(std::io::Error) -> std::io::Error + '_ {
    move |e| std::io::Error::new(e.kind(), format!("{}: {e}", what.display()))
}

/// Apply every step of the plan, in order, in this one function. Each arm says why the
/// step sits where it does; [`Plan::validate`] has already enforced that order.
#[cfg(target_os = "linux")]
fn apply(plan: &Plan) -> Result<Enforcement, Outcome> {
    let mut entered = Entered::default();
    // A helper started as the init of a PID namespace another tool made (bubblewrap's
    // `--as-pid-1`) is the jail's init as the native fork's child is: it reaps and ends
    // the rest of the namespace (`exec_with`, `checked_exec`).
    entered.enforcement.pid1 = crate::sys::ns::pid() == 1;
    apply_from(plan, 0, entered)
}

/// What the steps up to the init's fork leave to the rest of the plan.
#[cfg(target_os = "linux")]
#[derive(Default)]
struct Entered {
    /// What was enforced so far (namespaces, PID 1).
    enforcement: Enforcement,
    /// Where the init's network namespace comes from, unless the network is the host's.
    network: Option<Network>,
}

/// Where an init's network namespace comes from, at [`Step::JoinNetwork`].
///
/// [`Step::JoinNetwork`]: crate::fence::plan::Step::JoinNetwork
#[cfg(target_os = "linux")]
enum Network {
    /// The init's end of the socket the helper sends it on (net::NetworkHandoff).
    Sent(std::os::fd::OwnedFd),
    /// An init with no helper ([`Early`]) makes its own on a thread, owned by its user
    /// namespace.
    Own(crate::sys::net::OwnNetwork),
    /// Or makes it itself at the step ([`Early::network_thread`] false).
    OwnHere,
}

/// [`Step::Unshare`]: new user, mount, PID, IPC and UTS namespaces in one call, so that the
/// new user namespace owns the others; the id maps right away, because once Landlock is on
/// a process can no longer write `uid_map`. The network namespace comes after the fork
/// ([`fork_init`]), made while the init builds the mount tree.
///
/// [`Step::Unshare`]: crate::fence::plan::Step::Unshare
#[cfg(target_os = "linux")]
fn unshare(enforcement: &mut Enforcement) -> std::io::Result<()> {
    let (uid, gid) = crate::sys::ns::ids();
    crate::sys::ns::unshare_all(false)?;
    crate::sys::mark::mark("id-maps");
    crate::sys::ns::write_id_maps(uid, gid)?;
    enforcement.namespaces = true;
    Ok(())
}

/// [`Step::ForkInit`]: a new PID namespace takes effect for children only, so fork; the
/// child becomes PID 1 and builds the fence ([`Init::Inside`]), this process stays outside
/// as its parent ([`Init::Outside`]). Unless the network is the
/// host's, this process first makes the jail's network namespace, its loopback up as
/// bubblewrap leaves it (the `allow-list` mode's proxy listens there; nothing else is
/// reachable), and hands it to the init, which joins it at [`Step::JoinNetwork`].
///
/// [`Step::ForkInit`]: crate::fence::plan::Step::ForkInit
/// [`Step::JoinNetwork`]: crate::fence::plan::Step::JoinNetwork
#[cfg(target_os = "linux")]
fn fork_init(host_network: bool, entered: &mut Entered) -> std::io::Result<Init> {
    use crate::sys::ns;
    let handoff = match host_network {
        true => None,
        false => Some(crate::sys::net::NetworkHandoff::new()?),
    };
    crate::sys::mark::mark("fork-init");
    match ns::fork()? {
        ns::Forked::Parent(child) => {
            crate::sys::mark::mark("netns-make");
            if let Some(handoff) = handoff {
                handoff.make_and_send();
                crate::sys::mark::mark("netns-sent");
            }
            Ok(Init::Outside(child))
        }
        ns::Forked::Child => {
            entered.network = handoff
                .map(crate::sys::net::NetworkHandoff::into_init_end)
                .map(Network::Sent);
            ns::die_with_parent(None)?;
            // A checked command's init is made non-dumpable before the command starts
            // (checked_exec): not here, so that the launcher can still see its network
            // namespace from outside (probe::judge_network).
            entered.enforcement.pid1 = ns::pid() == 1;
            Ok(Init::Inside)
        }
    }
}

/// Which side of [`fork_init`] this process is on.
#[cfg(target_os = "linux")]
enum Init {
    /// Outside, the init's parent: wait for it ([`crate::sys::ns::wait_for`]) and relay
    /// its code.
    Outside(i32),
    /// The init itself.
    Inside,
}

/// Every step of `plan` from `start` on, after what `entered` holds: each step through
/// [`Building::apply`], the table of what each step does, then the plan's working
/// directory.
#[cfg(target_os = "linux")]
fn apply_from(plan: &Plan, start: usize, entered: Entered) -> Result<Enforcement, Outcome> {
    let mut building = Building::new(plan, entered);
    for (index, step) in plan.steps.iter().enumerate().skip(start) {
        let fail = |e: std::io::Error| {
            Outcome::Failed(StepError {
                index,
                step: step.name(),
                detail: e.to_string(),
            })
        };
        crate::sys::mark::mark(step.name());
        // Only the init's parent comes back with a code: it relays the init's.
        if let Some(code) = building.apply(step).map_err(fail)? {
            return Err(Outcome::Relay(code));
        }
    }
    std::env::set_current_dir(&plan.cwd).map_err(|e| {
        Outcome::Failed(StepError {
            index: plan.steps.len(),
            step: "cwd",
            detail: format!("{}: {e}", plan.cwd.display()),
        })
    })?;
    Ok(building.enforcement)
}

/// The host root while the new one is built (after [`Step::StageRoot`]).
///
/// [`Step::StageRoot`]: crate::fence::plan::Step::StageRoot
#[cfg(target_os = "linux")]
const OLD_ROOT: &str = "/oldroot";
/// The new root being built.
#[cfg(target_os = "linux")]
const NEW_ROOT: &str = "/newroot";

/// What the steps of [`apply_from`] carry from one to the next.
#[cfg(target_os = "linux")]
struct Building<'p> {
    plan: &'p Plan,
    /// What was enforced so far.
    enforcement: Enforcement,
    /// Where the init's network namespace comes from, until it is joined.
    network: Option<Network>,
    /// Trees opened and not sealed yet: binds inside them are made read-only by the seal.
    open_trees: Vec<&'p Path>,
    /// Directories of the new root known to exist (mount points made so far).
    made: std::collections::HashSet<PathBuf>,
    /// Each writable root a protected path lies in, opened once (`O_PATH`) for all of
    /// them: about thirty names a root (FENCE-PROTECT-16).
    protect_roots: std::collections::HashMap<PathBuf, std::os::fd::OwnedFd>,
}

#[cfg(target_os = "linux")]
impl<'p> Building<'p> {
    fn new(plan: &'p Plan, entered: Entered) -> Building<'p> {
        Building {
            plan,
            enforcement: entered.enforcement,
            network: entered.network,
            open_trees: Vec::new(),
            made: std::collections::HashSet::new(),
            protect_roots: std::collections::HashMap::new(),
        }
    }

    /// One step, in the order of the plan's phases ([`Plan::validate`] has already
    /// enforced it): each arm names the step's function, whose doc says why it sits where
    /// it does. `Some(code)` only outside the init, whose code this process relays.
    fn apply(&mut self, step: &'p crate::fence::plan::Step) -> std::io::Result<Option<i32>> {
        use crate::fence::plan::Step;
        use crate::sys::{caps, mount, ns};
        let (plan, new_root) = (self.plan, Path::new(NEW_ROOT));
        match step {
            // First: a jail must never outlive the agent that asked for it, and an orphaned
            // helper must not start one.
            Step::DieWithParent => ns::die_with_parent(plan.parent_pid)?,
            Step::PrepareProtected { root, rel, file } => prepare_protected(root, rel, *file)?,
            // Namespaces before anything that needs privilege ([`unshare`]).
            Step::Unshare => unshare(&mut self.enforcement)?,
            Step::ForkInit => return self.fork_init(),
            // Before the first mount: nothing we mount may propagate to the host.
            Step::MakeMountsPrivate => mount::make_private_recursive(Path::new("/"))?,
            Step::StageRoot => stage_root()?,
            // The fresh root: an empty tmpfs, sealed read-only once populated.
            Step::NewRoot => mount::tmpfs(new_root, "0755", nosuid_nodev())?,
            Step::BindReadOnly { path } => self.bind_read_only(path)?,
            Step::Tree { path } => self.tree(path)?,
            Step::SealTree { path } => self.seal_tree(path)?,
            Step::Mask { path, dir } => mask(path, *dir)?,
            Step::Symlink { target, path } => symlink(target, path)?,
            Step::Proc => proc()?,
            Step::Dev { nodes } => dev(nodes)?,
            Step::Dir { path } => self.dir(path)?,
            Step::WriteFile { path, contents } => write_file(path, contents)?,
            Step::Scratch { path } => scratch(path)?,
            Step::BindReadWrite { path } => self.bind_read_write(path)?,
            Step::Protect { root, rel } => self.protect(new_root, root, rel)?,
            Step::ProtectInJail { root, rel } => self.protect(Path::new("/"), root, rel)?,
            Step::MaskInJail { root, rel, dir } => mask_in_jail_at(root, rel, *dir)?,
            // Once every mount point exists: nothing new can be created in the root.
            Step::SealRoot => {
                self.protect_roots.clear(); // every protected path is mounted by now
                mount::remount_readonly_fs(new_root)?
            }
            // Into the new root; the host's tree is detached, not merely hidden.
            Step::PivotRoot => mount::pivot_into(new_root, Path::new(OLD_ROOT))?,
            Step::SealDevices { nodes } => seal_devices(nodes)?,
            Step::JoinNetwork => self.join_network()?,
            Step::Resolver => self.resolver()?,
            Step::CoverProc { paths } => cover_proc(paths)?,
            // Cosmetic but honest: the jail does not carry the host's name.
            Step::Hostname { name } => ns::set_hostname(name)?,
            // Before Landlock and seccomp (both require it) and before exec: no set-uid
            // binary or file capability can ever raise privileges again.
            Step::NoNewPrivs => caps::set_no_new_privs()?,
            Step::DropCapabilities => self.drop_capabilities()?,
            Step::Landlock(rules) => self.landlock(rules)?,
            Step::Seccomp => self.seccomp()?,
        }
        Ok(None)
    }

    /// [`Step::ForkInit`]: the init, PID 1 of the new PID namespace ([`fork_init`]); this
    /// process stays outside, waits for it and relays its code.
    ///
    /// [`Step::ForkInit`]: crate::fence::plan::Step::ForkInit
    fn fork_init(&mut self) -> std::io::Result<Option<i32>> {
        let mut forked = Entered {
            enforcement: std::mem::take(&mut self.enforcement),
            network: None,
        };
        if let Init::Outside(child) = fork_init(self.plan.host_network, &mut forked)? {
            return crate::sys::ns::wait_for(child).map(Some);
        }
        self.enforcement = forked.enforcement;
        self.network = forked.network;
        Ok(None)
    }

    /// [`Step::BindReadOnly`]: system paths read-only. A read-only bind refuses writes,
    /// truncate, chmod, utimes and xattr changes (EROFS) on every kernel, which Landlock
    /// never does for metadata. Recursive, every submount read-only too: a host with mounts
    /// below `/usr` is fenced, and a non-recursive bind of a tree with locked submounts is
    /// EINVAL.
    ///
    /// [`Step::BindReadOnly`]: crate::fence::plan::Step::BindReadOnly
    fn bind_read_only(&mut self, path: &Path) -> std::io::Result<()> {
        use crate::sys::mount;
        let old_root = Path::new(OLD_ROOT);
        let (src, dst) = (under(old_root, path), under(Path::new(NEW_ROOT), path));
        let dir = mount_point(&src, &dst, &mut self.made).map_err(named(path))?;
        if self.open_trees.iter().any(|t| path.starts_with(t)) {
            // Read-only with the whole tree, by its seal below.
            let bind = if dir { mount::rbind } else { mount::bind };
            bind(&src, &dst).map_err(named(path))?;
        } else if self.plan.read_only_hole() {
            // The injected fault of the probe's tests (plan::Fault): bound
            // writable, silently; the command's own probe must refuse the jail.
            let bind = if dir { mount::rbind } else { mount::bind };
            bind(&src, &dst).map_err(named(path))?;
        } else if dir {
            let mountinfo = old_root.join("proc/self/mountinfo");
            mount::rbind_read_only(&src, &dst, &mountinfo).map_err(named(path))?;
        } else {
            mount::bind(&src, &dst).map_err(named(path))?;
            mount::remount_bind(&dst, read_only()).map_err(named(path))?;
        }
        Ok(())
    }

    /// [`Step::Tree`]: a tree of binds (the allowed `/etc` entries) on a tmpfs of its own,
    /// so that one call makes all of them read-only once they are bound, not one remount
    /// each.
    ///
    /// [`Step::Tree`]: crate::fence::plan::Step::Tree
    fn tree(&mut self, path: &'p Path) -> std::io::Result<()> {
        let dst = under(Path::new(NEW_ROOT), path);
        std::fs::create_dir_all(&dst)?;
        crate::sys::mount::tmpfs(&dst, "0755", nosuid_nodev()).map_err(named(path))?;
        // What was made below it is hidden now.
        self.made.retain(|d| !d.starts_with(&dst));
        self.open_trees.push(path);
        Ok(())
    }

    /// [`Step::SealTree`]: every mount of the tree read-only, recursively (FENCE-JAIL-2):
    /// one `mount_setattr` where the kernel has it, a remount per mount before 5.12.
    ///
    /// [`Step::SealTree`]: crate::fence::plan::Step::SealTree
    fn seal_tree(&mut self, path: &Path) -> std::io::Result<()> {
        let dst = under(Path::new(NEW_ROOT), path);
        let mountinfo = Path::new(OLD_ROOT).join("proc/self/mountinfo");
        crate::sys::mount::read_only_recursive(&dst, &mountinfo).map_err(named(path))?;
        self.open_trees.retain(|t| *t != path);
        Ok(())
    }

    /// [`Step::Dir`]: an empty directory of the new root (`/tmp`, `/var/tmp`), read-only
    /// once the root is sealed: the host's `/tmp` is never writable from inside, and a write
    /// there fails loudly (FENCE-JAIL-21).
    ///
    /// [`Step::Dir`]: crate::fence::plan::Step::Dir
    fn dir(&mut self, path: &Path) -> std::io::Result<()> {
        let dst = under(Path::new(NEW_ROOT), path);
        if !self.made.contains(&dst) {
            std::fs::create_dir_all(&dst).map_err(named(path))?;
            self.made.insert(dst);
        }
        Ok(())
    }

    /// [`Step::BindReadWrite`]: the session's workspace roots and scratch, read-write at
    /// their own paths; after the empty `/tmp` (`Step::Dir`) so a root under `/tmp` lands on it.
    ///
    /// [`Step::BindReadWrite`]: crate::fence::plan::Step::BindReadWrite
    fn bind_read_write(&mut self, path: &Path) -> std::io::Result<()> {
        use crate::sys::mount;
        let (src, dst) = (
            under(Path::new(OLD_ROOT), path),
            under(Path::new(NEW_ROOT), path),
        );
        mount_point(&src, &dst, &mut self.made).map_err(named(path))?;
        mount::bind(&src, &dst).map_err(named(path))?;
        mount::remount_bind(&dst, nosuid_nodev()).map_err(named(path))?;
        Ok(())
    }

    /// [`Step::JoinNetwork`]: after the last mount and before anything that depends on
    /// the network (the probe's legs, the listener, Landlock's scopes): the namespace the
    /// helper or the init's own thread made, or the reason it could not, which fails the
    /// jail.
    ///
    /// [`Step::JoinNetwork`]: crate::fence::plan::Step::JoinNetwork
    fn join_network(&mut self) -> std::io::Result<()> {
        let from = self
            .network
            .take()
            .ok_or_else(|| std::io::Error::other("no network namespace is on its way"))?;
        if self.plan.shared_network() {
            // The injected fault (plan::Fault): claim a join that never happened
            // (a thread making the namespace is still waited for: none outlives
            // this step).
            if let Network::Own(own) = from {
                let _ = own.made();
            }
            return Ok(());
        }
        match from {
            Network::Sent(from) => {
                let deadline = std::time::Instant::now() + crate::fence::probe::TIMEOUT;
                crate::sys::net::join_network(&from, deadline)
            }
            Network::Own(own) => own.join(),
            Network::OwnHere => crate::sys::net::make_own(),
        }
    }

    /// [`Step::Resolver`]: the jail's port 53 bound while the capabilities are held (in the
    /// namespace just joined) and handed to the launcher with no copy kept (FENCE-NET-13).
    ///
    /// [`Step::Resolver`]: crate::fence::plan::Step::Resolver
    fn resolver(&mut self) -> std::io::Result<()> {
        use std::os::fd::AsFd;
        let crate::fence::plan::Action::CheckedExec {
            resolver: Some(fd), ..
        } = &self.plan.action
        else {
            return Err(std::io::Error::other(
                "no socket to hand the resolver out on",
            ));
        };
        let over = crate::sys::handoff::adopt(*fd)?;
        if self.plan.shared_network() {
            // The injected fault (plan::Fault) left this process in the launcher's network
            // namespace, whose port 53 is not its to bind: nothing is handed out, and the
            // probe's network leg, judged from outside first, refuses the jail.
            return Ok(());
        }
        let (udp, tcp) = crate::sys::net::bind_resolver()?;
        crate::sys::net::send_fds(over.as_fd(), &[udp.as_fd(), tcp.as_fd()])
    }

    /// [`Step::DropCapabilities`]: after the last mount (which needed CAP_SYS_ADMIN): drop
    /// every set and verify, so root inside cannot remount / read-write or override
    /// permissions.
    ///
    /// [`Step::DropCapabilities`]: crate::fence::plan::Step::DropCapabilities
    fn drop_capabilities(&mut self) -> std::io::Result<()> {
        crate::sys::caps::drop_all_and_verify()?;
        self.enforcement.capabilities_dropped = true;
        Ok(())
    }

    /// [`Step::Seccomp`]: last before the action: the filter would otherwise refuse our own
    /// setup.
    ///
    /// [`Step::Seccomp`]: crate::fence::plan::Step::Seccomp
    fn seccomp(&mut self) -> std::io::Result<()> {
        self.enforcement.seccomp_instructions = crate::sys::seccomp::install()?;
        Ok(())
    }

    /// [`Step::Landlock`]: on top of the mount tree, at the plan's ABI; a partial result
    /// is an error. Under the injected fault, what was not done is claimed.
    ///
    /// [`Step::Landlock`]: crate::fence::plan::Step::Landlock
    fn landlock(&mut self, rules: &crate::sys::landlock::LandlockRules) -> std::io::Result<()> {
        use crate::sys::landlock;
        self.enforcement.landlock = Some(if self.plan.read_only_hole() {
            landlock::LandlockReport {
                abi: rules.abi,
                status: "fully-enforced".into(),
                scoped: true,
            }
        } else {
            landlock::restrict(rules)?
        });
        Ok(())
    }
}

/// [`Step::PrepareProtected`]: on the host, before any namespace: a protected path that
/// does not exist yet must exist to become a mount point; created through no-follow
/// descriptors so a symlink planted in the workspace cannot send the mkdir to the host.
///
/// [`Step::PrepareProtected`]: crate::fence::plan::Step::PrepareProtected
#[cfg(target_os = "linux")]
fn prepare_protected(root: &Path, rel: &Path, file: bool) -> std::io::Result<()> {
    crate::sys::fs::prepare_nofollow(root, rel, file)?;
    Ok(())
}

#[cfg(target_os = "linux")]
impl Building<'_> {
    /// [`Step::Protect`] and [`Step::ProtectInJail`]: a name directly at a root (all but a
    /// few of them) bound read-only over itself through the root's one descriptor
    /// ([`crate::sys::mount::bind_read_only_at`]: no symlink followed, no parent to pin);
    /// a deeper path, or a kernel before 5.12, the way [`protect_at`] says.
    ///
    /// [`Step::Protect`]: crate::fence::plan::Step::Protect
    /// [`Step::ProtectInJail`]: crate::fence::plan::Step::ProtectInJail
    fn protect(&mut self, new_root: &Path, root: &Path, rel: &Path) -> std::io::Result<()> {
        use std::collections::hash_map::Entry;
        let mut comps = rel.components();
        let (Some(std::path::Component::Normal(name)), None) = (comps.next(), comps.next()) else {
            return protect_at(new_root, root, rel);
        };
        let dir = match self.protect_roots.entry(root.to_path_buf()) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(v) => {
                let root_in = under(new_root, root);
                let fd = rustix::fs::open(
                    &root_in,
                    rustix::fs::OFlags::PATH
                        | rustix::fs::OFlags::DIRECTORY
                        | rustix::fs::OFlags::CLOEXEC,
                    rustix::fs::Mode::empty(),
                )
                .map_err(std::io::Error::from)
                .map_err(named(root))?;
                v.insert(fd)
            }
        };
        use std::os::fd::AsFd;
        match crate::sys::mount::bind_read_only_at(dir.as_fd(), name) {
            Ok(true) => Ok(()),
            Ok(false) => protect_at(new_root, root, rel),
            Err(e) => Err(e).map_err(named(&root.join(rel))),
        }
    }
}

/// [`Step::Protect`] (`new_root` the new root): after the read-write roots they sit in,
/// protected paths read-only over them, existing or freshly created, their parents pinned
/// against renames. [`Step::ProtectInJail`] (`new_root` is `/`): inside bubblewrap's tree,
/// whose root is this process's own, what bubblewrap would have reached by path through a
/// directory a writable root holds.
///
/// [`Step::Protect`]: crate::fence::plan::Step::Protect
/// [`Step::ProtectInJail`]: crate::fence::plan::Step::ProtectInJail
#[cfg(target_os = "linux")]
fn protect_at(new_root: &Path, root: &Path, rel: &Path) -> std::io::Result<()> {
    protect(new_root, root, rel).map_err(named(&root.join(rel)))
}

/// [`Step::MaskInJail`]: a hidden path inside bubblewrap's tree ([`mask_in_jail`]).
///
/// [`Step::MaskInJail`]: crate::fence::plan::Step::MaskInJail
#[cfg(target_os = "linux")]
fn mask_in_jail_at(root: &Path, rel: &Path, dir: bool) -> std::io::Result<()> {
    mask_in_jail(root, rel, dir).map_err(named(&root.join(rel)))
}

/// Read-only, `nosuid`, `nodev`.
#[cfg(target_os = "linux")]
fn read_only() -> rustix::mount::MountFlags {
    rustix::mount::MountFlags::RDONLY | nosuid_nodev()
}

/// `nosuid`, `nodev`.
#[cfg(target_os = "linux")]
fn nosuid_nodev() -> rustix::mount::MountFlags {
    rustix::mount::MountFlags::NOSUID | rustix::mount::MountFlags::NODEV
}

/// [`Step::StageRoot`]: a staging tmpfs over `/tmp` becomes the root, the host root moves
/// to `/oldroot`: bind sources stay reachable there while the new tree is built.
///
/// [`Step::StageRoot`]: crate::fence::plan::Step::StageRoot
#[cfg(target_os = "linux")]
fn stage_root() -> std::io::Result<()> {
    use crate::sys::mount;
    let base = Path::new("/tmp");
    mount::tmpfs(base, "0755", nosuid_nodev()).map_err(named(base))?;
    std::fs::create_dir(base.join("newroot"))?;
    std::fs::create_dir(base.join("oldroot"))?;
    mount::pivot_root(base, &base.join("oldroot"))?;
    std::env::set_current_dir("/")
}

/// [`Step::Mask`]: root-only objects below a bound `/etc` entry: jailed root is the host's
/// uid 0, so their modes are no barrier (FENCE-JAIL-17). Hidden paths too, last of the
/// tree, after the roots and protections they may lie below (FENCE-PATHS-1).
///
/// [`Step::Mask`]: crate::fence::plan::Step::Mask
#[cfg(target_os = "linux")]
fn mask(path: &Path, dir: bool) -> std::io::Result<()> {
    use crate::sys::mount;
    use rustix::mount::MountFlags;
    let dst = under(Path::new(NEW_ROOT), path);
    if dir {
        let flags = MountFlags::RDONLY | nosuid_nodev() | MountFlags::NOEXEC;
        mount::tmpfs(&dst, "0755", flags).map_err(named(path))?;
    } else {
        let null = Path::new(OLD_ROOT).join("dev/null");
        mount::bind(&null, &dst).map_err(named(path))?;
        mount::remount_bind(&dst, read_only() | MountFlags::NOEXEC).map_err(named(path))?;
    }
    Ok(())
}

/// [`Step::Symlink`]: replicated symlinks (merged `/usr`) keep programs' hard-coded paths
/// working.
///
/// [`Step::Symlink`]: crate::fence::plan::Step::Symlink
#[cfg(target_os = "linux")]
fn symlink(target: &Path, path: &Path) -> std::io::Result<()> {
    let dst = under(Path::new(NEW_ROOT), path);
    if let Some(parent) = dst.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::os::unix::fs::symlink(target, &dst).map_err(named(path))
}

/// [`Step::Proc`]: a `/proc` of our own PID namespace: host processes are invisible.
/// Mounted while the host's `/proc` is still visible (the kernel requires it), and before
/// the protections, which reach their targets through `/proc/self/fd`.
///
/// [`Step::Proc`]: crate::fence::plan::Step::Proc
#[cfg(target_os = "linux")]
fn proc() -> std::io::Result<()> {
    let dst = Path::new(NEW_ROOT).join("proc");
    std::fs::create_dir_all(&dst)?;
    crate::sys::mount::proc(&dst)
}

/// [`Step::Dev`]: a minimal `/dev`: a few harmless nodes bound from the host, `/dev/shm`
/// private, the rest of the tmpfs read-only. No disks, no `/dev/mem`, no host pts.
///
/// [`Step::Dev`]: crate::fence::plan::Step::Dev
#[cfg(target_os = "linux")]
fn dev(nodes: &[String]) -> std::io::Result<()> {
    use crate::sys::mount;
    use rustix::mount::MountFlags;
    let old_root = Path::new(OLD_ROOT);
    let dev = Path::new(NEW_ROOT).join("dev");
    std::fs::create_dir_all(&dev)?;
    mount::tmpfs(&dev, "0755", MountFlags::NOSUID | MountFlags::NOEXEC)?;
    for node in nodes {
        let src = old_root.join("dev").join(node);
        if std::fs::symlink_metadata(&src).is_err() {
            continue;
        }
        let dst = dev.join(node);
        std::fs::File::create(&dst)?;
        mount::bind(&src, &dst).map_err(named(&src))?;
    }
    for (name, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(target, dev.join(name))?;
    }
    let pts = dev.join("pts");
    std::fs::create_dir(&pts)?;
    std::os::unix::fs::symlink("pts/ptmx", dev.join("ptmx"))?;
    let shm = dev.join("shm");
    std::fs::create_dir(&shm)?;
    // The tmpfs and every node bound on it read-only, `nosuid`, `noexec` in one
    // call: a bound node shares the host's inode, so `chmod` or `utimes` on it
    // would reach the host's /dev (FENCE-JAIL-14); data still flows. Before
    // the two mounts below, which stay writable.
    let mountinfo = old_root.join("proc/self/mountinfo");
    mount::seal_devices(&dev, &mountinfo)?;
    // A private pts instance, ptmx pointing into it (FENCE-JAIL-7).
    mount::devpts(&pts).map_err(named(&pts))?;
    mount::tmpfs(&shm, "1777", nosuid_nodev())
}

/// [`Step::Scratch`]: a one-shot command's scratch, a private tmpfs of its own (mode 0700)
/// on the new root's read-only `/tmp` ([`Step::Dir`]), holding the jailed user's `home` and
/// `tmp`: nothing on the host, and the only temporary directory the jail may write.
///
/// [`Step::Scratch`]: crate::fence::plan::Step::Scratch
/// [`Step::Dir`]: crate::fence::plan::Step::Dir
#[cfg(target_os = "linux")]
fn scratch(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let dst = under(Path::new(NEW_ROOT), path);
    std::fs::create_dir_all(&dst).map_err(named(path))?;
    crate::sys::mount::tmpfs(&dst, "0700", nosuid_nodev()).map_err(named(path))?;
    let mut b = std::fs::DirBuilder::new();
    b.mode(0o700);
    for d in [dst.join("home"), dst.join("tmp")] {
        b.create(&d).map_err(named(path))?;
    }
    Ok(())
}

/// [`Step::SealDevices`]: bubblewrap's `/dev`, in the final tree: a bound device node
/// shares the host's inode, so each is remounted read-only; data still flows
/// (FENCE-JAIL-14). The native fence seals its own `/dev` as it builds it ([`dev`]).
///
/// [`Step::SealDevices`]: crate::fence::plan::Step::SealDevices
#[cfg(target_os = "linux")]
fn seal_devices(nodes: &[String]) -> std::io::Result<()> {
    for node in nodes {
        let p = Path::new("/dev").join(node);
        cover_or_not_ours(&p).map_err(named(&p))?;
    }
    Ok(())
}

/// [`Step::CoverProc`]: read-only by mount, not by Landlock alone: jailed root is the
/// host's root and `/proc/sys/kernel/core_pattern` is a host escape (FENCE-JAIL-16).
///
/// [`Step::CoverProc`]: crate::fence::plan::Step::CoverProc
#[cfg(target_os = "linux")]
fn cover_proc(paths: &[PathBuf]) -> std::io::Result<()> {
    for p in paths {
        cover_or_not_ours(p).map_err(named(p))?;
    }
    Ok(())
}

/// The `exec` action: runs `argv` with the plan's environment and returns the helper's
/// exit code (as PID 1, after reaping every orphan until the command ends).
pub fn exec(plan: &Plan, argv: &[String], enforcement: &Enforcement) -> i32 {
    exec_with(plan, argv, enforcement, None)
}

/// [`exec`], the command given `terminal` (the slave of the jail's pseudo-terminal) as its
/// standard streams and controlling terminal ([`crate::fence::tty::attach`]).
pub fn exec_with(
    plan: &Plan,
    argv: &[String],
    enforcement: &Enforcement,
    terminal: Option<std::os::fd::OwnedFd>,
) -> i32 {
    // The program found in the plan's PATH here, as `execvp` would, so that the spawn below
    // is a `posix_spawn` (a `vfork`) rather than a `fork` copying this process: `std`
    // forks for a PATH lookup in a changed environment. Not found, it is left to the
    // spawn, which reports it as before.
    let path = plan
        .env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str());
    let program = find_program(&argv[0], path);
    let build = |program: &std::path::Path| {
        let mut cmd = std::process::Command::new(program);
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.arg0(&argv[0]);
        }
        cmd.args(&argv[1..])
            .env_clear()
            .envs(plan.env.iter().map(|(k, v)| (k, v)));
        cmd
    };
    let mut cmd = build(&program);
    let report = |e: std::io::Error| {
        eprintln!("gatehouse jail: cannot run {}: {e}", argv[0]);
        if e.kind() == std::io::ErrorKind::NotFound {
            EXIT_NOT_FOUND
        } else {
            EXIT_CANNOT_EXECUTE
        }
    };
    // A second handle on the slave, only for the one retry below; dropped with the spawn,
    // so PID 1 keeps no copy of the command's terminal.
    #[cfg(target_os = "linux")]
    let mut spare = None;
    #[cfg(target_os = "linux")]
    if let Some(slave) = terminal {
        let attached = slave.try_clone().and_then(|copy| {
            spare = Some(copy);
            crate::fence::tty::attach(&mut cmd, slave)
        });
        if let Err(e) = attached {
            eprintln!("gatehouse jail: the command's terminal: {e}");
            return EXIT_SETUP_FAILED;
        }
    }
    // Without a terminal of its own the command still leads a session of its own, which
    // has no controlling terminal: kept in the launcher's session it could open the
    // person's terminal as /dev/tty (FENCE-TTY-1). This process (the jail's init, or the
    // helper about to become the command) leaves it first, so that the spawn below stays
    // a `posix_spawn`. Where it cannot: leading a session already (one it made, which has
    // no terminal) is as good; leading a group, the command leaves on its own.
    #[cfg(target_os = "linux")]
    let needs_session =
        spare.is_none() && rustix::process::setsid().is_err() && !crate::sys::ns::leads_session();
    #[cfg(target_os = "linux")]
    if needs_session {
        crate::sys::ns::in_new_session(&mut cmd);
    }
    // Where the program found first cannot be run as `posix_spawn` runs it, the bare name
    // goes to `std`, whose child searches `PATH` with `execvp` itself: a file without `#!`
    // runs under /bin/sh, and a candidate the kernel will not execute passes the search on
    // (`EACCES`: on the Landlock-only fence a `PATH` directory Landlock hides, such as
    // pyenv's shims below the person's home, can still be looked at, not run).
    #[cfg(target_os = "linux")]
    let searched_again = |e: &std::io::Error| {
        program != Path::new(&argv[0])
            && matches!(
                e.raw_os_error(),
                Some(
                    libc::ENOEXEC
                        | libc::EACCES
                        | libc::ENOENT
                        | libc::ENOTDIR
                        | libc::ESTALE
                        | libc::ENODEV
                        | libc::ETIMEDOUT
                )
            )
    };
    #[cfg(target_os = "linux")]
    let rebuild = |spare: Option<std::os::fd::OwnedFd>| -> std::io::Result<std::process::Command> {
        let mut retry = build(Path::new(&argv[0]));
        if let Some(slave) = spare {
            crate::fence::tty::attach(&mut retry, slave)?;
        }
        if needs_session {
            crate::sys::ns::in_new_session(&mut retry);
        }
        Ok(retry)
    };
    #[cfg(not(target_os = "linux"))]
    drop(terminal);
    #[cfg(target_os = "linux")]
    if enforcement.pid1 {
        // As PID 1 we stay: init reaps every orphan until the command itself ends. The
        // command's terminal goes with `cmd`: PID 1 keeps no copy of the slave.
        crate::sys::mark::mark("command-spawn");
        let spawned = match cmd.spawn() {
            Err(e) if searched_again(&e) => rebuild(spare.take()).and_then(|mut r| r.spawn()),
            other => other,
        };
        crate::sys::mark::mark("command-spawned");
        drop(cmd);
        drop(spare);
        return match spawned {
            Ok(child) => crate::sys::ns::reap_until(child.id() as i32).unwrap_or(EXIT_SETUP_FAILED),
            Err(e) => report(e),
        };
    }
    let _ = enforcement;
    use std::os::unix::process::CommandExt;
    let e = cmd.exec();
    #[cfg(target_os = "linux")]
    if searched_again(&e) {
        return report(match rebuild(spare.take()) {
            Ok(mut retry) => retry.exec(),
            Err(e) => e,
        });
    }
    report(e)
}

/// `name` as `execvp(3)` finds it: as given when it holds a `/`, else the first regular
/// file of that name in `path` that this process may execute; `name` itself when there is
/// none (the spawn then fails as `execvp` would).
#[cfg(target_os = "linux")]
fn find_program(name: &str, path: Option<&str>) -> PathBuf {
    program_candidates(name, path)
        .next()
        .unwrap_or_else(|| PathBuf::from(name))
}

/// Where `execvp(3)` would try to execute `name`: `name` itself when it holds a `/`, else
/// each regular file of that name in `path` (default `/usr/local/bin:/usr/bin:/bin`) that
/// this process may execute, in order. Shared by the one-shot command and the pool's warm
/// path, which both spawn with `posix_spawn` rather than `execvp`, and `gatehouse exec`'s
/// not-found line (FENCE-ENV-13).
pub fn program_candidates<'a>(
    name: &'a str,
    path: Option<&'a str>,
) -> Box<dyn Iterator<Item = std::path::PathBuf> + 'a> {
    use std::os::unix::fs::PermissionsExt;
    if name.contains('/') {
        return Box::new(std::iter::once(std::path::PathBuf::from(name)));
    }
    if name.is_empty() {
        return Box::new(std::iter::empty());
    }
    Box::new(
        path.unwrap_or("/usr/local/bin:/usr/bin:/bin")
            .split(':')
            .map(move |dir| std::path::Path::new(if dir.is_empty() { "." } else { dir }).join(name))
            .filter(|candidate| {
                std::fs::metadata(candidate).is_ok_and(|m| {
                    m.is_file()
                        && m.permissions().mode() & 0o111 != 0
                        && rustix::fs::access(candidate, rustix::fs::Access::EXEC_OK).is_ok()
                })
            }),
    )
}

#[cfg(not(target_os = "linux"))]
fn find_program(name: &str, _path: Option<&str>) -> std::path::PathBuf {
    std::path::PathBuf::from(name)
}

/// [`Step::WriteFile`]: a file of the fence's own on an open tree's tmpfs (read-only once
/// the tree is sealed), made new: nothing is there to follow or overwrite.
///
/// [`Step::WriteFile`]: crate::fence::plan::Step::WriteFile
#[cfg(target_os = "linux")]
fn write_file(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    let dst = under(Path::new(NEW_ROOT), path);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&dst)
        .and_then(|mut f| f.write_all(contents.as_bytes()))
        .map_err(named(path))
}

/// Listen on the jail's `127.0.0.1` and hand the listening socket to the launcher over the
/// inherited socket of the plan; the jail keeps no copy. Runs in the fenced process.
#[cfg(target_os = "linux")]
pub fn hand_out_listener(l: &crate::fence::plan::ListenerHandoff) -> std::io::Result<()> {
    use std::os::fd::AsFd;
    let over = crate::sys::handoff::adopt(l.fd)?;
    let listener = crate::sys::net::listen_loopback(l.port)?;
    crate::sys::net::send_fd(over.as_fd(), listener.as_fd())
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;
    use crate::fence::plan::{Action, Preflight, Step};
    use crate::fence::policy::Policy;
    use crate::fence::posture::BackendKind;

    fn checked_plan() -> Plan {
        let mut policy = Policy::new(vec!["/w/ws".into()], "/w/scratch".into());
        policy.read_only = vec!["/w/outside".into()];
        let action = Action::CheckedExec {
            argv: vec!["true".into()],
            preflight: Preflight {
                outside: "/w/outside".into(),
                inside: "/w/scratch/probe".into(),
                tag: "t".into(),
                report_fd: 3,
                go_fd: 4,
            },
            listener: None,
            terminal: None,
            resolver: None,
        };
        Plan::native(&policy, None, action, vec![]).unwrap()
    }

    fn early(plan: &Plan) -> Early {
        Early {
            parent_pid: plan.parent_pid.unwrap(),
            ids: (0, 0),
            network_thread: false,
            host_network: plan.host_network,
        }
    }

    #[test]
    fn an_early_init_resumes_right_after_its_fork() {
        let plan = checked_plan();
        let at = resume_after_fork(&plan, &early(&plan)).unwrap();
        assert_eq!(plan.steps[at - 1], Step::ForkInit);
        assert_eq!(plan.steps[at - 2], Step::Unshare);
        assert!(plan.steps[1..at - 2]
            .iter()
            .all(|s| matches!(s, Step::PrepareProtected { .. })));
    }

    #[test]
    fn an_early_init_refuses_a_plan_not_made_for_it() {
        let plan = checked_plan();
        let e = early(&plan);
        let other_launcher = Early {
            parent_pid: e.parent_pid + 1,
            ..e
        };
        assert!(resume_after_fork(&plan, &other_launcher).is_err());
        let other_network = Early {
            host_network: !e.host_network,
            ..e
        };
        assert!(resume_after_fork(&plan, &other_network).is_err());
        let mut bwrap = plan.clone();
        bwrap.backend = BackendKind::Bwrap;
        assert!(resume_after_fork(&bwrap, &e).is_err());
        let mut exec = plan.clone();
        exec.action = Action::Exec {
            argv: vec!["true".into()],
        };
        assert!(resume_after_fork(&exec, &e).is_err());
        // A step the helper never took, before the namespaces it already made.
        let mut extra = plan.clone();
        extra.steps.insert(1, Step::MakeMountsPrivate);
        assert!(resume_after_fork(&extra, &e).is_err());
        let mut late = plan.clone();
        late.steps.retain(|s| *s != Step::DieWithParent);
        assert!(resume_after_fork(&late, &e).is_err());
        let mut no_fork = plan;
        no_fork.steps.retain(|s| *s != Step::ForkInit);
        assert!(resume_after_fork(&no_fork, &e).is_err());
    }
}
