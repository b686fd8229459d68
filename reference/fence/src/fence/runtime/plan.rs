//! The fence as data: an ordered list of setup steps built from the policy and the probed
//! host, validated, then applied by one linear function (`jail.rs`).
//!
//! The plan travels from the launcher to the re-executed helper as JSON, so everything the
//! helper does is visible, testable and checked before a single system call is made.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fence::error::FenceError;
use crate::fence::policy::{is_normal_absolute, Policy};
use crate::fence::posture::BackendKind;
pub use crate::sys::landlock::{Abi, LandlockReport, LandlockRules};

/// The host's temporary directories: in a mount tree of the jail's own, each an empty
/// directory of the read-only root (FENCE-JAIL-21), where a write fails with `EROFS`.
pub const TEMP_DIRS: [&str; 2] = ["/tmp", "/var/tmp"];

/// The device nodes bound into the minimal `/dev`.
pub const DEV_NODES: [&str; 6] = ["null", "zero", "full", "random", "urandom", "tty"];

/// The corners of a fresh `/proc` that stay writable to root and reach the host's kernel:
/// covered read-only by mount on every backend (FENCE-JAIL-16), as bubblewrap does where its
/// own write test sees them.
pub const PROC_READ_ONLY: [&str; 4] =
    ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"];

/// Host name inside the UTS namespace.
pub const HOSTNAME: &str = "gatehouse";

/// What the helper actually enforced before running anything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Enforcement {
    /// New namespaces and a fresh root were set up.
    pub namespaces: bool,
    /// The helper is PID 1 of its PID namespace.
    pub pid1: bool,
    /// Every capability set was dropped and verified empty.
    pub capabilities_dropped: bool,
    /// Landlock's result.
    pub landlock: Option<LandlockReport>,
    /// Number of seccomp filter instructions installed (0: none).
    pub seccomp_instructions: usize,
}

/// One setup step. The order of variants is the order of phases (see [`Step::phase`]).
/// Externally tagged in JSON (`{"bind-read-only":{"path":"/opt"}}`, `"unshare"`), serde's
/// default: an internally tagged enum is read through a buffered copy of each variant,
/// which made the jail's init read its 4 KB plan a fifth slower (benches/README.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Step {
    /// SIGKILL when the parent goes; check it has not gone already.
    DieWithParent,
    /// On the host, before any namespace: create a missing protected path (never through a
    /// symlink) so that it can be a mount point.
    PrepareProtected {
        /// The workspace root.
        root: PathBuf,
        /// The protected path, relative to the root.
        rel: PathBuf,
        /// Create a missing one as an empty file (an included configuration file), not
        /// as an empty directory.
        #[serde(default)]
        file: bool,
    },
    /// New user, mount, PID, IPC and UTS namespaces; uid/gid mapped to ourselves.
    Unshare,
    /// Fork so the child is PID 1 of the new PID namespace; the parent waits and relays.
    /// Unless the network is the host's, the parent first makes the jail's network
    /// namespace and hands it to the child ([`Step::JoinNetwork`]).
    ForkInit,
    /// Make every mount private.
    MakeMountsPrivate,
    /// Mount a staging tmpfs over `/tmp` and pivot into it; the host root is `/oldroot`.
    StageRoot,
    /// Mount the fresh tmpfs that becomes the new root, at `/newroot`.
    NewRoot,
    /// A tmpfs at `path` that holds the binds below it until [`Step::SealTree`] makes the
    /// whole tree read-only at once (`/etc`, whose allowed entries are bound one by one).
    Tree {
        /// Where.
        path: PathBuf,
    },
    /// Every mount at or beneath `path` (a [`Step::Tree`]) read-only, `nosuid`, `nodev`:
    /// one recursive `mount_setattr` (Linux 5.12), one remount per mount before that.
    SealTree {
        /// The tree.
        path: PathBuf,
    },
    /// Bind a host path read-only at the same path (inside a [`Step::Tree`], bound as is
    /// and made read-only by its seal).
    BindReadOnly {
        /// The path (source outside, destination inside).
        path: PathBuf,
    },
    /// Hide an object of a visible tree: a directory under an empty read-only tmpfs, a
    /// file under the null device on a `nodev` mount (opening it fails). Two uses: a
    /// root-only object below a bound `/etc` entry (FENCE-JAIL-17), among the system
    /// binds; a path the person hid (`--hide`, FENCE-PATHS-1), last of the tree so that
    /// nothing bound later can uncover it.
    Mask {
        /// The path (inside a bind).
        path: PathBuf,
        /// Whether it is a directory.
        dir: bool,
    },
    /// Replicate a host symlink (`/bin -> usr/bin`).
    Symlink {
        /// The link's target, verbatim.
        target: PathBuf,
        /// The link's path.
        path: PathBuf,
    },
    /// A fresh `/proc` for the new PID namespace.
    Proc,
    /// A minimal `/dev`: the listed nodes bound from the host, `/dev/shm` as tmpfs.
    Dev {
        /// Node names under `/dev`.
        nodes: Vec<String>,
    },
    /// An empty directory of the new root, read-only with it once [`Step::SealRoot`] has
    /// run: the host's temporary directories (`/tmp`, `/var/tmp`), where a write fails
    /// with `EROFS` instead of landing in a private tmpfs that swallows it
    /// (FENCE-JAIL-21). Not a mount: it lies on the new root's own tmpfs, before any bind.
    Dir {
        /// Where.
        path: PathBuf,
    },
    /// The scratch directory of a one-shot command, with its `home` and `tmp`: a private
    /// tmpfs of its own (mode 0700), the jail's only writable temporary directory
    /// (`TMPDIR`). Nothing of it exists on the host, so nothing is created there or tidied
    /// afterwards.
    Scratch {
        /// The directory (its own tmpfs).
        path: PathBuf,
    },
    /// Bind a host directory read-write at the same path.
    BindReadWrite {
        /// The path.
        path: PathBuf,
    },
    /// Inside a read-write root: pin each parent of `rel` (so it cannot be renamed away) and
    /// bind `rel` read-only over itself.
    Protect {
        /// The workspace root.
        root: PathBuf,
        /// The protected path, relative to the root.
        rel: PathBuf,
    },
    /// Inside bubblewrap's finished tree, by the helper: what [`Step::Protect`] does, for a
    /// protected path below a parent a writable root holds, which bubblewrap would reach by
    /// its path and follow a symlink of onto the host (FENCE-PROTECT-18).
    ProtectInJail {
        /// The writable root.
        root: PathBuf,
        /// The protected path, relative to the root (more than one component).
        rel: PathBuf,
    },
    /// Inside bubblewrap's finished tree, by the helper: hide `rel` below the writable root
    /// `root` (an empty read-only tmpfs over a directory, the null device over anything
    /// else), reached through no-follow descriptors (FENCE-PROTECT-18).
    MaskInJail {
        /// The writable root.
        root: PathBuf,
        /// The hidden path, relative to the root.
        rel: PathBuf,
        /// Whether it is a directory.
        dir: bool,
    },
    /// A file of the fence's own, written on the tmpfs of an open [`Step::Tree`] and
    /// read-only once the tree is sealed: `/etc/resolv.conf` naming the fence's resolver
    /// at `127.0.0.1` in place of the host's (FENCE-NET-13).
    WriteFile {
        /// Where (directly in an open tree).
        path: PathBuf,
        /// What it holds.
        contents: String,
    },
    /// Remount the new root's tmpfs read-only.
    SealRoot,
    /// Pivot into the new root and detach every host mount.
    PivotRoot,
    /// Join the network namespace the helper made after [`Step::ForkInit`] (its loopback
    /// only): made there, in parallel with the mount tree, rather than by `unshare`.
    JoinNetwork,
    /// Remount every device node of `/dev` read-only (FENCE-JAIL-14): data flows, no
    /// change of mode, owner, times or attributes reaches the host's inode.
    SealDevices {
        /// Node names under `/dev`.
        nodes: Vec<String>,
    },
    /// Cover the writable corners of `/proc` read-only by mount (FENCE-JAIL-16).
    CoverProc {
        /// The paths (those absent are left out).
        paths: Vec<PathBuf>,
    },
    /// Set the host name of the UTS namespace.
    Hostname {
        /// The name.
        name: String,
    },
    /// In the jail's own network namespace, while the capabilities are held (port 53 needs
    /// `CAP_NET_BIND_SERVICE`): bind a UDP socket and a TCP listener on `127.0.0.1:53` and
    /// hand both to the launcher on the action's resolver socket, keeping no copy; the
    /// launcher answers every name asked there, refusing it (FENCE-NET-13).
    Resolver,
    /// `PR_SET_NO_NEW_PRIVS`.
    NoNewPrivs,
    /// Drop every capability set and verify none remains.
    DropCapabilities,
    /// Apply Landlock.
    Landlock(LandlockRules),
    /// Install the seccomp filter (last before the action).
    Seccomp,
}

