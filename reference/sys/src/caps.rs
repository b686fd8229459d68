//! Capabilities: drop every set (bounding, ambient, inheritable, permitted, effective) and
//! verify that none remains. Ambient capabilities need Linux 4.3; the rest is older.
//!
//! As root the jailed process is uid 0 in a user namespace mapped 0 → 0: without this step
//! it would keep the full set there and could remount `/` read-write (FACTS.md, section 9).

use std::io;

use rustix::thread::{CapabilitySet, CapabilitySets};

/// The highest capability number the kernel knows.
fn last_cap() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63)
        .min(63)
}

/// Drop every capability, then verify with `capget` and `PR_CAPBSET_READ` that none remains.
/// Returns the number of capabilities checked.
///
/// Shrinking the bounding set needs `CAP_SETPCAP`. An unprivileged caller outside a user
/// namespace (the Landlock-only fence of a normal user) lacks it and gets `EPERM` for
/// every bit (seen on every kernel of the matrix): it has no capability to lose, and under
/// `no_new_privs` no exec can grant one from the bounding set, so there the bounding set
/// is left as it is and `no_new_privs` is verified instead.
pub fn drop_all_and_verify() -> io::Result<u32> {
    let last = last_cap();
    let can_shrink_bounding = rustix::thread::capabilities(None)?
        .effective
        .contains(CapabilitySet::SETPCAP);
    // With CAP_SETPCAP effective every bit can be cleared, whether or not it is still in
    // the set (bubblewrap's --cap-drop ALL clears them, and CAP_SETPCAP with them, which
    // leaves `can_shrink_bounding` false): no read of each bit first.
    for cap in (0..=last).filter(|_| can_shrink_bounding) {
        let set = CapabilitySet::from_bits_retain(1u64 << cap);
        match rustix::thread::remove_capability_from_bounding_set(set) {
            Ok(()) | Err(rustix::io::Errno::INVAL) => {}
            Err(e) => {
                return Err(io::Error::other(format!(
                    "cannot drop capability {cap} from the bounding set: {e}"
                )))
            }
        }
    }
    rustix::thread::clear_ambient_capability_set()
        .map_err(|e| io::Error::other(format!("cannot clear the ambient set: {e}")))?;
    rustix::thread::set_capabilities(
        None,
        CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        },
    )
    .map_err(|e| io::Error::other(format!("capset: {e}")))?;
    if can_shrink_bounding {
        verify_none(last)?;
    } else {
        verify_none_unprivileged()?;
    }
    Ok(last + 1)
}

/// For a caller that could not shrink its bounding set: fail unless the effective,
/// permitted and inheritable sets are empty and `no_new_privs` is set, so that nothing in
/// the bounding set can ever be gained (setuid and file capabilities are ignored).
fn verify_none_unprivileged() -> io::Result<()> {
    let sets = rustix::thread::capabilities(None)?;
    if !sets.effective.is_empty() || !sets.permitted.is_empty() || !sets.inheritable.is_empty() {
        return Err(io::Error::other(format!(
            "capabilities remain: effective {:#x}, permitted {:#x}, inheritable {:#x}",
            sets.effective.bits(),
            sets.permitted.bits(),
            sets.inheritable.bits()
        )));
    }
    if !rustix::thread::no_new_privs()? {
        return Err(io::Error::other(
            "the bounding set cannot be shrunk without CAP_SETPCAP and no_new_privs is not set",
        ));
    }
    Ok(())
}

/// Fail unless the effective, permitted, inheritable and bounding sets (its bits up to
/// `last`, the kernel's highest) are all empty.
fn verify_none(last: u32) -> io::Result<()> {
    let sets = rustix::thread::capabilities(None)?;
    if !sets.effective.is_empty() || !sets.permitted.is_empty() || !sets.inheritable.is_empty() {
        return Err(io::Error::other(format!(
            "capabilities remain: effective {:#x}, permitted {:#x}, inheritable {:#x}",
            sets.effective.bits(),
            sets.permitted.bits(),
            sets.inheritable.bits()
        )));
    }
    for cap in 0..=last {
        let set = CapabilitySet::from_bits_retain(1u64 << cap);
        if rustix::thread::capability_is_in_bounding_set(set).unwrap_or(false) {
            return Err(io::Error::other(format!(
                "capability {cap} remains in the bounding set"
            )));
        }
    }
    Ok(())
}

/// `PR_SET_NO_NEW_PRIVS` (Linux 3.5): no exec can ever grant privileges again; required
/// by Landlock and seccomp for an unprivileged caller.
pub fn set_no_new_privs() -> io::Result<()> {
    rustix::thread::set_no_new_privs(true).map_err(io::Error::from)
}
