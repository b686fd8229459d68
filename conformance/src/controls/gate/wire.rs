//! The gate's messages of the adapter protocol: the `open` setup fields every session
//! carries and the requests of the gate's steps, each string passed through the session's
//! placeholder substitution.

use serde::Serialize;
use serde_json::{Map, Value};

use super::model::{Action, Asker, Grant, Host, Setup};
use crate::protocol::to_object;

/// The gate's fields of the `open` setup (always sent).
#[derive(Debug, Clone, Serialize)]
pub struct WireSetup {
    /// Host kind.
    pub host: Host,
    /// Asker.
    pub asker: Asker,
    /// Allow-list.
    pub allow_list: Vec<String>,
    /// Saved grants.
    pub grants: Vec<Grant>,
    /// Card window override.
    pub card_window_ms: Option<u64>,
}

/// The gate's requests.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Puts one tool call.
    Decide {
        /// Session.
        session: String,
        /// Tool name.
        tool: String,
        /// Its input.
        input: String,
    },
    /// What the person did with the last card.
    Answer {
        /// Session.
        session: String,
        /// `once`, `refuse`, `exact`, `family` or `silence`.
        choice: String,
    },
    /// Lists the grant table.
    Grants {
        /// Session.
        session: String,
    },
    /// Takes grants back.
    Revoke {
        /// Session.
        session: String,
        /// Key or 1-based number.
        target: String,
    },
    /// The session's audit trail.
    Audit {
        /// Session.
        session: String,
    },
}

/// The setup fields.
pub fn setup(s: &Setup, sub: &dyn Fn(&str) -> String) -> Map<String, Value> {
    to_object(&WireSetup {
        host: s.host,
        asker: s.asker,
        allow_list: s.allow_list.iter().map(|a| sub(a)).collect(),
        grants: s
            .grants
            .iter()
            .map(|g| Grant {
                key: sub(&g.key),
                ..g.clone()
            })
            .collect(),
        card_window_ms: s.card_window_ms,
    })
}

/// The request of one step.
pub fn request(action: &Action, session: String, sub: &dyn Fn(&str) -> String) -> Request {
    match action {
        Action::Call { tool, input, .. } => Request::Decide {
            session,
            tool: sub(tool),
            input: sub(input),
        },
        Action::Answer(c) => Request::Answer {
            session,
            choice: c.as_str().to_string(),
        },
        Action::Grants => Request::Grants { session },
        Action::Revoke(t) => Request::Revoke {
            session,
            target: sub(t),
        },
        Action::Audit => Request::Audit { session },
    }
}
