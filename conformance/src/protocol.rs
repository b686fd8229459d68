//! The adapter protocol's messages (`spec/adapter-protocol.md`), the runner's own copy:
//! requests it sends and the answers it reads. Answers to steps are kept as JSON objects
//! so that a wrong shape is judged as a mismatch, never a parse failure.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::scenario::{
    Asker, DataTrust, FencePolicy, Grant, GrantTool, Host, Limits, OnOff, Resolver, SettingsDir,
    YesNo,
};

/// The protocol version this runner speaks.
pub const PROTOCOL_VERSION: &str = "1.1";

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
    /// `paths`: read one file.
    Read {
        /// Session.
        session: String,
        /// The path as the tool is given it.
        path: String,
        /// The answer if a quarantined-read prompt is offered.
        if_asked: YesNo,
    },
    /// `paths`: create or replace one file.
    Write {
        /// Session.
        session: String,
        /// The path.
        path: String,
        /// The new contents.
        content: String,
        /// The data's trust.
        data: DataTrust,
        /// The answer if the write prompts.
        if_asked: YesNo,
    },
    /// `paths`: replace the one occurrence of `old` by `new`.
    Edit {
        /// Session.
        session: String,
        /// The path.
        path: String,
        /// The text replaced.
        old: String,
        /// The replacement.
        new: String,
        /// The data's trust.
        data: DataTrust,
        /// The answer if the edit prompts.
        if_asked: YesNo,
    },
    /// `paths`: list one directory.
    List {
        /// Session.
        session: String,
        /// The path.
        path: String,
    },
    /// `paths`: search beneath a path for a literal pattern.
    Search {
        /// Session.
        session: String,
        /// Where it starts.
        path: String,
        /// The literal pattern.
        pattern: String,
    },
    /// `trust`: the map's answer for a path.
    Query {
        /// Session.
        session: String,
        /// The path.
        path: String,
    },
    /// `trust`: a gesture of the person.
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
    /// `trust`: the rules and the open roots.
    Status {
        /// Session.
        session: String,
    },
    /// `trust`: close the session and resume it from its own record.
    Resume {
        /// Session.
        session: String,
    },
    /// `trust`: `/clear`.
    Clear {
        /// Session.
        session: String,
        /// The answer to the startup question asked again.
        startup: YesNo,
    },
    /// `trust`: a new turn begins.
    Turn {
        /// Session.
        session: String,
    },
    /// `fence`: run one command in the plane as an approved call.
    Run {
        /// Session.
        session: String,
        /// `shell` or `execute_code`.
        tool: GrantTool,
        /// The command line or code.
        input: String,
        /// The working directory, or `null` for the workspace.
        cwd: Option<String>,
    },
    /// `fence`: the session's posture.
    Posture {
        /// Session.
        session: String,
    },
    /// `fence`: the session's runtime toggle.
    Toggle {
        /// Session.
        session: String,
        /// `on` or `off`.
        to: OnOff,
        /// Whether the person confirmed.
        confirmed: bool,
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
            RequestBody::Read { .. } => "read",
            RequestBody::Write { .. } => "write",
            RequestBody::Edit { .. } => "edit",
            RequestBody::List { .. } => "list",
            RequestBody::Search { .. } => "search",
            RequestBody::Query { .. } => "query",
            RequestBody::Gesture { .. } => "gesture",
            RequestBody::Status { .. } => "status",
            RequestBody::Resume { .. } => "resume",
            RequestBody::Clear { .. } => "clear",
            RequestBody::Turn { .. } => "turn",
            RequestBody::Run { .. } => "run",
            RequestBody::Posture { .. } => "posture",
            RequestBody::Toggle { .. } => "toggle",
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
    /// `paths` and `trust`: the 1.1 fields of those capabilities, sent when the scenario
    /// needs one of them.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub files: Option<FileSetup>,
    /// `trust`: sent when the scenario needs `trust`.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub trust: Option<TrustSetup>,
    /// `fence`: sent when the scenario needs `fence`.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub fence: Option<FenceSetup>,
}

/// Setup fields of capability `paths`.
#[derive(Debug, Clone, Serialize)]
pub struct FileSetup {
    /// Directories opened beside the workspace as `--add-dir` would (reach only).
    pub roots: Vec<String>,
    /// `openat2`, `walk`, or `null` for the implementation's default.
    pub resolver: Option<Resolver>,
}

/// Setup fields of capability `trust`.
#[derive(Debug, Clone, Serialize)]
pub struct TrustSetup {
    /// The answer to the startup question.
    pub startup: YesNo,
    /// Started with `--dangerously-skip-permissions`.
    pub skip_permissions: bool,
    /// Directories named by settings layers, each with the answer if asked.
    pub settings_dirs: Vec<SettingsDir>,
}

/// Setup fields of capability `fence`.
#[derive(Debug, Clone, Serialize)]
pub struct FenceSetup {
    /// `required`, `degraded` or `off`.
    pub fence_policy: FencePolicy,
    /// Every workspace root; the first is `workspace`.
    pub workspaces: Vec<String>,
    /// The directory for the session's log, outside the workspace.
    pub log_dir: String,
    /// Run as if the kernel offered less, or `null`.
    pub limits: Option<Limits>,
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
    fn the_1_1_requests_and_setup_serialize_as_documented() {
        let run = Request {
            id: 4,
            body: RequestBody::Run {
                session: "s1".into(),
                tool: GrantTool::Shell,
                input: "truncate -s0 /r/outside/v".into(),
                cwd: None,
            },
        };
        assert_eq!(
            serde_json::to_value(&run).unwrap(),
            json!({"id": 4, "op": "run", "session": "s1", "tool": "shell",
                   "input": "truncate -s0 /r/outside/v", "cwd": null})
        );
        let write = RequestBody::Write {
            session: "s1".into(),
            path: "docs/page.html".into(),
            content: "<p>".into(),
            data: DataTrust::Untrusted,
            if_asked: YesNo::No,
        };
        assert_eq!(
            serde_json::to_value(&write).unwrap(),
            json!({"op": "write", "session": "s1", "path": "docs/page.html", "content": "<p>",
                   "data": "untrusted", "if_asked": "no"})
        );
        let setup = WireSetup {
            workspace: "/r/workspace".into(),
            home: "/r/home".into(),
            host: Host::Posix,
            asker: Asker::Terminal,
            allow_list: vec![],
            grants: vec![],
            card_window_ms: None,
            files: None,
            trust: Some(TrustSetup {
                startup: YesNo::Yes,
                skip_permissions: false,
                settings_dirs: vec![],
            }),
            fence: Some(FenceSetup {
                fence_policy: FencePolicy::Degraded,
                workspaces: vec!["/r/workspace".into()],
                log_dir: "/r/log".into(),
                limits: Some(Limits {
                    userns: false,
                    landlock_abi: Some(2),
                }),
            }),
        };
        assert_eq!(
            serde_json::to_value(&setup).unwrap(),
            json!({"workspace": "/r/workspace", "home": "/r/home", "host": "posix",
                   "asker": "terminal", "allow_list": [], "grants": [], "card_window_ms": null,
                   "startup": "yes", "skip_permissions": false, "settings_dirs": [],
                   "fence_policy": "degraded", "workspaces": ["/r/workspace"],
                   "log_dir": "/r/log", "limits": {"userns": false, "landlock_abi": 2}})
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
