//! The trust map's part of a scenario file (`trust`): the setup fields (the startup
//! answer, `--dangerously-skip-permissions`, settings-named directories), the steps
//! `query`, `gesture`, `status`, `resume`, `clear`, `turn` and their `expect` keys.

use serde::de::{Error as _, MapAccess};
use serde::{Deserialize, Serialize};

use crate::vocab::{OrNull, YesNo};

/// One directory named by a settings layer, and what the person answers if asked.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SettingsDir {
    /// `user`, `project` or `local`.
    pub layer: SettingsLayer,
    /// The name as the settings file wrote it.
    pub name: String,
    /// The answer if this name is asked about.
    pub answer: YesNo,
}

/// A settings layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SettingsLayer {
    /// The person's own settings.
    User,
    /// The project's checked-in settings.
    Project,
    /// The project's local settings.
    Local,
}

crate::setup! {
    /// The answer to the startup question (default `yes`).
    startup: YesNo = YesNo::Yes,
    /// Started with `--dangerously-skip-permissions`.
    skip_permissions: bool = false,
    /// Directories named by settings layers, with the answers.
    settings_dirs: Vec<SettingsDir> = Vec::new(),
}

/// The gestures a `gesture` step may make (the others come through setup or `read`).
pub const STEP_GESTURES: &[&str] = &[
    "at_path",
    "file_flag",
    "drop",
    "add_dir",
    "cli_add_dir",
    "cd",
    "untrust",
];

/// `gesture = { name, path, answer }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GestureSpec {
    /// One of [`STEP_GESTURES`].
    pub name: String,
    /// The path the person gave.
    pub path: String,
    /// What the person answers if the gesture puts a question (default `yes`).
    pub answer: Option<YesNo>,
}

/// The action keys this control owns.
pub const ACTION_KEYS: &[&str] = &["query", "gesture", "status", "resume", "clear", "turn"];

/// One trust-map step.
#[derive(Debug, Clone)]
pub enum Action {
    /// `query`.
    Query(String),
    /// `gesture`.
    Gesture {
        /// Its protocol name.
        name: String,
        /// The path.
        path: String,
        /// The answer to a question it puts.
        answer: YesNo,
    },
    /// `status = true`.
    Status,
    /// `resume = true`.
    Resume,
    /// `clear = ANSWER`.
    Clear(YesNo),
    /// `turn = true`.
    Turn,
}

/// Reads the value of action `key` (one of [`ACTION_KEYS`]); the second part holds the
/// problems serde cannot see (`status = false`, an unknown gesture).
pub fn parse<'de, A: MapAccess<'de>>(
    key: &str,
    map: &mut A,
) -> Result<(Action, crate::controls::Problems), A::Error> {
    let mut problems = Vec::new();
    fn flag<'de, A: MapAccess<'de>>(
        key: &str,
        map: &mut A,
        problems: &mut Vec<String>,
        action: Action,
    ) -> Result<Action, A::Error> {
        if !map.next_value::<bool>()? {
            problems.push(format!("`{key}` must be `true`"));
        }
        Ok(action)
    }
    let action = match key {
        "query" => Action::Query(map.next_value()?),
        "gesture" => {
            let g: GestureSpec = map.next_value()?;
            if !STEP_GESTURES.contains(&g.name.as_str()) {
                problems.push(format!(
                    "unknown gesture `{}`, expected one of {STEP_GESTURES:?} (startup, skip_permissions and settings_dir are setup fields; read_prompt is `read.if_asked`)",
                    g.name
                ));
            }
            Action::Gesture {
                name: g.name,
                path: g.path,
                answer: g.answer.unwrap_or(YesNo::Yes),
            }
        }
        "status" => flag(key, map, &mut problems, Action::Status)?,
        "resume" => flag(key, map, &mut problems, Action::Resume)?,
        "clear" => Action::Clear(map.next_value()?),
        "turn" => flag(key, map, &mut problems, Action::Turn)?,
        _ => return Err(A::Error::custom(format!("`{key}` is not a trust step"))),
    };
    Ok((action, problems))
}

impl Action {
    /// A short label for messages: `query "x"`.
    pub fn label(&self) -> String {
        match self {
            Action::Query(p) => format!("query {p:?}"),
            Action::Gesture { name, path, .. } => format!("gesture {name} {path:?}"),
            Action::Status => "status".to_string(),
            Action::Resume => "resume".to_string(),
            Action::Clear(r) => format!("clear {:?}", crate::vocab::word(r)),
            Action::Turn => "turn".to_string(),
        }
    }

    /// The `expect` keys that apply.
    pub fn expect_keys(&self) -> &'static [&'static str] {
        match self {
            Action::Query(_) => &["trust", "namespace", "key", "rule", "refused"],
            Action::Gesture { .. } => &["result"],
            Action::Status => &["rules", "roots"],
            Action::Resume => &["roots", "unreopened"],
            Action::Clear(_) => &["started"],
            Action::Turn => &[],
        }
    }
}

/// The trust map's `expect` keys.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// `gesture`: `done` or a refusal code.
    pub result: Option<String>,
    /// `query`: `trusted`, `untrusted` or `unknown`.
    pub trust: Option<String>,
    /// `query`: `relative` or `absolute`.
    pub namespace: Option<String>,
    /// `query`: the key.
    pub key: Option<String>,
    /// `query`: the deciding rule's key (or `false`: none).
    pub rule: Option<OrNull<String>>,
    /// `query`: the refusal code (or `false`: null).
    pub refused: Option<OrNull<String>>,
    /// `status`: every rule, as a set.
    pub rules: Option<Vec<ExpectRule>>,
    /// `status`, `resume`: every open root, as a set.
    pub roots: Option<Vec<ExpectRoot>>,
    /// `resume`: the roots it could not reopen, as a set.
    pub unreopened: Option<Vec<ExpectUnreopened>>,
    /// `clear`: whether a session is running.
    pub started: Option<bool>,
}

/// Every `expect` key of this control.
pub const EXPECT_KEYS: &[&str] = &[
    "result",
    "trust",
    "namespace",
    "key",
    "rule",
    "refused",
    "rules",
    "roots",
    "unreopened",
    "started",
];

/// One rule of a `status` answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectRule {
    /// `relative` or `absolute`.
    pub namespace: String,
    /// The key (`""` is the working directory).
    pub key: String,
    /// `trusted` or `untrusted`.
    pub trust: String,
    /// The gesture (or `write`, `redirect`) that wrote it; unchecked when absent.
    pub origin: Option<String>,
}

/// One open root of a `status` or `resume` answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectRoot {
    /// The canonical path.
    pub path: String,
    /// How it was opened.
    pub how: String,
}

/// A root `resume` could not reopen.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectUnreopened {
    /// Its path.
    pub path: String,
    /// The path refusal code.
    pub code: String,
}

/// One settings-named directory as the `open` answer reports it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectSetting {
    /// The name as written.
    pub name: String,
    /// `asked`, `reported` or `merged`.
    pub result: String,
    /// The resolved path shown in the question; unchecked when absent.
    pub resolved: Option<String>,
    /// The code of a `reported` name (or `false`: null); unchecked when absent.
    pub code: Option<OrNull<String>>,
}

impl crate::controls::ControlAction for Action {
    crate::forward_action!();
    fn capability(&self) -> Option<&'static str> {
        Some("trust")
    }
}

/// The trust map.
pub struct Trust;

impl crate::controls::Control for Trust {
    type Action = Action;
    type Setup = SetupPatch;
    const CAPABILITIES: &'static [&'static str] = &["trust"];
}
