//! The map itself: the rules of both namespaces, the working directory they are spelled
//! against, the reach opened beside it, and the queries (`decision`, `is_trusted`,
//! `status`).

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

use super::trie::Trie;
use super::{Namespace, TrustKey};

/// A rule's polarity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Trust {
    /// Vouched for: read as trusted input.
    Trusted,
    /// Marked untrusted: read quarantined.
    Untrusted,
}

/// A rule's value in the trie: its polarity and when it was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rule {
    pub trust: Trust,
    pub seq: u64,
}

/// What kind of thing a reach entry opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReachKind {
    /// A directory, opened as a root.
    Dir,
    /// One file (a dropped file).
    File,
}

/// Which gesture opened it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReachOrigin {
    /// `/add-dir` in a session (reach and trust).
    AddDir,
    /// `--add-dir` on the command line (reach only).
    CliAddDir,
    /// A settings-named directory accepted at startup (reach and trust).
    Settings,
    /// A dropped file (reach to that one file and trust in it).
    Dropped,
}

/// Something opened beside the working directory.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Reach {
    /// Its canonical absolute path.
    pub path: PathBuf,
    /// Directory or single file.
    pub kind: ReachKind,
    /// The gesture behind it.
    pub origin: ReachOrigin,
}

/// One line of `/status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusLine {
    /// The rule's key.
    pub key: TrustKey,
    /// Its polarity.
    pub trust: Trust,
}

impl fmt::Display for StatusLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = match self.trust {
            Trust::Trusted => "trusted",
            Trust::Untrusted => "untrusted",
        };
        let what = if self.key.ns == Namespace::Relative && self.key.segments.is_empty() {
            ". (the working directory)".to_string()
        } else {
            self.key.spelling()
        };
        write!(f, "{word:<9} {what}")
    }
}

/// The trust map of one session.
#[derive(Debug, Clone)]
pub struct TrustMap {
    pub(crate) workdir: PathBuf,
    pub(crate) relative: Trie<Rule>,
    pub(crate) absolute: Trie<Rule>,
    pub(crate) reach: Vec<Reach>,
    pub(crate) seq: u64,
    pub(crate) asked_this_turn: HashSet<TrustKey>,
}

impl TrustMap {
    /// An empty map for a session in `workdir` (canonical, absolute). Trusts nothing.
    pub fn new(workdir: impl Into<PathBuf>) -> TrustMap {
        TrustMap {
            workdir: workdir.into(),
            relative: Trie::new(),
            absolute: Trie::new(),
            reach: Vec::new(),
            seq: 0,
            asked_this_turn: HashSet::new(),
        }
    }

    /// The working directory rules are spelled against.
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    fn trie(&self, ns: Namespace) -> &Trie<Rule> {
        match ns {
            Namespace::Relative => &self.relative,
            Namespace::Absolute => &self.absolute,
        }
    }

    /// The decision for `key`: the longest whole-segment prefix rule in its namespace,
    /// `None` when no rule covers it (never mentioned).
    #[inline]
    pub fn decision(&self, key: &TrustKey) -> Option<Trust> {
        self.trie(key.ns)
            .longest(key.segments.iter().map(|s| s.as_os_str()))
            .map(|r| r.trust)
    }

    /// The decision for raw segments in a namespace (no key allocation).
    #[inline]
    pub fn decision_of<'a>(
        &self,
        ns: Namespace,
        segments: impl IntoIterator<Item = &'a OsStr>,
    ) -> Option<Trust> {
        self.trie(ns).longest(segments).map(|r| r.trust)
    }

    /// Whether `key` reads as trusted. Never-mentioned paths are not trusted.
    pub fn is_trusted(&self, key: &TrustKey) -> bool {
        self.decision(key) == Some(Trust::Trusted)
    }

    /// The rule set exactly at `key`, if any.
    pub fn rule_at(&self, key: &TrustKey) -> Option<Trust> {
        self.trie(key.ns).exact(&key.segments).map(|r| r.trust)
    }

    /// Records a decision on exactly `key`, replacing an earlier one there.
    pub(crate) fn set(&mut self, key: &TrustKey, trust: Trust) {
        self.seq += 1;
        let rule = Rule {
            trust,
            seq: self.seq,
        };
        match key.ns {
            Namespace::Relative => self.relative.insert(&key.segments, rule),
            Namespace::Absolute => self.absolute.insert(&key.segments, rule),
        }
    }

    /// Every rule in force with when it was decided, oldest first.
    pub(crate) fn rules(&self) -> Vec<(TrustKey, Rule)> {
        let mut out: Vec<(TrustKey, Rule)> = [Namespace::Relative, Namespace::Absolute]
            .into_iter()
            .flat_map(|ns| {
                self.trie(ns)
                    .entries()
                    .into_iter()
                    .map(move |(segments, r)| (TrustKey { ns, segments }, r))
            })
            .collect();
        out.sort_by_key(|(_, r)| r.seq);
        out
    }

    /// `/status`: every rule in force, relative ones first, each namespace sorted.
    pub fn status(&self) -> Vec<StatusLine> {
        let mut lines: Vec<StatusLine> = self
            .rules()
            .into_iter()
            .map(|(key, r)| StatusLine {
                key,
                trust: r.trust,
            })
            .collect();
        lines.sort_by(|a, b| a.key.cmp(&b.key));
        lines
    }

    /// What is open beside the working directory.
    pub fn reach(&self) -> &[Reach] {
        &self.reach
    }

    /// The key a canonical absolute path is spelled with: relative when it is the
    /// working directory or inside it, absolute otherwise.
    pub fn spell(&self, path: &Path) -> TrustKey {
        match path.strip_prefix(&self.workdir) {
            Ok(rest) => TrustKey::rel(rest.as_os_str()),
            Err(_) => TrustKey::abs(path),
        }
    }

    pub(crate) fn add_reach(&mut self, reach: Reach) {
        if let Some(r) = self
            .reach
            .iter_mut()
            .find(|r| r.path == reach.path && r.kind == reach.kind)
        {
            // A trusting origin supersedes reach-only; never the reverse.
            if r.origin == ReachOrigin::CliAddDir {
                r.origin = reach.origin;
            }
            return;
        }
        self.reach.push(reach);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_map_trusts_nothing() {
        let m = TrustMap::new("/w/proj");
        assert_eq!(m.decision(&TrustKey::rel("")), None);
        assert!(!m.is_trusted(&TrustKey::rel("a")));
        assert!(!m.is_trusted(&TrustKey::abs("/w/proj/a")));
        assert!(m.status().is_empty());
    }

    #[test]
    fn spell_uses_whole_segments() {
        let m = TrustMap::new("/w/proj");
        assert_eq!(m.spell(Path::new("/w/proj/a")), TrustKey::rel("a"));
        assert_eq!(m.spell(Path::new("/w/proj")), TrustKey::rel(""));
        assert_eq!(
            m.spell(Path::new("/w/proj_evil/a")),
            TrustKey::abs("/w/proj_evil/a")
        );
    }

    #[test]
    fn status_lines_read_plainly() {
        let mut m = TrustMap::new("/w/proj");
        m.set(&TrustKey::rel(""), Trust::Trusted);
        m.set(&TrustKey::rel("vendor"), Trust::Untrusted);
        let s: Vec<String> = m.status().iter().map(|l| l.to_string()).collect();
        assert_eq!(
            s,
            vec!["trusted   . (the working directory)", "untrusted vendor"]
        );
    }
}
