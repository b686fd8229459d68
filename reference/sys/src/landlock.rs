//! Landlock (Linux 5.13+): the ABI as an ordered enum ([`Abi`]), the kernel's ABI, and a
//! ruleset applied through the `landlock` crate at an ABI we choose (the best the kernel
//! has, or lower when capped to emulate an older kernel). The enforcement result is
//! returned, never discarded.
//!
//! [`Abi`], [`LandlockRules`] and [`LandlockReport`] are plain data and exist on every
//! platform (the fence's plan carries them); the system calls are Linux only.

#[cfg(target_os = "linux")]
use std::io;
#[cfg(target_os = "linux")]
use std::path::Path;
use std::path::PathBuf;

#[cfg(target_os = "linux")]
use landlock::{
    Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use serde::{Deserialize, Serialize};

/// A Landlock ABI version, ordered: a later variant has every right of an earlier one.
/// Each variant names the kernel that brought it (kernel documentation,
/// `Documentation/userspace-api/landlock.rst`, and the kernels booted for the project).
/// Serialised as its number, as the posture and the protocol show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "u8", try_from = "u8")]
pub enum Abi {
    /// Linux 5.13: basic filesystem rights; every cross-directory rename or link refused.
    V1 = 1,
    /// Linux 5.19: `REFER`, rename and link across directories.
    V2 = 2,
    /// Linux 6.2: `TRUNCATE`; before it `truncate(2)` cannot be restricted.
    V3 = 3,
    /// Linux 6.7: TCP bind and connect.
    V4 = 4,
    /// Linux 6.10: `IOCTL_DEV`.
    V5 = 5,
    /// Linux 6.12: scoping of abstract UNIX sockets and signals.
    V6 = 6,
    /// Linux 6.15 (seen on 6.16 and 6.19): audit logging controls.
    V7 = 7,
    /// Linux 7.0: enforcement on every thread of the process (TSYNC).
    V8 = 8,
    /// Linux 7.1: `connect()` on pathname UNIX sockets.
    V9 = 9,
    /// Linux 7.2: UDP.
    V10 = 10,
    /// Linux 7.3: a new `restrict_self` flag.
    V11 = 11,
}

impl Abi {
    /// Every ABI, oldest first.
    pub const ALL: [Abi; 11] = [
        Abi::V1,
        Abi::V2,
        Abi::V3,
        Abi::V4,
        Abi::V5,
        Abi::V6,
        Abi::V7,
        Abi::V8,
        Abi::V9,
        Abi::V10,
        Abi::V11,
    ];

    /// The newest ABI this crate knows.
    pub const NEWEST: Abi = Abi::V11;

    /// The ABI numbered `n`; `None` for 0 (no Landlock) and for numbers past
    /// [`Abi::NEWEST`].
    pub fn from_number(n: u8) -> Option<Abi> {
        Abi::ALL.get(usize::from(n).checked_sub(1)?).copied()
    }

    /// The ABI a kernel reporting `n` is used at: a kernel newer than this crate is used
    /// at [`Abi::NEWEST`], whose rights it has.
    pub fn from_kernel(n: u8) -> Option<Abi> {
        if n == 0 {
            None
        } else {
            Some(Abi::from_number(n).unwrap_or(Abi::NEWEST))
        }
    }

    /// Its number.
    pub fn number(self) -> u8 {
        self as u8
    }

    /// `TRUNCATE` is handled (ABI 3).
    pub fn restricts_truncate(self) -> bool {
        self >= Abi::V3
    }

    /// Abstract UNIX sockets and signals are scoped (ABI 6).
    pub fn scopes_ipc(self) -> bool {
        self >= Abi::V6
    }
}

impl From<Abi> for u8 {
    fn from(a: Abi) -> u8 {
        a.number()
    }
}

/// A number that names no Landlock ABI this crate knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{given} is no Landlock ABI (1 to {})", Abi::NEWEST.number())]
pub struct NotAnAbi {
    /// The number given.
    pub given: u8,
}

impl TryFrom<u8> for Abi {
    type Error = NotAnAbi;
    fn try_from(n: u8) -> Result<Abi, NotAnAbi> {
        Abi::from_number(n).ok_or(NotAnAbi { given: n })
    }
}

impl std::fmt::Display for Abi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.number())
    }
}

/// Landlock rules, with paths as seen from inside the fence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LandlockRules {
    /// The ABI to build the ruleset for (the kernel's best, or the emulation cap).
    pub abi: Abi,
    /// Read and execute beneath these.
    pub read: Vec<PathBuf>,
    /// Every right beneath these.
    pub write: Vec<PathBuf>,
    /// Read, write and device ioctl on these device files.
    pub devices: Vec<PathBuf>,
    /// Allow listing `/` (only when the mount tree is ours).
    pub list_root: bool,
}

/// What Landlock's `restrict_self` enforced, as the helper reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LandlockReport {
    /// The ABI the ruleset was built for.
    pub abi: Abi,
    /// `fully-enforced`, `partially-enforced` or `not-enforced`.
    pub status: String,
    /// Whether abstract UNIX sockets and signals are scoped (ABI 6+).
    pub scoped: bool,
}

#[cfg(target_os = "linux")]
const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;

