//! The control of capabilities `paths` and `trust`: reads their setup fields into a
//! [`workspace::Session`](gatehouse::workspace::Session), and each of their ops into one
//! call of it; the outcome goes back as the answer's fields. Decides nothing.
//!
//! Touches nothing itself: the workspace session does.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::control::{Control, Opening, Sessions};
use super::wire::files::{parse, Step, OPS};
use super::wire::{Body, WireError};
use super::Setups;
use gatehouse::gate::Asker;
use gatehouse::paths::Backend;
use gatehouse::workspace::{Answer, Config, Gesture, Session, SettingsDir, Start, WorkspaceError};

super::control::setup! {
    /// The setup fields of `paths` and `trust` (PROTO-SETUP-1); the workspace, the home
    /// and the asker are the gate's.
    pub struct FilesSetup {
        /// More roots beside the workspace.
        roots: Vec<PathBuf>,
        /// The path resolver: `openat2` or `walk` (the host's best by default).
        resolver: String,
        /// The answer to the session-start question.
        startup: Answer,
        /// Skip the permission questions of the trust map.
        skip_permissions: bool,
        /// The directories the person's settings name.
        settings_dirs: Vec<SettingsDir>,
    }
}

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
pub fn open(setups: &Setups) -> Result<(Session, Map<String, Value>), WireError> {
    let workspace: PathBuf = setups
        .gate
        .workspace
        .clone()
        .ok_or_else(|| WireError::error("setup needs a \"workspace\""))?;
    let setup = &setups.files;
    let backend = match setup.resolver.as_deref() {
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
        no_asker: setups.gate.asker == Some(Asker::None),
        skip_permissions: setup.skip_permissions.unwrap_or(false),
        home: setups.gate.home.clone(),
    };
    let start = Start {
        roots: setup.roots.clone().unwrap_or_default(),
        startup: setup.startup,
        settings_dirs: setup.settings_dirs.clone().unwrap_or_default(),
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
    type Setup = FilesSetup;
    /// None of its own: the workspace session is attached to the order's guarded
    /// session, which keeps it in step with every tool call.
    type State = ();
    type Request = Step;

    /// Opens the workspace session and attaches it to the guarded session the order
    /// opened (which restores its records when the setup resumes); the answer gets its
    /// fields, and the guarded session's notices once it is attached.
    fn open(opening: &mut Opening<'_>) -> Result<(), WireError> {
        let (files, opened) = open(opening.setup)?;
        opening.answer.extend(opened);
        let guarded = opening
            .opened
            .order
            .as_mut()
            .ok_or_else(|| WireError::error("the guarded session did not open"))?
            .session();
        if let Some(restored) = guarded
            .attach_files(files)
            .map_err(|e| WireError::refused(e.to_string()))?
        {
            opening.answer.insert("started".into(), json!(true));
            opening
                .answer
                .insert("unreopened".into(), json!(restored.unreopened));
        }
        if !guarded.notices().is_empty() {
            opening
                .answer
                .insert("notices".into(), json!(guarded.notices()));
        }
        Ok(())
    }

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
