//! Directory listings for the walk that finds root-only objects below the allowed `/etc`
//! entries ([`crate::fence::plan::Layout::of`]), kept between commands so that a settled
//! directory is not read again for every jail.
//!
//! Reading the directories is most of that walk's cost (on this machine's ext4 some 24
//! `getdents64` calls per command, 0.3 ms; `/etc/alternatives` alone holds about 400
//! entries, nearly all links). What a directory holds changes only with its modification
//! and change times (creating, removing or renaming an entry updates both), so a listing
//! is reused only while the directory's device, inode and both times are what they were
//! when it was read, and only a listing read when both times lay at least
//! [`SETTLED`] in the past is kept at all: a change within the file system's timestamp
//! granularity of the reading could otherwise leave the times equal and the listing
//! stale. The modes of the entries are never cached: every entry that is not a link is
//! looked up again on every walk, since a `chmod` changes no directory time.
//!
//! The listings live in this user's fence directory ([`crate::fence::user_dir::own_dir`],
//! mode 0700, which no jail sees); a file that cannot be read or parsed is ignored and
//! written anew. May touch: that one file.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long ago a directory's times must lie for its listing to be kept.
pub const SETTLED: Duration = Duration::from_secs(2);

/// The file holding the listings in the user's fence directory.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const FILE: &str = "etc-listings";
/// The file's first line.
const HEADER: &str = "gatehouse etc listings 1";

