//! Dispatch to the backend that runs, and the shared steps every operation uses:
//! routing a path to its root, the spelling checks made before any system call, the
//! physical resolution of `..`, opening a path beneath its root, and opening (or making)
//! a write's parent. Failures leave here only through [`PathError::from_fault`].

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fd::OwnedFd;
use rustix::fs::{fstat, mkdirat, openat, statat, unlinkat, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::backend::mark_openat2_absent;
use super::error::Fault;
use super::validate::{join, split, validate, Comp};
use super::walk::{self, Final};
use super::{openat2, Backend, PathError, Root, Roots};

/// A validated path routed to its root. Without `..` the part below the root is
/// borrowed from the input, so the `openat2` fast path allocates nothing.
pub(crate) struct Target<'a> {
    pub root: &'a Root,
    /// The whole input, for messages.
    pub raw: &'a OsStr,
    /// The part below the root, relative (no leading `/`), possibly empty. When the
    /// input held `..`, this is the physical spelling (PATH-KEY-6): the names of the
    /// directory the last `..` climbed to, then the rest, so it holds no `..`.
    pub rest: Cow<'a, [u8]>,
}

impl Target<'_> {
    /// The input as a person reads it.
    pub fn shown(&self) -> String {
        self.raw.to_string_lossy().into_owned()
    }

    /// The components below the root.
    pub fn comps(&self) -> Vec<Comp> {
        split(&self.rest).comps
    }

    /// Whether the input ended in `/` or `/.`.
    pub fn trailing(&self) -> bool {
        let b = self.raw.as_bytes();
        b.ends_with(b"/") || b.ends_with(b"/.")
    }

    /// The key of this target (PATH-KEY-1, PATH-KEY-6).
    pub fn key(&self) -> super::Key {
        super::Key {
            root: self.root.id,
            components: self
                .comps()
                .into_iter()
                .filter_map(|c| match c {
                    Comp::Name(n) => Some(n),
                    Comp::Parent => None,
                })
                .collect(),
        }
    }
}

/// How the final component is opened.
#[derive(Clone, Copy)]
pub(crate) struct How {
    pub oflags: OFlags,
    pub mode: Mode,
    pub follow_last: bool,
}

impl How {
    /// An `O_PATH` handle, following the final link.
    pub const PATH: How = How {
        oflags: super::handle::HANDLE,
        mode: Mode::empty(),
        follow_last: true,
    };
}

/// Byte offsets `(start, end)` of the non-empty, non-`.` segments of `bytes`.
fn segments(bytes: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut pos = 0;
    std::iter::from_fn(move || {
        while pos < bytes.len() {
            let start = pos;
            let end = bytes[start..]
                .iter()
                .position(|b| *b == b'/')
                .map_or(bytes.len(), |i| start + i);
            pos = end + 1;
            let seg = &bytes[start..end];
            if !seg.is_empty() && seg != b"." {
                return Some((start, end));
            }
        }
        None
    })
}

fn trim_slashes(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| **c == b'/').count();
    &b[n..]
}

/// PATH-SPELL-4: whether `..` folded as text climbs above the start of `rest`. Also
/// answers whether `rest` holds a `..` at all.
fn spelling(rest: &[u8]) -> (bool, bool) {
    if !rest.windows(2).any(|w| w == b"..") {
        return (false, false);
    }
    let mut depth = 0usize;
    let mut any = false;
    for (s, e) in segments(rest) {
        if &rest[s..e] == b".." {
            any = true;
            match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return (any, true),
            }
        } else {
            depth += 1;
        }
    }
    (any, false)
}

/// A write's parent directory: its handle, the final name, and the directories this
/// write made (removed again if the write is refused, PATH-ERR-3).
pub(crate) struct Parent {
    pub fd: OwnedFd,
    pub name: OsString,
    made: Vec<(OwnedFd, OsString)>,
}

impl Parent {
    /// Removes the directories this write made, deepest first (best effort: only empty
    /// ones go).
    pub fn undo(&mut self) {
        while let Some((dir, name)) = self.made.pop() {
            let _ = unlinkat(&dir, name.as_os_str(), AtFlags::REMOVEDIR);
        }
    }
}

