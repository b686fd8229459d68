//! Snapshots of a path on the real filesystem, taken by the runner before a step and
//! compared after it (FENCE-RUN-4): for every object beneath the path, without following
//! symbolic links, its kind, contents, size, mode, owner, link count, modification and
//! change times, link target and extended attributes, and for a directory its entries.
//! Nothing is taken from the implementation.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// At most this many objects are recorded beneath one path.
const MAX_ENTRIES: usize = 20_000;
/// Contents are recorded up to this many bytes; beyond, the rest is hashed by length.
const MAX_CONTENT: u64 = 16 << 20;

/// What is recorded of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    kind: &'static str,
    size: u64,
    mode: u32,
    uid: u32,
    gid: u32,
    nlink: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    content: Option<Vec<u8>>,
    target: Option<PathBuf>,
    xattrs: BTreeMap<Vec<u8>, Vec<u8>>,
    entries: Vec<Vec<u8>>,
}

/// Every object beneath one path, keyed by its path relative to it (`""` is the path).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot(BTreeMap<PathBuf, Meta>);

impl Snapshot {
    /// Records `path` and everything beneath it; an absent path records nothing.
    pub fn take(path: &Path) -> Snapshot {
        let mut snap = Snapshot::default();
        walk(path, PathBuf::new(), &mut snap.0);
        snap
    }

    /// The differences from `self` to `after`, one line per object, each starting with
    /// `shown` (the path as the scenario wrote it) and the sub-path.
    pub fn diff(&self, after: &Snapshot, shown: &str) -> Vec<String> {
        let mut out = Vec::new();
        let keys: std::collections::BTreeSet<&PathBuf> =
            self.0.keys().chain(after.0.keys()).collect();
        for k in keys {
            let name = if k.as_os_str().is_empty() {
                shown.to_string()
            } else {
                format!("{shown}/{}", k.display())
            };
            let change = match (self.0.get(k), after.0.get(k)) {
                (Some(_), None) => vec!["removed".to_string()],
                (None, Some(m)) => vec![format!("created ({})", m.kind)],
                (Some(a), Some(b)) => changes(a, b),
                (None, None) => vec![],
            };
            if !change.is_empty() {
                out.push(format!("{name}: {}", change.join(", ")));
            }
        }
        out
    }
}

fn changes(a: &Meta, b: &Meta) -> Vec<String> {
    let mut c = Vec::new();
    if a.kind != b.kind {
        c.push(format!("kind {} -> {}", a.kind, b.kind));
        return c;
    }
    let dir_entries_changed = a.entries != b.entries;
    if dir_entries_changed {
        let gone: Vec<_> = a
            .entries
            .iter()
            .filter(|e| !b.entries.contains(e))
            .collect();
        let new: Vec<_> = b
            .entries
            .iter()
            .filter(|e| !a.entries.contains(e))
            .collect();
        let show = |v: Vec<&Vec<u8>>, sign: char| {
            v.iter()
                .map(|e| format!("{sign}{}", String::from_utf8_lossy(e)))
                .collect::<Vec<_>>()
        };
        let mut parts = show(new, '+');
        parts.extend(show(gone, '-'));
        c.push(format!("entries {}", parts.join(" ")));
    }
    if a.size != b.size && !dir_entries_changed {
        c.push(format!("size {} -> {}", a.size, b.size));
    }
    if a.content != b.content {
        c.push("content changed".into());
    }
    if a.mode != b.mode {
        c.push(format!("mode {:04o} -> {:04o}", a.mode, b.mode));
    }
    if (a.uid, a.gid) != (b.uid, b.gid) {
        c.push(format!("owner {}:{} -> {}:{}", a.uid, a.gid, b.uid, b.gid));
    }
    if a.nlink != b.nlink && !dir_entries_changed {
        c.push(format!("links {} -> {}", a.nlink, b.nlink));
    }
    if a.mtime != b.mtime && !dir_entries_changed {
        c.push(format!("mtime {} -> {}", time(a.mtime), time(b.mtime)));
    }
    if a.target != b.target {
        c.push(format!("target {:?} -> {:?}", a.target, b.target));
    }
    for (k, v) in &a.xattrs {
        match b.xattrs.get(k) {
            None => c.push(format!("xattr {} removed", String::from_utf8_lossy(k))),
            Some(w) if w != v => c.push(format!("xattr {} changed", String::from_utf8_lossy(k))),
            _ => {}
        }
    }
    for k in b.xattrs.keys().filter(|k| !a.xattrs.contains_key(*k)) {
        c.push(format!("xattr {} added", String::from_utf8_lossy(k)));
    }
    if c.is_empty() && a.ctime != b.ctime && !dir_entries_changed {
        c.push(format!("ctime {} -> {}", time(a.ctime), time(b.ctime)));
    }
    c
}

fn time((s, ns): (i64, i64)) -> String {
    format!("{s}.{ns:09}")
}

