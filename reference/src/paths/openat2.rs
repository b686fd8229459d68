//! The `openat2` backend: one system call resolves the whole path beneath the root
//! handle with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS` (Linux 5.6+). `EAGAIN` (a rename
//! or mount raced a `..` step) is retried at most [`EAGAIN_BUDGET`] times, then reported.

use rustix::fd::{BorrowedFd, OwnedFd};
use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use super::error::Fault;

/// Tries before an `EAGAIN` storm is reported as [`Fault::Busy`].
pub const EAGAIN_BUDGET: u32 = 16;

/// Opens `rel` beneath `root`. `follow_last == false` adds `O_NOFOLLOW`.
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
        match rustix::fs::openat2(root, rel, flags, mode, resolve) {
            Err(e) if e == Errno::AGAIN => continue,
            other => return other.map_err(Fault::from),
        }
    }
    Err(Fault::Busy(EAGAIN_BUDGET))
}