/// What identifies a directory's state: device, inode, modification and change times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DirKey {
    dev: u64,
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl DirKey {
    fn of(m: &std::fs::Metadata) -> DirKey {
        use std::os::unix::fs::MetadataExt;
        DirKey {
            dev: m.dev(),
            ino: m.ino(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }

    /// Whether both times lie at least [`SETTLED`] before `now`.
    fn settled(&self, now: SystemTime) -> bool {
        let Ok(now) = now.duration_since(SystemTime::UNIX_EPOCH) else {
            return false;
        };
        let limit = now.saturating_sub(SETTLED);
        let at = |(s, ns): (i64, i64)| {
            u64::try_from(s)
                .ok()
                .map(|s| Duration::new(s, ns.clamp(0, 999_999_999) as u32))
        };
        matches!((at(self.mtime), at(self.ctime)), (Some(m), Some(c)) if m <= limit && c <= limit)
    }
}

/// One directory's listing: the names of its entries that are not symbolic links.
#[derive(Debug, Clone)]
struct Listing {
    key: DirKey,
    names: Vec<OsString>,
}

/// The listings of one walk: those loaded from the file, and those read meanwhile.
#[derive(Debug, Default)]
pub struct Listings {
    file: Option<PathBuf>,
    known: HashMap<PathBuf, Listing>,
    changed: bool,
}

impl Listings {
    /// The listings kept by earlier commands of this user (none where there is no fence
    /// directory or no readable file).
    pub fn load() -> Listings {
        #[cfg(target_os = "linux")]
        let file = crate::fence::user_dir::own_dir().ok().map(|d| d.join(FILE));
        #[cfg(not(target_os = "linux"))]
        let file: Option<PathBuf> = None;
        let known = file
            .as_deref()
            .and_then(|f| std::fs::read(f).ok())
            .and_then(|bytes| parse(&bytes))
            .unwrap_or_default();
        Listings {
            file,
            known,
            changed: false,
        }
    }

    /// The names of the entries of `dir` that are not symbolic links (sorted), from the
    /// kept listing where the directory is as it was, else read now. `None` when `dir`
    /// cannot be read.
    pub fn entries(&mut self, dir: &Path) -> Option<Vec<OsString>> {
        let meta = std::fs::symlink_metadata(dir).ok()?;
        let key = DirKey::of(&meta);
        if let Some(l) = self.known.get(dir) {
            if l.key == key {
                return Some(l.names.clone());
            }
        }
        let now = SystemTime::now();
        let mut names: Vec<OsString> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().map(|t| !t.is_symlink()).unwrap_or(true))
            .map(|e| e.file_name())
            .collect();
        names.sort();
        // Kept only when it was read well after the directory last changed, and when every
        // name can be written on a line of its own.
        let writable = |n: &OsString| !n.as_encoded_bytes().contains(&b'\n');
        let after = std::fs::symlink_metadata(dir).ok().map(|m| DirKey::of(&m));
        if key.settled(now)
            && after == Some(key)
            && names.iter().all(writable)
            && !dir.as_os_str().as_encoded_bytes().contains(&b'\n')
        {
            self.known.insert(
                dir.to_path_buf(),
                Listing {
                    key,
                    names: names.clone(),
                },
            );
            self.changed = true;
        } else if self.known.remove(dir).is_some() {
            self.changed = true;
        }
        Some(names)
    }

    /// Write the listings back if this walk changed them: to a fresh file renamed over
    /// the old one, so that a concurrent reader sees the old file or the new one whole.
    pub fn save(&self) {
        let Some(file) = &self.file else {
            return;
        };
        if !self.changed {
            return;
        }
        let mut out = Vec::new();
        out.extend_from_slice(HEADER.as_bytes());
        out.push(b'\n');
        let mut dirs: Vec<_> = self.known.iter().collect();
        dirs.sort_by(|a, b| a.0.cmp(b.0));
        for (dir, l) in dirs {
            let k = &l.key;
            out.extend_from_slice(
                format!(
                    "D {} {} {} {} {} {} ",
                    k.dev, k.ino, k.mtime.0, k.mtime.1, k.ctime.0, k.ctime.1
                )
                .as_bytes(),
            );
            out.extend_from_slice(dir.as_os_str().as_encoded_bytes());
            out.push(b'\n');
            for n in &l.names {
                out.extend_from_slice(b"E ");
                out.extend_from_slice(n.as_encoded_bytes());
                out.push(b'\n');
            }
        }
        let tmp = file.with_extension(format!("{}.tmp", std::process::id()));
        let written = (|| {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&tmp)?;
            f.write_all(&out)?;
            std::fs::rename(&tmp, file)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// The listings of a file written by [`Listings::save`]; `None` for anything else.
fn parse(bytes: &[u8]) -> Option<HashMap<PathBuf, Listing>> {
    use std::os::unix::ffi::OsStrExt;
    let mut lines = bytes.split(|b| *b == b'\n');
    if lines.next()? != HEADER.as_bytes() {
        return None;
    }
    let mut known = HashMap::new();
    let mut current: Option<(PathBuf, Listing)> = None;
    for line in lines {
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix(b"D ") {
            if let Some((dir, l)) = current.take() {
                known.insert(dir, l);
            }
            let mut fields = rest.splitn(7, |b| *b == b' ');
            let mut num =
                || -> Option<i64> { std::str::from_utf8(fields.next()?).ok()?.parse().ok() };
            let (dev, ino) = (num()? as u64, num()? as u64);
            let mtime = (num()?, num()?);
            let ctime = (num()?, num()?);
            let dir = PathBuf::from(std::ffi::OsStr::from_bytes(fields.next()?));
            if !dir.is_absolute() {
                return None;
            }
            current = Some((
                dir,
                Listing {
                    key: DirKey {
                        dev,
                        ino,
                        mtime,
                        ctime,
                    },
                    names: Vec::new(),
                },
            ));
        } else if let Some(name) = line.strip_prefix(b"E ") {
            let (_, l) = current.as_mut()?;
            if name.is_empty() || name.contains(&b'/') {
                return None;
            }
            l.names
                .push(std::ffi::OsStr::from_bytes(name).to_os_string());
        } else {
            return None;
        }
    }
    if let Some((dir, l)) = current {
        known.insert(dir, l);
    }
    Some(known)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh(dir: &Path) -> Listings {
        Listings {
            file: Some(dir.join(FILE)),
            ..Listings::default()
        }
    }

    fn age(p: &Path, secs: u64) {
        let old = SystemTime::now() - Duration::from_secs(secs);
        let f = std::fs::File::open(p).unwrap();
        f.set_modified(old).unwrap();
    }

    #[test]
    fn a_kept_listing_is_used_only_while_the_directory_is_unchanged() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("etc-like");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("a"), "").unwrap();
        std::os::unix::fs::symlink("a", d.join("link")).unwrap();
        // A directory changed just now is read but its listing not kept (its change time
        // is recent whatever the modification time says).
        let mut l = fresh(t.path());
        assert_eq!(l.entries(&d).unwrap(), vec![OsString::from("a")]);
        assert!(l.known.is_empty());
        // A settled one is kept, written, and read back.
        let key = DirKey {
            ctime: (0, 0),
            mtime: (0, 0),
            ..DirKey::of(&std::fs::metadata(&d).unwrap())
        };
        assert!(key.settled(SystemTime::now()));
        l.known.insert(
            d.clone(),
            Listing {
                key: DirKey::of(&std::fs::metadata(&d).unwrap()),
                names: vec![OsString::from("a")],
            },
        );
        l.changed = true;
        l.save();
        let mut back = fresh(t.path());
        back.known = parse(&std::fs::read(t.path().join(FILE)).unwrap()).unwrap();
        assert_eq!(back.entries(&d).unwrap(), vec![OsString::from("a")]);
        // A new entry changes the directory's times: the kept listing is not used.
        std::fs::write(d.join("b"), "").unwrap();
        assert_eq!(
            back.entries(&d).unwrap(),
            vec![OsString::from("a"), OsString::from("b")]
        );
        // Setting the modification time back does not bring the old listing back: the
        // change time moved too.
        age(&d, 3600);
        let mut again = fresh(t.path());
        again.known = parse(&std::fs::read(t.path().join(FILE)).unwrap()).unwrap();
        assert_eq!(again.entries(&d).unwrap().len(), 2);
    }

    #[test]
    fn a_damaged_file_is_ignored() {
        assert!(parse(b"something else\n").is_none());
        assert!(parse(b"gatehouse etc listings 1\nE orphan\n").is_none());
        assert!(parse(b"gatehouse etc listings 1\nD 1 2 3 4 5 6 relative\n").is_none());
        assert!(parse(b"gatehouse etc listings 1\nD 1 2 3 4 5 6 /etc\nE a/b\n").is_none());
        let ok = parse(b"gatehouse etc listings 1\nD 1 2 3 4 5 6 /etc/x y\nE a\nE b c\n").unwrap();
        assert_eq!(ok[Path::new("/etc/x y")].names.len(), 2);
    }
}
