//! Listing a directory through the resolver.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{statat, AtFlags, Dir, FileType};

use super::read::Readable;
use super::{Kind, PathError, Roots};

/// One directory entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its name.
    pub name: OsString,
    /// Its kind, not following links.
    pub kind: Kind,
}

impl Roots {
    /// Lists `path`, sorted by name, without `.` and `..`.
    pub fn list_dir(&self, path: impl AsRef<Path>) -> Result<Vec<Entry>, PathError> {
        let shown = path.as_ref().to_string_lossy().into_owned();
        let fd = match self.open_read(path.as_ref())? {
            Readable::Dir(fd) => fd,
            Readable::File(_) => return Err(PathError::NotDirectory { path: shown }),
        };
        let err = |e: rustix::io::Errno| PathError::from_fault(e.into(), "readdir", &shown);
        let mut dir = Dir::read_from(&fd).map_err(err)?;
        let mut out = Vec::new();
        while let Some(ent) = dir.read() {
            let ent = ent.map_err(err)?;
            let name = ent.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let kind = match ent.file_type() {
                FileType::Unknown => statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map(|st| Kind::from_type(FileType::from_raw_mode(st.st_mode)))
                    .unwrap_or(Kind::Unknown),
                t => Kind::from_type(t),
            };
            out.push(Entry {
                name: std::ffi::OsStr::from_bytes(name).to_owned(),
                kind,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}
