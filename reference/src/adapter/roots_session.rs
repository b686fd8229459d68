//! The file-tool and trust-map half of an adapter session (capabilities `paths` and
//! `trust`): the session's [`Roots`] and [`TrustMap`], kept in step, built from the 1.1
//! setup fields at `open`, and the steps that act on them (`read`, `write`, `edit`,
//! `list`, `search` in [`super::files`]; `query`, `gesture`, `status`, `resume`, `clear`,
//! `turn` and the session start in [`super::trust`]).
//!
//! Touches the filesystem only through [`Roots`] (and, for settings-named directories,
//! through the trust map's resolution of the names).

use super::wire::WireError;
use crate::paths::{Backend, Roots};
use crate::trust::{Trust, TrustKey, TrustMap};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::PathBuf;

/// The setup fields of `paths` and `trust` this module reads (PROTO-SETUP-1).
pub const SETUP_FIELDS: &[&str] = &[
    "roots",
    "resolver",
    "startup",
    "skip_permissions",
    "settings_dirs",
];

/// The ops of `paths` and `trust`.
pub const OPS: &[&str] = &[
    "read", "write", "edit", "list", "search", "query", "gesture", "status", "resume", "clear",
    "turn",
];

/// What the person answers to a question: `yes`, `no` or `leave`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// Yes.
    Yes,
    /// No (also what a step that names no answer gets).
    #[default]
    No,
    /// Leave (Ctrl-C): the turn, or the session start, ends.
    Leave,
}

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

/// What stays the same for the life of the session, across `resume` and `clear`: the
/// command line and the host, not the record.
#[derive(Debug, Clone)]
pub struct Config {
    /// The backend asked for.
    pub backend: Backend,
    /// No way to put a question (`asker` = `none`).
    pub no_asker: bool,
    /// Started with `--dangerously-skip-permissions`.
    pub skip_permissions: bool,
    /// The person's home directory (for `~/` in settings names).
    pub home: Option<PathBuf>,
}

/// The file tools' and the trust map's state of one session.
#[derive(Debug)]
pub struct FileSession {
    pub(crate) roots: Roots,
    pub(crate) map: TrustMap,
    pub(crate) config: Config,
    /// `false` after a `leave` at a session-start question: no step but `close`.
    pub(crate) started: bool,
}

pub(crate) fn field<T: DeserializeOwned>(
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

/// The resolver's protocol name.
pub fn backend_name(b: Backend) -> &'static str {
    match b {
        Backend::Openat2 => "openat2",
        Backend::Walk => "walk",
    }
}

/// A key as the protocol spells it: components joined by `/`, an absolute key with a
/// leading `/`, the working directory's key empty.
pub fn spell_key(key: &TrustKey) -> String {
    let joined = key
        .segments
        .iter()
        .map(|s| s.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    match key.ns {
        crate::trust::Namespace::Relative => joined,
        crate::trust::Namespace::Absolute => format!("/{joined}"),
    }
}

/// A JSON object from `json!({...})`.
pub(crate) fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

impl FileSession {
    /// Starts the session an `open` describes: opens the working directory with the
    /// resolver asked for, opens the command-line roots (reach only), then puts the
    /// startup question and the settings-named directories as a session start does
    /// (PROTO-SETUP-2). Returns the session and the fields of the `open` answer.
    pub fn open(
        setup: &Map<String, Value>,
    ) -> Result<(FileSession, Map<String, Value>), WireError> {
        let workspace: PathBuf = field(setup, "workspace")?
            .ok_or_else(|| WireError::error("setup needs a \"workspace\""))?;
        let home: Option<PathBuf> = field(setup, "home")?;
        let asker: Option<String> = field(setup, "asker")?;
        let roots: Vec<PathBuf> = field(setup, "roots")?.unwrap_or_default();
        let resolver: Option<String> = field(setup, "resolver")?;
        let startup: Answer = field(setup, "startup")?.unwrap_or(Answer::Yes);
        let skip_permissions: bool = field(setup, "skip_permissions")?.unwrap_or(false);
        let settings: Vec<super::trust::SettingsDir> =
            field(setup, "settings_dirs")?.unwrap_or_default();

        let backend = match resolver.as_deref() {
            None => Backend::detect(),
            Some("openat2") => Backend::Openat2,
            Some("walk") => Backend::Walk,
            Some(other) => {
                return Err(WireError::unsupported(format!(
                    "setup field \"resolver\": unknown resolver {other:?}"
                )))
            }
        };
        if backend.effective() != backend {
            return Err(WireError::unsupported(
                "setup field \"resolver\": openat2 is not available on this kernel",
            ));
        }
        let config = Config {
            backend,
            no_asker: asker.as_deref() == Some("none"),
            skip_permissions,
            home,
        };
        let opened = Roots::open_with(&workspace, backend).map_err(|e| {
            WireError::error(format!(
                "cannot open the workspace {}: {e}",
                workspace.display()
            ))
        })?;
        let map = TrustMap::new(opened.workdir().path());
        let mut session = FileSession {
            roots: opened,
            map,
            config,
            started: true,
        };
        for root in &roots {
            if !root.is_absolute() {
                return Err(WireError::unsupported(format!(
                    "setup field \"roots\": {} is not absolute",
                    root.display()
                )));
            }
            session.cli_add_dir(root).map_err(|code| {
                WireError::error(format!(
                    "--add-dir {}: cannot be opened ({code})",
                    root.display()
                ))
            })?;
        }
        let mut answer = session.start(startup, &settings);
        answer.insert(
            "resolver".into(),
            Value::from(backend_name(session.roots.backend())),
        );
        Ok((session, answer))
    }

    /// Answers one step. After `started: false` every step is an error.
    pub fn step(&mut self, step: Step) -> Result<Map<String, Value>, WireError> {
        if !self.started {
            return Err(WireError::error(
                "the session did not start (leave at a session-start question): only close",
            ));
        }
        Ok(match step {
            Step::Read { path, if_asked, .. } => self.read(&path, if_asked),
            Step::Write {
                path,
                content,
                data,
                if_asked,
                ..
            } => self.write(&path, content.as_bytes(), data.into(), if_asked),
            Step::Edit {
                path,
                old,
                new,
                data,
                if_asked,
                ..
            } => self.edit(&path, old.as_bytes(), new.as_bytes(), data.into(), if_asked),
            Step::List { path, .. } => self.list(&path),
            Step::Search { path, pattern, .. } => self.search(&path, pattern.as_bytes()),
            Step::Query { path, .. } => self.query(&path),
            Step::Gesture { name, path, .. } => self.gesture(&name, &path)?,
            Step::Status { .. } => self.status(),
            Step::Resume { .. } => return self.resume(),
            Step::Clear { startup, .. } => self.clear(startup),
            Step::Turn { .. } => {
                self.map.new_turn();
                Map::new()
            }
        })
    }

    /// Whether the session started (false after a `leave` at a start question).
    pub fn started(&self) -> bool {
        self.started
    }
}

impl super::wire::Body {
    /// This answer with `fields` added beside its own (the `open` answer carries the
    /// fields of every capability: `started` and `settings` from here, `posture` from
    /// the fence).
    pub fn with(self, fields: Map<String, Value>) -> super::wire::Body {
        if fields.is_empty() {
            return self;
        }
        let mut all = match serde_json::to_value(&self) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        all.extend(fields);
        super::wire::Body::Fields(all)
    }
}
