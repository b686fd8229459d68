//! The five file tools as the model calls them (PROTO-FILE-1): `read`, `write`, `edit`,
//! `list` and `search`, each through the session's confinement ([`crate::paths::Roots`])
//! and its trust map. A refusal is an outcome carrying the path code (PATH-ERR-1), never
//! an error.
//!
//! - `read`: a trusted key gives the contents; any other is quarantined (content
//!   `null`), with the quarantined-read prompt offered by the map's rules
//!   (TRUST-PROMPT-*) and answered from `if_asked`; a yes vouches for the key as `@path`
//!   would and the file is then given.
//! - `write` and `edit`: confinement is settled first (a refusal puts no question), then
//!   the write table (TRUST-WRITE-*) decides the prompt, then the bytes go through the
//!   atomic write of the roots, and the exact key written is reconciled (an untrusted mark
//!   before the first byte, a trusted one after).
//! - `search` withholds every file the map does not trust (TRUST-READ-2).
//!
//! Touches the filesystem only through the roots.

use std::fs::File;
use std::io::Read;

use super::outcome::{
    ListEntry, ListOutcome, ReadOutcome, SearchMatch, SearchOutcome, WriteOutcome,
};
use super::{Answer, Session};
use crate::paths::{Key, Kind, PathError, Readable};
use crate::trust::{Offer, Trust, TrustKey, WritePlan};

/// What the person (or the mode) made of a write prompt.
enum Asked {
    /// Go on and write.
    Write { prompted: bool },
    /// Nothing is written: the `result` and whether a prompt was offered.
    Stop {
        result: &'static str,
        prompted: bool,
    },
}

fn refused(code: &'static str) -> WriteOutcome {
    WriteOutcome::refused(code)
}

/// Where occurrences of `needle` start in `hay`, counting at most two.
fn occurrences(hay: &[u8], needle: &[u8]) -> usize {
    if needle.is_empty() {
        return if hay.is_empty() { 1 } else { 2 };
    }
    hay.windows(needle.len())
        .filter(|w| *w == needle)
        .take(2)
        .count()
}

fn replace_once(hay: &[u8], old: &[u8], new: &[u8]) -> Vec<u8> {
    let at = if old.is_empty() {
        0
    } else {
        hay.windows(old.len())
            .position(|w| w == old)
            .unwrap_or(hay.len())
    };
    let mut out = Vec::with_capacity(hay.len() + new.len());
    out.extend_from_slice(&hay[..at]);
    out.extend_from_slice(new);
    out.extend_from_slice(&hay[(at + old.len()).min(hay.len())..]);
    out
}

/// Whether the input ends in `/` or `/.`: it must name a directory (PATH-SPELL-2).
fn trailing_slash(path: &str) -> bool {
    path.ends_with('/') || path.ends_with("/.")
}

fn kind_of(md: &std::fs::Metadata) -> Kind {
    let t = md.file_type();
    if t.is_symlink() {
        Kind::Symlink
    } else if t.is_dir() {
        Kind::Dir
    } else if t.is_file() {
        Kind::File
    } else {
        Kind::Unknown
    }
}

