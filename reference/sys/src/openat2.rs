//! `openat2(2)` (Linux 5.6+): one system call that resolves a whole path beneath a
//! directory handle. The caller chooses the resolve flags; this wrapper adds nothing and
//! retries nothing.

use rustix::fd::{BorrowedFd, OwnedFd};
pub use rustix::fs::ResolveFlags;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// `openat2(dirfd, path, flags, mode, resolve)`, once (Linux 5.6+).
pub fn openat2(
    dirfd: BorrowedFd<'_>,
    path: &[u8],
    flags: OFlags,
    mode: Mode,
    resolve: ResolveFlags,
) -> Result<OwnedFd, Errno> {
    rustix::fs::openat2(dirfd, path, flags, mode, resolve)
}
