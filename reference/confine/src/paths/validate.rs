//! Input validation and lexical splitting, done before any system call.
//!
//! Refuses the empty path, NUL bytes, a component over [`MAX_NAME`] bytes and a path
//! over [`MAX_PATH`] bytes, each with its own error. Splitting drops empty and `.`
//! segments (safe: they never change where a path lands) and keeps `..` as
//! [`Comp::Parent`], which only the resolver may interpret.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use super::PathError;

/// Longest single component accepted, in bytes (Linux `NAME_MAX`).
pub const MAX_NAME: usize = 255;
/// Longest path accepted, in bytes (Linux `PATH_MAX` minus the NUL).
pub const MAX_PATH: usize = 4095;

/// One lexical component after splitting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Comp {
    /// A name (never empty, never `.`, never `..`, never containing `/`).
    Name(OsString),
    /// `..`, resolved only by the resolver, never folded here.
    Parent,
}

/// A validated path, split into components.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// Whether the input started with `/`.
    pub absolute: bool,
    /// The components, `.` and empty segments dropped.
    pub comps: Vec<Comp>,
    /// Whether the input ended in `/` or `/.`: the object must be a directory.
    pub trailing_slash: bool,
}

/// Validates `path` and splits it. No system call is made.
pub fn parse(path: &OsStr) -> Result<Parsed, PathError> {
    validate(path)?;
    Ok(split(path.as_bytes()))
}

/// Validates `path` without allocating. No system call is made.
pub fn validate(path: &OsStr) -> Result<(), PathError> {
    let bytes = path.as_bytes();
    let shown = || path.to_string_lossy().into_owned();
    if bytes.is_empty() {
        return Err(PathError::Empty);
    }
    if bytes.contains(&0) {
        return Err(PathError::Nul { path: shown() });
    }
    if bytes.len() > MAX_PATH {
        return Err(PathError::PathTooLong {
            path: shown(),
            len: bytes.len(),
        });
    }
    if let Some(long) = bytes.split(|b| *b == b'/').find(|s| s.len() > MAX_NAME) {
        return Err(PathError::ComponentTooLong {
            path: shown(),
            len: long.len(),
        });
    }
    Ok(())
}

/// Splits already-validated bytes (also used for symlink targets).
pub(crate) fn split(bytes: &[u8]) -> Parsed {
    let segments: Vec<&[u8]> = bytes.split(|b| *b == b'/').collect();
    let trailing_slash =
        matches!(segments.last(), Some(s) if s.is_empty() || *s == b".") && segments.len() > 1;
    let comps = segments
        .into_iter()
        .filter(|s| !s.is_empty() && *s != b".")
        .map(|s| {
            if s == b".." {
                Comp::Parent
            } else {
                Comp::Name(OsString::from_vec(s.to_vec()))
            }
        })
        .collect();
    Parsed {
        absolute: bytes.first() == Some(&b'/'),
        comps,
        trailing_slash,
    }
}

/// Joins components back into a relative path for `openat2` (`.` when empty).
pub(crate) fn join(comps: &[Comp], trailing_slash: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, c) in comps.iter().enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        match c {
            Comp::Name(n) => out.extend_from_slice(n.as_bytes()),
            Comp::Parent => out.extend_from_slice(b".."),
        }
    }
    if out.is_empty() {
        out.push(b'.');
    } else if trailing_slash {
        out.push(b'/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(p: &str) -> Vec<Comp> {
        parse(OsStr::new(p)).unwrap().comps
    }
    fn n(s: &str) -> Comp {
        Comp::Name(s.into())
    }

    #[test]
    fn empty_is_refused() {
        assert!(matches!(parse(OsStr::new("")), Err(PathError::Empty)));
    }

    #[test]
    fn nul_is_refused() {
        assert!(matches!(
            parse(OsStr::from_bytes(b"a\0b")),
            Err(PathError::Nul { .. })
        ));
    }

    #[test]
    fn long_component_is_refused() {
        let p = "a".repeat(256);
        assert!(matches!(
            parse(OsStr::new(&p)),
            Err(PathError::ComponentTooLong { len: 256, .. })
        ));
        assert!(parse(OsStr::new(&"a".repeat(255))).is_ok());
    }

    #[test]
    fn long_path_is_refused() {
        let p = "ab/".repeat(1366);
        assert!(matches!(
            parse(OsStr::new(&p)),
            Err(PathError::PathTooLong { .. })
        ));
    }

    #[test]
    fn dots_and_empty_segments_drop_but_dotdot_stays() {
        assert_eq!(names("./a//b/./"), vec![n("a"), n("b")]);
        assert_eq!(names("a/../b"), vec![n("a"), Comp::Parent, n("b")]);
        assert!(parse(OsStr::new("a/")).unwrap().trailing_slash);
        assert!(parse(OsStr::new("a/.")).unwrap().trailing_slash);
        assert!(!parse(OsStr::new("a")).unwrap().trailing_slash);
        assert!(parse(OsStr::new("/x")).unwrap().absolute);
    }

    #[test]
    fn join_round_trips() {
        assert_eq!(join(&names("a/../b"), true), b"a/../b/".to_vec());
        assert_eq!(join(&[], true), b".".to_vec());
    }
}
