//! A session's plane, as an embedding agent uses it: its fence and pool ([`Broker`]), its
//! private scratch directory and its runtime toggle (FENCE-TOGGLE-*), behind blocking calls.
//!
//! The session owns every decision the protocol's `run`, `posture` and `toggle` steps
//! report: a fence that cannot be built is a posture that refuses, not an error
//! (FENCE-RUN-2); switching off needs the person's confirmation (FENCE-TOGGLE-4); switching
//! on runs a fresh probe, and a probe that fails leaves the session refusing, never
//! unfenced (FENCE-TOGGLE-5); a backend lost at spawn is never replaced by running outside
//! it (FENCE-PROBE-3). Nothing is persisted: the toggle is this session's only.
//!
//! Touches: a private scratch directory per session (removed at close), the session's log
//! directory, and whatever the jailed commands touch inside the fence.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde::Deserialize;

use super::broker::{Broker, PlaneConfig, PlaneError, RunRequest, CONFIRM_OFF};
use super::choices::{apply_env, resolve_paths, ChoiceError, ExtraPaths};
use crate::choices::{Flags, Layer, NetworkMode};
use crate::fence::guarded::Guarded;
use crate::fence::{
    BackendChoice, BackendKind, Fence, FenceError, FenceOptions, Policy, Posture, PostureChoices,
};

/// The deadline of one run, below the conformance runner's default step timeout (10 s),
/// so that a command that hangs is killed and reported rather than taking the caller down.
/// The operator's `run_timeout` (`GATEHOUSE_RUN_TIMEOUT`) replaces it.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(8);

/// What happens where a protection is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FencePolicy {
    /// Refuse where a required protection is missing (the default).
    #[default]
    Required,
    /// The explicit opt-in: run degraded, the posture naming what is not covered.
    Degraded,
    /// The fence switched off by configuration.
    Off,
}

/// Run as if the kernel offered less.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// `false`: as if user namespaces were unavailable.
    #[serde(default = "yes")]
    pub userns: bool,
    /// Landlock capped at this ABI (`0`: no Landlock).
    #[serde(default)]
    pub landlock_abi: Option<u8>,
}

fn yes() -> bool {
    true
}

/// What a session's plane is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSetup {
    /// The policy.
    pub policy: FencePolicy,
    /// Every workspace root, the session's workspace first.
    pub workspaces: Vec<PathBuf>,
    /// The session-log directory.
    pub log_dir: Option<PathBuf>,
    /// The emulated kernel.
    pub limits: Option<Limits>,
    /// The person's home, read for the global git configuration (FENCE-PROTECT-7) and
    /// for the user's configuration file of section 15.
    pub home: Option<PathBuf>,
    /// The person's choices for working in the fence (section 15), `None`: none made.
    pub choices: Option<SessionChoices>,
    /// Paths the front end names that jailed code must never change, beyond what
    /// [`crate::fence::guarded::Guarded::from_env`] finds (the agent's files, the state
    /// directory): no writable root may hold one or lie within one (FENCE-PATHS-3).
    pub guarded: Vec<PathBuf>,
}

/// A session's choices (section 15): the flags' layer, and whether the configuration
/// files are read and the project's is trusted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionChoices {
    /// The choices given as flags, as sent (they win over the files); checked into a
    /// layer when the session opens, where a bad one is a refused choice.
    pub flags: Flags,
    /// Read the user's file (under `home`) and the project's (FENCE-CONF-1).
    pub config_files: bool,
    /// The person trusts the project, so its file is honoured (FENCE-CONF-3).
    pub trust_project: bool,
}

/// The choices made concrete for the session's fence.
#[derive(Debug, Clone, Default)]
struct Applied {
    paths: ExtraPaths,
    env: Vec<(String, String)>,
    posture: PostureChoices,
    /// The `host` network mode (FENCE-NET-8).
    host_network: bool,
    /// The `allow-list` network mode's list (FENCE-NET-2).
    allow: Option<crate::net::AllowList>,
}

