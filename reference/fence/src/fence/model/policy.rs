//! The fence policy (what is bound where) and the fence options (which backend, and how much
//! of the kernel to pretend is missing).
//!
//! Pure data: nothing here touches the file system except [`Policy::resolve`], which
//! canonicalizes the roots once, on the launcher's side, before any plan is built.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fence::error::FenceError;

/// System directories bound read-only (symlinks such as Debian's merged `/bin -> usr/bin`
/// are replicated as symlinks).
pub const SYSTEM_DIRS: [&str; 7] = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/opt"];

/// Entries of `/etc` bound read-only into an otherwise empty `/etc`.
///
/// Choice: `/etc` is never bound whole. When the agent runs as root the jailed process is uid
/// 0 and owns `/etc/shadow`, the SSH host keys and every root-only config, so a wholesale
/// read-only bind would make them readable. Only what programs need to start, resolve users,
/// read the time zone, find alternatives and verify certificates passes.
pub const ETC_ENTRIES: [&str; 30] = [
    "alternatives",
    "bash.bashrc",
    "ca-certificates",
    "ca-certificates.conf",
    "debian_version",
    "gai.conf",
    "group",
    "host.conf",
    "hosts",
    "inputrc",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "locale.alias",
    "localtime",
    "magic",
    "magic.mime",
    "mime.types",
    "mtab",
    "nsswitch.conf",
    "os-release",
    "passwd",
    "perl",
    "profile",
    "protocols",
    "resolv.conf",
    "services",
    "ssl",
    "terminfo",
    "timezone",
];

pub use crate::fence::protect::{Protected, PROTECTED};

/// What the fence encloses. Paths are absolute; [`Policy::resolve`] canonicalizes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Workspace roots, bound read-write at the same path.
    pub workspaces: Vec<PathBuf>,
    /// The session's scratch directory, bound read-write; `HOME` is `<scratch>/home` and
    /// `TMPDIR` is `<scratch>/tmp`.
    pub scratch: PathBuf,
    /// Extra directories or files bound read-only (toolchains, fixtures).
    #[serde(default)]
    pub read_only: Vec<PathBuf>,
    /// System directories bound read-only.
    #[serde(default = "default_system_dirs")]
    pub system_dirs: Vec<PathBuf>,
    /// Names of the `/etc` entries bound read-only.
    #[serde(default = "default_etc_entries")]
    pub etc_entries: Vec<String>,
    /// Paths relative to each workspace root kept read-only, created empty when missing.
    #[serde(default = "default_protected")]
    pub protected: Vec<PathBuf>,
    /// Session-log directory: must lie outside every writable root.
    #[serde(default)]
    pub log_dir: Option<PathBuf>,
    /// Working directory of the jailed command (default: the first workspace root).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Paths absent inside the jail even where a visible tree holds them: an empty
    /// read-only directory (or an empty device file) takes their place.
    #[serde(default)]
    pub hidden: Vec<PathBuf>,
    /// The person's home, read for the global git configuration (default: `HOME`).
    #[serde(default)]
    pub home: Option<PathBuf>,
    /// Where git would read configuration, hooks or a repository's location inside a
    /// writable root, found by [`Policy::resolve`] (FENCE-PROTECT-7).
    #[serde(default)]
    pub git_protected: Vec<Protected>,
    /// The `host` network mode (FENCE-NET-1): the jail shares the host's network
    /// namespace; the host's UNIX sockets stay out by the seccomp filter (and Landlock's
    /// scoping where the kernel has it), FENCE-NET-8.
    #[serde(default)]
    pub host_network: bool,
    /// A checked command's name lookups are answered by the fence, which refuses every
    /// one and reports the names asked (FENCE-NET-13): the `off` network mode of
    /// `gatehouse exec`, on the native jail (see `Fence::answers_lookups`).
    #[serde(default)]
    pub resolver: bool,
    /// The scratch directory lives inside the jail only (a one-shot command): created by
    /// the native jail as a private tmpfs below its read-only `/tmp`, nothing of it on the host. A backend that
    /// binds host paths (bubblewrap, Landlock alone, `off`) gets a fresh host directory
    /// instead ([`Policy::scratch_on_host`]). `scratch` is then a name below `/tmp` that
    /// exists nowhere yet ([`Policy::in_jail_scratch_name`]).
    #[serde(default)]
    pub scratch_in_jail: bool,
}

fn default_system_dirs() -> Vec<PathBuf> {
    SYSTEM_DIRS.iter().map(PathBuf::from).collect()
}

