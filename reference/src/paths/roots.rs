//! The set of roots a session can reach: the working directory and whatever was opened
//! beside it (`/add-dir`, `--add-dir`, settings-named directories, dropped files), the
//! backend chosen for it, and the keys paths are given.

use std::ffi::OsString;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fd::OwnedFd;

use super::validate::Comp;
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
    /// the existing id. `path` must be absolute.
    pub fn add_dir(&mut self, path: impl AsRef<Path>) -> Result<RootId, PathError> {
        let path = path.as_ref();
        if !path.is_absolute() {
            return Err(PathError::NotDirectory {
                path: path.to_string_lossy().into_owned(),
            });
        }
        let root = Root::open_dir(RootId(0), path)?;
        if let Some(r) = self
            .roots
            .iter()
            .find(|r| r.only.is_none() && r.path == root.path)
        {
            return Ok(r.id);
        }
        Ok(self.push(root))
    }

    /// Gives reach to one file (a dropped file): its directory is opened, and only that
    /// one name beneath it resolves.
    pub fn add_file(&mut self, path: impl AsRef<Path>) -> Result<RootId, PathError> {
        let path = path.as_ref();
        let shown = path.to_string_lossy().into_owned();
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(PathError::IsDirectory { path: shown });
        };
        if !path.is_absolute() {
            return Err(PathError::NotFound { path: shown });
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
    /// directory holding the new one or inside it; returns the closed ids.
    pub fn cd(&mut self, path: impl AsRef<Path>) -> Result<Vec<RootId>, PathError> {
        let root = Root::open_dir(RootId(0), path.as_ref())?;
        let new_path = root.path.clone();
        let old = self.workdir;
        let closed: Vec<RootId> = self
            .roots
            .iter()
            .filter(|r| r.id == old || overlaps(&r.path, &new_path) && r.only.is_none())
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

    /// The key of `path`: whole components relative to the root it routes to. Without
    /// `..` the key is the spelling (`.` and empty segments dropped), so a symlink is its
    /// own name. With `..`, everything up to the last `..` is resolved physically (the
    /// walk, confined), since the kernel resolves `..` through links, never lexically.
    pub fn key(&self, path: impl AsRef<Path>) -> Result<Key, PathError> {
        let t = self.target(path.as_ref().as_os_str())?;
        let comps = t.comps();
        let last_parent = comps.iter().rposition(|c| *c == Comp::Parent);
        let mut components: Vec<OsString> = match last_parent {
            Some(i) => self
                .physical_names(t.root, &comps[..=i])
                .map_err(|f| PathError::from_fault(f, "key", &t.shown()))?,
            None => Vec::new(),
        };
        let rest = &comps[last_parent.map_or(0, |i| i + 1)..];
        components.extend(rest.iter().filter_map(|c| match c {
            Comp::Name(n) => Some(n.clone()),
            Comp::Parent => None,
        }));
        Ok(Key {
            root: t.root.id,
            components,
        })
    }

    /// Resolves `path` to an `O_PATH` handle beneath its root; `follow_last == false`
    /// returns a final symlink itself.
    pub fn resolve(&self, path: impl AsRef<Path>, follow_last: bool) -> Result<OwnedFd, PathError> {
        let t = self.target(path.as_ref().as_os_str())?;
        let how = super::resolve::How {
            follow_last,
            ..super::resolve::How::PATH
        };
        self.open_target(&t, how, "resolve")
    }

    /// Whether `path` (absolute) is the working directory or inside it.
    pub fn in_workdir(&self, path: &Path) -> bool {
        is_within(path, &self.workdir().path)
    }
}
