//! Writing a file (PATH-WRITE-*): resolve the parent directory (making missing ones),
//! look at the final name without following it, then write the new contents to a fresh
//! temporary file in that same directory handle and `renameat` it over the final name.
//! The name is replaced, never the inode: a file outside the roots that is hard-linked
//! into one is never changed, and a reader sees the old contents or the new.

use std::collections::hash_map::RandomState;
use std::ffi::OsStr;
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fd::OwnedFd;
use rustix::fs::{
    fchmod, fstat, openat, renameat, renameat_with, unlinkat, AtFlags, Mode, OFlags, RenameFlags,
};
use rustix::io::Errno;

use super::resolve::{Parent, Target};
use super::stat::Metadata;
use super::{Key, Kind, PathError, Roots};

static TEMP: AtomicU64 = AtomicU64::new(0);

/// What the final name held before the write.
pub(crate) enum Existing {
    /// Nothing: a new file, mode `0666` less the umask.
    New,
    /// A regular file with these permission bits, this device and inode.
    File(Metadata),
}

/// An unpredictable temporary name (a random 64-bit value per try).
fn temp_name() -> String {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(TEMP.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    format!(".gatehouse-{:016x}.tmp", h.finish())
}

impl Roots {
    /// Creates or replaces the regular file at `path` with `data`, atomically; returns
    /// its key. Missing parent directories are made (PATH-WRITE-6).
    pub fn write_file(&self, path: impl AsRef<Path>, data: &[u8]) -> Result<Key, PathError> {
        let t = self.target(path.as_ref().as_os_str())?;
        let mut parent = self.parent_of(&t, true)?;
        let res = self
            .look_final(&t, &parent)
            .and_then(|existing| self.replace(&t, &parent, &existing, data));
        if res.is_err() {
            parent.undo();
        }
        res.map(|()| t.key())
    }

    /// What the final name is, without following it (PATH-WRITE-2, PATH-WRITE-5): a
    /// link is refused, a directory is `is_directory`, anything but a regular file is
    /// `not_regular`, nothing is a new file.
    pub(crate) fn look_final(&self, t: &Target<'_>, p: &Parent) -> Result<Existing, PathError> {
        let flags = super::handle::HANDLE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match openat(&p.fd, p.name.as_os_str(), flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(e) if e == Errno::NOENT => return Ok(Existing::New),
            Err(e) => return Err(PathError::from_fault(e.into(), "open", &t.shown())),
        };
        let md = stat_of(&fd, t)?;
        match md.kind {
            Kind::File => Ok(Existing::File(md)),
            Kind::Symlink => Err(self.refuse_final_link(t)),
            Kind::Dir => Err(PathError::IsDirectory { path: t.shown() }),
            other => Err(PathError::NotRegular {
                path: t.shown(),
                kind: other.name(),
            }),
        }
    }

    /// Writes `data` to a fresh temporary file in the parent's handle and renames it over
    /// the final name (PATH-WRITE-3, PATH-WRITE-4). On failure the temporary file is
    /// removed and the old contents stay.
    pub(crate) fn replace(
        &self,
        t: &Target<'_>,
        p: &Parent,
        existing: &Existing,
        data: &[u8],
    ) -> Result<(), PathError> {
        let io = |op, e: std::io::Error| PathError::Io {
            op,
            path: t.shown(),
            source: e,
        };
        // A new file is created `0666` and the kernel takes the umask off; a replacement
        // starts private and takes the old bits just before the rename.
        let mode = match existing {
            Existing::New => 0o666,
            Existing::File(_) => 0o600,
        };
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut made = None;
        for _ in 0..8 {
            let name = temp_name();
            match openat(&p.fd, name.as_str(), flags, Mode::from_raw_mode(mode)) {
                Ok(fd) => {
                    made = Some((name, fd));
                    break;
                }
                Err(e) if e == Errno::EXIST => continue,
                Err(e) => return Err(PathError::from_fault(e.into(), "create temp", &t.shown())),
            }
        }
        let (temp, fd) = made.ok_or_else(|| io("create temp", Errno::EXIST.into()))?;
        let temp = OsStr::new(&temp);
        let written = (|| {
            if let Existing::File(old) = existing {
                fchmod(&fd, Mode::from_raw_mode(old.mode as _))
                    .map_err(|e| io("chmod", e.into()))?;
            }
            let mut f = std::fs::File::from(fd);
            f.write_all(data).map_err(|e| io("write", e))?;
            f.sync_all().map_err(|e| io("sync", e))?;
            match existing {
                // Nothing was there when we looked: never replace what appeared since.
                Existing::New => renameat_with(
                    &p.fd,
                    temp,
                    &p.fd,
                    p.name.as_os_str(),
                    RenameFlags::NOREPLACE,
                )
                .map_err(|e| match e {
                    Errno::EXIST => PathError::Changed { path: t.shown() },
                    e => io("rename", e.into()),
                }),
                Existing::File(_) => renameat(&p.fd, temp, &p.fd, p.name.as_os_str())
                    .map_err(|e| PathError::from_fault(e.into(), "rename", &t.shown())),
            }
        })();
        if written.is_err() {
            let _ = unlinkat(&p.fd, temp, AtFlags::empty());
        }
        written
    }
}

pub(crate) fn stat_of(fd: &OwnedFd, t: &Target<'_>) -> Result<Metadata, PathError> {
    fstat(fd)
        .map(|st| Metadata::from_stat(&st))
        .map_err(|e| PathError::from_fault(e.into(), "fstat", &t.shown()))
}
