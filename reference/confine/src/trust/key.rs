//! Trust keys: a namespace and whole path segments. Keys are built from paths the
//! resolver already validated, or from canonical absolute paths of opened directories.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::paths::{Key, Roots};

/// The two rule namespaces; a rule in one decides nothing in the other.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Namespace {
    /// Relative to the working directory (the empty key is the working directory).
    Relative,
    /// An absolute path (a directory or file opened beside the working directory).
    Absolute,
}

/// A rule's key: namespace plus whole segments (never `.`, `..` or empty).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TrustKey {
    /// Which namespace.
    pub ns: Namespace,
    /// The segments.
    pub segments: Vec<OsString>,
}

fn segments(s: &[u8]) -> Vec<OsString> {
    s.split(|b| *b == b'/')
        .filter(|p| !p.is_empty() && *p != b".")
        .map(|p| OsStr::from_bytes(p).to_owned())
        .collect()
}

impl TrustKey {
    /// A relative key from a slash-separated spelling (`""` is the working directory).
    /// `.` and empty segments are dropped; `..` is not allowed in a key and is kept as a
    /// literal segment that can never match a resolved key.
    pub fn rel(path: impl AsRef<OsStr>) -> TrustKey {
        TrustKey {
            ns: Namespace::Relative,
            segments: segments(path.as_ref().as_bytes()),
        }
    }

    /// An absolute key from an absolute path.
    pub fn abs(path: impl AsRef<Path>) -> TrustKey {
        let segments = path
            .as_ref()
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_owned()),
                _ => None,
            })
            .collect();
        TrustKey {
            ns: Namespace::Absolute,
            segments,
        }
    }

    /// The key of a resolver key: relative when it is under the working directory root,
    /// otherwise absolute (the root's canonical path plus the components).
    pub fn from_path_key(key: &Key, roots: &Roots) -> Option<TrustKey> {
        if key.root == roots.workdir().id() {
            return Some(TrustKey {
                ns: Namespace::Relative,
                segments: key.components.clone(),
            });
        }
        let root = roots.root(key.root)?;
        let mut k = TrustKey::abs(root.path());
        k.segments.extend(key.components.iter().cloned());
        Some(k)
    }

    /// The absolute path this key names, given the working directory.
    pub fn to_path(&self, workdir: &Path) -> PathBuf {
        let mut p = match self.ns {
            Namespace::Relative => workdir.to_path_buf(),
            Namespace::Absolute => PathBuf::from("/"),
        };
        p.extend(&self.segments);
        p
    }

    /// The spelling: `a/b` (relative, `.` for the working directory) or `/a/b`.
    pub fn spelling(&self) -> String {
        let joined = self
            .segments
            .iter()
            .map(|s| s.to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        match (self.ns, joined.is_empty()) {
            (Namespace::Relative, true) => ".".into(),
            (Namespace::Relative, false) => joined,
            (Namespace::Absolute, _) => format!("/{joined}"),
        }
    }

    /// Raw bytes of the spelling (exact, for persistence).
    pub(crate) fn raw(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.ns == Namespace::Absolute {
            out.push(b'/');
        }
        for (i, s) in self.segments.iter().enumerate() {
            if i > 0 {
                out.push(b'/');
            }
            out.extend_from_slice(s.as_bytes());
        }
        out
    }

    /// Parses [`TrustKey::raw`] back.
    pub(crate) fn from_raw(ns: Namespace, raw: &[u8]) -> TrustKey {
        TrustKey {
            ns,
            segments: segments(raw),
        }
    }
}

impl fmt::Display for TrustKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spelling())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equivalent_spellings_are_one_key() {
        assert_eq!(
            TrustKey::rel("vendor//lib.js"),
            TrustKey::rel("./vendor/lib.js/")
        );
        assert_eq!(TrustKey::abs("/w//proj/"), TrustKey::abs("/w/proj"));
        assert_ne!(TrustKey::rel("w/proj"), TrustKey::abs("/w/proj"));
    }

    #[test]
    fn spelling_round_trips() {
        for k in [
            TrustKey::rel(""),
            TrustKey::rel("a/b"),
            TrustKey::abs("/x/y"),
        ] {
            assert_eq!(TrustKey::from_raw(k.ns, &k.raw()), k);
        }
        assert_eq!(TrustKey::rel("").to_string(), ".");
        assert_eq!(
            TrustKey::abs("/x/y").to_path(Path::new("/w")),
            PathBuf::from("/x/y")
        );
        assert_eq!(
            TrustKey::rel("a").to_path(Path::new("/w")),
            PathBuf::from("/w/a")
        );
    }
}