impl Step {
    /// The step's phase: a valid plan never goes back to an earlier phase.
    pub fn phase(&self) -> u8 {
        match self {
            Step::DieWithParent => 0,
            Step::PrepareProtected { .. } => 1,
            Step::Unshare => 2,
            Step::ForkInit => 3,
            Step::MakeMountsPrivate => 4,
            Step::StageRoot => 5,
            Step::NewRoot => 6,
            Step::Tree { .. }
            | Step::SealTree { .. }
            | Step::BindReadOnly { .. }
            | Step::Mask { .. }
            | Step::Symlink { .. }
            | Step::Proc
            | Step::Dev { .. }
            | Step::Dir { .. }
            | Step::Scratch { .. }
            | Step::BindReadWrite { .. }
            | Step::Protect { .. }
            | Step::WriteFile { .. } => 7,
            Step::SealRoot => 8,
            Step::PivotRoot => 9,
            Step::JoinNetwork
            | Step::ProtectInJail { .. }
            | Step::MaskInJail { .. }
            | Step::SealDevices { .. }
            | Step::CoverProc { .. }
            | Step::Hostname { .. }
            | Step::Resolver => 10,
            Step::NoNewPrivs => 11,
            Step::DropCapabilities => 12,
            Step::Landlock(_) => 13,
            Step::Seccomp => 14,
        }
    }

    /// The step's name.
    pub fn name(&self) -> &'static str {
        match self {
            Step::DieWithParent => "die-with-parent",
            Step::PrepareProtected { .. } => "prepare-protected",
            Step::Unshare => "unshare",
            Step::ForkInit => "fork-init",
            Step::MakeMountsPrivate => "make-mounts-private",
            Step::StageRoot => "stage-root",
            Step::NewRoot => "new-root",
            Step::Tree { .. } => "tree",
            Step::SealTree { .. } => "seal-tree",
            Step::BindReadOnly { .. } => "bind-read-only",
            Step::Mask { .. } => "mask",
            Step::Symlink { .. } => "symlink",
            Step::Proc => "proc",
            Step::Dev { .. } => "dev",
            Step::Dir { .. } => "dir",
            Step::Scratch { .. } => "scratch",
            Step::BindReadWrite { .. } => "bind-read-write",
            Step::Protect { .. } => "protect",
            Step::ProtectInJail { .. } => "protect-in-jail",
            Step::MaskInJail { .. } => "mask-in-jail",
            Step::WriteFile { .. } => "write-file",
            Step::SealRoot => "seal-root",
            Step::PivotRoot => "pivot-root",
            Step::JoinNetwork => "join-network",
            Step::SealDevices { .. } => "seal-devices",
            Step::CoverProc { .. } => "cover-proc",
            Step::Hostname { .. } => "hostname",
            Step::Resolver => "resolver",
            Step::NoNewPrivs => "no-new-privs",
            Step::DropCapabilities => "drop-capabilities",
            Step::Landlock(_) => "landlock",
            Step::Seccomp => "seccomp",
        }
    }

    /// Where a mount-building step puts something inside the new root.
    fn dest(&self) -> Option<PathBuf> {
        match self {
            Step::BindReadOnly { path }
            | Step::Tree { path }
            | Step::Mask { path, .. }
            | Step::Symlink { path, .. }
            | Step::Scratch { path }
            | Step::BindReadWrite { path } => Some(path.clone()),
            Step::Proc => Some(PathBuf::from("/proc")),
            Step::Dev { .. } => Some(PathBuf::from("/dev")),
            Step::Protect { root, rel } => Some(root.join(rel)),
            _ => None,
        }
    }
}

/// What the helper does once the fence is up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Action {
    /// Run one command (as a child of the namespace's init, or by `exec` when there is no
    /// PID namespace), with inherited standard streams.
    Exec {
        /// The command and its arguments.
        argv: Vec<String>,
    },
    /// Run the probe's legs inside this very jail, after its last setup step, hand the
    /// report to the launcher and run the command only on its go (see
    /// [`Preflight`]).
    CheckedExec {
        /// The command and its arguments.
        argv: Vec<String>,
        /// The legs' directories and the two descriptors to the launcher.
        preflight: Preflight,
        /// The `allow-list` network mode: listen on the jail's loopback and hand the
        /// listening socket to the launcher, whose proxy serves it.
        #[serde(default)]
        listener: Option<ListenerHandoff>,
        /// A terminal (FENCE-TTY-2): the inherited socket on which the helper hands out
        /// the master of a pseudo-terminal it opened in the jail; the command gets the
        /// slave as its controlling terminal.
        #[serde(default)]
        terminal: Option<i32>,
        /// The fence's resolver (FENCE-NET-13, the `off` network mode of a native jail):
        /// the inherited socket [`Step::Resolver`] hands the jail's port 53 out on.
        #[serde(default)]
        resolver: Option<i32>,
    },
    /// Serve the executor protocol on stdin/stdout (a pooled executor).
    Serve {
        /// The `allow-list` network mode: as for [`Action::CheckedExec`], the listener is
        /// handed out before the first request, and the jail keeps no copy.
        #[serde(default)]
        listener: Option<ListenerHandoff>,
    },
    /// Run the probe's legs in-process and print the report as JSON.
    Probe {
        /// A read-only directory outside every writable root, holding `victim`.
        outside: PathBuf,
        /// A writable directory.
        inside: PathBuf,
    },
}

/// The legs of one command's own jail (the `checked-exec` action): they run inside the
/// very jail that runs the command, after its last setup step, and the command starts
/// only once the launcher has judged the files from outside and said go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preflight {
    /// A read-only directory outside every writable root, holding the victim.
    pub outside: PathBuf,
    /// A writable directory (inside the session's scratch).
    pub inside: PathBuf,
    /// The tag of this preflight's victim and forbidden file in `outside`
    /// ([`crate::fence::probe::victim_name`]).
    #[serde(default)]
    pub tag: String,
    /// The descriptor the helper writes its [`crate::fence::probe::LegReport`] to, then closes.
    pub report_fd: i32,
    /// The descriptor the helper reads the launcher's [`crate::fence::probe::GO`] from.
    pub go_fd: i32,
}