impl Roots {
    /// Resolves `path` to an `O_PATH` handle beneath its root; `follow_last == false`
    /// returns a final symlink itself.
    pub fn resolve(&self, path: impl AsRef<Path>, follow_last: bool) -> Result<OwnedFd, PathError> {
        let t = self.target(path.as_ref().as_os_str())?;
        let how = How {
            follow_last,
            ..How::PATH
        };
        self.open_target(&t, how, "resolve")
    }

    /// Validates and routes `path` (PATH-INPUT-*, PATH-ROUTE-*), refuses a spelling that
    /// climbs out (PATH-SPELL-4), all before any system call; then, when the path holds
    /// `..`, finds the directory the last `..` lands in with the confined walk
    /// (PATH-KEY-6).
    pub(crate) fn target<'a>(&'a self, path: &'a OsStr) -> Result<Target<'a>, PathError> {
        validate(path)?;
        let bytes = path.as_bytes();
        let escape = || PathError::from_fault(Fault::Escape, "route", &path.to_string_lossy());
        let (root, rest) = if bytes[0] != b'/' {
            (self.workdir(), bytes)
        } else {
            let mut best: Option<(&Root, usize, usize)> = None;
            for root in self.roots.iter() {
                let mut segs = segments(bytes);
                let mut end = 0;
                let mut n = 0;
                let matched = root.path.iter().skip(1).all(|p| match segs.next() {
                    Some((s, e)) if &bytes[s..e] == p.as_bytes() => {
                        end = e;
                        n += 1;
                        true
                    }
                    _ => false,
                });
                if !matched {
                    continue;
                }
                if let Some(only) = &root.only {
                    let rest: Vec<_> = segs.collect();
                    if rest.len() != 1 || &bytes[rest[0].0..rest[0].1] != only.as_bytes() {
                        continue;
                    }
                }
                if best.map_or(true, |(_, m, _)| n > m) {
                    best = Some((root, n, end));
                }
            }
            match best {
                Some((root, _, end)) => (root, trim_slashes(&bytes[end..])),
                None => return Err(escape()),
            }
        };
        let (dotdot, climbs) = spelling(rest);
        if climbs {
            return Err(escape());
        }
        if !dotdot {
            return Ok(Target {
                root,
                raw: path,
                rest: Cow::Borrowed(rest),
            });
        }
        let comps = split(rest).comps;
        // `spelling` saw a `..` segment, so `split` finds it too; without one there is no
        // climb to resolve here, as above.
        let Some(last) = comps.iter().rposition(|c| *c == Comp::Parent) else {
            return Ok(Target {
                root,
                raw: path,
                rest: Cow::Borrowed(rest),
            });
        };
        let names = walk::open(root.fd(), &comps[..=last], None)
            .map_err(|f| PathError::from_fault(f, "resolve", &path.to_string_lossy()))?
            .names;
        let mut phys: Vec<Comp> = names.into_iter().map(Comp::Name).collect();
        phys.extend(comps[last + 1..].iter().cloned());
        let trailing = bytes.ends_with(b"/") || bytes.ends_with(b"/.");
        let mut rest = join(&phys, trailing);
        if phys.is_empty() {
            rest.clear();
        }
        Ok(Target {
            root,
            raw: path,
            rest: Cow::Owned(rest),
        })
    }

    /// Opens the target beneath its root with the configured backend.
    pub(crate) fn open_target(
        &self,
        t: &Target<'_>,
        how: How,
        op: &'static str,
    ) -> Result<OwnedFd, PathError> {
        let res = if self.backend() == Backend::Openat2 && t.root.only.is_none() {
            self.open_openat2(t.root, if t.rest.is_empty() { b"." } else { &t.rest }, how)
        } else {
            self.open_comps(t.root, &t.comps(), t.trailing(), how)
        };
        res.map_err(|f| PathError::from_fault(f, op, &t.shown()))
    }

