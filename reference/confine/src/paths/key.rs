//! Keys: what a path is called for the trust map, as whole components relative to the
//! root it was routed to. Also the whole-component path relations used by routing and by
//! the closing rules of `/cd` (`/w/proj_evil` is never within `/w/proj`).

use std::ffi::OsString;
use std::fmt;
use std::path::{Component, Path};

/// Identifies one opened root in a [`super::Roots`] set. Never reused within a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RootId(pub u32);

/// A path's name relative to its root, as whole components. The root itself is the
/// empty key (displayed as the empty string).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    /// The root the path was routed to.
    pub root: RootId,
    /// Whole components below the root; never `.`, `..` or empty.
    pub components: Vec<OsString>,
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.components.iter().enumerate() {
            if i > 0 {
                f.write_str("/")?;
            }
            f.write_str(&c.to_string_lossy())?;
        }
        Ok(())
    }
}

/// Whether `inner` equals `outer` or lies beneath it, by whole components of the raw
/// spelling (no `..` folding, no filesystem access).
pub fn is_within(inner: &Path, outer: &Path) -> bool {
    let mut i = inner
        .components()
        .filter(|c| !matches!(c, Component::CurDir));
    outer
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .all(|o| i.next() == Some(o))
}

/// Whether one of the two paths holds the other (or they are equal).
pub fn overlaps(a: &Path, b: &Path) -> bool {
    is_within(a, b) || is_within(b, a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_components_only() {
        assert!(is_within(Path::new("/w/proj/a"), Path::new("/w/proj")));
        assert!(is_within(Path::new("/w/proj"), Path::new("/w/proj")));
        assert!(!is_within(Path::new("/w/proj_evil"), Path::new("/w/proj")));
        assert!(!is_within(Path::new("/w"), Path::new("/w/proj")));
        assert!(overlaps(Path::new("/w"), Path::new("/w/proj")));
        assert!(!overlaps(Path::new("/w/a"), Path::new("/w/b")));
    }

    #[test]
    fn display_is_slash_joined_and_root_is_empty() {
        let k = Key {
            root: RootId(0),
            components: vec!["sub".into(), "a.txt".into()],
        };
        assert_eq!(k.to_string(), "sub/a.txt");
        assert_eq!(
            Key {
                root: RootId(0),
                components: vec![]
            }
            .to_string(),
            ""
        );
    }
}
