//! `stat` through the resolver: what a path names, following a final link only while
//! it stays inside the root.

use std::path::Path;

use rustix::fs::{fstat, FileType, Stat};

use super::resolve::How;
use super::{PathError, Roots};

/// What kind of object a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (only seen when not following).
    Symlink,
    /// A named pipe.
    Fifo,
    /// A socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
    /// Anything else.
    Unknown,
}

impl Kind {
    pub(crate) fn from_type(t: FileType) -> Kind {
        match t {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Symlink,
            FileType::Fifo => Kind::Fifo,
            FileType::Socket => Kind::Socket,
            FileType::CharacterDevice => Kind::CharDevice,
            FileType::BlockDevice => Kind::BlockDevice,
            FileType::Unknown => Kind::Unknown,
        }
    }

    /// The kind `list` reports (PATH-LIST-1): `file`, `dir`, `symlink` or `other`.
    pub fn entry_name(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Dir => "dir",
            Kind::Symlink => "symlink",
            _ => "other",
        }
    }

    /// A short name (`file`, `dir`, `fifo`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Dir => "dir",
            Kind::Symlink => "symlink",
            Kind::Fifo => "fifo",
            Kind::Socket => "socket",
            Kind::CharDevice => "char-device",
            Kind::BlockDevice => "block-device",
            Kind::Unknown => "unknown",
        }
    }
}

/// The facts about an object the reference uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metadata {
    /// Its kind.
    pub kind: Kind,
    /// Size in bytes.
    pub len: u64,
    /// Device number.
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
    /// Permission bits.
    pub mode: u32,
    /// Hard-link count (above one hints at a link to somewhere else).
    pub nlink: u64,
}

impl Metadata {
    // The casts are no-ops on 64-bit Linux and widen elsewhere.
    #[allow(clippy::unnecessary_cast)]
    pub(crate) fn from_stat(st: &Stat) -> Metadata {
        Metadata {
            kind: Kind::from_type(FileType::from_raw_mode(st.st_mode as _)),
            len: st.st_size as u64,
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            mode: st.st_mode as u32 & 0o7777,
            nlink: st.st_nlink as u64,
        }
    }
}

impl Roots {
    /// What `path` names, following links confined to its root.
    pub fn stat(&self, path: impl AsRef<Path>) -> Result<Metadata, PathError> {
        let t = self.target(path.as_ref().as_os_str())?;
        let fd = self.open_target(&t, How::PATH, "stat")?;
        let st = fstat(&fd).map_err(|e| PathError::from_fault(e.into(), "fstat", &t.shown()))?;
        Ok(Metadata::from_stat(&st))
    }
}
