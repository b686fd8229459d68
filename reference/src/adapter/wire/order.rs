//! The JSON shapes of capabilities `permissions` and `hooks` (and the records they
//! keep): their requests as they arrive. Their answers are the library's rulings and
//! outcomes as objects.
//!
//! Pure data and serde: touches nothing.

use serde::Deserialize;
use serde_json::{Map, Value};

/// The ops of `permissions` and `hooks`.
pub const OPS: &[&str] = &["call", "calls", "act", "rule", "load", "crash_at"];

/// One request of `permissions` or `hooks`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum OrderRequest {
    /// One tool call through the whole order.
    Call {
        /// The session's name.
        session: String,
        /// The tool.
        tool: String,
        /// A string or an object of arguments.
        input: Value,
        /// The call's id.
        #[serde(default)]
        call_id: Option<String>,
    },
    /// With `fence`: one call through the whole order and, when allowed, run in the
    /// session's fence, its response through the response hooks.
    Act {
        /// The session's name.
        session: String,
        /// `shell` or `execute_code`.
        tool: String,
        /// A string or an object of arguments.
        input: Value,
        /// The call's id.
        #[serde(default)]
        call_id: Option<String>,
        /// The person's answer to a redirection's trust prompt (`no` when absent).
        #[serde(default)]
        if_asked: gatehouse::workspace::Answer,
    },
    /// Several calls decided at once.
    Calls {
        /// The session's name.
        session: String,
        /// The calls.
        calls: Vec<CallSpec>,
    },
    /// `permissions`: a pattern added in the session.
    Rule {
        /// The session's name.
        session: String,
        /// `allow`, `ask` or `deny`.
        list: String,
        /// The pattern.
        pattern: String,
    },
    /// `permissions`: whether the files an `open` would read load.
    Load {
        /// The request's fields.
        #[serde(flatten)]
        fields: Map<String, Value>,
    },
    /// Records: arms a crash point.
    CrashAt {
        /// The session's name.
        session: String,
        /// The point.
        point: String,
    },
}

/// One call of a `call` or `calls` step.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallSpec {
    /// The tool.
    pub tool: String,
    /// Its input: a string (the line of `shell`, the code of `execute_code`, the input of
    /// a card-only tool) or an object of arguments.
    pub input: Value,
    /// The call's id.
    #[serde(default)]
    pub call_id: Option<String>,
}