fn default_etc_entries() -> Vec<String> {
    ETC_ENTRIES.iter().map(|s| s.to_string()).collect()
}

fn default_protected() -> Vec<PathBuf> {
    crate::fence::protect::AT_EVERY_ROOT
        .iter()
        .map(|n| PathBuf::from(n.rel))
        .collect()
}

impl Policy {
    /// A policy with the default system directories, `/etc` entries and protected paths.
    pub fn new(workspaces: Vec<PathBuf>, scratch: PathBuf) -> Policy {
        Policy {
            workspaces,
            scratch,
            read_only: Vec::new(),
            system_dirs: default_system_dirs(),
            etc_entries: default_etc_entries(),
            protected: default_protected(),
            log_dir: None,
            cwd: None,
            hidden: Vec::new(),
            home: None,
            git_protected: Vec::new(),
            host_network: false,
            resolver: false,
            scratch_in_jail: false,
        }
    }

    /// A fresh name for a scratch directory below the jail's read-only `/tmp` (never
    /// created on the host).
    pub fn in_jail_scratch_name() -> PathBuf {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        PathBuf::from(format!(
            "/tmp/gatehouse-scratch-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// Give a policy whose scratch was to live in the jail the fresh, empty host directory
    /// `dir` instead (for a backend that binds host paths); its home and temporary
    /// directory created.
    pub fn scratch_on_host(mut self, dir: PathBuf) -> Result<Policy, FenceError> {
        self.scratch = dir;
        self.scratch_in_jail = false;
        self.create_scratch()?;
        self.scratch = std::fs::canonicalize(&self.scratch).map_err(|e| FenceError::Policy {
            path: self.scratch.clone(),
            reason: format!("cannot resolve: {e}"),
        })?;
        self.validate()?;
        Ok(self)
    }

    fn create_scratch(&self) -> Result<(), FenceError> {
        std::fs::create_dir_all(self.scratch.join("home")).map_err(|e| FenceError::Policy {
            path: self.scratch.clone(),
            reason: format!("cannot create the scratch home: {e}"),
        })?;
        std::fs::create_dir_all(self.tmpdir()).map_err(|e| FenceError::Policy {
            path: self.scratch.clone(),
            reason: format!("cannot create the scratch tmp: {e}"),
        })
    }

    /// Every protected path: the policy's names at each workspace root, then what git
    /// would read there (one list with the file tools, [`crate::fence::protect`]). A path beneath
    /// another one is left out: the outer covers it.
    pub fn protected_paths(&self) -> Vec<Protected> {
        let mut all: Vec<Protected> = Vec::new();
        for root in &self.workspaces {
            for rel in &self.protected {
                all.push(Protected {
                    root: root.clone(),
                    rel: rel.clone(),
                    file: false,
                });
            }
        }
        all.extend(self.git_protected.iter().cloned());
        // Linear in the list (each path's own ancestors looked up), not pairwise: the
        // list is about 30 names a root plus git's, and every command builds it.
        let mut keys = std::collections::HashSet::new();
        let mut seen: Vec<Protected> = Vec::new();
        for p in all {
            if keys.insert((p.root.clone(), p.rel.clone())) {
                seen.push(p);
            }
        }
        seen.retain(|p| {
            !p.rel
                .ancestors()
                .skip(1)
                .filter(|a| !a.as_os_str().is_empty())
                .any(|a| keys.contains(&(p.root.clone(), a.to_path_buf())))
        });
        seen
    }

    /// The scratch home (`HOME` inside the fence).
    pub fn home(&self) -> PathBuf {
        self.scratch.join("home")
    }

    /// The scratch temporary directory (`TMPDIR` inside the fence, whatever the backend).
    pub fn tmpdir(&self) -> PathBuf {
        self.scratch.join("tmp")
    }

    /// Every read-write root: the workspaces and the scratch directory.
    pub fn writable_roots(&self) -> Vec<PathBuf> {
        let mut roots = self.workspaces.clone();
        roots.push(self.scratch.clone());
        roots
    }

    /// The working directory of the jailed command.
    pub fn working_dir(&self) -> PathBuf {
        self.cwd
            .clone()
            .or_else(|| self.workspaces.first().cloned())
            .unwrap_or_else(|| self.scratch.clone())
    }

    /// Canonicalize every root (creating the scratch home and temporary directory), then
    /// validate. The fence works on real paths only: a root given through a symlink is
    /// bound at its target.
    pub fn resolve(mut self) -> Result<Policy, FenceError> {
        let canon = |p: &Path| {
            std::fs::canonicalize(p).map_err(|e| FenceError::Policy {
                path: p.to_path_buf(),
                reason: format!("cannot resolve: {e}"),
            })
        };
        if !self.scratch_in_jail {
            self.create_scratch()?;
            self.scratch = canon(&self.scratch)?;
        }
        self.workspaces = self
            .workspaces
            .iter()
            .map(|p| canon(p))
            .collect::<Result<_, _>>()?;
        self.read_only = self
            .read_only
            .iter()
            .map(|p| canon(p))
            .collect::<Result<_, _>>()?;
        if let Some(cwd) = &self.cwd {
            self.cwd = Some(canon(cwd)?);
        }
        self.hidden = self
            .hidden
            .iter()
            .map(|p| canon(p))
            .collect::<Result<_, _>>()?;
        let home = self
            .home
            .clone()
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from));
        self.git_protected = crate::fence::protect::discover(
            &self.workspaces,
            &self.writable_roots(),
            home.as_deref(),
        )
        .into_iter()
        .filter(|p| !self.protected.contains(&p.rel) || !self.workspaces.contains(&p.root))
        .collect();
        if let Some(dir) = &self.log_dir {
            std::fs::create_dir_all(dir).map_err(|e| FenceError::Policy {
                path: dir.clone(),
                reason: format!("cannot create the log directory: {e}"),
            })?;
            self.log_dir = Some(canon(dir)?);
        }
        self.validate()?;
        Ok(self)
    }

    /// Structural checks that need no file system: absolute normalized paths, no overlap
    /// between roots, no root that swallows a system directory, protected paths relative.
    pub fn validate(&self) -> Result<(), FenceError> {
        let bad = |p: &Path, reason: &str| FenceError::Policy {
            path: p.to_path_buf(),
            reason: reason.to_string(),
        };
        if self.workspaces.is_empty() {
            return Err(bad(
                Path::new(""),
                "at least one workspace root is required",
            ));
        }
        let all: Vec<&PathBuf> = self
            .workspaces
            .iter()
            .chain(std::iter::once(&self.scratch))
            .chain(self.read_only.iter())
            .collect();
        for p in &all {
            if !is_normal_absolute(p) {
                return Err(bad(p, "must be an absolute path without `.` or `..`"));
            }
            if p.as_os_str() == "/" {
                return Err(bad(p, "the root directory cannot be bound into the fence"));
            }
            for sys in self.system_dirs.iter().map(PathBuf::as_path).chain([
                Path::new("/etc"),
                Path::new("/proc"),
                Path::new("/dev"),
            ]) {
                if sys.starts_with(p) {
                    return Err(bad(p, "contains a system directory"));
                }
            }
        }
        // A writable root strictly inside a read-only path is what the person means by
        // `--ro ~/.cargo --rw ~/.cargo/registry` (FENCE-TOOL-3): every backend binds the
        // read-only paths first and the writable roots over them, and Landlock's rules
        // add up. Any other overlap is refused.
        let (w, r) = (self.writable_roots(), &self.read_only);
        let inside = |rw: &Path, ro: &Path| {
            rw != ro && rw.starts_with(ro) && w.iter().any(|x| x == rw) && r.iter().any(|x| x == ro)
        };
        let writable_in_read_only = |a: &Path, b: &Path| inside(a, b) || inside(b, a);
        for (i, a) in all.iter().enumerate() {
            for b in all.iter().skip(i + 1) {
                if writable_in_read_only(a, b) {
                    continue;
                }
                if a.starts_with(b) || b.starts_with(a) {
                    return Err(bad(a, &format!("overlaps {}", b.display())));
                }
            }
        }
        for h in &self.hidden {
            if !is_normal_absolute(h) || h.as_os_str() == "/" {
                return Err(bad(h, "a hidden path is absolute, normalized and not `/`"));
            }
            if let Some(root) = self.writable_roots().iter().find(|r| r.starts_with(h)) {
                return Err(bad(
                    h,
                    &format!("hiding it would hide the writable root {}", root.display()),
                ));
            }
            if let Some(ro) = self.read_only.iter().find(|r| r.starts_with(h)) {
                return Err(bad(
                    h,
                    &format!("hiding it would hide the read-only path {}", ro.display()),
                ));
            }
        }
        for sys in &self.system_dirs {
            if !is_normal_absolute(sys) {
                return Err(bad(sys, "system directory must be absolute"));
            }
        }
        for e in &self.etc_entries {
            if e.is_empty() || e.contains('/') || e == "." || e == ".." {
                return Err(bad(Path::new(e), "an /etc entry is a single name"));
            }
        }
        for Protected { root, rel, .. } in &self.git_protected {
            if !self.writable_roots().contains(root) {
                return Err(bad(root, "a protected path lies in a writable root"));
            }
            let ok = !rel.as_os_str().is_empty()
                && rel.components().all(|c| matches!(c, Component::Normal(_)));
            if !ok {
                return Err(bad(
                    rel,
                    "a protected path is relative, without `.` or `..`",
                ));
            }
        }
        for rel in &self.protected {
            let ok = !rel.as_os_str().is_empty()
                && rel.components().all(|c| matches!(c, Component::Normal(_)));
            if !ok {
                return Err(bad(
                    rel,
                    "a protected path is relative, without `.` or `..`",
                ));
            }
        }
        if let Some(log) = &self.log_dir {
            if let Some(root) = self.writable_roots().iter().find(|r| log.starts_with(r)) {
                return Err(FenceError::LogDirInWritableRoot {
                    log: log.clone(),
                    root: root.clone(),
                });
            }
        }
        Ok(())
    }
}

/// Absolute, and made only of normal components (no `.`, no `..`).
pub fn is_normal_absolute(p: &Path) -> bool {
    let mut comps = p.components();
    matches!(comps.next(), Some(Component::RootDir))
        && comps.all(|c| matches!(c, Component::Normal(_)))
}

/// Which backend to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackendChoice {
    /// The best backend that works here: native, then bubblewrap (Linux); Seatbelt (macOS).
    #[default]
    Auto,
    /// Namespaces + Landlock + seccomp, set up by the gatehouse binary itself.
    Native,
    /// The system's bubblewrap, with Landlock and seccomp applied inside by the helper.
    Bwrap,
    /// macOS `sandbox-exec`.
    Seatbelt,
    /// No fence at all: the operator's explicit opt-out (reported as `off`).
    Off,
}