impl SessionSetup {
    /// The defaults for a session in `workspace`.
    pub fn new(workspace: &Path) -> SessionSetup {
        SessionSetup {
            policy: FencePolicy::Required,
            workspaces: vec![workspace.to_path_buf()],
            log_dir: None,
            limits: None,
            home: None,
            choices: None,
            guarded: Vec::new(),
        }
    }

    /// The fence options this setup asks for, on top of the operator's (FENCE-RUN-3,
    /// FENCE-DEGRADE-4).
    pub fn options(&self, operator: &FenceOptions) -> FenceOptions {
        let mut o = FenceOptions {
            allow_degraded: self.policy == FencePolicy::Degraded,
            ..operator.clone()
        };
        if self.policy == FencePolicy::Off {
            o.backend = BackendChoice::Off;
        }
        if let Some(l) = self.limits {
            o.no_user_namespaces = !l.userns;
            o.max_landlock_abi = l.landlock_abi;
        }
        o
    }
}

/// Why nothing ran, or why a switch did not happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A required protection is missing and the policy refuses (FENCE-DEGRADE-*).
    DegradedRefused,
    /// No fence can hold the command here (FENCE-PROBE-3).
    FenceUnavailable,
    /// The executor died during the call (FENCE-PLANE-4).
    ExecutorCrashed,
    /// A choice of the session cannot be honoured without weakening the fence: a path
    /// that does not exist, a writable root holding a guarded path, a secret-looking name
    /// passed by `--pass-env` (FENCE-ENV-9, FENCE-PATHS-3, FENCE-PATHS-4, FENCE-CONF-1); nothing runs.
    ChoiceRefused,
    /// Switching off needs the person's confirmation (FENCE-TOGGLE-4).
    ConfirmationRequired,
}

impl Refusal {
    /// The protocol's code.
    pub fn code(self) -> &'static str {
        match self {
            Refusal::DegradedRefused => "degraded_refused",
            Refusal::FenceUnavailable => "fence_unavailable",
            Refusal::ExecutorCrashed => "executor_crashed",
            Refusal::ChoiceRefused => "choice_refused",
            Refusal::ConfirmationRequired => "confirmation_required",
        }
    }

    fn of(err: &PlaneError) -> Refusal {
        match err {
            PlaneError::Fence(FenceError::Refused { .. }) => Refusal::DegradedRefused,
            PlaneError::ExecutorCrashed { .. } => Refusal::ExecutorCrashed,
            _ => Refusal::FenceUnavailable,
        }
    }
}

/// The tools the plane runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunTool {
    /// A command line, run by `sh -c`.
    Shell,
    /// Python code, run by `python3 -c`.
    ExecuteCode,
}

impl RunTool {
    /// The tool named by its protocol name, if the plane runs it.
    pub fn from_name(name: &str) -> Option<RunTool> {
        match name {
            "shell" => Some(RunTool::Shell),
            "execute_code" => Some(RunTool::ExecuteCode),
            _ => None,
        }
    }

    fn argv(self, input: &str) -> Vec<String> {
        match self {
            RunTool::Shell => vec!["sh".into(), "-c".into(), input.into()],
            RunTool::ExecuteCode => vec!["python3".into(), "-c".into(), input.into()],
        }
    }
}

/// Which way the toggle goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    /// Back on, through a fresh probe.
    On,
    /// Off, with the person's confirmation.
    Off,
}

/// What one run came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAnswer {
    /// The exit status, `None` when killed by a signal or refused.
    pub exit: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// Its standard output (lossy UTF-8).
    pub stdout: String,
    /// Its standard error (lossy UTF-8), or why it was refused.
    pub stderr: String,
    /// The refusal, or `None` when it ran.
    pub refused: Option<Refusal>,
    /// The posture in force; [`Posture::held_by`] names what held it.
    pub posture: Posture,
}

/// What a toggle came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToggleAnswer {
    /// `Some(ConfirmationRequired)` when nothing switched.
    pub refused: Option<Refusal>,
    /// The posture now in force.
    pub posture: Posture,
}

