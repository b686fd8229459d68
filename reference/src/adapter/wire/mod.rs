//! The JSON shapes of the adapter protocol, at the bottom of the adapter: requests as they
//! arrive, answers as they leave, the error every failure is translated into, and the one
//! reader of setup fields ([`field`]). The requests here are the server's own (`hello`,
//! `open`, `close`, `bye`); [`gate`], [`order`], [`files`] and [`fence`] hold the shapes
//! of those controls' requests and answers.
//!
//! Pure data and serde: touches nothing.

pub mod fence;
pub mod files;
pub mod gate;
pub mod order;

use gatehouse::gate::{AnswerOutcome, Grant};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What `hello` says about the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Environment {
    /// The operating system (`linux`, `macos`, ...).
    pub os: &'static str,
    /// The CPU architecture (`x86_64`, `aarch64`, ...).
    pub arch: &'static str,
    /// The kernel release, when it can be read.
    pub kernel: Option<String>,
    /// The Landlock ABI in force, when the implementation declares `fence`.
    pub landlock_abi: Option<u32>,
    /// The fence backend in force, when the implementation declares `fence`.
    pub fence_backend: Option<String>,
    /// The plane's posture at start, when the implementation declares `fence`
    /// (PROTO-HELLO-4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub posture: Option<fence::WirePosture>,
}

/// One setup field of an `open` request, read as `T`; absent and `null` are `None`, a
/// value that does not read is `unsupported` (PROTO-SESSION-2).
pub fn field<T: DeserializeOwned>(
    setup: &Map<String, Value>,
    name: &str,
) -> Result<Option<T>, WireError> {
    match setup.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => T::deserialize(v)
            .map(Some)
            .map_err(|e| WireError::unsupported(format!("setup field {name:?}: {e}"))),
    }
}

/// The ops the server answers itself; every other op is a control's.
pub const SERVER_OPS: &[&str] = &["hello", "open", "close", "bye"];

/// One request, after its `op` has been recognised.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// The handshake.
    Hello {
        /// The runner's protocol version.
        #[serde(default)]
        protocol: Option<String>,
    },
    /// Opens a fresh session from a setup.
    Open {
        /// The session's name.
        session: String,
        /// The setup, checked field by field (PROTO-SESSION-2).
        setup: Map<String, Value>,
    },
    /// Ends a session.
    Close {
        /// The session's name.
        session: String,
    },
    /// Ends the conversation.
    Bye,
    /// Any other op: a control's, read by the control that answers it.
    #[serde(skip)]
    Op {
        /// The op.
        op: String,
        /// The whole request.
        request: Value,
    },
}

/// The kind of a failed step (PROTO-ERR-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The implementation does not have what the step needs.
    Unsupported,
    /// The implementation failed.
    Error,
    /// The implementation refused what the request describes, as it is meant to (an agent
    /// file that does not load, a state directory inside a workspace, a corrupt record).
    Refused,
}

/// A failed step, as it crosses the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{kind:?}: {message}")]
pub struct WireError {
    /// Unsupported or error.
    pub kind: ErrorKind,
    /// What a person reading the report should know.
    pub message: String,
}

impl WireError {
    /// An `unsupported` error.
    pub fn unsupported(message: impl Into<String>) -> Self {
        WireError {
            kind: ErrorKind::Unsupported,
            message: message.into(),
        }
    }

    /// An `error` error.
    pub fn error(message: impl Into<String>) -> Self {
        WireError {
            kind: ErrorKind::Error,
            message: message.into(),
        }
    }

    /// A `refused` error.
    pub fn refused(message: impl Into<String>) -> Self {
        WireError {
            kind: ErrorKind::Refused,
            message: message.into(),
        }
    }
}

/// The body of a successful answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Body {
    /// `hello`.
    Hello {
        /// The protocol version spoken.
        protocol: &'static str,
        /// The implementation's name.
        name: &'static str,
        /// The implementation's version.
        version: &'static str,
        /// The capabilities implemented.
        capabilities: Vec<&'static str>,
        /// The host.
        environment: Environment,
    },
    /// `open`, `close`, `bye`: nothing more than `ok`.
    Done {},
    /// `paths` and `trust` steps, and the fields of `open`: the library's outcome as an
    /// object.
    Fields(Map<String, Value>),
    /// `decide`, `call`: the ruling's fields.
    Decision(Map<String, Value>),
    /// `answer`.
    Answer {
        /// What came of it.
        outcome: AnswerOutcome,
        /// The grant written, or `null`.
        saved: Option<Grant>,
    },
    /// `grants`.
    Grants {
        /// The table, in order.
        grants: Vec<Grant>,
    },
    /// `revoke`.
    Revoked {
        /// What was taken back.
        revoked: Vec<Grant>,
    },
    /// `audit`.
    Audit {
        /// One record per call, in order.
        records: Vec<Value>,
    },
    /// `run`.
    Run(fence::WireRun),
    /// `toggle`.
    Toggle(fence::WireToggle),
    /// `posture`, and `open` when the session has a fence.
    Posture {
        /// The session's posture.
        posture: fence::WirePosture,
    },
}

