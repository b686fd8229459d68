//! The adapter protocol's conversation (`spec/adapter-protocol.md`), the runner's own
//! copy: the request line, the session operations (`hello`, `open`, `close`, `bye`), the
//! `hello` answer and the classification of answers. Each control's step messages live in
//! its own `wire` module (`crate::controls`); `spec/protocol.schema.json` is the
//! machine-readable form both sides are tested against. Answers to steps are kept as JSON
//! objects so that a wrong shape is judged as a mismatch, never a parse failure.
//!
//! [`client`] holds the connection that carries the conversation.

pub mod client;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The protocol version this runner speaks.
pub const PROTOCOL_VERSION: &str = "1.6";

/// One request line: an id and the operation.
#[derive(Debug, Clone, Serialize)]
pub struct Request {
    /// Echoed by the answer.
    pub id: u64,
    /// The operation and its fields.
    #[serde(flatten)]
    pub body: RequestBody,
}

/// The operations: the conversation's own (`hello`, `open`, `close`, `bye`) typed here,
/// a control's step as the object its `wire` module built.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum RequestBody {
    /// `hello`, `open`, `close`, `bye`.
    Session(SessionOp),
    /// A step of a control: an object with `op`, `session` and the step's fields.
    Step(Map<String, Value>),
}

/// The operations of the conversation itself.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum SessionOp {
    /// The start handshake.
    Hello {
        /// The runner's protocol version.
        protocol: String,
    },
    /// Opens a session.
    Open {
        /// Opaque session name (`s1`, `s2`, ...).
        session: String,
        /// The setup: the session's directories and each control's fields.
        setup: Map<String, Value>,
    },
    /// Ends a session.
    Close {
        /// Session.
        session: String,
    },
    /// Ends the conversation.
    Bye,
}

impl RequestBody {
    /// The op name, for messages.
    pub fn op(&self) -> String {
        match self {
            RequestBody::Session(SessionOp::Hello { .. }) => "hello".into(),
            RequestBody::Session(SessionOp::Open { .. }) => "open".into(),
            RequestBody::Session(SessionOp::Close { .. }) => "close".into(),
            RequestBody::Session(SessionOp::Bye) => "bye".into(),
            RequestBody::Step(m) => m
                .get("op")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string(),
        }
    }
}

/// The directories of one session, as sent in `open`.
#[derive(Debug, Clone)]
pub struct SessionDirs {
    /// Absolute workspace path.
    pub workspace: String,
    /// Absolute fake home path.
    pub home: String,
    /// The directory for the session's log, outside the workspace.
    pub log_dir: String,
    /// Whether this is the sibling session (its own workspace only).
    pub sibling: bool,
}

/// A message as a JSON object (every message type here serializes to one).
pub fn to_object<T: Serialize>(message: &T) -> Map<String, Value> {
    match serde_json::to_value(message) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// The answer to `hello`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hello {
    /// Implementation name.
    pub name: String,
    /// Implementation version.
    pub version: String,
    /// The protocol version it speaks.
    pub protocol: String,
    /// Declared capabilities.
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// The environment it reports (os, arch, kernel, landlock_abi, fence_backend, ...).
    #[serde(default)]
    pub environment: Value,
}

impl Hello {
    /// The major part of the protocol version.
    pub fn major(&self) -> &str {
        self.protocol.split('.').next().unwrap_or("")
    }
}

/// `error` in a failed answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorBody {
    /// `unsupported` or `error`.
    pub kind: String,
    /// What went wrong.
    #[serde(default)]
    pub message: String,
}

/// A well-formed answer line, classified.
#[derive(Debug, Clone)]
pub enum Reply {
    /// `"ok": true`: the whole object.
    Ok(Map<String, Value>),
    /// `"ok": false` with `kind = "unsupported"`.
    Unsupported(String),
    /// `"ok": false` with any other kind (or no readable error).
    Error(String),
}

impl Reply {
    /// Classifies an answer object whose id has been checked.
    pub fn classify(object: Map<String, Value>) -> Reply {
        if object.get("ok") == Some(&Value::Bool(true)) {
            return Reply::Ok(object);
        }
        let body = object
            .get("error")
            .cloned()
            .map(serde_json::from_value::<ErrorBody>);
        match body {
            Some(Ok(e)) if e.kind == "unsupported" => Reply::Unsupported(e.message),
            Some(Ok(e)) => Reply::Error(format!("{}: {}", e.kind, e.message)),
            _ => Reply::Error(format!(
                "answer without \"ok\": true: {}",
                Value::Object(object)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn session_requests_serialize_as_documented() {
        let hello = Request {
            id: 0,
            body: RequestBody::Session(SessionOp::Hello {
                protocol: "1.1".into(),
            }),
        };
        assert_eq!(
            serde_json::to_value(&hello).unwrap(),
            json!({"id": 0, "op": "hello", "protocol": "1.1"})
        );
        let bye = Request {
            id: 9,
            body: RequestBody::Session(SessionOp::Bye),
        };
        assert_eq!(
            serde_json::to_value(&bye).unwrap(),
            json!({"id": 9, "op": "bye"})
        );
        let step = Request {
            id: 2,
            body: RequestBody::Step(to_object(
                &json!({"op": "decide", "session": "s1", "tool": "shell", "input": "ls"}),
            )),
        };
        assert_eq!(step.body.op(), "decide");
        assert_eq!(
            serde_json::to_value(&step).unwrap(),
            json!({"id": 2, "op": "decide", "session": "s1", "tool": "shell", "input": "ls"})
        );
    }

    #[test]
    fn replies_are_classified() {
        let obj = |v: Value| v.as_object().cloned().unwrap();
        assert!(matches!(
            Reply::classify(obj(json!({"id": 1, "ok": true}))),
            Reply::Ok(_)
        ));
        assert!(matches!(
            Reply::classify(obj(json!({"id": 1, "ok": false, "error": {"kind": "unsupported", "message": "m"}}))),
            Reply::Unsupported(m) if m == "m"
        ));
        assert!(matches!(
            Reply::classify(obj(json!({"id": 1, "ok": false, "error": {"kind": "error", "message": "boom"}}))),
            Reply::Error(m) if m == "error: boom"
        ));
    }
}