/// The Landlock ABI the running kernel offers: `None` when Landlock is not built in
/// (`ENOSYS`, before 5.13) or switched off at boot (`EOPNOTSUPP`), and everywhere but
/// Linux.
#[cfg(target_os = "linux")]
pub fn kernel_abi() -> Option<Abi> {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) reads no
    // memory and returns the ABI version or -1 with errno; no descriptor is created.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if v <= 0 {
        None
    } else {
        Abi::from_kernel(v.min(i64::from(u8::MAX)) as u8)
    }
}

/// The Landlock ABI the running kernel offers: none outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn kernel_abi() -> Option<Abi> {
    None
}

#[cfg(target_os = "linux")]
fn abi_of(v: Abi) -> ABI {
    // The crate discourages building an ABI from a number at run time; capping the ABI to
    // emulate an older kernel is exactly the case where the number is the point.
    ABI::from(i32::from(v.number()))
}

#[cfg(target_os = "linux")]
fn add(
    ruleset: landlock::RulesetCreated,
    path: &Path,
    access: landlock::BitFlags<AccessFs>,
    abi: ABI,
) -> io::Result<landlock::RulesetCreated> {
    let Ok(meta) = std::fs::metadata(path) else {
        // Absent here (an optional system directory): nothing to allow.
        return Ok(ruleset);
    };
    let access = if meta.is_dir() {
        access
    } else {
        access & AccessFs::from_file(abi)
    };
    let fd = PathFd::new(path)
        .map_err(|e| io::Error::other(format!("landlock: {}: {e}", path.display())))?;
    ruleset
        .add_rule(PathBeneath::new(fd, access))
        .map_err(|e| io::Error::other(format!("landlock rule {}: {e}", path.display())))
}

/// Build and apply the ruleset. Fails unless the kernel enforced it fully at `rules.abi`.
#[cfg(target_os = "linux")]
pub fn restrict(rules: &LandlockRules) -> io::Result<LandlockReport> {
    let abi = abi_of(rules.abi);
    let err = |e: landlock::RulesetError| io::Error::other(format!("landlock: {e}"));
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?;
    let scoped = rules.abi.scopes_ipc();
    if scoped {
        ruleset = ruleset.scope(Scope::from_all(abi)).map_err(err)?;
    }
    let mut created = ruleset.create().map_err(err)?;
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    let device = (AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev) & all;
    if rules.list_root {
        created = add(created, Path::new("/"), AccessFs::ReadDir.into(), abi)?;
    }
    for p in &rules.read {
        created = add(created, p, read, abi)?;
    }
    for p in &rules.write {
        created = add(created, p, all, abi)?;
    }
    for p in &rules.devices {
        created = add(created, p, device, abi)?;
    }
    let status = created.restrict_self().map_err(err)?;
    let name = match status.ruleset {
        RulesetStatus::FullyEnforced => "fully-enforced",
        RulesetStatus::PartiallyEnforced => "partially-enforced",
        RulesetStatus::NotEnforced => "not-enforced",
    };
    let report = LandlockReport {
        abi: rules.abi,
        status: name.to_string(),
        scoped,
    };
    if status.ruleset != RulesetStatus::FullyEnforced {
        return Err(io::Error::other(format!(
            "landlock ABI {} {name}: the kernel offers less than the plan claims",
            rules.abi
        )));
    }
    Ok(report)
}

// The tests' one way to skip (xtask/src/skip.rs), counted by `cargo xtask test`.
#[cfg(test)]
#[path = "../../../xtask/src/skip.rs"]
mod test_skip;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abis_are_ordered_and_numbered() {
        for (i, abi) in Abi::ALL.iter().enumerate() {
            assert_eq!(usize::from(abi.number()), i + 1);
            assert_eq!(Abi::from_number(abi.number()), Some(*abi));
        }
        assert!(Abi::V2 < Abi::V3 && Abi::V6 < Abi::V7);
        assert_eq!(Abi::from_number(0), None);
        assert_eq!(Abi::from_number(12), None);
        assert_eq!(Abi::from_kernel(0), None);
        assert_eq!(Abi::from_kernel(40), Some(Abi::NEWEST));
        assert!(!Abi::V2.restricts_truncate() && Abi::V3.restricts_truncate());
        assert!(!Abi::V5.scopes_ipc() && Abi::V6.scopes_ipc());
        assert_eq!(serde_json::to_string(&Abi::V7).unwrap(), "7");
        assert!(serde_json::from_str::<Abi>("0").is_err());
    }

    /// `GATEHOUSE_TEST_LANDLOCK_ABI` pins the ABI the tests expect (`0`: none): on a kernel
    /// that offers another, this fails rather than let the kernel-dependent tests adapt.
    #[test]
    fn the_kernel_offers_the_pinned_abi() {
        let Ok(want) = std::env::var("GATEHOUSE_TEST_LANDLOCK_ABI") else {
            super::test_skip::skip(
                "the kernel's Landlock ABI against the pinned one",
                "GATEHOUSE_TEST_LANDLOCK_ABI is not set",
            );
            return;
        };
        let want: u8 = want
            .parse()
            .expect("GATEHOUSE_TEST_LANDLOCK_ABI is a number");
        assert_eq!(kernel_abi().map_or(0, Abi::number), want);
    }
}