/// The key's name relative to `start`, components joined by `/`; a search started at a
/// file names that file's own name.
fn relative_name(key: &Key, start: &Key, start_is_file: bool) -> String {
    let skip = if start_is_file {
        start.components.len().saturating_sub(1)
    } else {
        start.components.len()
    };
    key.components
        .iter()
        .skip(skip)
        .map(|c| c.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether `data` is text the model may be handed (TRUST-READ-5): valid UTF-8 without NUL.
fn is_text(data: &[u8]) -> bool {
    !data.contains(&0) && std::str::from_utf8(data).is_ok()
}

impl Session {
    /// Whether the final name of `path` lands at or beneath a protected path of a root
    /// (PATH-WRITE-7): the fence's list ([`crate::protect`]), decided where the
    /// name lands on disk. The parent is resolved as the write would resolve it; names
    /// that do not exist yet are appended as spelled (nothing there to follow).
    fn lands_protected(&self, path: &str) -> bool {
        let roots: Vec<std::path::PathBuf> =
            self.roots.roots().map(|r| r.path().to_path_buf()).collect();
        let list = crate::protect::discover(&roots, &roots, self.config.home.as_deref());
        let spelled = std::path::Path::new(path);
        let mut parent: std::path::PathBuf = spelled
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_default();
        let mut rest: Vec<std::ffi::OsString> = spelled
            .file_name()
            .map(|n| vec![n.to_os_string()])
            .unwrap_or_default();
        loop {
            let probe = if parent.as_os_str().is_empty() {
                std::path::PathBuf::from(".")
            } else {
                parent.clone()
            };
            match self.roots.resolve(&probe, true) {
                Ok(fd) => {
                    use std::os::fd::AsRawFd;
                    let Ok(mut real) =
                        std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
                    else {
                        return false;
                    };
                    for r in rest.iter().rev() {
                        real.push(r);
                    }
                    return crate::protect::covers(&list, &real);
                }
                Err(PathError::NotFound { .. }) => match (parent.file_name(), parent.parent()) {
                    (Some(n), Some(up)) => {
                        rest.push(n.to_os_string());
                        parent = up.to_path_buf();
                    }
                    _ => return false,
                },
                Err(_) => return false,
            }
        }
    }

    fn trust_key(&self, path: &str) -> Result<TrustKey, &'static str> {
        self.map.key_in(&self.roots, path).map_err(|e| e.code())
    }

    /// A quarantined-read prompt or a write prompt answered `leave` ends the turn: the
    /// next step is a new turn, and the once-per-turn memory starts afresh.
    fn end_turn(&mut self) {
        self.map.new_turn();
    }

    /// `read` (PATH-READ-*, TRUST-READ-1, TRUST-PROMPT-*).
    pub fn read(&mut self, path: &str, if_asked: Answer) -> ReadOutcome {
        let refuse = ReadOutcome::refused;
        let key = match self.trust_key(path) {
            Ok(k) => k,
            Err(code) => return refuse(code),
        };
        let mut file = match self.roots.open_read(path) {
            Ok(Readable::File(f)) => f,
            Ok(Readable::Dir(_)) => return refuse("is_directory"),
            Err(e) => return refuse(e.code()),
        };
        let mut data = Vec::new();
        if let Err(e) = file.read_to_end(&mut data) {
            return refuse(
                PathError::Io {
                    op: "read",
                    path: path.to_string(),
                    source: e,
                }
                .code(),
            );
        }
        let size = data.len();
        let give = |prompted: bool, preview: Option<&'static str>| ReadOutcome {
            result: "read",
            content: Some(String::from_utf8_lossy(&data).into_owned()),
            prompted,
            preview,
            size: Some(size),
        };
        let not_text = |prompted: bool, preview: Option<&'static str>| ReadOutcome {
            result: "not_text",
            content: None,
            prompted,
            preview,
            size: Some(size),
        };
        let picture = crate::trust::prompt::is_picture(std::path::Path::new(path));
        if self.map.is_trusted(&key) {
            // TRUST-READ-5: a picture's text is never read; bytes that are not text are
            // not handed over as if they were.
            if picture || !is_text(&data) {
                return not_text(false, None);
            }
            return give(false, None);
        }
        let quarantined = |prompted: bool, preview: Option<&'static str>| ReadOutcome {
            result: "quarantined",
            content: None,
            prompted,
            preview,
            size: Some(size),
        };
        if self.config.no_asker {
            // TRUST-PROMPT-8: with no way to ask, quarantined without a prompt.
            return quarantined(false, None);
        }
        let offer = self.map.offer_quarantined_read(
            &key,
            std::path::Path::new(path),
            Some(Kind::File),
            &data[..data.len().min(crate::trust::prompt::PREVIEW_BYTES)],
        );
        let preview = match &offer {
            Offer::Ask { .. } => offer.preview_kind(),
            Offer::Skip(_) => return quarantined(false, None),
        };
        if self.config.skip_permissions {
            // TRUST-SKIP-2: the mode vouches as a yes would; no person is asked.
            self.map.quarantined_yes(&key);
            return give(false, None);
        }
        match if_asked {
            Answer::Yes => {
                self.map.quarantined_yes(&key);
                if !is_text(&data) {
                    return not_text(true, preview);
                }
                give(true, preview)
            }
            Answer::No => quarantined(true, preview),
            Answer::Leave => {
                self.end_turn();
                quarantined(true, preview)
            }
        }
    }

    /// What a `write` would meet at the final name, settled before any question
    /// (PATH-WRITE-2, PATH-WRITE-5, PATH-SPELL-2): `Some(code)` when confinement refuses.
    /// A write whose missing parents cannot be made is refused by the write itself.
    fn write_refusal(&self, path: &str) -> Option<&'static str> {
        if trailing_slash(path) {
            // A trailing slash names a directory and a write makes a file: refused with
            // `is_directory` unless resolving the names before it meets a fault first.
            let mut stripped = path;
            while let Some(s) = stripped
                .strip_suffix('/')
                .or_else(|| stripped.strip_suffix("/."))
            {
                stripped = s;
            }
            let probe = if stripped.is_empty() { path } else { stripped };
            return Some(match self.roots.resolve(probe, false) {
                Ok(_) | Err(PathError::NotFound { .. }) => "is_directory",
                Err(e) => e.code(),
            });
        }
        self.final_refusal(path, true)
    }

    /// The final name of a write or an edit, looked at without following it: a link is
    /// `escape`, `loop` or `final_symlink`; a directory `is_directory`; anything but a
    /// regular file `not_regular`; nothing is fine for a write (`new_ok`) and
    /// `not_found` for an edit.
    fn final_refusal(&self, path: &str, new_ok: bool) -> Option<&'static str> {
        let fd = match self.roots.resolve(path, false) {
            Ok(fd) => fd,
            Err(PathError::NotFound { .. }) if new_ok => return None,
            Err(e) => return Some(e.code()),
        };
        let md = match File::from(fd).metadata() {
            Ok(md) => md,
            Err(e) => {
                return Some(
                    PathError::Io {
                        op: "fstat",
                        path: path.to_string(),
                        source: e,
                    }
                    .code(),
                )
            }
        };
        match kind_of(&md) {
            Kind::File => None,
            Kind::Dir => Some("is_directory"),
            Kind::Symlink => match self.roots.resolve(path, true) {
                Err(e @ (PathError::Escape { .. } | PathError::Loop { .. })) => Some(e.code()),
                _ => Some("final_symlink"),
            },
            _ => Some("not_regular"),
        }
    }

    /// The write prompt (TRUST-WRITE-6, TRUST-WRITE-7, TRUST-SKIP-2).
    fn ask_write(&mut self, plan: &WritePlan, if_asked: Answer) -> Asked {
        if !plan.prompt {
            return Asked::Write { prompted: false };
        }
        if self.config.skip_permissions {
            return Asked::Write { prompted: false };
        }
        if self.config.no_asker {
            return Asked::Stop {
                result: "no_asker",
                prompted: false,
            };
        }
        match if_asked {
            Answer::Yes => Asked::Write { prompted: true },
            Answer::No => Asked::Stop {
                result: "declined",
                prompted: true,
            },
            Answer::Leave => {
                self.end_turn();
                Asked::Stop {
                    result: "stopped",
                    prompted: true,
                }
            }
        }
    }

    /// Records the plan around `act`, the write itself: an untrusted mark before it, a
    /// trusted mark after it succeeded (TRUST-WRITE-9). A write that fails wrote nothing,
    /// so the map goes back to what it was.
    fn reconciled(
        &mut self,
        plan: &WritePlan,
        prompted: bool,
        act: impl FnOnce(&crate::paths::Roots) -> Result<&'static str, PathError>,
    ) -> WriteOutcome {
        let before = self.map.clone();
        self.map.before_write(plan);
        let stopped = |result| WriteOutcome {
            result,
            prompted,
            effect: None,
        };
        match act(&self.roots) {
            Ok("written") => {
                self.map.after_write(plan);
                WriteOutcome {
                    result: "written",
                    prompted,
                    effect: Some(plan.effect_name()),
                }
            }
            Ok(result) => {
                self.map = before;
                stopped(result)
            }
            Err(e) => {
                self.map = before;
                stopped(e.code())
            }
        }
    }

    /// `write` (PATH-WRITE-*, the write table of TRUST-WRITE-1 to TRUST-WRITE-9).
    pub fn write(
        &mut self,
        path: &str,
        content: &[u8],
        data: Trust,
        if_asked: Answer,
    ) -> WriteOutcome {
        let key = match self.trust_key(path) {
            Ok(k) => k,
            Err(code) => return refused(code),
        };
        if let Some(code) = self.write_refusal(path) {
            return refused(code);
        }
        if self.lands_protected(path) {
            return refused("protected");
        }
        let plan = self.map.plan_write(&key, data);
        let prompted = match self.ask_write(&plan, if_asked) {
            Asked::Write { prompted } => prompted,
            Asked::Stop { result, prompted } => {
                return WriteOutcome {
                    result,
                    prompted,
                    effect: None,
                }
            }
        };
        self.reconciled(&plan, prompted, |roots| {
            roots.write_file(path, content).map(|_| "written")
        })
    }

    /// `edit` (PATH-WRITE-1, TRUST-WRITE-10, TRUST-READ-3): the one occurrence of `old`
    /// replaced by `new`; `no_match` and `ambiguous` write nothing and ask nothing.
    pub fn edit(
        &mut self,
        path: &str,
        old: &[u8],
        new: &[u8],
        turn: Trust,
        if_asked: Answer,
    ) -> WriteOutcome {
        let key = match self.trust_key(path) {
            Ok(k) => k,
            Err(code) => return refused(code),
        };
        let refusal = if trailing_slash(path) {
            // PATH-SPELL-2: `notes.txt/` is not_directory, a directory is_directory.
            Some(match self.roots.resolve(path, true) {
                Err(e) => e.code(),
                Ok(_) => "is_directory",
            })
        } else {
            self.final_refusal(path, false)
        };
        if let Some(code) = refusal {
            return refused(code);
        }
        if self.lands_protected(path) {
            return refused("protected");
        }
        // TRUST-READ-4: a file the model may not read is asked about before its bytes are
        // looked at, whatever row of the write table the edit falls in, so that no answer
        // before a yes depends on them.
        let readable = self.map.is_trusted(&key);
        let mut asked_first = None;
        if !readable {
            let data = self.map.edit_data(&key, turn);
            let mut plan = self.map.plan_write(&key, data);
            plan.prompt = true;
            match self.ask_write(&plan, if_asked) {
                Asked::Write { prompted } => asked_first = Some(prompted),
                Asked::Stop { result, prompted } => {
                    return WriteOutcome {
                        result,
                        prompted,
                        effect: None,
                    }
                }
            }
        }
        let before = match self.roots.read_file(path) {
            Ok(b) => b,
            Err(e) => return refused(e.code()),
        };
        let found = |result| WriteOutcome {
            result,
            prompted: asked_first.unwrap_or(false),
            effect: None,
        };
        match occurrences(&before, old) {
            0 => return found("no_match"),
            1 => {}
            _ => return found("ambiguous"),
        }
        let data = self.map.edit_data(&key, turn);
        let plan = self.map.plan_write(&key, data);
        let prompted = match asked_first {
            Some(prompted) => prompted,
            None => match self.ask_write(&plan, if_asked) {
                Asked::Write { prompted } => prompted,
                Asked::Stop { result, prompted } => {
                    return WriteOutcome {
                        result,
                        prompted,
                        effect: None,
                    }
                }
            },
        };
        self.reconciled(&plan, prompted, |roots| {
            // The file is read again through the edit's own handle; if it changed since
            // the look above so that `old` no longer occurs once, the same bytes are
            // put back and the edit reports what it found.
            let mut found = "written";
            roots.edit_atomic(path, |bytes| match occurrences(bytes, old) {
                1 => replace_once(bytes, old, new),
                n => {
                    found = if n == 0 { "no_match" } else { "ambiguous" };
                    bytes.to_vec()
                }
            })?;
            Ok(found)
        })
    }

    /// `list` (PATH-LIST-1): names and kinds, no link followed, nothing opened.
    pub fn list(&self, path: &str) -> ListOutcome {
        match self.roots.list_dir(path) {
            Ok(entries) => ListOutcome {
                result: "listed",
                entries: entries
                    .iter()
                    .map(|e| ListEntry {
                        name: e.name.to_string_lossy().into_owned(),
                        kind: e.kind.entry_name(),
                    })
                    .collect(),
            },
            Err(e) => ListOutcome {
                result: e.code(),
                entries: Vec::new(),
            },
        }
    }

    /// `search` (PATH-LIST-2, TRUST-READ-2): matches from trusted files only; every other
    /// file met is named as withheld, unread.
    pub fn search(&self, path: &str, pattern: &[u8]) -> SearchOutcome {
        let none = |code| SearchOutcome {
            result: code,
            matches: Vec::new(),
            withheld: Vec::new(),
        };
        let start = match self.roots.key(path) {
            Ok(k) => k,
            Err(e) => return none(e.code()),
        };
        let start_is_file = matches!(self.roots.stat(path), Ok(md) if md.kind == Kind::File);
        let (roots, map) = (&self.roots, &self.map);
        let found = roots.search(path, pattern, |key| {
            TrustKey::from_path_key(key, roots).is_some_and(|k| map.is_trusted(&k))
        });
        match found {
            Ok(found) => SearchOutcome {
                result: "searched",
                matches: found
                    .matches
                    .iter()
                    .map(|m| SearchMatch {
                        file: relative_name(&m.key, &start, start_is_file),
                        line: m.line,
                        text: String::from_utf8_lossy(&m.text).into_owned(),
                    })
                    .collect(),
                withheld: found
                    .withheld
                    .iter()
                    .map(|k| relative_name(k, &start, start_is_file))
                    .collect(),
            },
            Err(e) => none(e.code()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occurrences_and_replacement() {
        assert_eq!(occurrences(b"abc", b"x"), 0);
        assert_eq!(occurrences(b"abc", b"b"), 1);
        assert_eq!(occurrences(b"abab", b"ab"), 2);
        assert_eq!(occurrences(b"aaa", b"aa"), 2, "overlapping counts");
        assert_eq!(replace_once(b"x=100;", b"100", b"200"), b"x=200;");
        assert_eq!(replace_once(b"", b"", b"new"), b"new");
    }

    #[test]
    fn trailing_slashes() {
        assert!(trailing_slash("a/"));
        assert!(trailing_slash("a/."));
        assert!(!trailing_slash("a/.."));
        assert!(!trailing_slash("a"));
    }
}
