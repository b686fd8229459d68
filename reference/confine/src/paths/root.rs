//! One root: a directory handle opened `O_PATH | O_DIRECTORY | O_CLOEXEC`, its canonical
//! absolute path (what absolute inputs are routed by), and, for a dropped file, the one
//! name beneath it that is reachable.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{fstat, Mode, OFlags};

use super::{PathError, RootId};

/// An opened root.
#[derive(Debug)]
pub struct Root {
    pub(crate) id: RootId,
    pub(crate) path: PathBuf,
    pub(crate) fd: OwnedFd,
    pub(crate) only: Option<OsString>,
}

impl Root {
    /// Opens the directory `path` (following links, as opening a directory does) and
    /// records its canonical path. Refuses a canonical path that changed under it.
    pub(crate) fn open_dir(id: RootId, path: &Path) -> Result<Root, PathError> {
        let shown = path.to_string_lossy().into_owned();
        // The handle is opened on the name the person gave, following links: that is the
        // directory they chose (PATH-ROOT-2). Its canonical path must name that object.
        let fd = rustix::fs::open(
            path,
            super::handle::HANDLE | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| PathError::from_fault(e.into(), "open", &shown))?;
        let canonical = std::fs::canonicalize(path)
            .map_err(|e| PathError::from_io(e, "canonicalize", &shown))?;
        let a = fstat(&fd).map_err(|e| PathError::from_fault(e.into(), "fstat", &shown))?;
        let b = rustix::fs::stat(&canonical)
            .map_err(|e| PathError::from_fault(e.into(), "stat", &shown))?;
        if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino) {
            return Err(PathError::Changed { path: shown });
        }
        Ok(Root {
            id,
            path: canonical,
            fd,
            only: None,
        })
    }

    /// This root's id.
    pub fn id(&self) -> RootId {
        self.id
    }

    /// Its canonical absolute path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// For a dropped-file root, the one reachable name.
    pub fn only(&self) -> Option<&OsString> {
        self.only.as_ref()
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