/// Where the jail listens for its proxy, and the socket it hands the listener over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListenerHandoff {
    /// The port on the jail's `127.0.0.1`.
    pub port: u16,
    /// The inherited UNIX socket to send the listening socket on.
    pub fd: i32,
}

/// A complete, validated plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The backend this plan belongs to (for messages).
    pub backend: BackendKind,
    /// Setup steps, in order.
    pub steps: Vec<Step>,
    /// What to do once the fence is up.
    pub action: Action,
    /// The complete environment of the jailed command (already scrubbed).
    pub env: Vec<(String, String)>,
    /// Working directory inside the fence.
    pub cwd: PathBuf,
    /// The launcher's pid, checked by [`Step::DieWithParent`].
    pub parent_pid: Option<u32>,
    /// A fault to inject, for the tests that show the probe catching a layer that fails
    /// silently (see [`Fault`]); only in a build with the `test-faults` feature; without
    /// it a plan naming a fault is refused as an unknown field.
    #[cfg(feature = "test-faults")]
    #[serde(default)]
    pub fault: Option<Fault>,
    /// The `host` network mode: [`Step::Unshare`] keeps the host's network namespace.
    #[serde(default)]
    pub host_network: bool,
}

/// `GATEHOUSE_JAIL_FAULT`: make a layer fail silently, so a test can show that the jail's
/// own probe refuses it and nothing runs. Only faults the probe's legs detect exist: a
/// fault that a probe could miss would be a way to weaken the fence. Read only by a build
/// with the cargo feature `test-faults`, which the reference's own tests enable and no
/// release build does: a release binary ignores the variable (`tests/release_faults.rs`).
/// The name stays in every build so that tests can remove it from a child's environment.
pub const FAULT_ENV: &str = "GATEHOUSE_JAIL_FAULT";

/// A layer that fails silently (only with the `test-faults` feature).
#[cfg(feature = "test-faults")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fault {
    /// Read-only binds stay writable and Landlock is skipped, while the helper reports
    /// both as done: the forbidden write of the probe goes through.
    ReadOnlyHole,
    /// The native jail's init skips [`Step::JoinNetwork`] and goes on as if it had
    /// joined: it stays in the host's network namespace, which the launcher sees from
    /// outside before the verdict ([`crate::fence::probe::judge_network`]).
    SharedNetwork,
}

#[cfg(feature = "test-faults")]
impl Fault {
    /// The fault named by [`FAULT_ENV`] in the launcher's environment.
    pub fn from_env() -> Option<Fault> {
        match std::env::var(FAULT_ENV).as_deref() {
            Ok("read-only-hole") => Some(Fault::ReadOnlyHole),
            Ok("shared-network") => Some(Fault::SharedNetwork),
            _ => None,
        }
    }
}

/// Whether `GATEHOUSE_JAIL_FAULT=read-only-hole` is in force for a backend that builds its
/// jail without a plan (bubblewrap's arguments): never without the `test-faults` feature.
pub fn read_only_hole_from_env() -> bool {
    #[cfg(feature = "test-faults")]
    return Fault::from_env() == Some(Fault::ReadOnlyHole);
    #[cfg(not(feature = "test-faults"))]
    return false;
}

impl Plan {
    /// The injected [`Fault::ReadOnlyHole`]: read-only binds left writable and Landlock
    /// skipped, both reported done. Always `false` without the `test-faults` feature.
    pub fn read_only_hole(&self) -> bool {
        #[cfg(feature = "test-faults")]
        return self.fault == Some(Fault::ReadOnlyHole);
        #[cfg(not(feature = "test-faults"))]
        return false;
    }

    /// The injected [`Fault::SharedNetwork`]: the join of the network namespace skipped
    /// and claimed. Always `false` without the `test-faults` feature.
    pub fn shared_network(&self) -> bool {
        #[cfg(feature = "test-faults")]
        return self.fault == Some(Fault::SharedNetwork);
        #[cfg(not(feature = "test-faults"))]
        return false;
    }
}

/// The hidden paths that a visible tree of the jail holds (a system bind among `system`,
/// a read-only path, a writable root), as [`Step::Mask`] steps; one outside every visible
/// tree is absent already and needs no step.
pub fn hide_steps(policy: &Policy, system: &[Step]) -> Vec<Step> {
    let mut visible: Vec<PathBuf> = system
        .iter()
        .filter_map(|s| match s {
            Step::BindReadOnly { path } => Some(path.clone()),
            _ => None,
        })
        .collect();
    visible.extend(policy.read_only.iter().cloned());
    visible.extend(policy.writable_roots());
    let mut hidden = policy.hidden.clone();
    hidden.sort();
    hidden.dedup();
    hidden
        .into_iter()
        .filter(|h| visible.iter().any(|v| h.starts_with(v) && h != v))
        .map(|path| Step::Mask {
            dir: std::fs::symlink_metadata(&path)
                .map(|m| m.is_dir())
                .unwrap_or(false),
            path,
        })
        .collect()
}

/// The mount-tree and system-call steps shared by the plan builders.
pub struct Layout {
    /// Read-only binds and symlinks of system paths, in order.
    pub system: Vec<Step>,
    /// Landlock rules for a namespaced fence, when Landlock is a layer.
    pub rules: Option<LandlockRules>,
}

/// Whether the host lets others read `m` (and enter it, for a directory).
fn others_may_read(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let mode = m.permissions().mode();
    if m.is_dir() {
        mode & 0o005 == 0o005
    } else {
        mode & 0o004 != 0
    }
}

/// How deep below an `/etc` entry root-only objects are looked for.
const MASK_DEPTH: usize = 8;

/// A [`Step::Mask`] for every object below `dir` that others may not read, not following
/// symlinks (a link's target is bound or not on its own account). The names come from
/// `listings` (a directory unchanged since an earlier command is not read again); the
/// metadata of every entry is looked up now.
fn root_only_beneath(
    dir: &Path,
    depth: usize,
    listings: &mut crate::fence::listing::Listings,
    out: &mut Vec<Step>,
) {
    if depth > MASK_DEPTH {
        return;
    }
    let Some(names) = listings.entries(dir) else {
        return;
    };
    for name in names {
        let path = dir.join(&name);
        let Ok(m) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if m.file_type().is_symlink() || !(m.is_dir() || m.is_file()) {
            continue;
        }
        if !others_may_read(&m) {
            out.push(Step::Mask {
                dir: m.is_dir(),
                path,
            });
        } else if m.is_dir() {
            root_only_beneath(&path, depth + 1, listings, out);
        }
    }
}

