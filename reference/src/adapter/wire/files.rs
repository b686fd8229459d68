//! The JSON shapes of capabilities `paths` and `trust`: the steps as they arrive. Their
//! answers are the library's own outcomes ([`gatehouse::workspace`]), serialised as they are.
//!
//! Pure data and serde: touches nothing.

use serde::Deserialize;
use serde_json::Value;

use super::WireError;
use gatehouse::trust::Trust;
use gatehouse::workspace::Answer;

/// The ops of `paths` and `trust`.
pub const OPS: &[&str] = &[
    "read", "write", "edit", "list", "search", "query", "gesture", "status", "resume", "clear",
    "turn",
];

/// The trust of the data a `write` or `edit` carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataTrust {
    /// The turn observed nothing untrusted.
    Trusted,
    /// Anything else.
    Untrusted,
}

impl From<DataTrust> for Trust {
    fn from(d: DataTrust) -> Trust {
        match d {
            DataTrust::Trusted => Trust::Trusted,
            DataTrust::Untrusted => Trust::Untrusted,
        }
    }
}

/// One step of `paths` or `trust`, as it arrives.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Step {
    /// `read`: the contents of one file.
    Read {
        /// The session's name.
        session: String,
        /// The path as the model gave it.
        path: String,
        /// The answer to a quarantined-read prompt, if one is offered.
        #[serde(default)]
        if_asked: Answer,
    },
    /// `write`: create or replace one file.
    Write {
        /// The session's name.
        session: String,
        /// The path as the model gave it.
        path: String,
        /// The new contents.
        content: String,
        /// The data's trust.
        data: DataTrust,
        /// The answer to the write prompt, if one is offered.
        #[serde(default)]
        if_asked: Answer,
    },
    /// `edit`: replace the one occurrence of `old` by `new`.
    Edit {
        /// The session's name.
        session: String,
        /// The path as the model gave it.
        path: String,
        /// The text replaced.
        old: String,
        /// Its replacement.
        new: String,
        /// The turn's data trust.
        data: DataTrust,
        /// The answer to the write prompt, if one is offered.
        #[serde(default)]
        if_asked: Answer,
    },
    /// `list`: the entries of one directory.
    List {
        /// The session's name.
        session: String,
        /// The path as the model gave it.
        path: String,
    },
    /// `search`: a literal pattern beneath a path.
    Search {
        /// The session's name.
        session: String,
        /// Where it starts.
        path: String,
        /// The literal substring.
        pattern: String,
    },
    /// `query`: the map's answer for a path.
    Query {
        /// The session's name.
        session: String,
        /// The path.
        path: String,
    },
    /// `gesture`: one of the person's gestures.
    Gesture {
        /// The session's name.
        session: String,
        /// The gesture's protocol name.
        name: String,
        /// The path the person gave.
        path: String,
        /// The answer to a question the gesture puts (none of them puts one).
        #[serde(default)]
        answer: Answer,
    },
    /// `status`: every rule and every open root.
    Status {
        /// The session's name.
        session: String,
    },
    /// `resume`: close the session and start it again from its own record.
    Resume {
        /// The session's name.
        session: String,
    },
    /// `clear`: `/clear`, with the answer to the startup question put again.
    Clear {
        /// The session's name.
        session: String,
        /// The answer to the startup question.
        startup: Answer,
    },
    /// `turn`: a new turn begins.
    Turn {
        /// The session's name.
        session: String,
    },
}

impl Step {
    /// The session the step names.
    pub fn session(&self) -> &str {
        match self {
            Step::Read { session, .. }
            | Step::Write { session, .. }
            | Step::Edit { session, .. }
            | Step::List { session, .. }
            | Step::Search { session, .. }
            | Step::Query { session, .. }
            | Step::Gesture { session, .. }
            | Step::Status { session }
            | Step::Resume { session }
            | Step::Clear { session, .. }
            | Step::Turn { session } => session,
        }
    }
}

/// Reads a request whose op is one of [`OPS`].
pub fn parse(value: &Value) -> Result<Step, WireError> {
    let op = value.get("op").and_then(Value::as_str).unwrap_or("?");
    Step::deserialize(value).map_err(|e| WireError::error(format!("bad {op:?} request: {e}")))
}
