//! The one error type of path confinement, and the one place system-call failures are
//! translated into it.
//!
//! Both backends report through [`Fault`]; `EXDEV` from `openat2` and the walk's own
//! detection of a step out of the root both become [`PathError::Escape`] in
//! [`PathError::from_fault`], so the backends cannot disagree about what an escape is.

use rustix::io::Errno;

/// Why a confined path operation was refused or failed. Each variant carries the path as
/// it was given (lossy display).
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The empty path names nothing.
    #[error("empty path")]
    Empty,
    /// A NUL byte cannot be passed to the kernel.
    #[error("path contains a NUL byte: {path:?}")]
    Nul {
        /// The path.
        path: String,
    },
    /// One component is longer than 255 bytes.
    #[error("a component of {path:?} is {len} bytes, over the 255-byte limit")]
    ComponentTooLong {
        /// The path.
        path: String,
        /// Length of the offending component.
        len: usize,
    },
    /// The whole path is longer than 4095 bytes.
    #[error("path is {len} bytes, over the 4095-byte limit: {path:?}")]
    PathTooLong {
        /// The path (lossy).
        path: String,
        /// Its length.
        len: usize,
    },
    /// The path leaves its root (`..`, a symlink out, an absolute path outside every
    /// root, a magic link). Refused, never resolved.
    #[error("{path:?} is outside the working directory and every directory opened beside it")]
    Escape {
        /// The path.
        path: String,
    },
    /// Too many symlinks (over 40) or a symlink loop.
    #[error("too many symbolic links resolving {path:?}")]
    Loop {
        /// The path.
        path: String,
    },
    /// Nothing exists at the path.
    #[error("no such file or directory: {path:?}")]
    NotFound {
        /// The path.
        path: String,
    },
    /// A component used as a directory is not one, or a trailing slash named a file.
    #[error("not a directory: {path:?}")]
    NotDirectory {
        /// The path.
        path: String,
    },
    /// A file operation named a directory.
    #[error("is a directory: {path:?}")]
    IsDirectory {
        /// The path.
        path: String,
    },
    /// A read named something other than a regular file or a directory.
    #[error("{path:?} is a {kind}, not a regular file or directory")]
    NotRegular {
        /// The path.
        path: String,
        /// What it is (`fifo`, `socket`, `char-device`, ...).
        kind: &'static str,
    },
    /// A write's final name is a symlink; writes never follow the final name.
    #[error("{path:?} is a symbolic link; writes do not follow it")]
    FinalSymlink {
        /// The path.
        path: String,
    },
    /// `openat2` kept answering `EAGAIN` past the retry budget.
    #[error("resolution of {path:?} kept racing with renames; gave up after {tries} tries")]
    Busy {
        /// The path.
        path: String,
        /// How many tries were made.
        tries: u32,
    },
    /// The object changed between the check and the open.
    #[error("{path:?} changed while it was being opened")]
    Changed {
        /// The path.
        path: String,
    },
    /// Any other system-call failure.
    #[error("{op} {path:?}: {source}")]
    Io {
        /// The operation that failed.
        op: &'static str,
        /// The path.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl PathError {
    /// A stable, machine-readable code for the adapter protocol.
    pub fn code(&self) -> &'static str {
        match self {
            PathError::Empty => "empty_path",
            PathError::Nul { .. } => "nul_byte",
            PathError::ComponentTooLong { .. } => "name_too_long",
            PathError::PathTooLong { .. } => "path_too_long",
            PathError::Escape { .. } => "escape",
            PathError::Loop { .. } => "loop",
            PathError::NotFound { .. } => "not_found",
            PathError::NotDirectory { .. } => "not_directory",
            PathError::IsDirectory { .. } => "is_directory",
            PathError::NotRegular { .. } => "not_regular",
            PathError::FinalSymlink { .. } => "final_symlink",
            PathError::Busy { .. } => "busy",
            PathError::Changed { .. } => "changed",
            PathError::Io { .. } => "io",
        }
    }

    /// Whether this is the escape refusal.
    pub fn is_escape(&self) -> bool {
        matches!(self, PathError::Escape { .. })
    }

    /// Translates a `std::io::Error` (from `std::fs` calls, e.g. while opening a root)
    /// through the same table as backend faults.
    pub fn from_io(e: std::io::Error, op: &'static str, path: &str) -> Self {
        match e.raw_os_error() {
            Some(n) => PathError::from_fault(Errno::from_raw_os_error(n).into(), op, path),
            None => PathError::Io {
                op,
                path: path.to_owned(),
                source: e,
            },
        }
    }

    /// The single translation point from a backend fault to an error.
    pub(crate) fn from_fault(fault: Fault, op: &'static str, path: &str) -> Self {
        let path = path.to_owned();
        match fault {
            Fault::Escape => PathError::Escape { path },
            Fault::Loop => PathError::Loop { path },
            Fault::Busy(tries) => PathError::Busy { path, tries },
            Fault::Sys(e) if e == Errno::NOENT => PathError::NotFound { path },
            Fault::Sys(e) if e == Errno::NOTDIR => PathError::NotDirectory { path },
            Fault::Sys(e) if e == Errno::ISDIR => PathError::IsDirectory { path },
            Fault::Sys(e) => PathError::Io {
                op,
                path,
                source: e.into(),
            },
        }
    }
}

/// What a backend reports; turned into a [`PathError`] only by
/// [`PathError::from_fault`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// The resolution left the root.
    Escape,
    /// Too many links.
    Loop,
    /// `EAGAIN` budget exhausted after this many tries (only `openat2` retries).
    #[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
    Busy(u32),
    /// Any other errno.
    Sys(Errno),
}

impl From<Errno> for Fault {
    fn from(e: Errno) -> Self {
        if e == Errno::XDEV {
            Fault::Escape
        } else if e == Errno::LOOP {
            Fault::Loop
        } else {
            Fault::Sys(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exdev_and_walk_escape_are_one_error() {
        let a = PathError::from_fault(Errno::XDEV.into(), "open", "x");
        let b = PathError::from_fault(Fault::Escape, "open", "x");
        assert_eq!(a.code(), "escape");
        assert_eq!(b.code(), "escape");
    }

    #[test]
    fn errnos_map_to_kinds() {
        assert_eq!(
            PathError::from_fault(Errno::LOOP.into(), "o", "x").code(),
            "loop"
        );
        assert_eq!(
            PathError::from_fault(Errno::NOENT.into(), "o", "x").code(),
            "not_found"
        );
        assert_eq!(
            PathError::from_fault(Errno::ACCESS.into(), "o", "x").code(),
            "io"
        );
    }
}
