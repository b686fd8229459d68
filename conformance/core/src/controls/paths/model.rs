//! The file tools' part of a scenario file (`paths`): the setup fields (extra roots, the
//! resolver, the default data trust of writes), the steps `read`, `write`, `edit`, `list`,
//! `search` and the `expect` keys that judge their answers.

use serde::de::{Error as _, MapAccess};
use serde::{Deserialize, Serialize};

use crate::vocab::{OrNull, YesNo};

/// The trust of a write's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DataTrust {
    /// The turn observed nothing untrusted.
    Trusted,
    /// The turn observed something untrusted.
    Untrusted,
}

/// The path resolver an implementation is asked to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolver {
    /// `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`.
    Openat2,
    /// The component walk.
    Walk,
}

crate::setup! {
    /// Directories opened with `--add-dir` (reach only).
    roots: Vec<String> = Vec::new(),
    /// The resolver to use, or the implementation's default.
    resolver: Resolver,
    /// Runner-side only: the data trust of writes that do not say (default `trusted`).
    data_trust: DataTrust = DataTrust::Trusted => runner,
}

/// `read = "PATH"` or `read = { path, if_asked }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ReadSpec {
    /// Just the path.
    Path(String),
    /// The path and the answer to a quarantined-read prompt.
    Full(ReadFull),
}

/// The table form of `read`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadFull {
    /// The path, as the tool is given it.
    pub path: String,
    /// What the person answers if a prompt is offered (default `no`).
    pub if_asked: Option<YesNo>,
}

/// `write = { path, content, data, if_asked }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteSpec {
    /// The path.
    pub path: String,
    /// The new contents (default empty).
    #[serde(default)]
    pub content: String,
    /// The data's trust (default: `setup.data_trust`).
    pub data: Option<DataTrust>,
    /// What the person answers if the write prompts (default `yes`).
    pub if_asked: Option<YesNo>,
}

/// `edit = { path, old, new, data, if_asked }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditSpec {
    /// The path.
    pub path: String,
    /// The text replaced; it must occur exactly once.
    pub old: String,
    /// The replacement.
    pub new: String,
    /// The data's trust (default: `setup.data_trust`).
    pub data: Option<DataTrust>,
    /// What the person answers if the edit prompts (default `yes`).
    pub if_asked: Option<YesNo>,
}

/// `search = { path, pattern }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchSpec {
    /// Where the search starts.
    pub path: String,
    /// A literal substring.
    pub pattern: String,
}

/// The action keys this control owns.
pub const ACTION_KEYS: &[&str] = &["read", "write", "edit", "list", "search"];

/// One file-tool step.
#[derive(Debug, Clone)]
pub enum Action {
    /// `read`.
    Read {
        /// The path.
        path: String,
        /// The answer to a prompt.
        if_asked: YesNo,
    },
    /// `write` or `edit` (`old` set for an edit).
    Write {
        /// The path.
        path: String,
        /// The contents (the replacement for an edit).
        content: String,
        /// For an edit: the text replaced.
        old: Option<String>,
        /// The data's trust, or the setup's default.
        data: Option<DataTrust>,
        /// The answer to a prompt.
        if_asked: YesNo,
    },
    /// `list`.
    List(String),
    /// `search`.
    Search {
        /// Where it starts.
        path: String,
        /// The literal pattern.
        pattern: String,
    },
}

/// Reads the value of action `key` (one of [`ACTION_KEYS`]).
pub fn parse<'de, A: MapAccess<'de>>(key: &str, map: &mut A) -> Result<Action, A::Error> {
    Ok(match key {
        "read" => {
            let (path, if_asked) = match map.next_value()? {
                ReadSpec::Path(p) => (p, None),
                ReadSpec::Full(f) => (f.path, f.if_asked),
            };
            Action::Read {
                path,
                if_asked: if_asked.unwrap_or(YesNo::No),
            }
        }
        "write" => {
            let w: WriteSpec = map.next_value()?;
            Action::Write {
                path: w.path,
                content: w.content,
                old: None,
                data: w.data,
                if_asked: w.if_asked.unwrap_or(YesNo::Yes),
            }
        }
        "edit" => {
            let w: EditSpec = map.next_value()?;
            Action::Write {
                path: w.path,
                content: w.new,
                old: Some(w.old),
                data: w.data,
                if_asked: w.if_asked.unwrap_or(YesNo::Yes),
            }
        }
        "list" => Action::List(map.next_value()?),
        "search" => {
            let s: SearchSpec = map.next_value()?;
            Action::Search {
                path: s.path,
                pattern: s.pattern,
            }
        }
        _ => return Err(A::Error::custom(format!("`{key}` is not a paths step"))),
    })
}

impl Action {
    /// A short label for messages: `read "f"`.
    pub fn label(&self) -> String {
        match self {
            Action::Read { path, .. } => format!("read {path:?}"),
            Action::Write {
                path, old: None, ..
            } => format!("write {path:?}"),
            Action::Write { path, .. } => format!("edit {path:?}"),
            Action::List(p) => format!("list {p:?}"),
            Action::Search { path, pattern } => format!("search {pattern:?} in {path:?}"),
        }
    }

    /// The `expect` keys that apply.
    pub fn expect_keys(&self) -> &'static [&'static str] {
        match self {
            Action::Read { .. } => &["result", "content", "prompted", "preview"],
            Action::Write { .. } => &["result", "prompted", "effect"],
            Action::List(_) => &["result", "entries"],
            Action::Search { .. } => &["result", "matched", "withheld"],
        }
    }
}

/// The file tools' `expect` keys.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// `read`, `written`, `listed`, `searched`, or a refusal code.
    pub result: Option<String>,
    /// `read`: the exact contents given to the model (or `false`: null).
    pub content: Option<OrNull<String>>,
    /// Whether a prompt was offered.
    pub prompted: Option<bool>,
    /// `read`: the preview kind (or `false`: null).
    pub preview: Option<OrNull<String>>,
    /// `write`, `edit`: the effect on the map (or `false`: null).
    pub effect: Option<OrNull<String>>,
    /// `list`: every entry, as a set.
    pub entries: Option<Vec<ExpectEntry>>,
    /// `search`: the files with matches, as a set.
    pub matched: Option<Vec<String>>,
    /// `search`: the files withheld, as a set.
    pub withheld: Option<Vec<String>>,
}

/// Every `expect` key of this control.
pub const EXPECT_KEYS: &[&str] = &[
    "result", "content", "prompted", "preview", "effect", "entries", "matched", "withheld",
];

/// One entry of a `list` answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectEntry {
    /// The name.
    pub name: String,
    /// `file`, `dir`, `symlink` or `other`.
    pub kind: String,
}

impl crate::controls::ControlAction for Action {
    crate::forward_action!(plain);
    fn capability(&self) -> Option<&'static str> {
        Some("paths")
    }
}

/// The file tools: `read`, `write`, `edit`, `list`, ...
pub struct Paths;

impl crate::controls::Control for Paths {
    type Action = Action;
    type Setup = SetupPatch;
    const CAPABILITIES: &'static [&'static str] = &["paths"];
}
