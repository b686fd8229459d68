//! A workspace session: the session's confinement ([`Roots`]) and its trust map
//! ([`TrustMap`]) kept in lock-step, and the file tools that go through both. This is what
//! an embedding agent opens to get the behaviour the suite certifies for capabilities
//! `paths` and `trust`; the protocol adapter only translates to and from it.
//!
//! - [`files`]: the five file tools, `read`, `write`, `edit`, `list`, `search`;
//! - [`trust`]: the session start (startup question, settings-named directories), the
//!   person's gestures, `query`, `status`, `resume` and `clear`;
//! - [`outcome`]: what each step comes to.
//!
//! Every gesture that opens or closes reach does both halves together: a root opened for
//! the map is closed again if the map refuses it, so reach and map never disagree.
//!
//! Touches the filesystem only through [`Roots`] (and, for settings-named directories,
//! through the trust map's resolution of the names).

pub mod files;
pub mod outcome;
pub mod trust;

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::paths::{Backend, Roots};
use crate::trust::TrustMap;

pub use outcome::*;
pub use trust::{Gesture, SettingsDir, SettingsLayer};

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

/// What stays the same for the life of the session, across `resume` and `clear`: the
/// command line and the host, not the record.
#[derive(Debug, Clone)]
pub struct Config {
    /// The resolver asked for.
    pub backend: Backend,
    /// No way to put a question (`asker` = `none`).
    pub no_asker: bool,
    /// Started with `--dangerously-skip-permissions`.
    pub skip_permissions: bool,
    /// The person's home directory (for `~/` in settings names).
    pub home: Option<PathBuf>,
}

/// Why a session did not open, or a step failed outright.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkspaceError {
    /// What the session was asked for cannot be had here (a resolver the kernel lacks).
    #[error("{0}")]
    Unsupported(String),
    /// It failed (a workspace that does not open, a record that does not read).
    #[error("{0}")]
    Failed(String),
}

/// The file tools' and the trust map's state of one session.
#[derive(Debug)]
pub struct Session {
    roots: Roots,
    map: TrustMap,
    config: Config,
    /// `false` after a `leave` at a session-start question: no step but `close`.
    started: bool,
}

/// How a session starts.
#[derive(Debug, Clone, Default)]
pub struct Start {
    /// Command-line `--add-dir` roots (absolute): reach only, no rule.
    pub roots: Vec<PathBuf>,
    /// The answer to the startup question.
    pub startup: Option<Answer>,
    /// The settings-named directories, in layer order.
    pub settings_dirs: Vec<SettingsDir>,
}

impl Session {
    /// Starts a session in `workspace`: opens it with the resolver of `config`, opens the
    /// command-line roots (reach only), then puts the startup question and the
    /// settings-named directories as a session start does (PROTO-SETUP-2). Returns the
    /// session and what the start came to.
    pub fn open(
        workspace: &Path,
        config: Config,
        start: &Start,
    ) -> Result<(Session, StartOutcome), WorkspaceError> {
        if config.backend.effective() != config.backend {
            return Err(WorkspaceError::Unsupported(
                "setup field \"resolver\": openat2 is not available on this kernel".into(),
            ));
        }
        let opened = Roots::open_with(workspace, config.backend).map_err(|e| {
            WorkspaceError::Failed(format!(
                "cannot open the workspace {}: {e}",
                workspace.display()
            ))
        })?;
        let map = TrustMap::new(opened.workdir().path());
        let mut session = Session {
            roots: opened,
            map,
            config,
            started: true,
        };
        for root in &start.roots {
            if !root.is_absolute() {
                return Err(WorkspaceError::Unsupported(format!(
                    "setup field \"roots\": {} is not absolute",
                    root.display()
                )));
            }
            session.cli_add_dir(root).map_err(|code| {
                WorkspaceError::Failed(format!(
                    "--add-dir {}: cannot be opened ({code})",
                    root.display()
                ))
            })?;
        }
        let outcome = session.start(start.startup.unwrap_or(Answer::Yes), &start.settings_dirs);
        Ok((session, outcome))
    }

    /// Whether the session started (false after a `leave` at a start question): after
    /// `false`, no step but closing it.
    pub fn started(&self) -> bool {
        self.started
    }

    /// The resolver in use.
    pub fn backend(&self) -> Backend {
        self.roots.backend()
    }

    /// The session's roots.
    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// The session's trust map.
    pub fn map(&self) -> &TrustMap {
        &self.map
    }

    /// A new turn begins: the once-per-turn memory starts afresh.
    pub fn new_turn(&mut self) {
        self.map.new_turn();
    }
}
