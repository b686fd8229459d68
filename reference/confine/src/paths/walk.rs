//! The fallback backend: a component walk over a stack of directory handles.
//!
//! Each step opens exactly one name relative to the directory on top of the stack with
//! `O_NOFOLLOW`. `..` never reaches the filesystem: it pops the stack, and popping past
//! the root is an escape. A symlink is read (`readlinkat` on the handle the step opened)
//! and its components are pushed in its place; an absolute target is an escape, and more
//! than [`MAX_LINKS`] links is a loop.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{fstat, openat, readlinkat, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::error::Fault;
use super::validate::{split, Comp};

/// Symlinks followed in one resolution before it is called a loop (Linux's own bound).
pub const MAX_LINKS: u32 = 40;

/// How the final component is opened; `None` treats every component as a directory
/// to descend into (used to compute physical names).
#[derive(Clone, Copy)]
pub(crate) struct Final {
    pub oflags: OFlags,
    pub mode: Mode,
    pub follow: bool,
}

/// The result of a walk: the opened object and the physical names of the directory
/// stack it was found in (the root is the empty stack).
pub(crate) struct Walked {
    pub fd: OwnedFd,
    pub names: Vec<OsString>,
}

fn top<'a>(stack: &'a [(OwnedFd, OsString)], root: BorrowedFd<'a>) -> BorrowedFd<'a> {
    match stack.last() {
        Some((fd, _)) => fd.as_fd(),
        None => root,
    }
}

/// Opens `name` without following, to tell a link from anything else. A missing name is
/// [`Probe::Missing`] (the final open reports it, or creates it).
fn probe(cur: BorrowedFd<'_>, name: &OsString) -> Result<Probe, Fault> {
    let flags = super::handle::HANDLE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match openat(cur, name.as_bytes(), flags, Mode::empty()) {
        Ok(fd) if FileType::from_raw_mode(fstat(&fd)?.st_mode) == FileType::Symlink => {
            Ok(Probe::Link(fd))
        }
        Ok(fd) => Ok(Probe::Other(fd)),
        Err(e) if e == Errno::NOENT => Ok(Probe::Missing),
        Err(e) => Err(e.into()),
    }
}

/// Whether `fd` lives on procfs, where symbolic links may be magic.
fn on_procfs(fd: BorrowedFd<'_>) -> bool {
    const PROC_SUPER_MAGIC: i64 = 0x9fa0;
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    rustix::fs::fstatfs(fd).is_ok_and(|st| i64::from(st.f_type) == PROC_SUPER_MAGIC)
}

/// What the look before the final open found.
enum Probe {
    Link(OwnedFd),
    /// Not a link: an `O_PATH` handle to it, reusable when that is all that was asked.
    Other(OwnedFd),
    Missing,
}

/// Walks `comps` beneath `root`.
pub(crate) fn open(
    root: BorrowedFd<'_>,
    comps: &[Comp],
    last: Option<Final>,
) -> Result<Walked, Fault> {
    let mut stack: Vec<(OwnedFd, OsString)> = Vec::new();
    let mut pending: Vec<Comp> = comps.iter().rev().cloned().collect();
    let mut links = 0u32;
    // A link whose target ends in `/` or `/.` names a directory: when it stands last,
    // whatever the walk ends on must be one (the kernel answers `ENOTDIR` for a file
    // reached through `l -> a/.`), and a final link there is followed.
    let mut must_be_dir = false;
    loop {
        let Some(comp) = pending.pop() else {
            // Ended on a directory: the root, or one reached through `..` or a link.
            let (oflags, mode) = last.map_or((super::handle::HANDLE, Mode::empty()), |f| {
                (f.oflags, f.mode)
            });
            let fd = openat(top(&stack, root), ".", oflags | OFlags::CLOEXEC, mode)?;
            return Ok(Walked {
                fd,
                names: stack.into_iter().map(|(_, n)| n).collect(),
            });
        };
        let name = match comp {
            Comp::Parent => {
                if stack.pop().is_none() {
                    return Err(Fault::Escape);
                }
                continue;
            }
            Comp::Name(name) => name,
        };
        let cur = top(&stack, root);
        let is_last = pending.is_empty();
        let link_fd = match last {
            Some(f) if is_last => {
                let follow = f.follow || must_be_dir;
                // Look before opening: `O_DIRECTORY | O_NOFOLLOW` on a link answers
                // `ENOTDIR`, not `ELOOP`, so a link must be recognised first.
                let found = if follow {
                    probe(cur, &name)?
                } else {
                    Probe::Missing
                };
                match found {
                    Probe::Link(link) => Some(link),
                    Probe::Other(fd) if f.oflags == super::handle::HANDLE => {
                        if must_be_dir
                            && FileType::from_raw_mode(fstat(&fd)?.st_mode) != FileType::Directory
                        {
                            return Err(Fault::Sys(Errno::NOTDIR));
                        }
                        let names = stack.into_iter().map(|(_, n)| n).collect();
                        return Ok(Walked { fd, names });
                    }
                    Probe::Missing if must_be_dir && f.oflags.contains(OFlags::CREATE) => {
                        // `open(2)` creates no file through a name that must be a
                        // directory.
                        return Err(Fault::Sys(Errno::ISDIR));
                    }
                    Probe::Other(_) | Probe::Missing => {
                        let mut flags = f.oflags | OFlags::CLOEXEC | OFlags::NOFOLLOW;
                        if must_be_dir {
                            flags |= OFlags::DIRECTORY;
                        }
                        match openat(cur, name.as_bytes(), flags, f.mode) {
                            Ok(fd) => {
                                let names = stack.into_iter().map(|(_, n)| n).collect();
                                return Ok(Walked { fd, names });
                            }
                            // Became a link since the probe: follow it.
                            Err(e) if e == Errno::LOOP && follow => None,
                            Err(e) => return Err(e.into()),
                        }
                    }
                }
            }
            _ => {
                let fd = openat(
                    cur,
                    name.as_bytes(),
                    super::handle::HANDLE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )?;
                match FileType::from_raw_mode(fstat(&fd)?.st_mode) {
                    FileType::Directory => {
                        stack.push((fd, name));
                        continue;
                    }
                    FileType::Symlink => Some(fd),
                    _ => return Err(Fault::Sys(Errno::NOTDIR)),
                }
            }
        };
        links += 1;
        if links > MAX_LINKS {
            return Err(Fault::Loop);
        }
        let target = match &link_fd {
            Some(fd) => readlinkat(fd, "", Vec::new()),
            None => readlinkat(cur, name.as_bytes(), Vec::new()),
        };
        let target = match target {
            Ok(t) => t,
            // The name stopped being a link between the open and the read: look again.
            Err(e) if e == Errno::INVAL => {
                pending.push(Comp::Name(name));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let target = target.as_bytes();
        if target.is_empty() {
            return Err(Fault::Sys(Errno::NOENT));
        }
        if target[0] == b'/' {
            return Err(Fault::Escape);
        }
        // A magic link (`/proc/<pid>/fd/N` to a pipe, a socket, a namespace) reads as
        // `kind:[inode]`; the kernel follows it to an object, never to that name
        // (PATH-RESOLVE-4). Magic links with path-like targets read as absolute paths and
        // are refused above.
        if target.windows(2).any(|w| w == b":[") {
            let on = link_fd.as_ref().map_or(cur, |fd| fd.as_fd());
            if on_procfs(on) {
                return Err(Fault::Escape);
            }
        }
        let parsed = split(target);
        if pending.is_empty() && parsed.trailing_slash {
            must_be_dir = true;
        }
        pending.extend(parsed.comps.into_iter().rev());
    }
}
