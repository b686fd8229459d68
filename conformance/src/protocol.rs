//! The adapter protocol's messages (`spec/adapter-protocol.md`), the runner's own copy:
//! requests it sends and the answers it reads. Answers to steps are kept as JSON objects
//! so that a wrong shape is judged as a mismatch, never a parse failure.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::scenario::{Asker, Grant, Host};

/// The protocol version this runner speaks.
pub const PROTOCOL_VERSION: &str = "1.0";

/// One request line: an id and the operation.
#[derive(Debug, Clone, Serialize)]
pub struct Request {
    /// Echoed by the answer.
    pub id: u64,
    /// The operation and its fields.
    #[serde(flatten)]
    pub body: RequestBody,
}

/// The operations.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum RequestBody {
    /// The start handshake.
    Hello {
        /// The runner's protocol version.
        protocol: String,
    },
    /// Opens a session.
    Open {
        /// Opaque session name (`s1`, `s2`, ...).
        session: String,
        /// The setup.
        setup: WireSetup,
    },
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
    pub fn op(&self) -> &'static str {
        match self {
            RequestBody::Hello { .. } => "hello",
            RequestBody::Open { .. } => "open",
            RequestBody::Decide { .. } => "decide",
            RequestBody::Answer { .. } => "answer",
            RequestBody::Grants { .. } => "grants",
            RequestBody::Revoke { .. } => "revoke",
            RequestBody::Audit { .. } => "audit",
            RequestBody::Close { .. } => "close",
            RequestBody::Bye => "bye",
        }
    }
}

/// The setup as sent in `open`.
#[derive(Debug, Clone, Serialize)]
pub struct WireSetup {
    /// Absolute workspace path.
    pub workspace: String,
    /// Absolute fake home path.
    pub home: String,
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
    fn requests_serialize_as_documented() {
        let r = Request {
            id: 2,
            body: RequestBody::Decide {
                session: "s1".into(),
                tool: "shell".into(),
                input: "ls /etc".into(),
            },
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"id": 2, "op": "decide", "session": "s1", "tool": "shell", "input": "ls /etc"})
        );
        let bye = Request {
            id: 9,
            body: RequestBody::Bye,
        };
        assert_eq!(
            serde_json::to_value(&bye).unwrap(),
            json!({"id": 9, "op": "bye"})
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