/// A failure that is not an answer: the setup cannot be honoured, or the plane broke.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The setup's session-log directory lies inside a writable root: the setup names
    /// something the plane cannot take.
    #[error(
        "setup field \"log_dir\": {}: the session-log directory lies inside the writable root {}",
        log.display(),
        root.display()
    )]
    LogDirInWritableRoot {
        /// The session-log directory.
        log: PathBuf,
        /// The writable root holding it.
        root: PathBuf,
    },
    /// The plane's runtime could not be started.
    #[error("cannot start the plane's runtime")]
    Runtime,
    /// The session's private scratch directory could not be made.
    #[error("cannot create the scratch directory: {0}")]
    Scratch(std::io::Error),
    /// The fence's policy could not be prepared.
    #[error(transparent)]
    Fence(FenceError),
    /// The plane failed (an invalid request, a switch that did not happen).
    #[error(transparent)]
    Plane(#[from] PlaneError),
}

impl SessionError {
    /// Whether the setup, not the host or the plane, is at fault (the protocol answers it
    /// `unsupported`, naming the field).
    pub fn is_setup(&self) -> bool {
        matches!(self, SessionError::LogDirInWritableRoot { .. })
    }
}

/// Where the session's plane stands.
enum State {
    /// A broker runs the session's commands.
    Up(Broker),
    /// No broker: every run is refused for this reason, and the posture says why.
    Refusing {
        refusal: Refusal,
        /// Boxed: a posture is far larger than a broker handle.
        posture: Box<Posture>,
    },
}

/// One session's plane, its setup and its private scratch directory.
pub struct Session {
    name: String,
    setup: SessionSetup,
    operator: FenceOptions,
    scratch: PathBuf,
    applied: Applied,
    state: State,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("name", &self.name)
            .field("setup", &self.setup)
            .field("scratch", &self.scratch)
            .field("posture", &self.posture())
            .finish()
    }
}

fn runtime() -> Result<&'static tokio::runtime::Runtime, SessionError> {
    static RT: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("gatehouse-plane")
            .enable_all()
            .build()
            .ok()
    })
    .as_ref()
    .ok_or(SessionError::Runtime)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn unavailable(reason: impl Into<String>) -> State {
    State::Refusing {
        refusal: Refusal::FenceUnavailable,
        posture: Box::new(Posture::unfenced(BackendKind::None, reason)),
    }
}

impl Session {
    /// Builds the session's plane from its setup, on top of the operator's options: the
    /// policy (workspaces, a fresh scratch directory, the log directory) and the options
    /// (fence policy, emulated limits). A fence that cannot be built is a posture, not an
    /// error: the session opens and its runs are refused.
    pub fn open(
        name: &str,
        setup: SessionSetup,
        operator: FenceOptions,
    ) -> Result<Session, SessionError> {
        // What sessions of killed processes left (a crash point, `SIGKILL`) goes first: a
        // session's open is rare enough to pay for one listing of the temp dir; a command's
        // run is not.
        let temp = std::env::temp_dir();
        crate::fence::probe::sweep_stale(&temp, crate::fence::probe::STALE_AFTER);
        let scratch = crate::fence::probe::tempdir().map_err(SessionError::Scratch)?;
        let mut session = Session {
            name: name.to_string(),
            setup,
            operator,
            scratch,
            applied: Applied::default(),
            state: unavailable("not started"),
        };
        let choices = match session.check_workspaces() {
            Ok(()) => session.apply_choices()?,
            Err(reason) => Err(reason),
        };
        match choices {
            Ok(applied) => session.applied = applied,
            Err(reason) => {
                session.state = State::Refusing {
                    refusal: Refusal::ChoiceRefused,
                    posture: Box::new(Posture::unfenced(BackendKind::None, reason.to_string())),
                };
                return Ok(session);
            }
        }
        let options = session.setup.options(&session.operator);
        session.state = session.start(options)?;
        Ok(session)
    }

    /// What jailed code must never change wherever it lies (FENCE-PATHS-3): the homes (the
    /// setup's and this process's `HOME`), the configuration, state and session-log
    /// directories where `XDG_*` put them, the setup's log directory and the files the
    /// front end names besides (the agent's files, the state directory).
    fn guarded(&self) -> Guarded {
        let homes: Vec<PathBuf> = self.setup.home.iter().cloned().collect();
        let mut g = Guarded::from_env(&homes);
        if let Some(dir) = self.setup.log_dir.clone().or_else(super::log::default_dir) {
            g.tree(&dir, "the session logs");
        }
        for p in &self.setup.guarded {
            g.tree(p, "a file or directory the session's setup names");
        }
        g
    }

