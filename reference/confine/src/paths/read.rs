//! Opening for reading. Only regular files and directories are ever opened for reading:
//! the path is first resolved to an `O_PATH` handle and its type checked, then opened
//! again `O_RDONLY | O_NONBLOCK` (so a FIFO swapped in meanwhile cannot hang the agent)
//! and refused unless it is the very object checked (same device and inode).

use std::io::Read;
use std::path::Path;

use rustix::fd::OwnedFd;
use rustix::fs::{fstat, OFlags};

use super::resolve::How;
use super::stat::Metadata;
use super::{Kind, PathError, Roots};

/// Something opened for reading.
#[derive(Debug)]
pub enum Readable {
    /// A regular file.
    File(std::fs::File),
    /// A directory, opened `O_RDONLY | O_DIRECTORY` (for listing).
    Dir(OwnedFd),
}

impl Roots {
    /// Opens `path` for reading; anything but a regular file or a directory is
    /// [`PathError::NotRegular`].
    pub fn open_read(&self, path: impl AsRef<Path>) -> Result<Readable, PathError> {
        let t = self.target(path.as_ref().as_os_str())?;
        let stat = |fd: &OwnedFd| {
            fstat(fd)
                .map(|st| Metadata::from_stat(&st))
                .map_err(|e| PathError::from_fault(e.into(), "fstat", &t.shown()))
        };
        let checked = stat(&self.open_target(&t, How::PATH, "open")?)?;
        let dir = match checked.kind {
            Kind::File => false,
            Kind::Dir => true,
            other => {
                return Err(PathError::NotRegular {
                    path: t.shown(),
                    kind: other.name(),
                })
            }
        };
        let mut oflags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY;
        if dir {
            oflags |= OFlags::DIRECTORY;
        }
        let fd = self.open_target(
            &t,
            How {
                oflags,
                ..How::PATH
            },
            "open",
        )?;
        let opened = stat(&fd)?;
        if (opened.dev, opened.ino) != (checked.dev, checked.ino) {
            return Err(PathError::Changed { path: t.shown() });
        }
        Ok(if dir {
            Readable::Dir(fd)
        } else {
            Readable::File(std::fs::File::from(fd))
        })
    }

    /// Reads a whole regular file.
    pub fn read_file(&self, path: impl AsRef<Path>) -> Result<Vec<u8>, PathError> {
        let shown = || path.as_ref().to_string_lossy().into_owned();
        match self.open_read(path.as_ref())? {
            Readable::Dir(_) => Err(PathError::IsDirectory { path: shown() }),
            Readable::File(mut f) => {
                let mut buf = Vec::new();
                f.read_to_end(&mut buf).map_err(|e| PathError::Io {
                    op: "read",
                    path: shown(),
                    source: e,
                })?;
                Ok(buf)
            }
        }
    }
}