impl Layout {
    /// Resolve the policy's system paths on this host: existing directories and files
    /// become read-only binds, symlinks are replicated, absent ones are left out.
    pub fn of(policy: &Policy, landlock_abi: Option<Abi>) -> Layout {
        let mut system = Vec::new();
        let mut read = Vec::new();
        let mut dirs: Vec<PathBuf> = policy.system_dirs.clone();
        dirs.sort();
        let etc: Vec<PathBuf> = policy
            .etc_entries
            .iter()
            .map(|e| Path::new("/etc").join(e))
            .collect();
        let mut tree = false;
        let mut listings = crate::fence::listing::Listings::load();
        for p in dirs.iter().chain(etc.iter()) {
            if p.starts_with("/etc") && p != Path::new("/etc") && !tree {
                // One tmpfs for the allowed entries, sealed read-only with all of them in
                // one call once they are bound.
                system.push(Step::Tree {
                    path: PathBuf::from("/etc"),
                });
                tree = true;
            }
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.file_type().is_symlink() => {
                    if let Ok(target) = std::fs::read_link(p) {
                        system.push(Step::Symlink {
                            target,
                            path: p.clone(),
                        });
                        read.push(p.clone());
                    }
                }
                Ok(m) if m.is_dir() || m.is_file() => {
                    if p.starts_with("/etc") && !others_may_read(&m) {
                        // A root-only entry named in the allow-list is left out.
                        continue;
                    }
                    system.push(Step::BindReadOnly { path: p.clone() });
                    read.push(p.clone());
                    if p.starts_with("/etc") && m.is_dir() {
                        root_only_beneath(p, 0, &mut listings, &mut system);
                    }
                }
                _ => {}
            }
        }
        listings.save();
        if tree {
            system.push(Step::SealTree {
                path: PathBuf::from("/etc"),
            });
        }
        read.extend(policy.read_only.iter().cloned());
        read.push(PathBuf::from("/proc"));
        // The host's `/tmp` is no writable root: the scratch's `tmp` is the jail's
        // temporary directory (FENCE-JAIL-21); `/dev/shm` is the jail's private one.
        let mut write = policy.writable_roots();
        write.push(PathBuf::from("/dev/shm"));
        let devices = DEV_NODES
            .iter()
            .map(|n| Path::new("/dev").join(n))
            .chain([PathBuf::from("/dev/pts"), PathBuf::from("/dev/ptmx")])
            .collect();
        Layout {
            system,
            rules: landlock_abi.map(|abi| LandlockRules {
                abi,
                read,
                write,
                devices,
                list_root: true,
            }),
        }
    }
}

/// In a mount tree of the jail's own (native, bubblewrap) `/etc` holds the allowed entries
/// and nothing else, so one Landlock read rule on it stands for one per entry: some 35
/// fewer rules (an `open`, a `landlock_add_rule` and a `close` each) per jail. Landlock
/// alone, on the host's tree, keeps a rule per entry.
fn one_rule_for_etc(rules: &mut LandlockRules) {
    let etc = Path::new("/etc");
    let before = rules.read.len();
    rules.read.retain(|p| !p.starts_with(etc) || p == etc);
    if rules.read.len() != before && !rules.read.iter().any(|p| p == etc) {
        rules.read.push(etc.to_path_buf());
    }
}

/// The jail's `/etc/resolv.conf` when the fence answers its lookups (FENCE-NET-13).
pub const RESOLV_CONF: &str = "/etc/resolv.conf";

/// What the jail's [`RESOLV_CONF`] says then: the fence's resolver on the jail's own
/// loopback, asked once, no search domains (the names recorded are the ones asked).
pub const RESOLV_CONF_CONTENTS: &str = "# gatehouse: the network is off; the fence answers every name here, refusing it\nnameserver 127.0.0.1\noptions attempts:1\n";

/// The host's `/etc/resolv.conf` (a bind or a symlink, and anything masked below it) left
/// out of the `/etc` tree of `system`, and a file of the fence's own naming its resolver
/// written in its place before the tree is sealed. Without an `/etc` tree nothing is
/// written: a resolver library with no `resolv.conf` asks `127.0.0.1` anyway.
fn own_resolv_conf(system: &mut Vec<Step>) {
    let conf = Path::new(RESOLV_CONF);
    system.retain(|s| match s {
        Step::BindReadOnly { path } | Step::Symlink { path, .. } | Step::Mask { path, .. } => {
            !path.starts_with(conf)
        }
        _ => true,
    });
    let seal = system
        .iter()
        .position(|s| matches!(s, Step::SealTree { path } if path == Path::new("/etc")));
    if let Some(at) = seal {
        system.insert(
            at,
            Step::WriteFile {
                path: conf.to_path_buf(),
                contents: RESOLV_CONF_CONTENTS.to_string(),
            },
        );
    }
}

fn seal_devices() -> Step {
    Step::SealDevices {
        nodes: DEV_NODES.iter().map(|s| s.to_string()).collect(),
    }
}

fn cover_proc() -> Step {
    Step::CoverProc {
        paths: PROC_READ_ONLY.iter().map(PathBuf::from).collect(),
    }
}

impl Plan {
    /// The native namespaced fence: namespaces and a fresh root, then capabilities dropped,
    /// Landlock (when the kernel has it) and seccomp.
    pub fn native(
        policy: &Policy,
        landlock_abi: Option<Abi>,
        action: Action,
        env: Vec<(String, String)>,
    ) -> Result<Plan, FenceError> {
        let mut layout = Layout::of(policy, landlock_abi);
        let resolver = !policy.host_network
            && matches!(
                action,
                Action::CheckedExec {
                    resolver: Some(_),
                    ..
                }
            );
        if resolver {
            own_resolv_conf(&mut layout.system);
        }
        let mut steps = vec![Step::DieWithParent];
        for p in policy.protected_paths() {
            let file = crate::fence::protect::placeholder_is_file(&p);
            steps.push(Step::PrepareProtected {
                root: p.root,
                rel: p.rel,
                file,
            });
        }
        steps.extend([
            Step::Unshare,
            Step::ForkInit,
            Step::MakeMountsPrivate,
            Step::StageRoot,
            Step::NewRoot,
        ]);
        let hidden = hide_steps(policy, &layout.system);
        steps.extend(layout.system);
        steps.push(Step::Proc);
        steps.push(Step::Dev {
            nodes: DEV_NODES.iter().map(|s| s.to_string()).collect(),
        });
        for t in TEMP_DIRS {
            steps.push(Step::Dir {
                path: PathBuf::from(t),
            });
        }
        if policy.scratch_in_jail {
            steps.push(Step::Scratch {
                path: policy.scratch.clone(),
            });
        }
        for p in &policy.read_only {
            steps.push(Step::BindReadOnly { path: p.clone() });
        }
        let mut rw = policy.writable_roots();
        if policy.scratch_in_jail {
            rw.retain(|p| *p != policy.scratch);
        }
        rw.sort();
        for p in rw {
            steps.push(Step::BindReadWrite { path: p });
        }
        for p in policy.protected_paths() {
            steps.push(Step::Protect {
                root: p.root,
                rel: p.rel,
            });
        }
        steps.extend(hidden);
        steps.extend([Step::SealRoot, Step::PivotRoot]);
        if !policy.host_network {
            steps.push(Step::JoinNetwork);
        }
        if resolver {
            steps.push(Step::Resolver);
        }
        steps.extend([
            cover_proc(),
            Step::Hostname {
                name: HOSTNAME.to_string(),
            },
            Step::NoNewPrivs,
            Step::DropCapabilities,
        ]);
        if let Some(mut rules) = layout.rules {
            one_rule_for_etc(&mut rules);
            steps.push(Step::Landlock(rules));
        }
        steps.push(Step::Seccomp);
        Plan::finish(BackendKind::Native, steps, policy, action, env)
    }

