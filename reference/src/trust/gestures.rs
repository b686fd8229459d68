//! Every gesture that writes a rule, each granting exactly one thing (seed `004`,
//! "Every way a rule gets written"). Paths handed in are canonical absolute paths the
//! caller resolved (opening a directory follows links, so the rule is about where it
//! landed); the caller opens or closes the matching roots in [`crate::paths::Roots`].

use std::path::{Path, PathBuf};

use super::map::{Reach, ReachKind, ReachOrigin};
use super::{Namespace, Trust, TrustKey, TrustMap};
use crate::paths::is_within;

/// The answer to the startup question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Startup {
    /// Trust the working directory: a rule covering the whole tree.
    Yes,
    /// Decline: nothing is written, every write is shown first.
    No,
    /// Leave at the question: no session starts.
    Leave,
}

/// Why a gesture was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrustError {
    /// The person left at a question: no session starts.
    #[error("left at the question: no session starts")]
    NoSession,
    /// `/add-dir` (or a settings name) named a directory already inside the project.
    #[error("{0:?} is already inside the working directory")]
    InsideProject(PathBuf),
    /// A path handed to a gesture was not absolute.
    #[error("{0:?} is not an absolute path")]
    NotAbsolute(PathBuf),
}

impl TrustError {
    /// A stable code for the adapter protocol.
    pub fn code(&self) -> &'static str {
        match self {
            TrustError::NoSession => "no-session",
            TrustError::InsideProject(_) => "inside-project",
            TrustError::NotAbsolute(_) => "not-absolute",
        }
    }
}

fn absolute(p: &Path) -> Result<(), TrustError> {
    if p.is_absolute() {
        Ok(())
    } else {
        Err(TrustError::NotAbsolute(p.to_path_buf()))
    }
}

impl TrustMap {
    /// The startup question. Yes writes the working directory's rule (the empty relative
    /// prefix); no writes nothing; leave starts no session.
    pub fn startup(&mut self, answer: Startup) -> Result<(), TrustError> {
        match answer {
            Startup::Yes => {
                self.set(&TrustKey::rel(""), Trust::Trusted);
                Ok(())
            }
            Startup::No => Ok(()),
            Startup::Leave => Err(TrustError::NoSession),
        }
    }

    /// `--dangerously-skip-permissions`: the question is not put; the map is the one a
    /// yes would have written. (A resume takes its own record instead.)
    pub fn skip_permissions(&mut self) {
        self.set(&TrustKey::rel(""), Trust::Trusted);
    }

    /// `@path` or `--file`: that one file, for the rest of the session. The caller checks
    /// the path names a file.
    pub fn at_file(&mut self, key: &TrustKey) {
        self.set(key, Trust::Trusted);
    }

    /// Yes at a quarantined read: exactly the rule `@` would have written.
    pub fn quarantined_yes(&mut self, key: &TrustKey) {
        self.at_file(key);
    }

    /// A dropped file: that one file wherever it is, plus reach to it when it is outside
    /// the working directory. Returns the reach to open, if any.
    pub fn dropped_file(&mut self, path: &Path) -> Result<Option<Reach>, TrustError> {
        absolute(path)?;
        let key = self.spell(path);
        self.set(&key, Trust::Trusted);
        if key.ns == Namespace::Relative {
            return Ok(None);
        }
        let reach = Reach {
            path: path.to_path_buf(),
            kind: ReachKind::File,
            origin: ReachOrigin::Dropped,
        };
        self.add_reach(reach.clone());
        Ok(Some(reach))
    }

    /// `/add-dir <path>`: reachable and trusted, for this session. A directory already
    /// inside the project is refused.
    pub fn add_dir(&mut self, path: &Path) -> Result<Reach, TrustError> {
        self.open_trusted_dir(path, ReachOrigin::AddDir)
    }

    /// A settings-named directory accepted at its question: the `/add-dir` route, on the
    /// same terms.
    pub fn settings_dir_yes(&mut self, path: &Path) -> Result<Reach, TrustError> {
        self.open_trusted_dir(path, ReachOrigin::Settings)
    }

    fn open_trusted_dir(&mut self, path: &Path, origin: ReachOrigin) -> Result<Reach, TrustError> {
        absolute(path)?;
        if is_within(path, &self.workdir) {
            return Err(TrustError::InsideProject(path.to_path_buf()));
        }
        self.set(&TrustKey::abs(path), Trust::Trusted);
        let reach = Reach {
            path: path.to_path_buf(),
            kind: ReachKind::Dir,
            origin,
        };
        self.add_reach(reach.clone());
        Ok(reach)
    }

    /// Command-line `--add-dir`: reach only; vouches for nothing.
    pub fn cli_add_dir(&mut self, path: &Path) -> Result<Reach, TrustError> {
        absolute(path)?;
        let reach = Reach {
            path: path.to_path_buf(),
            kind: ReachKind::Dir,
            origin: ReachOrigin::CliAddDir,
        };
        self.add_reach(reach.clone());
        Ok(reach)
    }

    /// `/cd <path>`: the new working directory, vouched for on `/add-dir`'s terms. Every
    /// rule is re-spelled to say what it always said about the same files (inside the
    /// new working directory: relative; outside: absolute), granting and withdrawing
    /// nothing. Opened directories holding the new one or inside it close (the directory
    /// left closes too, in [`crate::paths::Roots::cd`]). Returns the reach closed.
    pub fn cd(&mut self, path: &Path) -> Result<Vec<Reach>, TrustError> {
        absolute(path)?;
        let rules = self.rules();
        let old = std::mem::replace(&mut self.workdir, path.to_path_buf());
        self.relative = super::trie::Trie::new();
        self.absolute = super::trie::Trie::new();
        for (key, rule) in rules {
            let respelled = self.spell(&key.to_path(&old));
            let slot = match respelled.ns {
                Namespace::Relative => &mut self.relative,
                Namespace::Absolute => &mut self.absolute,
            };
            // Two rules meeting on one key were about the same files: untrusted wins.
            let merged = match slot.exact(&respelled.segments) {
                Some(prev) if prev.trust == Trust::Untrusted => super::map::Rule {
                    seq: rule.seq.max(prev.seq),
                    ..prev
                },
                Some(prev) => super::map::Rule {
                    seq: rule.seq.max(prev.seq),
                    ..rule
                },
                None => rule,
            };
            slot.insert(&respelled.segments, merged);
        }
        let (closed, kept): (Vec<Reach>, Vec<Reach>) = std::mem::take(&mut self.reach)
            .into_iter()
            .partition(|r| r.kind == ReachKind::Dir && crate::paths::overlaps(&r.path, path));
        self.reach = kept;
        self.set(&TrustKey::rel(""), Trust::Trusted);
        Ok(closed)
    }

    /// Starts a new turn: the quarantined-read prompt may ask about each path again.
    pub fn new_turn(&mut self) {
        self.asked_this_turn.clear();
    }
}
