//! The trust map's messages of the adapter protocol: the `open` setup fields of `trust`
//! and the requests of the trust-map steps.

use serde::Serialize;
use serde_json::Value;

use super::model::{Action, SettingsDir};
use crate::controls::setup::Wire;
use crate::vocab::YesNo;

crate::wire_as_is!(YesNo);

/// A settings-named directory as sent: its name with placeholders applied.
impl Wire for SettingsDir {
    fn wire(&self, sub: &dyn Fn(&str) -> String) -> Value {
        serde_json::to_value(SettingsDir {
            name: sub(&self.name),
            ..self.clone()
        })
        .unwrap_or(Value::Null)
    }
}

/// The trust-map requests.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// The map's answer for a path.
    Query {
        /// Session.
        session: String,
        /// The path.
        path: String,
    },
    /// A gesture of the person.
    Gesture {
        /// Session.
        session: String,
        /// The gesture's protocol name.
        name: String,
        /// The path given.
        path: String,
        /// The answer to a question it puts.
        answer: YesNo,
    },
    /// The rules and the open roots.
    Status {
        /// Session.
        session: String,
    },
    /// Close the session and resume it from its own record.
    Resume {
        /// Session.
        session: String,
    },
    /// `/clear`.
    Clear {
        /// Session.
        session: String,
        /// The answer to the startup question asked again.
        startup: YesNo,
    },
    /// A new turn begins.
    Turn {
        /// Session.
        session: String,
    },
}

/// The request of one step.
pub fn request(action: &Action, session: String, sub: &dyn Fn(&str) -> String) -> Request {
    match action {
        Action::Query(path) => Request::Query {
            session,
            path: sub(path),
        },
        Action::Gesture { name, path, answer } => Request::Gesture {
            session,
            name: name.clone(),
            path: sub(path),
            answer: *answer,
        },
        Action::Status => Request::Status { session },
        Action::Resume => Request::Resume { session },
        Action::Clear(r) => Request::Clear {
            session,
            startup: *r,
        },
        Action::Turn => Request::Turn { session },
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