    fn open_openat2(&self, root: &Root, rel: &[u8], how: How) -> Result<OwnedFd, Fault> {
        self.runs[Backend::Openat2.index()].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match openat2::open(root.fd(), rel, how.oflags, how.mode, how.follow_last) {
            Err(Fault::Sys(e)) if e == Errno::NOSYS => {
                mark_openat2_absent();
                let parsed = split(rel);
                self.open_comps(root, &parsed.comps, parsed.trailing_slash, how)
            }
            // `RESOLVE_NO_MAGICLINKS` answers `ELOOP` for a magic link: the walk tells it
            // from a real loop (PATH-RESOLVE-4).
            Err(Fault::Loop) => {
                let parsed = split(rel);
                let last = Final {
                    oflags: super::handle::HANDLE,
                    mode: Mode::empty(),
                    follow: how.follow_last || parsed.trailing_slash,
                };
                match walk::open(root.fd(), &parsed.comps, Some(last)) {
                    Err(Fault::Escape) => Err(Fault::Escape),
                    _ => Err(Fault::Loop),
                }
            }
            other => other,
        }
    }

    pub(crate) fn open_comps(
        &self,
        root: &Root,
        comps: &[Comp],
        trailing: bool,
        how: How,
    ) -> Result<OwnedFd, Fault> {
        if let Some(only) = &root.only {
            return self.open_only(root, only, comps, trailing, how);
        }
        // A trailing slash makes the kernel follow the final link; the walk does too.
        let follow = how.follow_last || trailing;
        let backend = self.backend();
        if backend == Backend::Openat2 {
            return self.open_openat2(root, &join(comps, trailing), how);
        }
        self.runs[backend.index()].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let last = Final {
            oflags: how.oflags,
            mode: how.mode,
            follow,
        };
        let fd = walk::open(root.fd(), comps, Some(last))?.fd;
        if trailing && FileType::from_raw_mode(fstat(&fd)?.st_mode) != FileType::Directory {
            return Err(Fault::Sys(Errno::NOTDIR));
        }
        Ok(fd)
    }

    /// A dropped-file root reaches its one name and nothing else (PATH-ROOT-3): the name
    /// is opened without following, and a link there (which would reach a sibling or
    /// beyond) is an escape.
    fn open_only(
        &self,
        root: &Root,
        only: &OsString,
        comps: &[Comp],
        trailing: bool,
        how: How,
    ) -> Result<OwnedFd, Fault> {
        if comps.len() != 1 || comps[0] != Comp::Name(only.clone()) {
            return Err(Fault::Escape);
        }
        let probe = self.open_comps_plain(root, comps, false, How::PATH.nofollow())?;
        match FileType::from_raw_mode(fstat(&probe)?.st_mode) {
            FileType::Symlink if how.follow_last || trailing => return Err(Fault::Escape),
            FileType::Symlink => {}
            FileType::Directory => {}
            _ if trailing => return Err(Fault::Sys(Errno::NOTDIR)),
            _ => {}
        }
        if how.oflags == super::handle::HANDLE {
            return Ok(probe);
        }
        self.open_comps_plain(root, comps, false, how.nofollow())
    }

    fn open_comps_plain(
        &self,
        root: &Root,
        comps: &[Comp],
        trailing: bool,
        how: How,
    ) -> Result<OwnedFd, Fault> {
        let backend = self.backend();
        if backend == Backend::Openat2 {
            return self.open_openat2(root, &join(comps, trailing), how);
        }
        self.runs[backend.index()].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let last = Final {
            oflags: how.oflags,
            mode: how.mode,
            follow: how.follow_last || trailing,
        };
        Ok(walk::open(root.fd(), comps, Some(last))?.fd)
    }

