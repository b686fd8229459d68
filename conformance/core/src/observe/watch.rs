//! Watching the guarded places while a step runs (PROTO-OBSERVE-3): an inotify watch on
//! every directory below `@OUTSIDE@`, `@HOME@` and `@SIBLING@`, set before the request is
//! sent and read after the answer. The snapshots before and after a step see what stayed
//! changed; the watch sees what changed and was put back before the answer (a write
//! undone, a file made and removed), which an implementation that misreports a refusal
//! would do. Only changes count (writes, attributes, entries made, removed or renamed);
//! reading is no change.

use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};

/// The most directories one watch covers: a fixture's guarded trees are small.
const MAX_DIRS: usize = 2000;

/// One watch over a set of directory trees.
#[derive(Debug)]
pub struct Watch {
    fd: OwnedFd,
    dirs: HashMap<i32, PathBuf>,
}

fn changes() -> WatchFlags {
    WatchFlags::MODIFY
        | WatchFlags::ATTRIB
        | WatchFlags::CLOSE_WRITE
        | WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::DELETE_SELF
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO
        | WatchFlags::MOVE_SELF
        | WatchFlags::DONT_FOLLOW
        | WatchFlags::ONLYDIR
}

impl Watch {
    /// Watches every directory below each of `roots` (links not followed); `None` where
    /// the kernel offers no inotify.
    pub fn start(roots: &[PathBuf]) -> Option<Watch> {
        let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC).ok()?;
        let mut dirs = HashMap::new();
        let mut todo: Vec<PathBuf> = roots.to_vec();
        while let Some(dir) = todo.pop() {
            if dirs.len() >= MAX_DIRS {
                break;
            }
            let Ok(wd) = inotify::add_watch(&fd, &dir, changes()) else {
                continue;
            };
            if let Ok(entries) = std::fs::read_dir(&dir) {
                for e in entries.flatten() {
                    if e.file_type().is_ok_and(|t| t.is_dir()) {
                        todo.push(e.path());
                    }
                }
            }
            dirs.insert(wd, dir);
        }
        Some(Watch { fd, dirs })
    }

    /// Every change seen since the start, one line each (`@OUTSIDE@/victim: modified`),
    /// each path once.
    pub fn seen(&self) -> Vec<(PathBuf, String)> {
        let mut buf = vec![MaybeUninit::<u8>::uninit(); 64 * 1024];
        let mut reader = inotify::Reader::new(&self.fd, &mut buf);
        let mut out: Vec<(PathBuf, Vec<&'static str>)> = Vec::new();
        // `Err` (EAGAIN) once every queued event is read.
        while let Ok(ev) = reader.next() {
            if ev.events().contains(ReadFlags::QUEUE_OVERFLOW) {
                out.push((
                    PathBuf::from("(the watch)"),
                    vec!["too many changes to list"],
                ));
                continue;
            }
            let Some(dir) = self.dirs.get(&ev.wd()) else {
                continue;
            };
            let path = match ev.file_name() {
                Some(n) => dir.join(Path::new(&*n.to_string_lossy())),
                None => dir.clone(),
            };
            let what = describe(ev.events());
            if what.is_empty() {
                continue;
            }
            match out.iter_mut().find(|(p, _)| *p == path) {
                Some((_, w)) => {
                    for x in what {
                        if !w.contains(&x) {
                            w.push(x);
                        }
                    }
                }
                None => out.push((path, what)),
            }
        }
        out.into_iter().map(|(p, w)| (p, w.join(", "))).collect()
    }
}

fn describe(f: ReadFlags) -> Vec<&'static str> {
    [
        (ReadFlags::MODIFY, "written"),
        (ReadFlags::CLOSE_WRITE, "closed after writing"),
        (ReadFlags::ATTRIB, "attributes changed"),
        (ReadFlags::CREATE, "created"),
        (ReadFlags::DELETE, "removed"),
        (ReadFlags::DELETE_SELF, "removed"),
        (ReadFlags::MOVED_FROM, "renamed away"),
        (ReadFlags::MOVED_TO, "renamed in"),
        (ReadFlags::MOVE_SELF, "moved"),
    ]
    .into_iter()
    .filter(|(flag, _)| f.contains(*flag))
    .map(|(_, w)| w)
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_put_back_is_seen_and_a_read_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/victim"), "keep").unwrap();
        let w = Watch::start(std::slice::from_ref(&root)).unwrap();
        let _ = std::fs::read(root.join("sub/victim")).unwrap();
        assert!(w.seen().is_empty());
        std::fs::write(root.join("sub/victim"), "").unwrap();
        std::fs::write(root.join("sub/victim"), "keep").unwrap();
        let seen = w.seen();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!(seen[0].0, root.join("sub/victim"));
        assert!(seen[0].1.contains("written"), "{seen:?}");
    }
}
