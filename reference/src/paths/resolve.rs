//! Dispatch to the backend that runs, and the shared steps every operation uses:
//! routing a path to its root, opening it beneath that root, and opening a write's
//! parent. Failures leave here only through [`PathError::from_fault`].

use std::ffi::{OsStr, OsString};

use rustix::fd::OwnedFd;
use rustix::fs::{fstat, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::backend::mark_openat2_absent;
use super::error::Fault;
use std::os::unix::ffi::OsStrExt;

use super::validate::{join, split, validate, Comp};
use super::walk::{self, Final};
use super::{openat2, Backend, PathError, Root, Roots};

/// A validated path routed to its root. Components and the display form are derived on
/// demand, so the `openat2` fast path allocates nothing.
pub(crate) struct Target<'a> {
    pub root: &'a Root,
    /// The whole input, for messages.
    pub raw: &'a OsStr,
    /// The part below the root, relative (no leading `/`), possibly empty.
    pub rest: &'a [u8],
}

impl Target<'_> {
    /// The input as a person reads it.
    pub fn shown(&self) -> String {
        self.raw.to_string_lossy().into_owned()
    }

    /// The components below the root.
    pub fn comps(&self) -> Vec<Comp> {
        split(self.rest).comps
    }

    /// Whether the input ended in `/` or `/.`.
    pub fn trailing(&self) -> bool {
        let b = self.raw.as_bytes();
        b.ends_with(b"/") || b.ends_with(b"/.")
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
        oflags: OFlags::PATH,
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

impl Roots {
    /// Validates and routes `path`. Relative paths always go to the working directory;
    /// absolute ones to the root whose canonical path is the longest whole-component
    /// prefix of the raw components. No match is an escape.
    pub(crate) fn target<'a>(&'a self, path: &'a OsStr) -> Result<Target<'a>, PathError> {
        validate(path)?;
        let bytes = path.as_bytes();
        if bytes[0] != b'/' {
            return Ok(Target {
                root: self.workdir(),
                raw: path,
                rest: bytes,
            });
        }
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
            Some((root, _, end)) => Ok(Target {
                root,
                raw: path,
                rest: trim_slashes(&bytes[end..]),
            }),
            None => Err(PathError::from_fault(
                Fault::Escape,
                "route",
                &path.to_string_lossy(),
            )),
        }
    }

    /// Opens the target beneath its root with the configured backend.
    pub(crate) fn open_target(
        &self,
        t: &Target<'_>,
        how: How,
        op: &'static str,
    ) -> Result<OwnedFd, PathError> {
        let res = if self.backend() == Backend::Openat2 && t.root.only.is_none() {
            self.open_openat2(t.root, if t.rest.is_empty() { b"." } else { t.rest }, how)
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
            other => other,
        }
    }

    fn open_comps(
        &self,
        root: &Root,
        comps: &[Comp],
        trailing: bool,
        how: How,
    ) -> Result<OwnedFd, Fault> {
        if let Some(only) = &root.only {
            if comps.len() != 1 || comps[0] != Comp::Name(only.clone()) {
                return Err(Fault::Escape);
            }
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

    /// For a write: the parent directory handle and the final name. A path naming a
    /// directory (trailing slash, `.`, ending in `..`) is [`PathError::IsDirectory`].
    pub(crate) fn parent_of<'a>(
        &'a self,
        path: &'a OsStr,
    ) -> Result<(Target<'a>, OwnedFd, OsString), PathError> {
        let t = self.target(path)?;
        let comps = t.comps();
        let name = match comps.last() {
            Some(Comp::Name(n)) if !t.trailing() => n.clone(),
            _ => return Err(PathError::IsDirectory { path: t.shown() }),
        };
        let parent = &comps[..comps.len() - 1];
        let how = How {
            oflags: OFlags::PATH | OFlags::DIRECTORY,
            ..How::PATH
        };
        let fd = self
            .open_comps(t.root, parent, false, how)
            .map_err(|f| PathError::from_fault(f, "open parent", &t.shown()))?;
        Ok((t, fd, name))
    }

    /// Names a final symlink met by a write: an escape if following it would leave the
    /// root, otherwise [`PathError::FinalSymlink`].
    pub(crate) fn refuse_final_link(&self, t: &Target<'_>) -> PathError {
        match self.open_target(t, How::PATH, "open") {
            Err(e) if e.is_escape() => e,
            _ => PathError::FinalSymlink { path: t.shown() },
        }
    }

    /// The physical names of the directory `comps` lands in (walk, following links).
    pub(crate) fn physical_names(
        &self,
        root: &Root,
        comps: &[Comp],
    ) -> Result<Vec<OsString>, Fault> {
        walk::open(root.fd(), comps, None).map(|w| w.names)
    }
}