/// A backend name that is none of `auto`, `native`, `bwrap`, `seatbelt`, `off`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown fence backend `{given}` (auto, native, bwrap, seatbelt, off)")]
pub struct UnknownBackend {
    /// The name given.
    pub given: String,
}

impl std::str::FromStr for BackendChoice {
    type Err = UnknownBackend;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(BackendChoice::Auto),
            "native" => Ok(BackendChoice::Native),
            "bwrap" => Ok(BackendChoice::Bwrap),
            "seatbelt" => Ok(BackendChoice::Seatbelt),
            "off" => Ok(BackendChoice::Off),
            other => Err(UnknownBackend {
                given: other.to_string(),
            }),
        }
    }
}

/// How the fence is chosen, and how much of the kernel to pretend is missing.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FenceOptions {
    /// Which backend.
    #[serde(default)]
    pub backend: BackendChoice,
    /// Use Landlock as if the kernel offered at most this ABI (emulation knob).
    #[serde(default)]
    pub max_landlock_abi: Option<u8>,
    /// Behave as if user namespaces were unavailable (emulation knob): no native namespaces,
    /// no bubblewrap; Landlock alone remains.
    #[serde(default)]
    pub no_user_namespaces: bool,
    /// Run even when a required protection is missing; the posture says what is not covered.
    #[serde(default)]
    pub allow_degraded: bool,
    /// The executable that dispatches `__jail` (default: the running executable).
    #[serde(default)]
    pub helper: Option<PathBuf>,
    /// The deadline of one command run through a session, where the operator's machine
    /// needs another than the default (an emulated CPU runs 10 to 50 times slower).
    #[serde(default)]
    pub run_timeout: Option<std::time::Duration>,
}

