//! The trust map's steps (PROTO-TRUST-*): the session start (the startup question and
//! the settings-named directories, PROTO-SETUP-2), `query`, the person's gestures,
//! `status`, `resume` and `clear`. Every gesture that opens or closes reach does both
//! halves together, keeping [`crate::paths::Roots`] in step with the map's reach.
//!
//! Touches the filesystem only through the roots and the map's resolution of
//! settings names.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::outcome::{
    namespace_name, spell_key, ClearOutcome, GestureOutcome, QueryOutcome, ResumeOutcome, RootLine,
    RuleLine, SettingsLine, StartOutcome, StatusOutcome, Unreopened,
};
use super::{Answer, Session, WorkspaceError};
use crate::paths::{RootRefusal, Roots};
use crate::trust::record::{Spelling, TrustRecord};
use crate::trust::{ReachKind, ReachOrigin, Startup, TrustError, TrustMap};

/// The settings layer that named a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SettingsLayer {
    /// `~/.bravebot/settings.json`.
    User,
    /// The project's settings file.
    Project,
    /// The project's local settings file.
    Local,
}

/// One directory named by a settings layer (setup field `settings_dirs`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingsDir {
    /// The layer that named it (the list is already in layer order).
    pub layer: SettingsLayer,
    /// The name as the settings file wrote it.
    pub name: String,
    /// What the person answers if it is asked about.
    pub answer: Answer,
}

/// The session record `resume` restarts from: the map (its rules and the reach opened
/// beside the working directory), exactly as persisted.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionRecord {
    /// The trust map with its reach.
    pub map: TrustRecord,
}

fn spelling_path(s: &Spelling) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    match s {
        Spelling::Text(t) => PathBuf::from(t),
        Spelling::Bytes(b) => PathBuf::from(std::ffi::OsString::from_vec(b.clone())),
    }
}

/// One of the person's gestures (trust-map chapter, section 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gesture {
    /// `@path`: vouch for a path.
    AtPath,
    /// A file flag: vouch for one file.
    FileFlag,
    /// Mark a path untrusted.
    Untrust,
    /// Drop a file into the conversation: reach to that file alone.
    Drop,
    /// `/add-dir`: reach and trust.
    AddDir,
    /// Command-line `--add-dir`: reach only.
    CliAddDir,
    /// `/cd`.
    Cd,
}

impl Gesture {
    /// The gesture by its protocol name.
    pub fn from_name(name: &str) -> Option<Gesture> {
        Some(match name {
            "at_path" => Gesture::AtPath,
            "file_flag" => Gesture::FileFlag,
            "untrust" => Gesture::Untrust,
            "drop" => Gesture::Drop,
            "add_dir" => Gesture::AddDir,
            "cli_add_dir" => Gesture::CliAddDir,
            "cd" => Gesture::Cd,
            _ => return None,
        })
    }
}

fn done() -> GestureOutcome {
    GestureOutcome { result: "done" }
}

fn gesture_refused(code: &'static str) -> GestureOutcome {
    GestureOutcome { result: code }
}