    /// Landlock alone (no user namespaces): the degraded native fence.
    pub fn landlock_only(
        policy: &Policy,
        landlock_abi: Abi,
        action: Action,
        env: Vec<(String, String)>,
    ) -> Result<Plan, FenceError> {
        if let Some(h) = policy.hidden.first() {
            return Err(FenceError::Policy {
                path: h.clone(),
                reason: "hiding a path needs a mount namespace, which Landlock alone does not have"
                    .into(),
            });
        }
        let Some(mut rules) = Layout::of(policy, Some(landlock_abi)).rules else {
            unreachable!("a layout with an ABI has rules")
        };
        // No mount tree of ours: the host's /, /tmp and /dev/shm stay out of reach.
        rules.list_root = false;
        rules.write = policy.writable_roots();
        // No devpts of the jail's own either: the host's /dev/pts holds the person's
        // terminals, which a path rule would open to the command by number.
        rules.devices.retain(|d| d != Path::new("/dev/pts"));
        let steps = vec![
            Step::DieWithParent,
            Step::NoNewPrivs,
            Step::DropCapabilities,
            Step::Landlock(rules),
            Step::Seccomp,
        ];
        Plan::finish(BackendKind::Native, steps, policy, action, env)
    }

    /// The steps the helper applies inside bubblewrap, which has built the namespaces and
    /// the mount tree: verify capabilities are gone, then Landlock and seccomp.
    pub fn inside_bwrap(
        policy: &Policy,
        landlock_abi: Option<Abi>,
        action: Action,
        env: Vec<(String, String)>,
    ) -> Result<Plan, FenceError> {
        let layout = Layout::of(policy, landlock_abi);
        // bubblewrap leaves the helper CAP_SYS_ADMIN in its user namespace for these two
        // steps only; the drop that follows verifies that nothing remains.
        // While the helper still holds its capability: what bubblewrap must not reach by
        // path (FENCE-PROTECT-18), after the devices (whose refusal names the backend's
        // limit where bubblewrap keeps its mount namespace out of the helper's reach).
        let mut steps = vec![seal_devices(), cover_proc()];
        steps.extend(left_to_the_helper(policy, &layout.system));
        steps.extend([Step::NoNewPrivs, Step::DropCapabilities]);
        if let Some(mut rules) = layout.rules {
            one_rule_for_etc(&mut rules);
            steps.push(Step::Landlock(rules));
        }
        steps.push(Step::Seccomp);
        Plan::finish(BackendKind::Bwrap, steps, policy, action, env)
    }

    /// No steps: Seatbelt (the profile is the fence) or the operator's `off`.
    pub fn bare(
        backend: BackendKind,
        policy: &Policy,
        action: Action,
        env: Vec<(String, String)>,
    ) -> Result<Plan, FenceError> {
        Plan::finish(backend, Vec::new(), policy, action, env)
    }

    fn finish(
        backend: BackendKind,
        steps: Vec<Step>,
        policy: &Policy,
        action: Action,
        env: Vec<(String, String)>,
    ) -> Result<Plan, FenceError> {
        let plan = Plan {
            backend,
            steps,
            action,
            env,
            cwd: policy.working_dir(),
            parent_pid: Some(std::process::id()),
            #[cfg(feature = "test-faults")]
            fault: Fault::from_env(),
            host_network: policy.host_network,
        };
        plan.validate()?;
        Ok(plan)
    }

    /// Whether the plan builds its own namespaces.
    pub fn namespaced(&self) -> bool {
        self.steps.contains(&Step::Unshare)
    }

    /// Check the plan before anything is applied: phases in order, the mount framework
    /// complete, no mount hiding an earlier one, no build step below a read-write root
    /// except a protection, paths absolute and normalized, privileges given up.
    ///
    /// Each step goes through `STEP_CHECKS` in turn, then the whole plan through
    /// `PLAN_CHECKS`; the first failing check is the error.
    pub fn validate(&self) -> Result<(), FenceError> {
        let mut walk = PlanWalk::new(self);
        for (i, step) in self.steps.iter().enumerate() {
            for check in STEP_CHECKS {
                check(&mut walk, i, step)?;
            }
        }
        PLAN_CHECKS.iter().try_for_each(|check| check(&walk))
    }

    fn has(&self, step: &Step) -> bool {
        self.steps.contains(step)
    }
}

/// What the checks of [`Plan::validate`] carry from one step to the next.
struct PlanWalk<'p> {
    plan: &'p Plan,
    /// The phase of the step before.
    phase: u8,
    /// Each earlier mount's destination as its components joined by `/`, so that the
    /// checks compare bytes (a plan has some 80 mounts; `Path::starts_with` walks
    /// components on every one of the n² comparisons), and whether it is read-write.
    mounts: Vec<(Vec<u8>, bool)>,
    /// `/proc` is mounted.
    proc_mounted: bool,
    /// The trees opened and not yet sealed.
    open_trees: Vec<&'p Path>,
    /// `no_new_privs` is set.
    no_new_privs: bool,
}

impl<'p> PlanWalk<'p> {
    fn new(plan: &'p Plan) -> PlanWalk<'p> {
        PlanWalk {
            plan,
            phase: 0,
            mounts: Vec::new(),
            proc_mounted: false,
            open_trees: Vec::new(),
            no_new_privs: false,
        }
    }

    /// An error of the whole plan, about the step named `step`.
    fn plan_err(&self, step: &str, reason: String) -> FenceError {
        FenceError::Plan {
            index: self.plan.steps.len(),
            step: step.to_string(),
            reason,
        }
    }
}

/// A check of one step, in its place in the plan.
type StepCheck = for<'p> fn(&mut PlanWalk<'p>, usize, &'p Step) -> Result<(), FenceError>;

/// The checks of each step, in order.
const STEP_CHECKS: [StepCheck; 4] = [
    in_phase_order,
    paths_absolute_and_normalized,
    preconditions_met,
    hides_nothing,
];

/// A check of the whole plan, after its steps.
type PlanCheck = fn(&PlanWalk<'_>) -> Result<(), FenceError>;

/// The checks of the whole plan, in order.
const PLAN_CHECKS: [PlanCheck; 6] = [
    trees_sealed,
    mount_framework_complete,
    network_namespace_joined,
    capabilities_dropped,
    cwd_absolute_and_normalized,
    command_given,
];

/// The error of step `index`.
fn step_err(index: usize, step: &Step, reason: &str) -> FenceError {
    FenceError::Plan {
        index,
        step: step.name().to_string(),
        reason: reason.to_string(),
    }
}

/// Steps come in the order of their phases.
fn in_phase_order<'p>(w: &mut PlanWalk<'p>, i: usize, step: &'p Step) -> Result<(), FenceError> {
    if step.phase() < w.phase {
        return Err(step_err(i, step, "comes after a later phase"));
    }
    w.phase = step.phase();
    Ok(())
}

/// Every path a step names is absolute and normalized (a protection's root, with its
/// relative path below it; what `/proc` is covered by below `/proc`; a device node a
/// single name).
fn paths_absolute_and_normalized<'p>(
    _: &mut PlanWalk<'p>,
    i: usize,
    step: &'p Step,
) -> Result<(), FenceError> {
    let err = |reason: &str| step_err(i, step, reason);
    let paths: Vec<&Path> = match step {
        Step::PrepareProtected { root, rel, .. }
        | Step::Protect { root, rel }
        | Step::ProtectInJail { root, rel }
        | Step::MaskInJail { root, rel, .. } => {
            if !rel.is_relative() || rel.as_os_str().is_empty() {
                return Err(err("a protected path is relative"));
            }
            vec![root.as_path()]
        }
        Step::BindReadOnly { path }
        | Step::Tree { path }
        | Step::SealTree { path }
        | Step::Mask { path, .. }
        | Step::BindReadWrite { path }
        | Step::Dir { path }
        | Step::Scratch { path }
        | Step::WriteFile { path, .. }
        | Step::Symlink { path, .. } => vec![path.as_path()],
        Step::CoverProc { paths } => {
            if let Some(p) = paths.iter().find(|p| !p.starts_with("/proc")) {
                return Err(err(&format!("{} is not below /proc", p.display())));
            }
            paths.iter().map(PathBuf::as_path).collect()
        }
        Step::SealDevices { nodes } => {
            if nodes
                .iter()
                .any(|n| n.is_empty() || n.contains('/') || n == "..")
            {
                return Err(err("a device node is a single name"));
            }
            Vec::new()
        }
        Step::Landlock(r) => r
            .read
            .iter()
            .chain(&r.write)
            .chain(&r.devices)
            .map(PathBuf::as_path)
            .collect(),
        _ => Vec::new(),
    };
    if let Some(p) = paths.iter().find(|p| !is_normal_absolute(p)) {
        return Err(err(&format!(
            "{} is not absolute and normalized",
            p.display()
        )));
    }
    Ok(())
}

