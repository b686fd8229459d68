//! The two resolver backends and the one-time probe for `openat2`.

use std::sync::atomic::{AtomicU8, Ordering};

#[cfg(any(target_os = "linux", target_os = "android"))]
use crate::sys::openat2::{openat2, ResolveFlags};
#[cfg(any(target_os = "linux", target_os = "android"))]
use rustix::fs::{Mode, OFlags, CWD};
#[cfg(any(target_os = "linux", target_os = "android"))]
use rustix::io::Errno;

/// Which resolver runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    /// `openat2(2)` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS` (Linux 5.6+).
    Openat2,
    /// The userspace component walk over a stack of directory handles; never opens
    /// `..`. For kernels without `openat2`.
    Walk,
}

const UNKNOWN: u8 = 0;
#[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
const PRESENT: u8 = 1;
const ABSENT: u8 = 2;
static OPENAT2: AtomicU8 = AtomicU8::new(UNKNOWN);

impl Backend {
    /// The best backend this kernel offers, probed once and cached.
    pub fn detect() -> Backend {
        if openat2_available() {
            Backend::Openat2
        } else {
            Backend::Walk
        }
    }

    /// The backend that will really run when `self` is asked for: `Openat2` falls back
    /// to `Walk` where the kernel lacks `openat2`.
    pub fn effective(self) -> Backend {
        match self {
            Backend::Openat2 if !openat2_available() => Backend::Walk,
            other => other,
        }
    }

    /// Index for per-backend counters.
    pub(crate) fn index(self) -> usize {
        match self {
            Backend::Openat2 => 0,
            Backend::Walk => 1,
        }
    }
}

/// Whether `openat2` exists here; there is none outside Linux.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn openat2_available() -> bool {
    false
}

/// Whether `openat2` exists here; probed once.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn openat2_available() -> bool {
    match OPENAT2.load(Ordering::Relaxed) {
        PRESENT => true,
        ABSENT => false,
        _ => {
            let res = openat2(
                CWD,
                b".",
                super::handle::HANDLE | OFlags::CLOEXEC,
                Mode::empty(),
                ResolveFlags::BENEATH,
            );
            let present = !matches!(res, Err(e) if e == Errno::NOSYS);
            OPENAT2.store(if present { PRESENT } else { ABSENT }, Ordering::Relaxed);
            present
        }
    }
}

/// Records that `openat2` answered `ENOSYS` after all (seccomp filters can do this).
pub(crate) fn mark_openat2_absent() {
    OPENAT2.store(ABSENT, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_is_always_itself() {
        assert_eq!(Backend::Walk.effective(), Backend::Walk);
        let _ = Backend::detect();
    }
}