    /// Every workspace root checked against [`Session::guarded`]; the refusal's one line.
    fn check_workspaces(&self) -> Result<(), ChoiceError> {
        let g = self.guarded();
        for w in &self.setup.workspaces {
            g.check(w, &format!("workspace {}", w.display()))?;
        }
        Ok(())
    }

    /// The session's choices merged with the files they name and checked: `Ok(Err)` is a
    /// choice refused with its one line (nothing will run), `Err` one the plane cannot
    /// take at all.
    fn apply_choices(&self) -> Result<Result<Applied, ChoiceError>, SessionError> {
        let Some(c) = &self.setup.choices else {
            return Ok(Ok(Applied::default()));
        };
        let workspace = self.setup.workspaces.first().cloned().unwrap_or_default();
        let user_file = crate::choices::user_file(None, self.setup.home.as_deref());
        let inputs = crate::choices::Inputs {
            user_file: user_file.clone(),
            project: &workspace,
            home: self.setup.home.as_deref(),
            trust_project: c.trust_project,
            no_files: !c.config_files,
        };
        let flags = match Layer::from_flags(&c.flags) {
            Ok(l) => l,
            Err(e) => return Ok(Err(e.into())),
        };
        let settings = match crate::choices::load(&inputs, &flags) {
            Ok(s) => s,
            Err(e) => return Ok(Err(e.into())),
        };
        let allow = match settings.network.value {
            NetworkMode::Off | NetworkMode::Host => None,
            NetworkMode::AllowList | NetworkMode::Registries => {
                // `registries` allows the package registries too (FENCE-TOOL-4).
                let registries = (settings.network.value == NetworkMode::Registries)
                    .then_some(super::toolchains::REGISTRY_DOMAINS.iter().map(|(d, _)| *d))
                    .into_iter()
                    .flatten();
                let domains = settings
                    .allow_domains
                    .iter()
                    .map(|d| d.value.as_str())
                    .chain(registries);
                match crate::net::AllowList::parse(domains) {
                    Ok(a) => Some(a),
                    Err(e) => return Ok(Err(e.into())),
                }
            }
        };
        let mut guarded = self.guarded();
        for (file, _) in &settings.files {
            if !self.setup.workspaces.iter().any(|w| file.starts_with(w)) {
                guarded.tree(file, "a configuration file read for this session");
            }
        }
        if let Some(f) = &user_file {
            guarded.tree(f, "the user's configuration");
        }
        let paths = match resolve_paths(&settings, &guarded) {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
        let parent: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        let (env, passed_secrets) = match apply_env(Vec::new(), &parent, &settings) {
            Ok(e) => e,
            Err(e) => return Ok(Err(e)),
        };
        let posture = PostureChoices {
            network: settings.network.value.to_string(),
            allowed_domains: allow
                .as_ref()
                .map(|a| a.entries().iter().map(|e| e.to_string()).collect())
                .unwrap_or_default(),
            passed_secrets,
            read_only: paths.read_only.clone(),
            writable: paths.writable.clone(),
            hidden: paths.hidden.clone(),
        };
        Ok(Ok(Applied {
            paths,
            env,
            posture,
            host_network: settings.network.value == NetworkMode::Host,
            allow,
        }))
    }

    /// The setup the session was opened with.
    pub fn setup(&self) -> &SessionSetup {
        &self.setup
    }

    fn policy(&self) -> Policy {
        let mut roots = self.setup.workspaces.clone();
        roots.extend(self.applied.paths.writable.iter().cloned());
        let mut policy = Policy::new(roots, self.scratch.clone());
        policy.log_dir = self.setup.log_dir.clone();
        policy.home = self.setup.home.clone();
        policy.read_only = self.applied.paths.read_only.clone();
        policy.hidden = self.applied.paths.hidden.clone();
        policy.host_network = self.applied.host_network;
        policy
    }

    fn start(&self, options: FenceOptions) -> Result<State, SessionError> {
        // A policy the fence cannot take is the setup's problem, not a posture.
        let policy = match self.policy().resolve() {
            Ok(p) => p,
            Err(FenceError::LogDirInWritableRoot { log, root }) => {
                return Err(SessionError::LogDirInWritableRoot { log, root })
            }
            Err(e) => return Err(SessionError::Fence(e)),
        };
        let mut config = PlaneConfig::new(policy.clone(), options.clone(), self.name.clone());
        config.pool_size = 1;
        config.default_timeout = self.operator.run_timeout.unwrap_or(RUN_TIMEOUT);
        config.extra_env = self.applied.env.clone();
        config.choices = self.applied.posture.clone();
        config.allow = self.applied.allow.clone();
        match runtime()?.block_on(Broker::start(config)) {
            Ok(broker) => Ok(State::Up(broker)),
            Err(PlaneError::Fence(refusal @ FenceError::Refused { .. })) => {
                // The fence that would hold, had the opt-in been given: its posture says
                // what is missing; nothing runs in it.
                let degraded = FenceOptions {
                    allow_degraded: true,
                    ..options
                };
                let posture = match Fence::prepare(policy, &degraded) {
                    Ok(f) => {
                        let mut p = f.posture().clone();
                        p.reason = Some(refusal.to_string());
                        p.degraded = true;
                        p
                    }
                    Err(e) => Posture::unfenced(BackendKind::None, e.to_string()),
                };
                Ok(State::Refusing {
                    refusal: Refusal::DegradedRefused,
                    posture: Box::new(posture),
                })
            }
            Err(e) => Ok(unavailable(e.to_string())),
        }
    }

    /// The session's posture.
    pub fn posture(&self) -> Posture {
        match &self.state {
            State::Up(b) => b.posture(),
            State::Refusing { posture, .. } => (**posture).clone(),
        }
    }

    /// Runs one approved call of `tool` through the plane (FENCE-RUN-1); `cwd` is absolute,
    /// or relative to the first workspace, `None` the workspace itself. A refusal is an
    /// answer (FENCE-RUN-2).
    pub fn run(
        &mut self,
        tool: RunTool,
        input: &str,
        cwd: Option<&str>,
    ) -> Result<RunAnswer, SessionError> {
        self.run_with(tool, input, cwd, false)
    }

    /// [`Session::run`], on a terminal of the jail's own when `terminal` (FENCE-TTY-6): its
    /// standard output is then what the terminal showed.
    pub fn run_with(
        &mut self,
        tool: RunTool,
        input: &str,
        cwd: Option<&str>,
        terminal: bool,
    ) -> Result<RunAnswer, SessionError> {
        let workspace = self.setup.workspaces.first().cloned().unwrap_or_default();
        let cwd = match cwd {
            None => workspace,
            Some(c) if Path::new(c).is_absolute() => PathBuf::from(c),
            Some(c) => workspace.join(c),
        };
        let broker = match &self.state {
            State::Up(b) => b.clone(),
            State::Refusing { refusal, posture } => {
                return Ok(RunAnswer {
                    exit: None,
                    signal: None,
                    stdout: String::new(),
                    stderr: String::new(),
                    refused: Some(*refusal),
                    posture: (**posture).clone(),
                })
            }
        };
        let request = RunRequest {
            argv: tool.argv(input),
            cwd: Some(cwd),
            stdin: None,
            timeout: Some(self.operator.run_timeout.unwrap_or(RUN_TIMEOUT)),
            terminal,
        };
        let rt = runtime()?;
        match rt.block_on(broker.run(request)) {
            Ok(out) => Ok(RunAnswer {
                exit: out.exit.code,
                signal: out.exit.signal,
                stdout: lossy(&out.stdout),
                stderr: lossy(&out.stderr),
                refused: None,
                posture: out.posture,
            }),
            Err(e @ PlaneError::Request(_)) => Err(SessionError::Plane(e)),
            Err(e) => {
                let refusal = Refusal::of(&e);
                let posture = if refusal == Refusal::FenceUnavailable {
                    // The backend is gone or refused at spawn: never run outside it
                    // (FENCE-PROBE-3); the session stays refusing.
                    rt.block_on(broker.shutdown());
                    self.state = unavailable(e.to_string());
                    self.posture()
                } else {
                    broker.posture()
                };
                Ok(RunAnswer {
                    exit: None,
                    signal: None,
                    stdout: String::new(),
                    stderr: e.to_string(),
                    refused: Some(refusal),
                    posture,
                })
            }
        }
    }

    /// The session's runtime toggle: off only with the confirmation (FENCE-TOGGLE-4), on
    /// through a fresh probe (FENCE-TOGGLE-5); never persisted, this session only.
    pub fn toggle(&mut self, to: Switch, confirmed: bool) -> Result<ToggleAnswer, SessionError> {
        let rt = runtime()?;
        if let State::Refusing {
            refusal: Refusal::ChoiceRefused,
            ..
        } = &self.state
        {
            // A refused choice is never dropped by switching: nothing runs in this session.
            return Ok(ToggleAnswer {
                refused: Some(Refusal::ChoiceRefused),
                posture: self.posture(),
            });
        }
        match to {
            Switch::Off if !confirmed => {
                return Ok(ToggleAnswer {
                    refused: Some(Refusal::ConfirmationRequired),
                    posture: self.posture(),
                })
            }
            Switch::Off => match &self.state {
                State::Up(b) => {
                    let b = b.clone();
                    rt.block_on(b.switch_off(CONFIRM_OFF))?;
                }
                State::Refusing { .. } => {
                    let options = FenceOptions {
                        backend: BackendChoice::Off,
                        ..self.setup.options(&self.operator)
                    };
                    self.state = self.start(options)?;
                }
            },
            Switch::On => {
                let result = match &self.state {
                    State::Up(b) => {
                        let b = b.clone();
                        rt.block_on(b.switch_on()).map(|_| ()).map_err(|e| (b, e))
                    }
                    State::Refusing { .. } => {
                        let mut options = self.setup.options(&self.operator);
                        if options.backend == BackendChoice::Off {
                            options.backend = BackendChoice::Auto;
                        }
                        self.state = self.start(options)?;
                        Ok(())
                    }
                };
                if let Err((broker, e)) = result {
                    // The probe failed: the session does not stay unfenced silently, its
                    // posture turns to what refuses (FENCE-TOGGLE-5).
                    rt.block_on(broker.shutdown());
                    self.state = State::Refusing {
                        refusal: Refusal::of(&e),
                        posture: Box::new(Posture::unfenced(BackendKind::None, e.to_string())),
                    };
                }
            }
        }
        Ok(ToggleAnswer {
            refused: None,
            posture: self.posture(),
        })
    }

    /// Ends the session: its executors stop, its scratch directory is removed
    /// (FENCE-JAIL-4).
    pub fn close(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let state = std::mem::replace(&mut self.state, unavailable("session closed"));
        if let State::Up(broker) = state {
            if let Ok(rt) = runtime() {
                rt.block_on(broker.shutdown());
            }
        }
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setups_become_options() {
        let mut s = SessionSetup::new(Path::new("/w"));
        s.policy = FencePolicy::Degraded;
        s.limits = Some(Limits {
            userns: false,
            landlock_abi: Some(2),
        });
        let o = s.options(&FenceOptions::default());
        assert!(o.allow_degraded && o.no_user_namespaces);
        assert_eq!(o.max_landlock_abi, Some(2));
        s.policy = FencePolicy::Off;
        assert_eq!(
            s.options(&FenceOptions::default()).backend,
            BackendChoice::Off
        );
    }

    #[test]
    fn only_shell_and_code_run() {
        assert_eq!(RunTool::from_name("shell"), Some(RunTool::Shell));
        assert_eq!(
            RunTool::from_name("execute_code"),
            Some(RunTool::ExecuteCode)
        );
        assert_eq!(RunTool::from_name("read"), None);
        assert_eq!(RunTool::Shell.argv("ls")[..2], ["sh", "-c"]);
    }
}