/// What a step needs before it holds: fork-init for a PID namespace, a namespace to join
/// (and none in the host network mode), a directory of the new root on no mount, a tree opened
/// before it is sealed, `/proc` and a read-write root before a protection, no-new-privs
/// before Landlock and seccomp.
fn preconditions_met<'p>(w: &mut PlanWalk<'p>, i: usize, step: &'p Step) -> Result<(), FenceError> {
    let plan = w.plan;
    let err = |reason: &str| Err(step_err(i, step, reason));
    match step {
        Step::Unshare if !plan.has(&Step::ForkInit) => {
            return err("a new PID namespace needs fork-init")
        }
        // The namespace is made by the helper of fork-init, for the network mode
        // that asks for one, and only there.
        Step::JoinNetwork if plan.host_network => {
            return err("the host network mode joins no namespace")
        }
        Step::JoinNetwork if !plan.steps[..i].contains(&Step::ForkInit) => {
            return err("nothing before it makes a network namespace")
        }
        Step::Proc => w.proc_mounted = true,
        Step::Dir { path } => {
            // Made on the new root's tmpfs, which its seal makes read-only: never on a
            // bind (a host directory) or any other mount.
            let key = component_key(path);
            if w.mounts.iter().any(|(m, _)| key_within(&key, m)) {
                return err("an empty directory lies on a mount made before it");
            }
        }
        Step::Tree { path } => w.open_trees.push(path),
        Step::WriteFile { path, .. } => {
            // Directly on an open tree's own tmpfs, never on a bind within it.
            if !path.parent().is_some_and(|p| w.open_trees.contains(&p)) {
                return err("writes a file outside an open tree");
            }
            let key = component_key(path);
            let tree = path.parent().map(component_key).unwrap_or_default();
            if w.mounts
                .iter()
                .any(|(m, _)| key_within(&key, m) && *m != tree)
            {
                return err("writes a file on a mount made before it");
            }
        }
        Step::Resolver => {
            if plan.host_network || !plan.has(&Step::JoinNetwork) {
                return err("the resolver needs the jail's own network namespace");
            }
            if !matches!(
                plan.action,
                Action::CheckedExec {
                    resolver: Some(_),
                    ..
                }
            ) {
                return err("the action names no socket to hand the resolver out on");
            }
        }
        Step::SealTree { path } => {
            if !w.open_trees.contains(&path.as_path()) {
                return err("seals no tree opened before");
            }
            w.open_trees.retain(|t| *t != path.as_path());
        }
        Step::Protect { root, .. } => {
            if !w.proc_mounted {
                return err("protect reaches paths through /proc");
            }
            let root = component_key(root);
            if !w.mounts.iter().any(|(m, rw)| *rw && *m == root) {
                return err("the root is not bound read-write before");
            }
        }
        Step::NoNewPrivs => w.no_new_privs = true,
        Step::Landlock(_) | Step::Seccomp if !w.no_new_privs => {
            return err("needs no-new-privs first")
        }
        _ => {}
    }
    Ok(())
}

/// A mount hides no earlier one, and lies neither below a read-write root (a protection
/// or a hidden path excepted: they narrow what lies there; everything else there is
/// jailed code's to redirect) nor below `/proc` or `/dev`.
fn hides_nothing<'p>(w: &mut PlanWalk<'p>, i: usize, step: &'p Step) -> Result<(), FenceError> {
    let Some(dest) = step.dest() else {
        return Ok(());
    };
    let key = component_key(&dest);
    let is_protect = matches!(step, Step::Protect { .. } | Step::Mask { .. });
    for (earlier, rw) in &w.mounts {
        if key_within(earlier, &key) {
            return Err(step_err(
                i,
                step,
                &format!("{} would hide {}", dest.display(), shown(earlier)),
            ));
        }
        let below = key_within(&key, earlier);
        let under_rw = *rw && below;
        let under_special =
            below && (earlier.as_slice() == b"/proc" || earlier.as_slice() == b"/dev");
        if (under_rw && !is_protect) || under_special {
            return Err(step_err(
                i,
                step,
                &format!(
                    "{} lies below {}, which jailed code controls",
                    dest.display(),
                    shown(earlier)
                ),
            ));
        }
    }
    w.mounts.push((
        key,
        matches!(step, Step::BindReadWrite { .. } | Step::Scratch { .. }),
    ));
    Ok(())
}

/// Every tree opened is sealed read-only.
fn trees_sealed(w: &PlanWalk<'_>) -> Result<(), FenceError> {
    match w.open_trees.first() {
        Some(t) => Err(w.plan_err(
            "seal-tree",
            format!("the tree at {} is never sealed read-only", t.display()),
        )),
        None => Ok(()),
    }
}

/// A plan that builds a mount tree has its whole framework: namespaces, private mounts,
/// the staged and new root, `pivot_root`.
fn mount_framework_complete(w: &PlanWalk<'_>) -> Result<(), FenceError> {
    let plan = w.plan;
    if !plan.steps.iter().any(|s| s.phase() == 7 || s.phase() == 8) {
        return Ok(());
    }
    for needed in [
        Step::Unshare,
        Step::MakeMountsPrivate,
        Step::StageRoot,
        Step::NewRoot,
        Step::PivotRoot,
    ] {
        if !plan.has(&needed) {
            return Err(w.plan_err(needed.name(), "the mount tree is built without it".into()));
        }
    }
    Ok(())
}

/// A jail with namespaces joins a network namespace of its own unless the mode is the
/// host's.
fn network_namespace_joined(w: &PlanWalk<'_>) -> Result<(), FenceError> {
    let plan = w.plan;
    if plan.has(&Step::Unshare) && !plan.host_network && !plan.has(&Step::JoinNetwork) {
        return Err(w.plan_err(
            Step::JoinNetwork.name(),
            "the network mode asks for a namespace of the jail's own".into(),
        ));
    }
    Ok(())
}