/// `GATEHOUSE_FENCE`: backend choice (`auto`, `native`, `bwrap`, `seatbelt`, `off`).
pub const ENV_BACKEND: &str = "GATEHOUSE_FENCE";
/// `GATEHOUSE_EMULATE_NO_USERNS=1`: run as if user namespaces were unavailable.
pub const ENV_NO_USERNS: &str = "GATEHOUSE_EMULATE_NO_USERNS";
/// `GATEHOUSE_LANDLOCK_MAX_ABI=N`: cap the Landlock ABI used.
pub const ENV_MAX_ABI: &str = "GATEHOUSE_LANDLOCK_MAX_ABI";
/// `GATEHOUSE_JAIL_HELPER=PATH`: the executable that dispatches `__jail`.
pub const ENV_HELPER: &str = "GATEHOUSE_JAIL_HELPER";
/// `GATEHOUSE_RUN_TIMEOUT=SECS`: the deadline of one command run through a session.
pub const ENV_RUN_TIMEOUT: &str = "GATEHOUSE_RUN_TIMEOUT";

impl FenceOptions {
    /// Options from the environment variables above (unset means the default).
    pub fn from_env() -> Result<FenceOptions, FenceError> {
        let mut o = FenceOptions::default();
        if let Ok(v) = std::env::var(ENV_BACKEND) {
            o.backend = v.parse().map_err(|reason| FenceError::Options {
                reason: format!("{ENV_BACKEND}={v}: {reason}"),
            })?;
        }
        if let Ok(v) = std::env::var(ENV_NO_USERNS) {
            o.no_user_namespaces = !matches!(v.as_str(), "" | "0" | "false" | "no");
        }
        if let Ok(v) = std::env::var(ENV_MAX_ABI) {
            let abi: u8 = v.parse().map_err(|_| FenceError::Options {
                reason: format!("{ENV_MAX_ABI}={v}: not a Landlock ABI number"),
            })?;
            o.max_landlock_abi = Some(abi);
        }
        if let Some(v) = std::env::var_os(ENV_HELPER) {
            o.helper = Some(PathBuf::from(v));
        }
        if let Ok(v) = std::env::var(ENV_RUN_TIMEOUT) {
            let secs: u64 =
                v.parse()
                    .ok()
                    .filter(|s| *s > 0)
                    .ok_or_else(|| FenceError::Options {
                        reason: format!("{ENV_RUN_TIMEOUT}={v}: not a positive number of seconds"),
                    })?;
            o.run_timeout = Some(std::time::Duration::from_secs(secs));
        }
        Ok(o)
    }