impl Session {
    /// The path a person typed, made absolute against the working directory (a gesture
    /// is not a file tool, but its path is still taken literally: no `~`, no variables).
    fn typed(&self, path: &str) -> Result<PathBuf, &'static str> {
        crate::paths::validate::validate(path.as_ref()).map_err(|e| e.code())?;
        let p = Path::new(path);
        Ok(if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.roots.workdir().path().join(p)
        })
    }

    /// Command-line `--add-dir` (TRUST-ADD-4): reach only, no rule.
    pub(crate) fn cli_add_dir(&mut self, path: &Path) -> Result<(), &'static str> {
        self.open_dir_then(path, TrustMap::cli_add_dir)
    }

    /// A directory opened reachable and trusted on the terms of `/add-dir`, for a
    /// settings-named directory accepted at its question (TRUST-SET-1).
    fn settings_dir_yes(&mut self, path: &Path) -> Result<(), &'static str> {
        self.open_dir_then(path, TrustMap::settings_dir_yes)
    }

    /// Opens `path` as a root beside the working directory, then lets the map record it
    /// by its canonical path; if the map refuses, the root is closed again, so reach and
    /// map never disagree.
    fn open_dir_then<T>(
        &mut self,
        path: &Path,
        record: impl FnOnce(&mut TrustMap, &Path) -> Result<T, TrustError>,
    ) -> Result<(), &'static str> {
        let id = self.roots.add_dir(path).map_err(|e| e.code())?;
        let canonical = self
            .roots
            .root(id)
            .map(|r| r.path().to_path_buf())
            .ok_or("not_found")?;
        if let Err(e) = record(&mut self.map, &canonical) {
            self.roots.close(id);
            return Err(e.code());
        }
        Ok(())
    }

    /// The startup question (TRUST-START-1, TRUST-START-2, TRUST-SKIP-1): returns
    /// whether the session started.
    fn startup(&mut self, answer: Answer) -> bool {
        if self.config.skip_permissions {
            self.map.skip_permissions();
            return true;
        }
        if self.config.no_asker {
            // Nobody can answer: nothing trusted, as after a no.
            return true;
        }
        let answer = match answer {
            Answer::Yes => Startup::Yes,
            Answer::No => Startup::No,
            Answer::Leave => Startup::Leave,
        };
        self.map.startup(answer).is_ok()
    }

    /// A session start (PROTO-SETUP-2): the startup question, then each settings-named
    /// directory (TRUST-SET-1 to TRUST-SET-3, TRUST-SET-5). Returns the `open` answer's
    /// `started` and `settings`.
    pub(crate) fn start(&mut self, startup: Answer, dirs: &[SettingsDir]) -> StartOutcome {
        let mut settings: Vec<SettingsLine> = Vec::new();
        let line = |name: &str, result, resolved: Option<&str>, code| SettingsLine {
            name: name.to_string(),
            result,
            resolved: resolved.map(str::to_string),
            code,
        };
        self.started = self.startup(startup);
        if self.started {
            let names: Vec<String> = dirs.iter().map(|d| d.name.clone()).collect();
            let questions = self
                .map
                .settings_questions(&names, self.config.home.as_deref());
            let mut asked: Vec<&Path> = Vec::new();
            for dir in dirs {
                let name = &dir.name;
                if let Some(q) = questions.ask.iter().find(|q| q.names.contains(name)) {
                    let resolved = q.resolved.to_string_lossy().into_owned();
                    if asked.contains(&q.resolved.as_path()) {
                        // TRUST-SET-3: a directory another name led to is asked once.
                        settings.push(line(name, "merged", Some(&resolved), None));
                        continue;
                    }
                    asked.push(&q.resolved);
                    settings.push(line(name, "asked", Some(&resolved), None));
                    // A question nobody can answer is a no.
                    let answer = if self.config.no_asker {
                        Answer::No
                    } else {
                        dir.answer
                    };
                    match answer {
                        Answer::Yes => {
                            // Opened on the terms of `/add-dir`. The name was checked
                            // just now: a failure here is the tree changing under it,
                            // reported with its code rather than passed over.
                            if let Err(code) = self.settings_dir_yes(&q.resolved) {
                                settings.pop();
                                settings.push(line(name, "reported", None, Some(code)));
                            }
                        }
                        Answer::No => {}
                        Answer::Leave => {
                            self.started = false;
                            break;
                        }
                    }
                } else {
                    let code = questions
                        .unopenable
                        .iter()
                        .find(|(n, _)| n == name)
                        .map_or("not_found", |(_, c)| *c);
                    settings.push(line(name, "reported", None, Some(code)));
                }
            }
        }
        StartOutcome {
            started: self.started,
            settings,
        }
    }

    /// `query` (PROTO-TRUST-1, TRUST-OBS-1): the map's answer by key alone.
    pub fn query(&self, path: &str) -> QueryOutcome {
        let key = match self.map.key_in(&self.roots, path) {
            Ok(k) => k,
            Err(e) => {
                return QueryOutcome {
                    trust: None,
                    namespace: None,
                    key: None,
                    rule: None,
                    refused: Some(e.code()),
                }
            }
        };
        let (trust, rule) = match self.map.deciding(&key) {
            Some((rule, t)) => (t.name(), Some(spell_key(&rule))),
            None => ("unknown", None),
        };
        QueryOutcome {
            trust: Some(trust),
            namespace: Some(namespace_name(key.ns)),
            key: Some(spell_key(&key)),
            rule,
            refused: None,
        }
    }

    /// One of the person's gestures (PROTO-TRUST-2, trust-map chapter section 6). None of
    /// them puts a question (PROTO-FILE-2).
    pub fn gesture(&mut self, gesture: Gesture, path: &str) -> GestureOutcome {
        let result = match gesture {
            Gesture::AtPath | Gesture::FileFlag => self
                .map
                .at_path_in(&self.roots, path, gesture == Gesture::FileFlag)
                .map(|_| ()),
            Gesture::Untrust => self.map.untrust_in(&self.roots, path).map(|_| ()),
            Gesture::Drop => match self.typed(path) {
                Ok(p) => self.map.drop_in(&mut self.roots, &p).map(|_| ()),
                Err(code) => return gesture_refused(code),
            },
            Gesture::AddDir => match self.typed(path) {
                Ok(p) => self.map.add_dir_in(&mut self.roots, &p).map(|_| ()),
                Err(code) => return gesture_refused(code),
            },
            Gesture::CliAddDir => {
                return match self.typed(path) {
                    Ok(p) => match self.cli_add_dir(&p) {
                        Ok(()) => done(),
                        Err(code) => gesture_refused(code),
                    },
                    Err(code) => gesture_refused(code),
                }
            }
            Gesture::Cd => match self.typed(path) {
                Ok(p) => self.cd(&p),
                Err(code) => return gesture_refused(code),
            },
        };
        match result {
            Ok(()) => done(),
            Err(e) => gesture_refused(e.code()),
        }
    }

    /// `/cd` (TRUST-CD-1 to TRUST-CD-3): the roots first (a path that is not a directory
    /// changes nothing), then the map re-spelled against where the roots landed.
    fn cd(&mut self, path: &Path) -> Result<(), TrustError> {
        self.roots.cd(path)?;
        let new = self.roots.workdir().path().to_path_buf();
        self.map.cd(&new)?;
        Ok(())
    }

    /// The open roots with how each was opened (TRUST-STATUS-2).
    pub fn root_lines(&self) -> Vec<RootLine> {
        let wd = self.roots.workdir().id();
        self.roots
            .roots()
            .map(|r| {
                if r.id() == wd {
                    return RootLine {
                        path: r.path().to_string_lossy().into_owned(),
                        how: "working_directory",
                    };
                }
                let (path, kind) = match r.only() {
                    Some(name) => (r.path().join(name), ReachKind::File),
                    None => (r.path().to_path_buf(), ReachKind::Dir),
                };
                let how = self
                    .map
                    .reach()
                    .iter()
                    .find(|x| x.kind == kind && x.path == path)
                    .map_or(
                        match kind {
                            ReachKind::File => ReachOrigin::Dropped,
                            ReachKind::Dir => ReachOrigin::CliAddDir,
                        },
                        |x| x.origin,
                    );
                RootLine {
                    path: path.to_string_lossy().into_owned(),
                    how: how.name(),
                }
            })
            .collect()
    }

    /// `status` (TRUST-STATUS-1, TRUST-STATUS-2).
    pub fn status(&self) -> StatusOutcome {
        let rules = self
            .map
            .status()
            .iter()
            .map(|l| RuleLine {
                namespace: namespace_name(l.key.ns),
                key: spell_key(&l.key),
                trust: l.trust.name(),
                origin: l.origin.name(),
            })
            .collect();
        StatusOutcome {
            rules,
            roots: self.root_lines(),
        }
    }

    /// The record persisted with the session (TRUST-LIFE-2), serialised.
    // serde_json fails only on a map key that is not a string or a hand-written `Serialize`
    // that errs: the record's derived fields have neither.
    #[allow(clippy::expect_used)]
    pub fn record(&self) -> String {
        let record = SessionRecord {
            map: self.map.record(),
        };
        serde_json::to_string(&record).expect("a trust record always serialises")
    }

    /// `resume` (PROTO-TRUST-3, TRUST-LIFE-3, TRUST-LIFE-4): the session is closed and
    /// started again from its serialised record alone: the map as recorded, no startup
    /// question, no settings question, and each recorded root reopened on the terms it
    /// was opened on; one that cannot be is reported with its code and dropped from the
    /// reach (its rules stay).
    pub fn resume(&mut self) -> Result<ResumeOutcome, WorkspaceError> {
        let persisted = self.record();
        let record: SessionRecord = serde_json::from_str(&persisted).map_err(|e| {
            WorkspaceError::Failed(format!("the session record does not read: {e}"))
        })?;
        self.restore(&record.map)
    }

    /// A `shell` line that is about to run opens `path` for writing by a redirection
    /// (TRUST-WRITE-11, ORDER-REDIR-3): the write table's row for untrusted data is applied
    /// to the exact path before the first byte lands (TRUST-WRITE-9). Returns the effect,
    /// or `None` for a path outside every root (the map has no key for it).
    pub fn redirected(&mut self, path: &Path) -> Option<&'static str> {
        let key = self.map.key_in(&self.roots, path).ok()?;
        let plan = self.map.plan_redirect(&key);
        self.map.reconcile(&plan);
        Some(plan.effect_name())
    }

    /// The trust map as the session record stores it (ORDER-REC-2).
    pub fn trust_record(&self) -> TrustRecord {
        self.map.record()
    }

    /// Starts the session again from a stored map (`resume` in this process, or a record
    /// read back by a process started after a restart, ORDER-REC-2): the map as recorded,
    /// each recorded root reopened on the terms it was opened on; one that cannot be is
    /// reported with its code and dropped from the reach (its rules stay).
    pub fn restore(&mut self, map: &TrustRecord) -> Result<ResumeOutcome, WorkspaceError> {
        let record = SessionRecord { map: map.clone() };
        self.started = true;
        let workdir = spelling_path(&record.map.workdir);
        let mut roots = Roots::open_with(&workdir, self.config.backend).map_err(|e| {
            WorkspaceError::Failed(format!(
                "cannot resume: the working directory {} does not open: {e}",
                workdir.display()
            ))
        })?;
        let mut unreopened = Vec::new();
        let mut kept = Vec::new();
        for reach in &record.map.reach {
            let opened: Result<_, RootRefusal> = match reach.kind {
                ReachKind::Dir => roots.add_dir(&reach.path),
                ReachKind::File => roots.add_file(&reach.path),
            };
            match opened {
                Ok(id) => {
                    // A directory that now resolves elsewhere is not the one recorded.
                    let landed = roots.root(id).map(|r| match r.only() {
                        Some(name) => r.path().join(name),
                        None => r.path().to_path_buf(),
                    });
                    if reach.kind == ReachKind::Dir && landed.as_deref() != Some(&reach.path) {
                        roots.close(id);
                        unreopened.push(Unreopened {
                            path: reach.path.to_string_lossy().into_owned(),
                            code: "changed",
                        });
                        continue;
                    }
                    kept.push(reach.clone());
                }
                Err(e) => unreopened.push(Unreopened {
                    path: reach.path.to_string_lossy().into_owned(),
                    code: e.code(),
                }),
            }
        }
        let mut map_record = record.map;
        map_record.reach = kept;
        self.map = TrustMap::resume(&map_record);
        self.roots = roots;
        Ok(ResumeOutcome {
            roots: self.root_lines(),
            unreopened,
        })
    }

    /// `clear` (TRUST-LIFE-5, TRUST-SET-4): every root but the working directory closes,
    /// the map is discarded, and the startup question is put again (no settings
    /// question). A `leave` starts no session.
    pub fn clear(&mut self, startup: Answer) -> ClearOutcome {
        self.map.clear();
        self.roots.clear();
        self.started = self.startup(startup);
        ClearOutcome {
            started: self.started,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trust::Trust;

    #[test]
    fn records_round_trip() {
        let mut m = TrustMap::new("/w/proj");
        m.startup(Startup::Yes).unwrap();
        m.untrust(&crate::trust::TrustKey::rel("vendor"));
        let rec = SessionRecord { map: m.record() };
        let text = serde_json::to_string(&rec).unwrap();
        let back: SessionRecord = serde_json::from_str(&text).unwrap();
        let m2 = TrustMap::resume(&back.map);
        assert_eq!(m2.status(), m.status());
        assert_eq!(
            m2.decision(&crate::trust::TrustKey::rel("vendor/x")),
            Some(Trust::Untrusted)
        );
    }
}