/// A fence never leaves capabilities to the jailed process.
fn capabilities_dropped(w: &PlanWalk<'_>) -> Result<(), FenceError> {
    let plan = w.plan;
    if !plan.steps.is_empty() && !plan.has(&Step::DropCapabilities) {
        return Err(w.plan_err(
            Step::DropCapabilities.name(),
            "a fence never leaves capabilities to the jailed process".into(),
        ));
    }
    Ok(())
}

/// The working directory is absolute and normalized.
fn cwd_absolute_and_normalized(w: &PlanWalk<'_>) -> Result<(), FenceError> {
    let cwd = &w.plan.cwd;
    if !is_normal_absolute(cwd) {
        return Err(w.plan_err(
            "cwd",
            format!("{} is not absolute and normalized", cwd.display()),
        ));
    }
    Ok(())
}

/// A plan that runs a command names one.
fn command_given(w: &PlanWalk<'_>) -> Result<(), FenceError> {
    if let Action::Exec { argv } | Action::CheckedExec { argv, .. } = &w.plan.action {
        if argv.is_empty() {
            return Err(w.plan_err("exec", "no command".into()));
        }
    }
    Ok(())
}

/// `p` as its components joined by `/` (`Path::components` already drops repeated
/// slashes and inner `.`), the key [`key_within`] compares.
fn component_key(p: &Path) -> Vec<u8> {
    let mut key = Vec::with_capacity(p.as_os_str().len());
    for c in p.components() {
        match c {
            Component::RootDir => key.push(b'/'),
            other => {
                if !key.is_empty() && key.last() != Some(&b'/') {
                    key.push(b'/');
                }
                key.extend_from_slice(other.as_os_str().as_encoded_bytes());
            }
        }
    }
    key
}

/// Whether the path keyed `inner` is `outer` or lies below it: `Path::starts_with` on
/// [`component_key`]s, as a byte comparison.
fn key_within(inner: &[u8], outer: &[u8]) -> bool {
    inner.starts_with(outer)
        && (inner.len() == outer.len()
            || outer.last() == Some(&b'/')
            || inner.get(outer.len()) == Some(&b'/'))
}

/// A key shown in an error.
fn shown(key: &[u8]) -> String {
    String::from_utf8_lossy(key).into_owned()
}

