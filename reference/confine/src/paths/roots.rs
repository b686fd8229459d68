//! The set of roots a session can reach: the working directory and whatever was opened
//! beside it (`/add-dir`, `--add-dir`, settings-named directories, dropped files), the
//! backend chosen for it, and the keys paths are given.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{is_within, overlaps, Backend, Key, PathError, Root, RootId};

/// The reachable roots. Every confined operation is a method here.
#[derive(Debug)]
pub struct Roots {
    pub(crate) roots: Vec<Root>,
    workdir: RootId,
    next: u32,
    backend: Backend,
    pub(crate) runs: [AtomicU64; 2],
}

impl Roots {
    /// Opens `workdir` as the working-directory root, with the best backend available.
    pub fn open(workdir: impl AsRef<Path>) -> Result<Roots, PathError> {
        Roots::open_with(workdir, Backend::detect())
    }

    /// Opens `workdir` with the backend asked for (`Openat2` falls back to `Walk` where
    /// the kernel lacks it; [`Roots::backend`] says which runs).
    pub fn open_with(workdir: impl AsRef<Path>, backend: Backend) -> Result<Roots, PathError> {
        let root = Root::open_dir(RootId(0), workdir.as_ref())?;
        Ok(Roots {
            roots: vec![root],
            workdir: RootId(0),
            next: 1,
            backend,
            runs: Default::default(),
        })
    }

    /// The backend that really runs.
    pub fn backend(&self) -> Backend {
        self.backend.effective()
    }

    /// How many resolutions `backend` has performed for this set (tests assert which ran).
    pub fn runs(&self, backend: Backend) -> u64 {
        self.runs[backend.index()].load(Ordering::Relaxed)
    }

    /// The working-directory root.
    // `workdir` is set only to a root just pushed (`open_with`, `cd`), and `close` refuses
    // it: the working directory's root is always open.
    #[allow(clippy::expect_used)]
    pub fn workdir(&self) -> &Root {
        self.root(self.workdir)
            .expect("the working directory root is never closed")
    }

    /// The root with this id, if open.
    pub fn root(&self, id: RootId) -> Option<&Root> {
        self.roots.iter().find(|r| r.id == id)
    }

    /// Every open root, the working directory first.
    pub fn roots(&self) -> impl Iterator<Item = &Root> {
        self.roots.iter()
    }

    fn push(&mut self, mut root: Root) -> RootId {
        let id = RootId(self.next);
        self.next += 1;
        root.id = id;
        self.roots.push(root);
        id
    }

    /// Opens a directory beside the working directory (following links to reach it, as
    /// opening a directory does) and returns its id; an already-open directory returns
    /// the existing id. `path` must be absolute. A directory inside the working
    /// directory, or holding it, is refused (PATH-ROOT-5).
    pub fn add_dir(&mut self, path: impl AsRef<Path>) -> Result<RootId, RootRefusal> {
        let path = path.as_ref();
        if !path.is_absolute() {
            return Err(RootRefusal::Path(PathError::NotFound {
                path: path.to_string_lossy().into_owned(),
            }));
        }
        let root = Root::open_dir(RootId(0), path)?;
        self.beside_workdir(&root.path)?;
        if let Some(r) = self
            .roots
            .iter()
            .find(|r| r.only.is_none() && r.path == root.path)
        {
            return Ok(r.id);
        }
        Ok(self.push(root))
    }

    fn beside_workdir(&self, path: &Path) -> Result<(), RootRefusal> {
        let wd = &self.workdir().path;
        if is_within(path, wd) {
            return Err(RootRefusal::InsideProject(path.to_path_buf()));
        }
        if is_within(wd, path) {
            return Err(RootRefusal::HoldsProject(path.to_path_buf()));
        }
        Ok(())
    }

