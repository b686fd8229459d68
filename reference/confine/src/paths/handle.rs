//! The open flags for a handle that only names an object (a root, a directory on the
//! walk, a final component whose type is checked before any read).
//!
//! On Linux that is `O_PATH`: no read permission needed, no side effect, and opening a
//! FIFO through it never blocks. Other systems have no `O_PATH`; there a handle is a
//! read-only open with `O_NONBLOCK`, so that a FIFO still cannot hang the agent
//! (PATH-READ-2). The resolver only ever compares against and combines with this
//! constant, so the two spellings cannot drift apart.

use rustix::fs::OFlags;

/// The flags of a naming-only handle on this system.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) const HANDLE: OFlags = OFlags::PATH;
/// The flags of a naming-only handle on this system.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) const HANDLE: OFlags = OFlags::RDONLY.union(OFlags::NONBLOCK);
