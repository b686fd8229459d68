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

impl Trust {
    /// The observable value (`trusted`, `untrusted`).
    pub fn name(self) -> &'static str {
        match self {
            Trust::Trusted => "trusted",
            Trust::Untrusted => "untrusted",
        }
    }
}

/// What wrote a rule (TRUST-GEST-1, TRUST-STATUS-1): a gesture, or a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Yes at the startup question.
    Startup,
    /// `--dangerously-skip-permissions`.
    SkipPermissions,
    /// `@path` in a message.
    AtPath,
    /// `--file` on the command line.
    FileFlag,
    /// A dropped file.
    Drop,
    /// `/add-dir`.
    AddDir,
    /// `/cd`.
    Cd,
    /// Yes at a quarantined read.
    ReadPrompt,
    /// Yes to a settings-named directory.
    SettingsDir,
    /// `/untrust`.
    Untrust,
    /// A write reconciled by the write table.
    Write,
    /// A shell redirection reconciled as a write.
    Redirect,
}

impl Origin {
    /// The observable name (`startup`, `at_path`, `write`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Origin::Startup => "startup",
            Origin::SkipPermissions => "skip_permissions",
            Origin::AtPath => "at_path",
            Origin::FileFlag => "file_flag",
            Origin::Drop => "drop",
            Origin::AddDir => "add_dir",
            Origin::Cd => "cd",
            Origin::ReadPrompt => "read_prompt",
            Origin::SettingsDir => "settings_dir",
            Origin::Untrust => "untrust",
            Origin::Write => "write",
            Origin::Redirect => "redirect",
        }
    }
}

/// A rule's value in the table: its polarity, what wrote it and when it was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rule {
    pub trust: Trust,
    pub origin: Origin,
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

/// Which gesture opened it (TRUST-STATUS-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ReachOrigin {
    /// `/add-dir` in a session (reach and trust).
    #[serde(rename = "add_dir")]
    AddDir,
    /// `--add-dir` on the command line (reach only).
    #[serde(rename = "cli_add_dir")]
    CliAddDir,
    /// A settings-named directory accepted at startup (reach and trust).
    #[serde(rename = "settings_dir")]
    Settings,
    /// A dropped file (reach to that one file and trust in it).
    #[serde(rename = "drop")]
    Dropped,
}

impl ReachOrigin {
    /// The observable name (`add_dir`, `cli_add_dir`, `settings_dir`, `drop`); the
    /// working directory itself is `working_directory`.
    pub fn name(self) -> &'static str {
        match self {
            ReachOrigin::AddDir => "add_dir",
            ReachOrigin::CliAddDir => "cli_add_dir",
            ReachOrigin::Settings => "settings_dir",
            ReachOrigin::Dropped => "drop",
        }
    }
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
    /// What wrote it.
    pub origin: Origin,
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
        write!(f, "{word:<9} {what} ({})", self.origin.name())
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
    /// `None` when no rule covers it (never mentioned). An absolute key inside the working
    /// directory is answered as the relative key it amounts to (TRUST-NS-3).
    #[inline]
    pub fn decision(&self, key: &TrustKey) -> Option<Trust> {
        self.rule_for(key).map(|r| r.trust)
    }

    /// The deciding rule's key and value, if any (the observation of TRUST-OBS-1).
    pub fn deciding(&self, key: &TrustKey) -> Option<(TrustKey, Trust)> {
        let key = self.normal(key);
        let trie = self.trie(key.ns);
        (0..=key.segments.len()).rev().find_map(|d| {
            trie.exact(&key.segments[..d]).map(|r| {
                (
                    TrustKey {
                        ns: key.ns,
                        segments: key.segments[..d].to_vec(),
                    },
                    r.trust,
                )
            })
        })
    }

    #[inline]
    fn rule_for(&self, key: &TrustKey) -> Option<Rule> {
        if key.ns == Namespace::Absolute {
            if let Some(n) = self.inside_workdir(&key.segments) {
                return self.relative.longest(&key.segments[n..]);
            }
        }
        self.trie(key.ns).longest(&key.segments)
    }

    /// When absolute `segments` lie in the working directory, how many of them spell it.
    fn inside_workdir(&self, segments: &[std::ffi::OsString]) -> Option<usize> {
        let mut n = 0;
        for c in self.workdir.components() {
            if let std::path::Component::Normal(w) = c {
                if segments.get(n).map(|s| s.as_os_str()) != Some(w) {
                    return None;
                }
                n += 1;
            }
        }
        Some(n)
    }

    /// The key as rules are kept: an absolute key inside the working directory becomes
    /// relative (TRUST-NS-3).
    pub fn normal(&self, key: &TrustKey) -> TrustKey {
        match key.ns {
            Namespace::Absolute => match self.inside_workdir(&key.segments) {
                Some(n) => TrustKey {
                    ns: Namespace::Relative,
                    segments: key.segments[n..].to_vec(),
                },
                None => key.clone(),
            },
            Namespace::Relative => key.clone(),
        }
    }

    /// The decision for raw segments in a namespace (no key allocation).
    #[inline]
    pub fn decision_of<S: AsRef<OsStr>>(&self, ns: Namespace, segments: &[S]) -> Option<Trust> {
        self.trie(ns).longest(segments).map(|r| r.trust)
    }

    /// Whether `key` reads as trusted. Never-mentioned paths are not trusted.
    pub fn is_trusted(&self, key: &TrustKey) -> bool {
        self.decision(key) == Some(Trust::Trusted)
    }

    /// The rule set exactly at `key`, if any.
    pub fn rule_at(&self, key: &TrustKey) -> Option<Trust> {
        let key = self.normal(key);
        self.trie(key.ns).exact(&key.segments).map(|r| r.trust)
    }

    /// What wrote the rule set exactly at `key`, if any.
    pub fn origin_at(&self, key: &TrustKey) -> Option<Origin> {
        let key = self.normal(key);
        self.trie(key.ns).exact(&key.segments).map(|r| r.origin)
    }

    /// Records a decision on exactly `key` (made relative when it lies in the working
    /// directory, TRUST-NS-3), replacing an earlier one there (TRUST-RULE-5).
    pub(crate) fn set(&mut self, key: &TrustKey, trust: Trust, origin: Origin) {
        self.seq += 1;
        let rule = Rule {
            trust,
            origin,
            seq: self.seq,
        };
        let key = &self.normal(key);
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
                origin: r.origin,
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
        m.set(&TrustKey::rel(""), Trust::Trusted, Origin::Startup);
        m.set(&TrustKey::rel("vendor"), Trust::Untrusted, Origin::Untrust);
        let s: Vec<String> = m.status().iter().map(|l| l.to_string()).collect();
        assert_eq!(
            s,
            vec![
                "trusted   . (the working directory) (startup)",
                "untrusted vendor (untrust)"
            ]
        );
    }

    #[test]
    fn absolute_keys_inside_the_project_are_relative() {
        let mut m = TrustMap::new("/w/proj");
        m.set(&TrustKey::abs("/w/proj/a"), Trust::Trusted, Origin::AtPath);
        assert_eq!(m.rule_at(&TrustKey::rel("a")), Some(Trust::Trusted));
        assert_eq!(
            m.decision(&TrustKey::abs("/w/proj/a/b")),
            Some(Trust::Trusted)
        );
        assert_eq!(m.decision(&TrustKey::abs("/w/proj_evil/a")), None);
        assert!(m.status().iter().all(|l| l.key.ns == Namespace::Relative));
    }
}