    /// For a write or an edit: the parent directory's handle and the final name
    /// (PATH-WRITE-1). A path naming a directory (a trailing slash, the root, ending in
    /// `..`) is [`PathError::IsDirectory`] (PATH-SPELL-2, PATH-WRITE-5). With `create`,
    /// missing parents are made one at a time (PATH-WRITE-6).
    pub(crate) fn parent_of(&self, t: &Target<'_>, create: bool) -> Result<Parent, PathError> {
        let comps = t.comps();
        let name = match comps.last() {
            Some(Comp::Name(n)) if !t.trailing() => n.clone(),
            _ => return Err(PathError::IsDirectory { path: t.shown() }),
        };
        let err = |f| PathError::from_fault(f, "open parent", &t.shown());
        if let Some(only) = &t.root.only {
            if comps.len() != 1 || name != *only {
                return Err(err(Fault::Escape));
            }
            let fd = openat(
                t.root.fd(),
                ".",
                super::handle::HANDLE | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| err(e.into()))?;
            return Ok(Parent {
                fd,
                name,
                made: Vec::new(),
            });
        }
        let parent = &comps[..comps.len() - 1];
        let dir = How {
            oflags: super::handle::HANDLE | OFlags::DIRECTORY,
            ..How::PATH
        };
        match self.open_comps(t.root, parent, false, dir) {
            Ok(fd) => Ok(Parent {
                fd,
                name,
                made: Vec::new(),
            }),
            Err(Fault::Sys(e)) if e == Errno::NOENT && create => self.make_parents(t, parent, name),
            Err(f) => Err(err(f)),
        }
    }

    /// Makes the missing directories of `parent` beneath the deepest existing one, each
    /// with `mkdirat` on the handle before it and then opened `O_NOFOLLOW |
    /// O_DIRECTORY`, so a link put in place of a directory just made is refused.
    fn make_parents(
        &self,
        t: &Target<'_>,
        parent: &[Comp],
        name: OsString,
    ) -> Result<Parent, PathError> {
        let err = |f: Fault| PathError::from_fault(f, "make parent", &t.shown());
        let dir = How {
            oflags: super::handle::HANDLE | OFlags::DIRECTORY,
            ..How::PATH
        };
        let mut have = None;
        for i in (0..parent.len()).rev() {
            match self.open_comps(t.root, &parent[..i], false, dir) {
                Ok(fd) => {
                    have = Some((i, fd));
                    break;
                }
                Err(Fault::Sys(e)) if e == Errno::NOENT => continue,
                Err(f) => return Err(err(f)),
            }
        }
        let (start, mut cur) = have.ok_or_else(|| err(Fault::Sys(Errno::NOENT)))?;
        let mut out = Parent {
            fd: cur
                .try_clone()
                .map_err(|e| PathError::from_io(e, "dup", &t.shown()))?,
            name,
            made: Vec::new(),
        };
        for comp in &parent[start..] {
            let Comp::Name(n) = comp else {
                out.undo();
                return Err(err(Fault::Escape));
            };
            let made = match mkdirat(&cur, n.as_os_str(), Mode::from_raw_mode(0o777)) {
                Ok(()) => true,
                Err(e) if e == Errno::EXIST => false,
                Err(e) => {
                    out.undo();
                    return Err(err(e.into()));
                }
            };
            let flags =
                super::handle::HANDLE | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let next = match openat(&cur, n.as_os_str(), flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(e) => {
                    // Not a directory: a file there is `not_directory`; a link (made in
                    // place of ours, or already there and dangling) is a parent that
                    // could not be made.
                    let link = statat(&cur, n.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
                        .map(|st| FileType::from_raw_mode(st.st_mode) != FileType::RegularFile)
                        .unwrap_or(true);
                    if made {
                        out.made.push((cur, n.clone()));
                    }
                    out.undo();
                    let f = if e == Errno::NOTDIR && !link && !made {
                        Fault::Sys(Errno::NOTDIR)
                    } else {
                        Fault::Sys(Errno::NOENT)
                    };
                    return Err(err(f));
                }
            };
            if made {
                out.made.push((cur, n.clone()));
            }
            cur = next;
        }
        out.fd = cur;
        Ok(out)
    }

    /// Names a final symlink met by a write or an edit (PATH-WRITE-2): an escape if
    /// following it would leave the root, a loop if it loops, otherwise
    /// [`PathError::FinalSymlink`].
    pub(crate) fn refuse_final_link(&self, t: &Target<'_>) -> PathError {
        match self.open_target(t, How::PATH, "open") {
            Err(e @ (PathError::Escape { .. } | PathError::Loop { .. })) => e,
            _ => PathError::FinalSymlink { path: t.shown() },
        }
    }
}

impl How {
    fn nofollow(self) -> How {
        How {
            follow_last: false,
            ..self
        }
    }
}