impl Body {
    /// This answer with `fields` added beside its own (the `open` answer carries the
    /// fields of every capability: `started` and `settings` from the workspace session,
    /// `posture` from the fence).
    pub fn with(self, fields: Map<String, Value>) -> Body {
        if fields.is_empty() {
            return self;
        }
        let mut all = match serde_json::to_value(&self) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        all.extend(fields);
        Body::Fields(all)
    }
}

/// One answer line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reply {
    /// The request's id, or `null` when it could not be read.
    pub id: Option<i64>,
    /// Whether the step succeeded.
    pub ok: bool,
    /// The answer's fields, on success.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub body: Option<Body>,
    /// The error, on failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<WireError>,
}

impl Reply {
    /// A successful answer.
    pub fn ok(id: Option<i64>, body: Body) -> Self {
        Reply {
            id,
            ok: true,
            body: Some(body),
            error: None,
        }
    }

    /// A failed answer.
    pub fn failed(id: Option<i64>, error: WireError) -> Self {
        Reply {
            id,
            ok: false,
            body: None,
            error: Some(error),
        }
    }

    /// The answer as one JSON line, without its newline.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(
                r#"{{"id":null,"ok":false,"error":{{"kind":"error","message":{}}}}}"#,
                Value::String(format!("cannot encode the answer: {e}"))
            )
        })
    }
}

/// Reads one request line: its `id` (when it can be read) and the request, or the error
/// to answer it with. An op this version does not know is `unsupported`; anything else
/// that cannot be read is an `error`.
pub fn parse_request(line: &str) -> (Option<i64>, Result<Request, WireError>) {
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return (None, Err(WireError::error(format!("not JSON: {e}")))),
    };
    let Value::Object(object) = &value else {
        return (
            None,
            Err(WireError::error("a request must be a JSON object")),
        );
    };
    let id = object.get("id").and_then(Value::as_i64);
    if id.is_none() {
        return (
            None,
            Err(WireError::error("a request needs an integer \"id\"")),
        );
    }
    let op = match object.get("op") {
        Some(Value::String(op)) => op.as_str(),
        _ => return (id, Err(WireError::error("a request needs a string \"op\""))),
    };
    if !SERVER_OPS.contains(&op) {
        let op = op.to_string();
        return (id, Ok(Request::Op { op, request: value }));
    }
    let request = Request::deserialize(&value)
        .map_err(|e| WireError::error(format!("bad {op:?} request: {e}")));
    (id, request)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_requests() {
        let (id, r) = parse_request(r#"{"id": 2, "op": "close", "session": "s1"}"#);
        assert_eq!(id, Some(2));
        assert_eq!(
            r.unwrap(),
            Request::Close {
                session: "s1".into()
            }
        );
        let (_, r) = parse_request(r#"{"id": 9, "op": "bye"}"#);
        assert_eq!(r.unwrap(), Request::Bye);
        let line = r#"{"id": 3, "op": "answer", "session": "s1", "choice": "family"}"#;
        let (_, r) = parse_request(line);
        assert_eq!(
            r.unwrap(),
            Request::Op {
                op: "answer".into(),
                request: serde_json::from_str(line).unwrap()
            },
            "a control's op is left to the control"
        );
    }

    #[test]
    fn unreadable_requests() {
        assert_eq!(parse_request("nope").0, None);
        assert_eq!(parse_request("[1]").0, None);
        assert_eq!(parse_request(r#"{"op":"bye"}"#).0, None);
        let (id, r) = parse_request(r#"{"id": 4, "op": 7}"#);
        assert_eq!(id, Some(4));
        assert_eq!(r.unwrap_err().kind, ErrorKind::Error);
        let (id, r) = parse_request(r#"{"id": 5, "op": "open", "session": "s1"}"#);
        assert_eq!(id, Some(5));
        assert_eq!(r.unwrap_err().kind, ErrorKind::Error);
    }

    #[test]
    fn replies_are_one_line() {
        let line = Reply::ok(Some(9), Body::Done {}).to_line();
        assert_eq!(line, r#"{"id":9,"ok":true}"#);
        let line = Reply::failed(None, WireError::error("x")).to_line();
        assert_eq!(
            line,
            r#"{"id":null,"ok":false,"error":{"kind":"error","message":"x"}}"#
        );
    }
}
