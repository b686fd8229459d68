//! The `openat2` backend ([`crate::sys::openat2`]): one system call resolves the whole path beneath the root
//! handle with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS` (Linux 5.6+). `EAGAIN` (a rename
//! or mount raced a `..` step) is retried at most [`EAGAIN_BUDGET`] times, then reported.

#[cfg(any(target_os = "linux", target_os = "android"))]
use crate::sys::openat2::{openat2, ResolveFlags};
use rustix::fd::{BorrowedFd, OwnedFd};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use super::error::Fault;

/// Tries before an `EAGAIN` storm is reported as [`Fault::Busy`].
#[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
pub const EAGAIN_BUDGET: u32 = 16;

/// Opens `rel` beneath `root`. `follow_last == false` adds `O_NOFOLLOW`.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn open(
    root: BorrowedFd<'_>,
    rel: &[u8],
    oflags: OFlags,
    mode: Mode,
    follow_last: bool,
) -> Result<OwnedFd, Fault> {
    let mut flags = oflags | OFlags::CLOEXEC;
    if !follow_last {
        flags |= OFlags::NOFOLLOW;
    }
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    for _ in 0..EAGAIN_BUDGET {
        match openat2(root, rel, flags, mode, resolve) {
            Err(e) if e == Errno::AGAIN => continue,
            other => return other.map_err(Fault::from),
        }
    }
    Err(Fault::Busy(EAGAIN_BUDGET))
}

/// Systems without `openat2` answer as a kernel before 5.6 would (`ENOSYS`); the probe in
/// `backend.rs` never selects this backend there, so the walk runs instead.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn open(
    _root: BorrowedFd<'_>,
    _rel: &[u8],
    _oflags: OFlags,
    _mode: Mode,
    _follow_last: bool,
) -> Result<OwnedFd, Fault> {
    Err(Fault::from(Errno::NOSYS))
}
