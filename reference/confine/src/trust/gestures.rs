//! Every gesture that writes a rule, each granting exactly one thing (seed `004`,
//! "Every way a rule gets written"; TRUST-GEST-1). The map-only forms take canonical
//! absolute paths the caller resolved (opening a directory follows links, so the rule is
//! about where it landed). The `*_in` forms do both halves together through
//! [`crate::paths::Roots`]: they open (or check) the reach and write the rule, or
//! neither.

use std::path::{Path, PathBuf};

use super::map::{Origin, Reach, ReachKind, ReachOrigin};
use super::{Namespace, Trust, TrustKey, TrustMap};
use crate::paths::{is_within, Kind, PathError, RootId, RootRefusal, Roots};

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

/// Why a gesture was refused. A refusal opens nothing and writes nothing.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The person left at a question: no session starts.
    #[error("left at the question: no session starts")]
    NoSession,
    /// `/add-dir` (or a settings name) named the working directory or a directory inside
    /// it.
    #[error("{0:?} is already inside the working directory")]
    InsideProject(PathBuf),
    /// `/add-dir` (or a settings name) named a directory holding the working directory.
    #[error("{0:?} holds the working directory")]
    HoldsProject(PathBuf),
    /// `@path`, `--file` or a drop named a directory, or nothing.
    #[error("{0:?} is not a file")]
    NotAFile(PathBuf),
    /// A path handed to a map-only gesture was not absolute.
    #[error("{0:?} is not an absolute path")]
    NotAbsolute(PathBuf),
    /// The path was refused by confinement (`escape`, `not_found`, `loop`, ...).
    #[error(transparent)]
    Path(#[from] PathError),
}

impl TrustError {
    /// A stable code for the adapter protocol (TRUST-OBS-1: `inside_project`,
    /// `holds_project`, `not_a_file`, or the path code of PATH-ERR-1).
    pub fn code(&self) -> &'static str {
        match self {
            TrustError::NoSession => "no_session",
            TrustError::InsideProject(_) => "inside_project",
            TrustError::HoldsProject(_) => "holds_project",
            TrustError::NotAFile(_) => "not_a_file",
            TrustError::NotAbsolute(_) => "not_absolute",
            TrustError::Path(e) => e.code(),
        }
    }
}

