//! Landlock (Linux 5.13+): the kernel's ABI version, and a ruleset applied through the
//! `landlock` crate at an ABI we choose (the best the kernel has, or lower when capped to
//! emulate an older kernel). The enforcement result is returned, never discarded.
#![allow(unsafe_code)]

use std::io;
use std::path::Path;

use crate::fence::plan::{LandlockReport, LandlockRules};
use landlock::{
    Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};

const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;

/// The Landlock ABI the running kernel offers: `None` when Landlock is not built in
/// (`ENOSYS`, before 5.13) or switched off at boot (`EOPNOTSUPP`).
pub fn kernel_abi() -> Option<u8> {
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
        Some(v.min(u8::MAX as i64) as u8)
    }
}

fn abi_of(v: u8) -> ABI {
    // The crate discourages building an ABI from a number at run time; capping the ABI to
    // emulate an older kernel is exactly the case where the number is the point.
    ABI::from(v as i32)
}

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
pub fn restrict(rules: &LandlockRules) -> io::Result<LandlockReport> {
    let abi = abi_of(rules.abi);
    let err = |e: landlock::RulesetError| io::Error::other(format!("landlock: {e}"));
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?;
    let scoped = rules.abi >= 6;
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