/// What bubblewrap must not do by path, left to the helper inside its finished tree
/// (FENCE-PROTECT-18): every protected path and every hidden path inside a writable
/// root. bubblewrap before 0.12.0 (CVE-2026-87766) follows
/// a symlink among a destination's parents while it makes the mount point, from a root
/// where the host's tree is still reachable: a concurrent jail that swapped such a parent
/// for a symlink between the launcher's checks and bubblewrap's mount had bubblewrap 0.8.0
/// create the file or directory on the host, outside every root. The helper reaches each
/// through no-follow descriptors, in a tree where no host path is left, and creates
/// nothing. A name at the root itself would be safe with bubblewrap (its parent is the
/// root, a mount point no jail can rename), but bubblewrap reads the whole mount table
/// again for every bind it makes read-only, which cost about 0.2 ms per protected name.
pub fn left_to_the_helper(policy: &Policy, system: &[Step]) -> Vec<Step> {
    let mut steps = Vec::new();
    for prot in policy.protected_paths() {
        steps.push(Step::ProtectInJail {
            root: prot.root,
            rel: prot.rel,
        });
    }
    let roots = policy.writable_roots();
    for step in hide_steps(policy, system) {
        if let Step::Mask { path, dir } = step {
            if let Some(root) = roots.iter().find(|r| path.starts_with(r) && path != **r) {
                steps.push(Step::MaskInJail {
                    rel: path.strip_prefix(root).unwrap_or(&path).to_path_buf(),
                    root: root.clone(),
                    dir,
                });
            }
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Policy {
        let mut p = Policy::new(vec!["/w/ws".into()], "/w/scratch".into());
        p.read_only = vec!["/w/outside".into()];
        p
    }

    fn exec() -> Action {
        Action::Exec {
            argv: vec!["true".into()],
        }
    }

    #[test]
    fn native_plan_validates_and_ends_with_seccomp() {
        let plan = Plan::native(&policy(), Some(Abi::V7), exec(), vec![]).unwrap();
        assert_eq!(plan.steps.last(), Some(&Step::Seccomp));
        assert!(plan.namespaced());
        let pos = |s: &Step| plan.steps.iter().position(|x| x == s).unwrap();
        assert!(pos(&Step::DropCapabilities) > pos(&Step::PivotRoot));
        let json = serde_json::to_string(&plan).unwrap();
        let back: Plan = serde_json::from_str(&json).unwrap();
        assert_eq!(back, plan);
    }

    #[test]
    fn out_of_order_step_is_refused() {
        let mut plan = Plan::native(&policy(), Some(Abi::V7), exec(), vec![]).unwrap();
        let n = plan.steps.len();
        plan.steps.swap(n - 1, n - 2);
        assert!(plan.validate().is_err());
    }

    #[test]
    fn mount_hiding_an_earlier_one_is_refused() {
        let mut plan = Plan::native(&policy(), Some(Abi::V7), exec(), vec![]).unwrap();
        let at = plan
            .steps
            .iter()
            .position(|s| matches!(s, Step::SealRoot))
            .unwrap();
        plan.steps
            .insert(at, Step::BindReadOnly { path: "/w".into() });
        let e = plan.validate().unwrap_err().to_string();
        assert!(e.contains("would hide"), "{e}");
    }

    #[test]
    fn bind_below_a_writable_root_is_refused() {
        let mut plan = Plan::native(&policy(), Some(Abi::V7), exec(), vec![]).unwrap();
        let at = plan
            .steps
            .iter()
            .position(|s| matches!(s, Step::SealRoot))
            .unwrap();
        plan.steps.insert(
            at,
            Step::BindReadOnly {
                path: "/w/ws/sub".into(),
            },
        );
        let e = plan.validate().unwrap_err().to_string();
        assert!(e.contains("jailed code controls"), "{e}");
    }

    #[test]
    fn a_tree_never_sealed_is_refused() {
        let mut plan = Plan::native(&policy(), Some(Abi::V7), exec(), vec![]).unwrap();
        if !plan.steps.iter().any(|s| matches!(s, Step::Tree { .. })) {
            // A host without /etc entries has no tree; add one to test the check.
            let at = plan.steps.iter().position(|s| *s == Step::Proc).unwrap();
            plan.steps.insert(
                at,
                Step::Tree {
                    path: "/etc".into(),
                },
            );
        } else {
            plan.steps.retain(|s| !matches!(s, Step::SealTree { .. }));
        }
        let e = plan.validate().unwrap_err().to_string();
        assert!(e.contains("never sealed"), "{e}");
    }

    #[test]
    fn landlock_without_no_new_privs_is_refused() {
        let mut plan = Plan::landlock_only(&policy(), Abi::V2, exec(), vec![]).unwrap();
        plan.steps.retain(|s| *s != Step::NoNewPrivs);
        assert!(plan.validate().is_err());
    }

    proptest::proptest! {
        /// The byte comparison of the overlap checks is `Path::starts_with`, for every
        /// spelling (repeated slashes, inner `.`, `..`, a trailing slash).
        #[test]
        fn component_keys_compare_as_paths_do(
            a in proptest::collection::vec("(x|y|\\.|\\.\\.|xy|)", 0..5),
            b in proptest::collection::vec("(x|y|\\.|\\.\\.|xy|)", 0..5),
            trailing in proptest::bool::ANY,
        ) {
            let a = PathBuf::from(format!("/{}", a.join("/")));
            let b = PathBuf::from(format!("/{}{}", b.join("/"), if trailing { "/" } else { "" }));
            proptest::prop_assert_eq!(
                key_within(&component_key(&a), &component_key(&b)),
                a.starts_with(&b),
                "{:?} within {:?}", a, b
            );
        }
    }

    #[test]
    fn the_network_namespace_is_joined_after_the_mounts_unless_the_network_is_the_hosts() {
        let plan = Plan::native(&policy(), Some(Abi::V7), exec(), vec![]).unwrap();
        let pos = |s: &Step| plan.steps.iter().position(|x| x == s);
        assert!(pos(&Step::JoinNetwork) > pos(&Step::PivotRoot));
        assert!(pos(&Step::JoinNetwork) < pos(&Step::DropCapabilities));
        let mut host = policy();
        host.host_network = true;
        let plan = Plan::native(&host, Some(Abi::V7), exec(), vec![]).unwrap();
        assert!(plan.steps.iter().all(|s| *s != Step::JoinNetwork));
    }

    #[test]
    fn a_plan_that_never_joins_its_network_namespace_is_refused() {
        let mut plan = Plan::native(&policy(), Some(Abi::V7), exec(), vec![]).unwrap();
        plan.steps.retain(|s| *s != Step::JoinNetwork);
        let e = plan.validate().unwrap_err().to_string();
        assert!(e.contains("join-network"), "{e}");
        // Joined in the host mode, or with nothing before it to make the namespace.
        let mut host = policy();
        host.host_network = true;
        let mut plan = Plan::native(&host, Some(Abi::V7), exec(), vec![]).unwrap();
        let at = plan
            .steps
            .iter()
            .position(|s| *s == Step::PivotRoot)
            .unwrap();
        plan.steps.insert(at + 1, Step::JoinNetwork);
        let e = plan.validate().unwrap_err().to_string();
        assert!(e.contains("host network mode"), "{e}");
        let mut plan = Plan::native(&policy(), Some(Abi::V7), exec(), vec![]).unwrap();
        plan.steps.retain(|s| *s != Step::ForkInit);
        assert!(plan.validate().is_err());
    }

    /// FENCE-NET-13: a checked command that names a resolver socket gets the fence's own
    /// `resolv.conf` in its sealed `/etc` (the host's left out) and binds port 53 in its
    /// own network namespace while it holds its capabilities; without the socket, in the
    /// host network mode or on a plan that moved the step, no resolver.
    #[test]
    fn the_resolver_is_bound_in_the_jails_namespace_before_the_capabilities_go() {
        let checked = |resolver: Option<i32>| Action::CheckedExec {
            argv: vec!["true".into()],
            preflight: Preflight {
                outside: "/o".into(),
                inside: "/i".into(),
                tag: String::new(),
                report_fd: 3,
                go_fd: 4,
            },
            listener: None,
            terminal: None,
            resolver,
        };
        let plan = Plan::native(&policy(), Some(Abi::V7), checked(Some(5)), vec![]).unwrap();
        let pos = |s: &Step| plan.steps.iter().position(|x| x == s).unwrap();
        assert!(pos(&Step::Resolver) > pos(&Step::JoinNetwork));
        assert!(pos(&Step::Resolver) < pos(&Step::DropCapabilities));
        let conf = Path::new(RESOLV_CONF);
        let written = plan
            .steps
            .iter()
            .position(|s| matches!(s, Step::WriteFile { path, contents } if path == conf && contents.contains("nameserver 127.0.0.1\n")))
            .unwrap();
        let sealed = pos(&Step::SealTree {
            path: "/etc".into(),
        });
        assert!(written < sealed);
        assert!(!plan.steps.iter().any(|s| matches!(s, Step::BindReadOnly { path } | Step::Symlink { path, .. } if path == conf)));
        // No socket, or the host's network: the host's resolv.conf and no resolver.
        for (p, action) in [
            (policy(), checked(None)),
            (
                Policy {
                    host_network: true,
                    ..policy()
                },
                checked(Some(5)),
            ),
        ] {
            let plan = Plan::native(&p, Some(Abi::V7), action, vec![]).unwrap();
            assert!(!plan.steps.contains(&Step::Resolver));
            assert!(!plan
                .steps
                .iter()
                .any(|s| matches!(s, Step::WriteFile { .. })));
        }
        // Moved after the drop, or without a socket to hand out on: refused.
        let mut late = plan.clone();
        late.steps.retain(|s| *s != Step::Resolver);
        let at = late.steps.len() - 1;
        late.steps.insert(at, Step::Resolver);
        assert!(late.validate().is_err());
        let mut orphan = plan.clone();
        orphan.action = checked(None);
        let e = orphan.validate().unwrap_err().to_string();
        assert!(e.contains("no socket"), "{e}");
        // A file written on a bind, not on the tree's own tmpfs: refused.
        let mut on_bind = plan;
        on_bind.steps.insert(
            written,
            Step::BindReadOnly {
                path: conf.to_path_buf(),
            },
        );
        assert!(on_bind.validate().is_err());
    }

    /// FENCE-JAIL-21: the host's temporary directories are empty directories of the
    /// read-only root, before any bind, and no Landlock rule lets a write into `/tmp`;
    /// the scratch is a tmpfs of its own and a writable root.
    #[test]
    fn temporary_directories_are_read_only_and_the_scratch_a_tmpfs_of_its_own() {
        let mut p = policy();
        p.scratch = "/tmp/gatehouse-scratch-1-0".into();
        p.scratch_in_jail = true;
        let plan = Plan::native(&p, Some(Abi::V7), exec(), vec![]).unwrap();
        let pos = |s: &Step| plan.steps.iter().position(|x| x == s).unwrap();
        let tmp = pos(&Step::Dir {
            path: "/tmp".into(),
        });
        let var_tmp = pos(&Step::Dir {
            path: "/var/tmp".into(),
        });
        let scratch = pos(&Step::Scratch {
            path: p.scratch.clone(),
        });
        let first_root = plan
            .steps
            .iter()
            .position(|s| matches!(s, Step::BindReadWrite { .. }))
            .unwrap();
        assert!(tmp < scratch && var_tmp < scratch && scratch < first_root);
        assert!(pos(&Step::SealRoot) > first_root);
        let Some(Step::Landlock(rules)) =
            plan.steps.iter().find(|s| matches!(s, Step::Landlock(_)))
        else {
            panic!("no landlock step");
        };
        assert!(
            !rules.write.iter().any(|w| w == Path::new("/tmp")),
            "{rules:?}"
        );
        assert!(rules.write.contains(&p.scratch));
        // An empty directory made on a mount (a bind of the host) is refused.
        let mut bad = plan.clone();
        let at = bad
            .steps
            .iter()
            .position(|s| matches!(s, Step::SealRoot))
            .unwrap();
        bad.steps.insert(
            at,
            Step::Dir {
                path: "/w/ws/tmp".into(),
            },
        );
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("lies on a mount"), "{e}");
    }

    #[test]
    fn a_plan_keeping_capabilities_is_refused() {
        let mut plan = Plan::native(&policy(), None, exec(), vec![]).unwrap();
        plan.steps.retain(|s| *s != Step::DropCapabilities);
        assert!(plan.validate().is_err());
    }
}
