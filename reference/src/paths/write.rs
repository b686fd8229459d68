//! Writing a file: resolve the parent directory, then create or replace the final name
//! relative to that handle with `O_NOFOLLOW | O_CREAT`. The final name is never
//! followed, so a dangling symlink cannot create a file anywhere; a FIFO or device is
//! opened `O_NONBLOCK` and refused before anything is truncated.

use std::io::Write;
use std::path::Path;

use rustix::fs::{fstat, ftruncate, openat, Mode, OFlags};
use rustix::io::Errno;

use super::stat::Metadata;
use super::{Key, Kind, PathError, Roots};

impl Roots {
    /// Creates or replaces the regular file at `path` with `data`; returns its key.
    pub fn write_file(&self, path: impl AsRef<Path>, data: &[u8]) -> Result<Key, PathError> {
        let (t, parent, name) = self.parent_of(path.as_ref().as_os_str())?;
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::NOFOLLOW
            | OFlags::NONBLOCK
            | OFlags::NOCTTY
            | OFlags::CLOEXEC;
        let fd = match openat(&parent, name.as_os_str(), flags, Mode::from_raw_mode(0o644)) {
            Ok(fd) => fd,
            Err(e) if e == Errno::LOOP => return Err(self.refuse_final_link(&t)),
            Err(e) if e == Errno::NXIO => {
                return Err(PathError::NotRegular {
                    path: t.shown(),
                    kind: "fifo",
                })
            }
            Err(e) => return Err(PathError::from_fault(e.into(), "create", &t.shown())),
        };
        let io = |op, e: std::io::Error| PathError::Io {
            op,
            path: t.shown(),
            source: e,
        };
        let st = fstat(&fd).map_err(|e| io("fstat", e.into()))?;
        let kind = Metadata::from_stat(&st).kind;
        if kind != Kind::File {
            return Err(PathError::NotRegular {
                path: t.shown(),
                kind: kind.name(),
            });
        }
        ftruncate(&fd, 0).map_err(|e| io("truncate", e.into()))?;
        let mut file = std::fs::File::from(fd);
        file.write_all(data).map_err(|e| io("write", e))?;
        self.key(path)
    }
}
