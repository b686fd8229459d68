//! The gate's messages of the adapter protocol: the `open` setup fields every session
//! carries and the requests of the gate's steps, each string passed through the session's
//! placeholder substitution.

use serde::Serialize;
use serde_json::Value;

use super::model::{Action, Asker, Grant, Host};
use crate::controls::setup::Wire;

crate::wire_as_is!(Host, Asker);

/// A saved grant as sent: its key with placeholders applied.
impl Wire for Grant {
    fn wire(&self, sub: &dyn Fn(&str) -> String) -> Value {
        serde_json::to_value(Grant {
            key: sub(&self.key),
            ..self.clone()
        })
        .unwrap_or(Value::Null)
    }
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

impl crate::controls::ToRequest for Action {
    fn request(
        &self,
        session: &str,
        _: &crate::controls::Setup,
        sub: &dyn Fn(&str) -> String,
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        Some(crate::protocol::to_object(&request(
            self,
            session.to_string(),
            sub,
        )))
    }
}