    /// The helper executable.
    pub fn helper_exe(&self) -> Result<PathBuf, FenceError> {
        match &self.helper {
            Some(p) => Ok(p.clone()),
            None => std::env::current_exe().map_err(|e| FenceError::Unavailable {
                backend: "native".into(),
                reason: format!("cannot locate the running executable: {e}"),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(workspaces: &[&str], read_only: &[&str]) -> Policy {
        let mut p = Policy::new(
            workspaces.iter().map(PathBuf::from).collect(),
            PathBuf::from("/s"),
        );
        p.read_only = read_only.iter().map(PathBuf::from).collect();
        p
    }

    /// Every protected path once, and none beneath another of the same root: by whole
    /// components (`.github/hooks` is not beneath `.git`), root by root.
    #[test]
    fn protected_paths_are_each_once_and_none_beneath_another() {
        let mut p = policy(&["/w", "/v"], &[]);
        p.protected = vec![PathBuf::from(".git"), PathBuf::from(".github/hooks")];
        let git = |root: &str, rel: &str| crate::fence::protect::Protected {
            root: PathBuf::from(root),
            rel: PathBuf::from(rel),
            file: false,
        };
        p.git_protected = vec![
            git("/w", ".git/hooks"),
            git("/w", ".git"),
            git("/w", ".gitmodules-dir"),
            git("/x", ".git/config"),
        ];
        let got: Vec<String> = p
            .protected_paths()
            .iter()
            .map(|q| format!("{}:{}", q.root.display(), q.rel.display()))
            .collect();
        assert_eq!(
            got,
            [
                "/w:.git",
                "/w:.github/hooks",
                "/v:.git",
                "/v:.github/hooks",
                "/w:.gitmodules-dir",
                "/x:.git/config"
            ]
        );
    }

    /// FENCE-TOOL-3: a writable root strictly inside a read-only path is honoured; every
    /// other overlap stays refused.
    #[test]
    fn only_a_writable_root_inside_a_read_only_path_may_overlap() {
        assert!(policy(&["/w", "/h/.cargo/registry"], &["/h/.cargo"])
            .validate()
            .is_ok());
        for (ws, ro) in [
            (&["/w"][..], &["/w/vendor"][..]),
            (&["/w", "/h/.cargo"][..], &["/h/.cargo"][..]),
            (&["/w", "/w/sub"][..], &[][..]),
            (&["/w"][..], &["/r", "/r/sub"][..]),
        ] {
            let e = policy(ws, ro).validate().unwrap_err().to_string();
            assert!(e.contains("overlaps"), "{ws:?} {ro:?}: {e}");
        }
    }
}
