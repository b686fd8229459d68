//! The control of capabilities `paths` and `trust`: reads their setup fields into a
//! [`workspace::Session`](gatehouse::workspace::Session), and each of their ops into one
//! call of it; the outcome goes back as the answer's fields. Decides nothing.
//!
//! Touches nothing itself: the workspace session does.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

use super::control::{Control, Sessions};
use super::wire::files::{parse, Step, OPS};
use super::wire::{field, Body, WireError};
use gatehouse::paths::Backend;
use gatehouse::workspace::{Config, Gesture, Session, SettingsDir, Start, WorkspaceError};

/// The setup fields of `paths` and `trust` this module reads (PROTO-SETUP-1).
pub const SETUP_FIELDS: &[&str] = &[
    "roots",
    "resolver",
    "startup",
    "skip_permissions",
    "settings_dirs",
];

/// The resolver's protocol name.
pub fn backend_name(b: Backend) -> &'static str {
    match b {
        Backend::Openat2 => "openat2",
        Backend::Walk => "walk",
    }
}

fn wire_error(e: WorkspaceError) -> WireError {
    match e {
        WorkspaceError::Unsupported(m) => WireError::unsupported(m),
        WorkspaceError::Failed(m) => WireError::error(m),
    }
}

/// A library outcome as the answer's fields.
fn fields(outcome: impl Serialize) -> Map<String, Value> {
    match serde_json::to_value(outcome) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// Opens the workspace session an `open` describes. Returns the session and the fields
/// of the `open` answer (`started`, `settings`, `resolver`).
pub fn open(setup: &Map<String, Value>) -> Result<(Session, Map<String, Value>), WireError> {
    let workspace: PathBuf = field(setup, "workspace")?
        .ok_or_else(|| WireError::error("setup needs a \"workspace\""))?;
    let home: Option<PathBuf> = field(setup, "home")?;
    let asker: Option<String> = field(setup, "asker")?;
    let resolver: Option<String> = field(setup, "resolver")?;
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
    let config = Config {
        backend,
        no_asker: asker.as_deref() == Some("none"),
        skip_permissions: field(setup, "skip_permissions")?.unwrap_or(false),
        home,
    };
    let start = Start {
        roots: field(setup, "roots")?.unwrap_or_default(),
        startup: field(setup, "startup")?,
        settings_dirs: field::<Vec<SettingsDir>>(setup, "settings_dirs")?.unwrap_or_default(),
    };
    let (session, started) = Session::open(&workspace, config, &start).map_err(wire_error)?;
    let mut answer = fields(started);
    answer.insert(
        "resolver".into(),
        Value::from(backend_name(session.backend())),
    );
    Ok((session, answer))
}

/// Answers one step. After `started: false` every step is an error.
pub fn step(session: &mut Session, step: Step) -> Result<Map<String, Value>, WireError> {
    if !session.started() {
        return Err(WireError::error(
            "the session did not start (leave at a session-start question): only close",
        ));
    }
    Ok(match step {
        Step::Read { path, if_asked, .. } => fields(session.read(&path, if_asked)),
        Step::Write {
            path,
            content,
            data,
            if_asked,
            ..
        } => fields(session.write(&path, content.as_bytes(), data.into(), if_asked)),
        Step::Edit {
            path,
            old,
            new,
            data,
            if_asked,
            ..
        } => fields(session.edit(&path, old.as_bytes(), new.as_bytes(), data.into(), if_asked)),
        Step::List { path, .. } => fields(session.list(&path)),
        Step::Search { path, pattern, .. } => fields(session.search(&path, pattern.as_bytes())),
        Step::Query { path, .. } => fields(session.query(&path)),
        Step::Gesture { name, path, .. } => {
            let gesture = Gesture::from_name(&name)
                .ok_or_else(|| WireError::unsupported(format!("unknown gesture {name:?}")))?;
            fields(session.gesture(gesture, &path))
        }
        Step::Status { .. } => fields(session.status()),
        Step::Resume { .. } => fields(session.resume().map_err(wire_error)?),
        Step::Clear { startup, .. } => fields(session.clear(startup)),
        Step::Turn { .. } => {
            session.new_turn();
            Map::new()
        }
    })
}

/// The control of `paths` and `trust`.
pub struct Files;

impl Control for Files {
    const CAPABILITIES: &'static [&'static str] = &["paths", "trust"];
    const OPS: &'static [&'static str] = OPS;
    const SETUP_FIELDS: &'static [&'static str] = SETUP_FIELDS;
    type Request = Step;

    fn parse(_op: &str, request: &Value) -> Result<Step, WireError> {
        parse(request)
    }

    fn answer(request: Step, sessions: &mut dyn Sessions) -> Result<Body, WireError> {
        let name = request.session().to_string();
        let answer = sessions
            .opened(&name)?
            .with_files(|files| step(files, request))
            .map_err(|e| WireError::error(e.to_string()))?
            .ok_or_else(|| WireError::error(format!("session {name:?} has no files")))?;
        Ok(Body::Fields(answer?))
    }
}
