//! `search` (PATH-LIST-2): look for text in the files beneath a path. The starting path
//! is resolved like any path; beneath it, each directory is opened relative to its
//! parent's handle with `O_NOFOLLOW | O_DIRECTORY`, links are never followed, and
//! anything but a regular file or a directory is skipped without being opened. Which
//! files may be read is the caller's question ([`Roots::search`]'s `may_read`, the trust
//! map in practice, TRUST-READ-2): a file it refuses is named as withheld, unread.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fd::OwnedFd;
use rustix::fs::{fstat, openat, statat, AtFlags, Dir, FileType, Mode, OFlags};

use super::read::Readable;
use super::{Key, Kind, PathError, Roots};

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    /// The file's key.
    pub key: Key,
    /// The line number, from 1.
    pub line: usize,
    /// The line, without its newline.
    pub text: Vec<u8>,
}

/// What a search found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    /// Matches from the files `may_read` allowed, in path order.
    pub matches: Vec<Match>,
    /// Files met that `may_read` refused: named, never read.
    pub withheld: Vec<Key>,
}

fn scan(key: &Key, data: &[u8], needle: &[u8], out: &mut Search) {
    for (i, line) in data.split(|b| *b == b'\n').enumerate() {
        if needle.is_empty() || line.windows(needle.len()).any(|w| w == needle) {
            out.matches.push(Match {
                key: key.clone(),
                line: i + 1,
                text: line.to_vec(),
            });
        }
    }
}

fn child(key: &Key, name: &[u8]) -> Key {
    let mut k = key.clone();
    k.components
        .push(std::ffi::OsStr::from_bytes(name).to_owned());
    k
}

impl Roots {
    /// Searches the file `path` names, or every regular file beneath the directory it
    /// names, for lines holding `needle`. `may_read` is asked about each file's key
    /// before it is opened for reading.
    pub fn search(
        &self,
        path: impl AsRef<Path>,
        needle: &[u8],
        mut may_read: impl FnMut(&Key) -> bool,
    ) -> Result<Search, PathError> {
        let start = self.key(path.as_ref())?;
        let mut out = Search::default();
        let fd = match self.open_read(path.as_ref())? {
            Readable::File(mut f) => {
                if may_read(&start) {
                    let mut data = Vec::new();
                    f.read_to_end(&mut data).map_err(|e| PathError::Io {
                        op: "read",
                        path: path.as_ref().to_string_lossy().into_owned(),
                        source: e,
                    })?;
                    scan(&start, &data, needle, &mut out);
                } else {
                    out.withheld.push(start);
                }
                return Ok(out);
            }
            Readable::Dir(fd) => fd,
        };
        let mut stack: Vec<(OwnedFd, Key)> = vec![(fd, start)];
        while let Some((dir, key)) = stack.pop() {
            let Ok(mut entries) = Dir::read_from(&dir) else {
                continue;
            };
            let mut names: Vec<(OsString, Kind)> = Vec::new();
            while let Some(Ok(ent)) = entries.next() {
                let name = ent.file_name().to_bytes();
                if name == b"." || name == b".." {
                    continue;
                }
                let kind = match ent.file_type() {
                    FileType::Unknown => statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)
                        .map(|st| Kind::from_type(FileType::from_raw_mode(st.st_mode)))
                        .unwrap_or(Kind::Unknown),
                    t => Kind::from_type(t),
                };
                names.push((std::ffi::OsStr::from_bytes(name).to_owned(), kind));
            }
            names.sort_by(|a, b| a.0.cmp(&b.0));
            let mut subdirs = Vec::new();
            for (name, kind) in names {
                let name = name.as_bytes();
                match kind {
                    Kind::Dir => {
                        let flags =
                            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                        // Swapped for a link or a file since the listing: skipped.
                        if let Ok(fd) = openat(&dir, name, flags, Mode::empty()) {
                            subdirs.push((fd, child(&key, name)));
                        }
                    }
                    Kind::File => {
                        let k = child(&key, name);
                        if !may_read(&k) {
                            out.withheld.push(k);
                            continue;
                        }
                        let flags = OFlags::RDONLY
                            | OFlags::NOFOLLOW
                            | OFlags::NONBLOCK
                            | OFlags::NOCTTY
                            | OFlags::CLOEXEC;
                        let Ok(fd) = openat(&dir, name, flags, Mode::empty()) else {
                            continue;
                        };
                        // Swapped for a FIFO or a device since the listing: skipped unread.
                        let regular = fstat(&fd).is_ok_and(|st| {
                            FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
                        });
                        let mut data = Vec::new();
                        if regular && std::fs::File::from(fd).read_to_end(&mut data).is_ok() {
                            scan(&k, &data, needle, &mut out);
                        }
                    }
                    _ => {}
                }
            }
            // Depth first, in name order.
            stack.extend(subdirs.into_iter().rev());
        }
        Ok(out)
    }
}