fn walk(path: &Path, rel: PathBuf, out: &mut BTreeMap<PathBuf, Meta>) {
    if out.len() >= MAX_ENTRIES {
        return;
    }
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return;
    };
    let ft = m.file_type();
    let kind = if ft.is_file() {
        "file"
    } else if ft.is_dir() {
        "dir"
    } else if ft.is_symlink() {
        "symlink"
    } else if ft.is_fifo() {
        "fifo"
    } else if ft.is_socket() {
        "socket"
    } else {
        "other"
    };
    let mut entries = Vec::new();
    if ft.is_dir() {
        if let Ok(rd) = std::fs::read_dir(path) {
            entries = rd
                .flatten()
                .map(|e| e.file_name().as_bytes().to_vec())
                .collect();
            entries.sort();
        }
    }
    let meta = Meta {
        kind,
        size: if ft.is_dir() { 0 } else { m.size() },
        mode: m.mode() & 0o7777,
        uid: m.uid(),
        gid: m.gid(),
        nlink: m.nlink(),
        mtime: (m.mtime(), m.mtime_nsec()),
        ctime: (m.ctime(), m.ctime_nsec()),
        content: ft.is_file().then(|| content(path)).flatten(),
        target: ft
            .is_symlink()
            .then(|| std::fs::read_link(path).ok())
            .flatten(),
        xattrs: xattrs(path),
        entries: entries.clone(),
    };
    out.insert(rel.clone(), meta);
    for e in entries {
        let name = std::ffi::OsStr::from_bytes(&e);
        walk(&path.join(name), rel.join(name), out);
    }
}

fn content(path: &Path) -> Option<Vec<u8>> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
        .open(path)
        .ok()?;
    let mut buf = Vec::new();
    f.take(MAX_CONTENT).read_to_end(&mut buf).ok()?;
    Some(buf)
}

/// Every extended attribute of `path` itself (not following a link), by name.
pub fn xattrs(path: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut names = vec![0u8; 4096];
    let Ok(n) = rustix::fs::llistxattr(path, &mut names[..]) else {
        return out;
    };
    names.truncate(n);
    for name in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let mut value = vec![0u8; 65536];
        if let Ok(len) = rustix::fs::lgetxattr(path, name, &mut value[..]) {
            value.truncate(len);
            out.insert(name.to_vec(), value);
        }
    }
    out
}

// The tests' one way to skip (xtask/src/skip.rs), counted by `cargo xtask test`.
#[cfg(test)]
#[path = "../../../../xtask/src/skip.rs"]
mod test_skip;

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn setxattr(path: &Path, name: &str, value: &[u8]) -> bool {
        rustix::fs::lsetxattr(path, name, value, rustix::fs::XattrFlags::empty()).is_ok()
    }

    #[test]
    fn content_size_mode_and_times_are_compared() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me safe").unwrap();
        let before = Snapshot::take(dir.path());
        assert!(before
            .diff(&Snapshot::take(dir.path()), "@OUTSIDE@")
            .is_empty());

        std::fs::write(&victim, "").unwrap();
        let d = before.diff(&Snapshot::take(dir.path()), "@OUTSIDE@");
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].starts_with("@OUTSIDE@/victim: size 12 -> 0, content changed"),
            "{d:?}"
        );

        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o640)).unwrap();
        let before = Snapshot::take(&victim);
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o777)).unwrap();
        let d = before.diff(&Snapshot::take(&victim), "@OUTSIDE@/victim");
        assert_eq!(d, vec!["@OUTSIDE@/victim: mode 0640 -> 0777"]);

        let before = Snapshot::take(&victim);
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(86_400);
        std::fs::File::options()
            .write(true)
            .open(&victim)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let d = before.diff(&Snapshot::take(&victim), "v");
        assert!(
            d[0].starts_with("v: mtime ") && d[0].contains("-> 86400.000000000"),
            "{d:?}"
        );
    }

    #[test]
    fn created_removed_links_and_entries_are_seen() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "x").unwrap();
        let before = Snapshot::take(dir.path());
        std::fs::write(dir.path().join("new"), "y").unwrap();
        std::fs::hard_link(dir.path().join("a"), dir.path().join("b")).unwrap();
        let d = before.diff(&Snapshot::take(dir.path()), "@O@");
        assert_eq!(
            d,
            vec![
                "@O@: entries +b +new".to_string(),
                "@O@/a: links 1 -> 2".to_string(),
                "@O@/b: created (file)".to_string(),
                "@O@/new: created (file)".to_string(),
            ]
        );
        let gone = Snapshot::take(&dir.path().join("nothing"));
        assert_eq!(gone, Snapshot::default());
        let before = Snapshot::take(&dir.path().join("a"));
        std::fs::remove_file(dir.path().join("a")).unwrap();
        assert_eq!(
            before.diff(&Snapshot::take(&dir.path().join("a")), "@O@/a"),
            vec!["@O@/a: removed"]
        );
    }

    #[test]
    fn xattrs_are_compared_where_the_filesystem_has_them() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, "x").unwrap();
        let before = Snapshot::take(&f);
        if !setxattr(&f, "user.gatehouse", b"1") {
            super::test_skip::skip(
                "the comparison of extended attributes",
                "this filesystem takes no user xattrs",
            );
            return;
        }
        assert_eq!(
            xattrs(&f).get(b"user.gatehouse".as_slice()),
            Some(&b"1".to_vec())
        );
        let d = before.diff(&Snapshot::take(&f), "f");
        assert_eq!(d, vec!["f: xattr user.gatehouse added"]);
    }

    #[test]
    fn fifos_are_recorded_without_opening_them() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pipe");
        rustix::fs::mkfifoat(rustix::fs::CWD, &p, rustix::fs::Mode::from_raw_mode(0o644)).unwrap();
        let s = Snapshot::take(dir.path());
        assert!(s.diff(&Snapshot::take(dir.path()), "d").is_empty());
    }
}