impl From<RootRefusal> for TrustError {
    fn from(r: RootRefusal) -> Self {
        match r {
            RootRefusal::InsideProject(p) => TrustError::InsideProject(p),
            RootRefusal::HoldsProject(p) => TrustError::HoldsProject(p),
            RootRefusal::NotAFile(p) => TrustError::NotAFile(p),
            RootRefusal::Path(e) => TrustError::Path(e),
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
    /// The startup question (TRUST-START-1). Yes writes the working directory's rule
    /// (the empty relative prefix); no writes nothing; leave starts no session.
    pub fn startup(&mut self, answer: Startup) -> Result<(), TrustError> {
        match answer {
            Startup::Yes => {
                self.set(&TrustKey::rel(""), Trust::Trusted, Origin::Startup);
                Ok(())
            }
            Startup::No => Ok(()),
            Startup::Leave => Err(TrustError::NoSession),
        }
    }

    /// `--dangerously-skip-permissions` (TRUST-SKIP-1): the question is not put; the map
    /// is the one a yes would have written. (A resume takes its own record instead.)
    pub fn skip_permissions(&mut self) {
        self.set(&TrustKey::rel(""), Trust::Trusted, Origin::SkipPermissions);
    }

    /// `@path`: that one file, for the rest of the session (TRUST-AT-1). The caller
    /// checks the path names a file ([`TrustMap::at_path_in`] does).
    pub fn at_file(&mut self, key: &TrustKey) {
        self.set(key, Trust::Trusted, Origin::AtPath);
    }

    /// `--file <path>`: as `@path`, recorded with its own origin.
    pub fn file_flag(&mut self, key: &TrustKey) {
        self.set(key, Trust::Trusted, Origin::FileFlag);
    }

    /// Yes at a quarantined read: exactly the rule `@` would have written
    /// (TRUST-PROMPT-7), recorded as `read_prompt`.
    pub fn quarantined_yes(&mut self, key: &TrustKey) {
        self.set(key, Trust::Trusted, Origin::ReadPrompt);
    }

    /// `/untrust <path>` (TRUST-UNTRUST-1): an untrusted rule for the key, asking nothing.
    pub fn untrust(&mut self, key: &TrustKey) {
        self.set(key, Trust::Untrusted, Origin::Untrust);
    }

    /// A dropped file: that one file wherever it is, plus reach to it when it is outside
    /// the working directory (TRUST-DROP-1). Returns the reach to open, if any.
    pub fn dropped_file(&mut self, path: &Path) -> Result<Option<Reach>, TrustError> {
        absolute(path)?;
        let key = self.spell(path);
        self.set(&key, Trust::Trusted, Origin::Drop);
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

    /// `/add-dir <path>`: reachable and trusted, for this session (TRUST-ADD-1). The
    /// working directory, a directory inside it and one holding it are refused
    /// (TRUST-ADD-2).
    pub fn add_dir(&mut self, path: &Path) -> Result<Reach, TrustError> {
        self.open_trusted_dir(path, ReachOrigin::AddDir)
    }

    /// A settings-named directory accepted at its question: the `/add-dir` route, on the
    /// same terms (TRUST-SET-1).
    pub fn settings_dir_yes(&mut self, path: &Path) -> Result<Reach, TrustError> {
        self.open_trusted_dir(path, ReachOrigin::Settings)
    }

    fn beside(&self, path: &Path) -> Result<(), TrustError> {
        absolute(path)?;
        if is_within(path, &self.workdir) {
            return Err(TrustError::InsideProject(path.to_path_buf()));
        }
        if is_within(&self.workdir, path) {
            return Err(TrustError::HoldsProject(path.to_path_buf()));
        }
        Ok(())
    }

    fn open_trusted_dir(&mut self, path: &Path, origin: ReachOrigin) -> Result<Reach, TrustError> {
        self.beside(path)?;
        let rule = match origin {
            ReachOrigin::Settings => Origin::SettingsDir,
            _ => Origin::AddDir,
        };
        self.set(&TrustKey::abs(path), Trust::Trusted, rule);
        let reach = Reach {
            path: path.to_path_buf(),
            kind: ReachKind::Dir,
            origin,
        };
        self.add_reach(reach.clone());
        Ok(reach)
    }

    /// Command-line `--add-dir` (TRUST-ADD-4): reach only; vouches for nothing. Refused
    /// on the terms of `/add-dir` (PATH-ROOT-5).
    pub fn cli_add_dir(&mut self, path: &Path) -> Result<Reach, TrustError> {
        self.beside(path)?;
        let reach = Reach {
            path: path.to_path_buf(),
            kind: ReachKind::Dir,
            origin: ReachOrigin::CliAddDir,
        };
        self.add_reach(reach.clone());
        Ok(reach)
    }

    /// `/cd <path>` (TRUST-CD-1 to TRUST-CD-3): the new working directory, vouched for.
    /// Every rule is re-spelled to say what it always said about the same path (inside
    /// the new working directory: relative; outside: absolute), granting and withdrawing
    /// nothing; where two rules re-spell to one key the later decision is kept. Roots
    /// holding the new directory or inside it close (dropped files inside it too; the
    /// directory left closes in [`crate::paths::Roots::cd`]). Returns the reach closed.
    pub fn cd(&mut self, path: &Path) -> Result<Vec<Reach>, TrustError> {
        absolute(path)?;
        let rules = self.rules();
        let old = std::mem::replace(&mut self.workdir, path.to_path_buf());
        self.relative = super::trie::Trie::new();
        self.absolute = super::trie::Trie::new();
        // Oldest first, so a later decision re-spelled onto the same key replaces it.
        for (key, rule) in rules {
            let respelled = self.spell(&key.to_path(&old));
            let slot = match respelled.ns {
                Namespace::Relative => &mut self.relative,
                Namespace::Absolute => &mut self.absolute,
            };
            slot.insert(&respelled.segments, rule);
        }
        let (closed, kept): (Vec<Reach>, Vec<Reach>) = std::mem::take(&mut self.reach)
            .into_iter()
            .partition(|r| match r.kind {
                ReachKind::Dir => crate::paths::overlaps(&r.path, path),
                ReachKind::File => is_within(&r.path, path),
            });
        self.reach = kept;
        self.set(&TrustKey::rel(""), Trust::Trusted, Origin::Cd);
        Ok(closed)
    }

    /// Starts a new turn: the quarantined-read prompt may ask about each path again.
    pub fn new_turn(&mut self) {
        self.asked_this_turn.clear();
    }

    // --- both halves together, through the roots ---------------------------------------

    /// The trust key of `path` as the roots route and key it (PATH-KEY-1, TRUST-RULE-4).
    pub fn key_in(&self, roots: &Roots, path: impl AsRef<Path>) -> Result<TrustKey, TrustError> {
        let key = roots.key(path)?;
        let k = TrustKey::from_path_key(&key, roots).ok_or_else(|| PathError::Escape {
            path: key.to_string(),
        })?;
        Ok(self.normal(&k))
    }

    /// `@path` / `--file` with the checks of TRUST-AT-2: a directory or nothing is
    /// `not_a_file`, outside every root is `escape`; otherwise the file's rule.
    pub fn at_path_in(
        &mut self,
        roots: &Roots,
        path: impl AsRef<Path>,
        flag: bool,
    ) -> Result<TrustKey, TrustError> {
        let path = path.as_ref();
        let key = self.key_in(roots, path)?;
        match roots.stat(path) {
            Ok(md) if md.kind == Kind::File => {}
            Ok(_) | Err(PathError::NotFound { .. }) => {
                return Err(TrustError::NotAFile(path.to_path_buf()))
            }
            Err(e) => return Err(e.into()),
        }
        if flag {
            self.file_flag(&key);
        } else {
            self.at_file(&key);
        }
        Ok(key)
    }

    /// `/add-dir <path>`: opens the root and writes the rule, both or neither
    /// (TRUST-ADD-1, TRUST-ADD-2).
    pub fn add_dir_in(&mut self, roots: &mut Roots, path: &Path) -> Result<RootId, TrustError> {
        let id = roots.add_dir(path)?;
        // `add_dir` returned the id of the root it just opened, and nothing closed it since.
        #[allow(clippy::expect_used)]
        let canonical = roots.root(id).expect("just opened").path().to_path_buf();
        if let Err(e) = self.add_dir(&canonical) {
            roots.close(id);
            return Err(e);
        }
        Ok(id)
    }

    /// A dropped file: reach when outside every root, and its rule (TRUST-DROP-1); a
    /// directory is `not_a_file`.
    pub fn drop_in(&mut self, roots: &mut Roots, path: &Path) -> Result<TrustKey, TrustError> {
        let before = roots.roots().count();
        let id = roots.add_file(path)?;
        let canonical = std::fs::canonicalize(path).map_err(|e| {
            TrustError::Path(PathError::NotFound {
                path: format!("{}: {e}", path.display()),
            })
        })?;
        let key = self.key_in(roots, &canonical)?;
        self.set(&key, Trust::Trusted, Origin::Drop);
        if roots.roots().count() > before && roots.root(id).is_some_and(|r| r.only().is_some()) {
            self.add_reach(Reach {
                path: canonical,
                kind: ReachKind::File,
                origin: ReachOrigin::Dropped,
            });
        }
        Ok(key)
    }

    /// `/untrust <path>`: the untrusted rule for the path's key, asking nothing.
    pub fn untrust_in(
        &mut self,
        roots: &Roots,
        path: impl AsRef<Path>,
    ) -> Result<TrustKey, TrustError> {
        let key = self.key_in(roots, path)?;
        self.untrust(&key);
        Ok(key)
    }

    /// `search` through the map (TRUST-READ-2): matches only from trusted files; every
    /// other file met is named as withheld, never read.
    pub fn search_in(
        &self,
        roots: &Roots,
        path: impl AsRef<Path>,
        needle: &[u8],
    ) -> Result<crate::paths::Search, TrustError> {
        Ok(roots.search(path, needle, |k| {
            TrustKey::from_path_key(k, roots).is_some_and(|k| self.is_trusted(&k))
        })?)
    }

    /// `--resume` (TRUST-LIFE-4): reopens every root the record holds, each on the terms
    /// it was opened on. One that cannot be reopened is returned with its path and code;
    /// its rules stay in the map.
    pub fn reopen(&self, roots: &mut Roots) -> Vec<(PathBuf, &'static str)> {
        let mut failed = Vec::new();
        for r in &self.reach {
            let res = match r.kind {
                ReachKind::Dir => roots.add_dir(&r.path),
                ReachKind::File => roots.add_file(&r.path),
            };
            if let Err(e) = res {
                failed.push((r.path.clone(), e.code()));
            }
        }
        failed
    }
}