    /// Gives reach to one file (a dropped file, PATH-ROOT-3): links in the name are
    /// followed (it is the file the person chose), its directory is opened, and only
    /// that one name beneath it resolves. A file already reachable through an open
    /// directory root (the working directory included) opens nothing and returns that
    /// root. A directory is refused (`not_a_file`).
    pub fn add_file(&mut self, path: impl AsRef<Path>) -> Result<RootId, RootRefusal> {
        let path = path.as_ref();
        let shown = path.to_string_lossy().into_owned();
        if !path.is_absolute() {
            return Err(RootRefusal::Path(PathError::NotFound { path: shown }));
        }
        let canonical = std::fs::canonicalize(path)
            .map_err(|e| PathError::from_io(e, "canonicalize", &shown))?;
        let md =
            std::fs::metadata(&canonical).map_err(|e| PathError::from_io(e, "stat", &shown))?;
        if md.is_dir() {
            return Err(RootRefusal::NotAFile(canonical));
        }
        let (Some(parent), Some(name)) = (canonical.parent(), canonical.file_name()) else {
            return Err(RootRefusal::NotAFile(canonical));
        };
        if let Some(r) = self
            .roots
            .iter()
            .filter(|r| r.only.is_none() && is_within(&canonical, &r.path))
            .max_by_key(|r| r.path.components().count())
        {
            return Ok(r.id);
        }
        if let Some(r) = self
            .roots
            .iter()
            .find(|r| r.path == parent && r.only.as_deref() == Some(name))
        {
            return Ok(r.id);
        }
        let mut root = Root::open_dir(RootId(0), parent)?;
        root.only = Some(name.to_owned());
        Ok(self.push(root))
    }

    /// Closes an opened root. The working directory cannot be closed (returns false).
    pub fn close(&mut self, id: RootId) -> bool {
        if id == self.workdir {
            return false;
        }
        let before = self.roots.len();
        self.roots.retain(|r| r.id != id);
        before != self.roots.len()
    }

    /// Makes `path` the working directory. Closes the directory left and every opened
    /// root holding the new one or inside it (dropped files inside it included,
    /// TRUST-CD-3); returns the closed ids.
    pub fn cd(&mut self, path: impl AsRef<Path>) -> Result<Vec<RootId>, PathError> {
        let root = Root::open_dir(RootId(0), path.as_ref())?;
        let new_path = root.path.clone();
        let old = self.workdir;
        let closed: Vec<RootId> = self
            .roots
            .iter()
            .filter(|r| match &r.only {
                _ if r.id == old => true,
                None => overlaps(&r.path, &new_path),
                // A dropped file closes when it lies inside the new working directory.
                Some(name) => is_within(&r.path.join(name), &new_path),
            })
            .map(|r| r.id)
            .collect();
        self.roots.retain(|r| !closed.contains(&r.id));
        self.workdir = self.push(root);
        Ok(closed)
    }

    /// Closes every opened root but the working directory (`/clear`).
    pub fn clear(&mut self) -> Vec<RootId> {
        let wd = self.workdir;
        let closed = self
            .roots
            .iter()
            .filter(|r| r.id != wd)
            .map(|r| r.id)
            .collect();
        self.roots.retain(|r| r.id == wd);
        closed
    }

    /// The key of `path` (PATH-KEY-1, PATH-KEY-6): whole components relative to the
    /// root it routes to. Without `..` the key is the spelling (`.` and empty segments
    /// dropped), so a symlink is its own name. With `..`, the directory the last `..`
    /// climbs to is found on the disk (the confined walk, following links as the kernel
    /// does) and named by its physical components, so the key names what an operation
    /// on the same path opens.
    pub fn key(&self, path: impl AsRef<Path>) -> Result<Key, PathError> {
        Ok(self.target(path.as_ref().as_os_str())?.key())
    }

    /// Whether `path` (absolute) is the working directory or inside it.
    pub fn in_workdir(&self, path: &Path) -> bool {
        is_within(path, &self.workdir().path)
    }
}

/// Why a root could not be opened beside the working directory.
#[derive(Debug, thiserror::Error)]
pub enum RootRefusal {
    /// The directory is the working directory or lies inside it.
    #[error("{0:?} is already inside the working directory")]
    InsideProject(std::path::PathBuf),
    /// The directory holds the working directory.
    #[error("{0:?} holds the working directory")]
    HoldsProject(std::path::PathBuf),
    /// A file was wanted and this is a directory.
    #[error("{0:?} is a directory, not a file")]
    NotAFile(std::path::PathBuf),
    /// The path itself could not be opened.
    #[error(transparent)]
    Path(#[from] PathError),
}

impl RootRefusal {
    /// The stable code (`inside_project`, `holds_project`, `not_a_file`, or the path
    /// code of PATH-ERR-1).
    pub fn code(&self) -> &'static str {
        match self {
            RootRefusal::InsideProject(_) => "inside_project",
            RootRefusal::HoldsProject(_) => "holds_project",
            RootRefusal::NotAFile(_) => "not_a_file",
            RootRefusal::Path(e) => e.code(),
        }
    }
}
