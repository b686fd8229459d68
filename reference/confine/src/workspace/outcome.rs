//! What each step of a workspace session comes to: plain values an embedding agent reads,
//! serialised by the protocol adapter exactly as they are (the field names are the
//! protocol's). A refusal is an outcome carrying the path code (PATH-ERR-1), never an
//! error.
//!
//! Pure data: touches nothing.

use serde::Serialize;

use crate::trust::{Namespace, TrustKey};

/// A key as the protocol spells it: components joined by `/`, an absolute key with a
/// leading `/`, the working directory's key empty.
pub fn spell_key(key: &TrustKey) -> String {
    let joined = key
        .segments
        .iter()
        .map(|s| s.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    match key.ns {
        Namespace::Relative => joined,
        Namespace::Absolute => format!("/{joined}"),
    }
}

/// A namespace as the protocol names it.
pub fn namespace_name(ns: Namespace) -> &'static str {
    match ns {
        Namespace::Relative => "relative",
        Namespace::Absolute => "absolute",
    }
}

/// `read`: the contents, or why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadOutcome {
    /// `read`, `quarantined`, or a path code.
    pub result: &'static str,
    /// The contents (lossy UTF-8) when given.
    pub content: Option<String>,
    /// Whether a quarantined-read prompt was offered.
    pub prompted: bool,
    /// What the prompt previewed.
    pub preview: Option<&'static str>,
    /// The file's size, when it was read.
    pub size: Option<usize>,
}

impl ReadOutcome {
    pub(crate) fn refused(code: &'static str) -> ReadOutcome {
        ReadOutcome {
            result: code,
            content: None,
            prompted: false,
            preview: None,
            size: None,
        }
    }
}

/// `write` and `edit`: whether the bytes went in, and what the map made of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteOutcome {
    /// `written`, `declined`, `stopped`, `no_asker`, `no_match`, `ambiguous`, or a path
    /// code.
    pub result: &'static str,
    /// Whether a write prompt was offered.
    pub prompted: bool,
    /// The map's effect of a write that happened.
    pub effect: Option<&'static str>,
}

impl WriteOutcome {
    pub(crate) fn refused(code: &'static str) -> WriteOutcome {
        WriteOutcome {
            result: code,
            prompted: false,
            effect: None,
        }
    }
}

/// One entry of a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListEntry {
    /// Its name (lossy UTF-8).
    pub name: String,
    /// `file`, `dir`, `symlink`, `other`.
    pub kind: &'static str,
}

/// `list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListOutcome {
    /// `listed`, or a path code.
    pub result: &'static str,
    /// The entries.
    pub entries: Vec<ListEntry>,
}

/// One match of a search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchMatch {
    /// The file, relative to where the search started.
    pub file: String,
    /// The line number, from 1.
    pub line: usize,
    /// The line's text (lossy UTF-8).
    pub text: String,
}

/// `search`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchOutcome {
    /// `searched`, or a path code.
    pub result: &'static str,
    /// Matches from trusted files.
    pub matches: Vec<SearchMatch>,
    /// Files met and not read, because the map does not trust them.
    pub withheld: Vec<String>,
}

/// `query`: the map's answer by key alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueryOutcome {
    /// `trusted`, `untrusted` or `unknown`.
    pub trust: Option<&'static str>,
    /// `relative` or `absolute`.
    pub namespace: Option<&'static str>,
    /// The key.
    pub key: Option<String>,
    /// The deciding rule's key.
    pub rule: Option<String>,
    /// The path code, when the path has no key.
    pub refused: Option<&'static str>,
}

/// `gesture`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GestureOutcome {
    /// `done`, or the refusal's code.
    pub result: &'static str,
}

/// One rule of `status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleLine {
    /// `relative` or `absolute`.
    pub namespace: &'static str,
    /// Its key.
    pub key: String,
    /// Its trust.
    pub trust: &'static str,
    /// Which gesture made it.
    pub origin: &'static str,
}

/// One open root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RootLine {
    /// The root (a single dropped file names the file).
    pub path: String,
    /// How it was opened.
    pub how: &'static str,
}

/// `status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusOutcome {
    /// Every rule.
    pub rules: Vec<RuleLine>,
    /// Every open root.
    pub roots: Vec<RootLine>,
}

/// A recorded root that could not be opened again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unreopened {
    /// The recorded path.
    pub path: String,
    /// Why: a path code, or `changed`.
    pub code: &'static str,
}

/// `resume`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResumeOutcome {
    /// The roots open after the resume.
    pub roots: Vec<RootLine>,
    /// Those that could not be.
    pub unreopened: Vec<Unreopened>,
}

/// What became of one settings-named directory at a session start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SettingsLine {
    /// The name as the settings file wrote it.
    pub name: String,
    /// `asked`, `merged` or `reported`.
    pub result: &'static str,
    /// Where it led, when asked or merged.
    pub resolved: Option<String>,
    /// The code, when reported.
    pub code: Option<&'static str>,
}

/// A session start: the startup question and each settings-named directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StartOutcome {
    /// `false` after a `leave`: no step but `close`.
    pub started: bool,
    /// One line per settings-named directory, in order.
    pub settings: Vec<SettingsLine>,
}

/// `clear`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClearOutcome {
    /// Whether the session started again.
    pub started: bool,
}
