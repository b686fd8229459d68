//! The broker: owns the session's fence and a pool of executors (long-lived fenced
//! processes speaking the protocol), hands each request to an idle one (the warm path),
//! and survives their crashes: a crash is an event, logged, and the executor is replaced.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::{broadcast, Semaphore};

use super::env::jail_env;
use super::log::SessionLog;
use super::protocol::{ExecRequest, ExecutorMessage, ExitInfo};
use crate::fence::{BackendChoice, Fence, FenceError, FenceOptions, Policy, Posture};

/// The confirmation that switching a session's fence off requires, naming the consequence.
pub const CONFIRM_OFF: &str = "run tools UNFENCED";

/// How long an executor may take to announce itself.
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// Grace on top of a request's own deadline before the executor is declared dead.
const GRACE: Duration = Duration::from_secs(10);

/// The plane's configuration for one session.
#[derive(Debug, Clone)]
pub struct PlaneConfig {
    /// What the fence encloses.
    pub policy: Policy,
    /// Which backend, emulation, degraded opt-in.
    pub options: FenceOptions,
    /// Executors kept warm.
    pub pool_size: usize,
    /// Scrub the environment by allow-list (false: the plane-wide opt-out).
    pub env_scrubbing: bool,
    /// The environment to scrub (default: this process's).
    pub parent_env: Option<Vec<(OsString, OsString)>>,
    /// Session id (names the log file).
    pub session: String,
    /// Deadline for requests that give none.
    pub default_timeout: Duration,
    /// The person's variables, set on top of the scrubbed environment (section 15's
    /// `--pass-env`, `--pass-secret-env`, `--set-env`, already checked and resolved).
    pub extra_env: Vec<(String, String)>,
    /// The person's choices as the posture names them (FENCE-NET-1, FENCE-ENV-9,
    /// FENCE-PATHS-1).
    pub choices: crate::fence::PostureChoices,
    /// The `allow-list` network mode (FENCE-NET-2): each executor's jail hands out a
    /// listener on its own loopback, served by the proxy with this list; every decision
    /// goes to the session log (FENCE-NET-10).
    pub allow: Option<crate::net::AllowList>,
}

impl PlaneConfig {
    /// Defaults: two executors, scrubbing on, this process's environment, 10 minutes.
    pub fn new(policy: Policy, options: FenceOptions, session: impl Into<String>) -> PlaneConfig {
        PlaneConfig {
            policy,
            options,
            pool_size: 2,
            env_scrubbing: true,
            parent_env: None,
            session: session.into(),
            default_timeout: Duration::from_secs(600),
            extra_env: Vec::new(),
            choices: crate::fence::PostureChoices::default(),
            allow: None,
        }
    }
}

/// A command to run in the fence.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRequest {
    /// The command and its arguments.
    pub argv: Vec<String>,
    /// Working directory inside the fence.
    pub cwd: Option<PathBuf>,
    /// Bytes for its stdin.
    pub stdin: Option<Vec<u8>>,
    /// Deadline (default: the plane's).
    pub timeout: Option<Duration>,
    /// Run it on a terminal of its jail's own (FENCE-TTY-6): a one-shot checked jail
    /// whose terminal the broker relays, not a pooled executor.
    #[serde(default)]
    pub terminal: bool,
}

impl RunRequest {
    /// A request for `argv` with the defaults.
    pub fn new<S: Into<String>>(argv: impl IntoIterator<Item = S>) -> RunRequest {
        RunRequest {
            argv: argv.into_iter().map(Into::into).collect(),
            ..RunRequest::default()
        }
    }
}

/// What a run produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOutcome {
    /// How the command ended.
    pub exit: ExitInfo,
    /// Its standard output.
    pub stdout: Vec<u8>,
    /// Its standard error.
    pub stderr: Vec<u8>,
    /// Killed at the deadline.
    pub timed_out: bool,
    /// The posture that held it.
    pub posture: Posture,
    /// Which executor ran it.
    pub executor: u64,
    /// Whether that executor was already running (the warm path).
    pub warm: bool,
}

/// Something the plane reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum PlaneEvent {
    /// An executor is up.
    ExecutorStarted {
        /// Its id.
        executor: u64,
        /// Its host pid.
        pid: u32,
    },
    /// An executor died or stopped answering; its request failed.
    ExecutorCrashed {
        /// Its id.
        executor: u64,
        /// What was seen.
        detail: String,
    },
    /// A replacement took its place.
    ExecutorReplaced {
        /// The crashed executor.
        old: u64,
        /// The new one.
        new: u64,
    },
    /// The session's fence was switched (never persisted).
    FenceSwitched {
        /// The posture in force before the switch.
        before: String,
        /// The posture now in force.
        posture: String,
    },
}

/// Why a run failed (the command's own failure is an outcome, not an error).
#[derive(Debug, thiserror::Error)]
pub enum PlaneError {
    /// The fence could not be prepared or refused.
    #[error(transparent)]
    Fence(#[from] FenceError),
    /// The executor crashed while running the request (it has been replaced).
    #[error("executor {executor} crashed: {detail}")]
    ExecutorCrashed {
        /// Which.
        executor: u64,
        /// What was seen.
        detail: String,
    },
    /// An executor could not be started.
    #[error("cannot start an executor: {0}")]
    Spawn(String),
    /// The request was invalid.
    #[error("invalid request: {0}")]
    Request(String),
    /// Switching the fence off needs the exact confirmation.
    #[error("switching the fence off needs the confirmation \"{CONFIRM_OFF}\"")]
    Unconfirmed,
}

struct Executor {
    id: u64,
    generation: u64,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    pid: u32,
    /// The proxy serving this executor's jail (the `allow-list` mode); it stops with it.
    _proxy: Option<crate::net::Running>,
}

struct State {
    fence: Fence,
    posture: Posture,
    env: Vec<(String, String)>,
    generation: u64,
}

struct Inner {
    config: PlaneConfig,
    state: Mutex<State>,
    idle: Mutex<Vec<Executor>>,
    permits: Semaphore,
    events: broadcast::Sender<PlaneEvent>,
    history: Mutex<Vec<PlaneEvent>>,
    next_executor: AtomicU64,
    next_request: AtomicU64,
    log: Option<SessionLog>,
    log_dir: Option<PathBuf>,
    /// The mount points of missing protected paths, held while any executor may use them.
    mount_points: Mutex<Option<crate::fence::MountPoints>>,
}

/// The session's broker. Cheap to clone.
#[derive(Clone)]
pub struct Broker {
    inner: Arc<Inner>,
}

fn build_state(
    config: &PlaneConfig,
    options: &FenceOptions,
    log_dir: Option<&PathBuf>,
    generation: u64,
) -> Result<State, FenceError> {
    let fence = Fence::prepare(config.policy.clone(), options)?;
    let mut posture = fence.posture().clone();
    posture.env_scrubbing = config.env_scrubbing;
    posture.choices = config.choices.clone();
    let inside_root = log_dir
        .map(|d| {
            fence
                .policy()
                .writable_roots()
                .iter()
                .any(|r| d.starts_with(r))
        })
        .unwrap_or(false);
    posture.logs_writable_by_tools = !posture.is_fenced() || inside_root;
    let parent = config
        .parent_env
        .clone()
        .unwrap_or_else(|| std::env::vars_os().collect());
    // HOME and TMPDIR are the session's scratch home and scratch temporary directory on
    // every backend, a jail with a read-only `/tmp` included (FENCE-ENV-4, FENCE-JAIL-4).
    let mut env = jail_env(
        parent,
        &fence.policy().home(),
        Some(&fence.policy().tmpdir()),
        config.env_scrubbing,
    );
    for (k, v) in &config.extra_env {
        env.retain(|(n, _)| n != k);
        env.push((k.clone(), v.clone()));
    }
    if config.allow.is_some() {
        super::env::point_at_proxy(&mut env);
    }
    // Only the entries of PATH the jail can read, whoever set it (FENCE-ENV-12).
    if posture.is_fenced() {
        posture.path_dropped = super::env::fit_path(&mut env, fence.policy(), posture.backend);
    }
    Ok(State {
        fence,
        posture,
        env,
        generation,
    })
}

impl Broker {
    /// Prepare (and probe) the fence, open the session log, start the pool.
    pub async fn start(config: PlaneConfig) -> Result<Broker, PlaneError> {
        let log_dir = config
            .policy
            .log_dir
            .clone()
            .or_else(super::log::default_dir);
        let cfg = config.clone();
        let dir = log_dir.clone();
        let state =
            tokio::task::spawn_blocking(move || build_state(&cfg, &cfg.options, dir.as_ref(), 0))
                .await
                .map_err(|e| PlaneError::Spawn(e.to_string()))??;
        let log = log_dir
            .as_ref()
            .and_then(|d| SessionLog::open(d, &config.session).ok());
        let mount_points = crate::fence::MountPoints::claim(state.fence.policy()).map_err(|e| {
            PlaneError::Spawn(format!("the mount points of the protected paths: {e}"))
        })?;
        let (events, _) = broadcast::channel(256);
        let pool = config.pool_size.max(1);
        let broker = Broker {
            inner: Arc::new(Inner {
                permits: Semaphore::new(pool),
                config,
                state: Mutex::new(state),
                idle: Mutex::new(Vec::new()),
                events,
                history: Mutex::new(Vec::new()),
                next_executor: AtomicU64::new(1),
                next_request: AtomicU64::new(1),
                log,
                log_dir,
                mount_points: Mutex::new(Some(mount_points)),
            }),
        };
        let posture = broker.posture();
        broker.log(
            "session-start",
            serde_json::json!({ "posture": posture, "rendered": posture.render() }),
        );
        for _ in 0..pool {
            let ex = broker.spawn_executor().await?;
            lock(&broker.inner.idle).push(ex);
        }
        Ok(broker)
    }

    /// The posture in force for this session.
    pub fn posture(&self) -> Posture {
        lock(&self.inner.state).posture.clone()
    }

    /// The session log's path, if one is open.
    pub fn log_path(&self) -> Option<PathBuf> {
        self.inner.log.as_ref().map(|l| l.path().to_path_buf())
    }

    /// The log directory in use.
    pub fn log_dir(&self) -> Option<PathBuf> {
        self.inner.log_dir.clone()
    }

    /// Every event so far.
    pub fn events(&self) -> Vec<PlaneEvent> {
        lock(&self.inner.history).clone()
    }

    /// Live events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<PlaneEvent> {
        self.inner.events.subscribe()
    }

    /// Host pids of the idle executors (the outermost process of each).
    pub fn executor_pids(&self) -> Vec<u32> {
        lock(&self.inner.idle).iter().map(|e| e.pid).collect()
    }

    fn log(&self, kind: &str, data: serde_json::Value) {
        if let Some(l) = &self.inner.log {
            l.record(kind, data);
        }
    }

    fn emit(&self, event: PlaneEvent) {
        self.log(
            "plane-event",
            serde_json::to_value(&event).unwrap_or_default(),
        );
        lock(&self.inner.history).push(event.clone());
        let _ = self.inner.events.send(event);
    }

    /// The proxy for one executor's jail: its decisions go to the session log.
    fn proxy(&self) -> Option<crate::net::Proxy> {
        let allow = self.inner.config.allow.clone()?;
        let inner = Arc::downgrade(&self.inner);
        let journal: crate::net::Journal = Arc::new(move |ev: &crate::net::NetEvent| {
            if let Some(log) = inner.upgrade().as_ref().and_then(|i| i.log.as_ref()) {
                log.record("net", serde_json::to_value(ev).unwrap_or_default());
            }
        });
        Some(crate::net::Proxy::new(allow, journal))
    }

    async fn spawn_executor(&self) -> Result<Executor, PlaneError> {
        let proxy = self.proxy();
        let (cmd, pending, generation) = {
            let st = lock(&self.inner.state);
            // An unfenced session (switched off) has no namespace to listen in.
            let listen = proxy
                .as_ref()
                .filter(|_| st.posture.is_fenced())
                .map(|_| super::env::PROXY_PORT);
            let (cmd, pending) = st.fence.serve_command(st.env.clone(), listen)?;
            (cmd, pending, st.generation)
        };
        let mut cmd = tokio::process::Command::from(cmd);
        // Every stream a pipe: the executor, and through /proc/<pid>/fd any command it runs,
        // never holds a descriptor of the agent's own (FENCE-JAIL-15); its stderr is
        // relayed to the agent's.
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let spawned = cmd.spawn();
        let mut pending = pending;
        if let Some(p) = pending.as_mut() {
            p.spawned();
        }
        let mut child = spawned.map_err(|e| PlaneError::Spawn(e.to_string()))?;
        let served = match (pending, proxy) {
            (Some(p), Some(proxy)) => Some(self.serve_listener(p, proxy).await),
            _ => None,
        };
        let served = match served.transpose() {
            Ok(s) => s,
            Err(e) => {
                let _ = child.start_kill();
                let _ = child.wait().await;
                return Err(e);
            }
        };
        if let Some(mut err) = child.stderr.take() {
            tokio::spawn(async move {
                use std::io::Write;
                use tokio::io::AsyncReadExt;
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf).await {
                    if n == 0 || std::io::stderr().write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            });
        }
        let pid = child.id().unwrap_or(0);
        // Both were asked for as pipes above.
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.start_kill();
            let _ = child.wait().await;
            return Err(PlaneError::Spawn(
                "the executor's streams are not pipes".into(),
            ));
        };
        let mut stdout = BufReader::new(stdout);
        let mut line = String::new();
        let read = tokio::time::timeout(READY_TIMEOUT, stdout.read_line(&mut line)).await;
        match read {
            Ok(Ok(n)) if n > 0 => {}
            other => {
                let _ = child.start_kill();
                let status = child.wait().await.ok();
                return Err(PlaneError::Spawn(format!(
                    "executor did not announce itself ({other:?}, exit {status:?})"
                )));
            }
        }
        match serde_json::from_str::<ExecutorMessage>(&line) {
            Ok(ExecutorMessage::Ready { .. }) => {}
            other => {
                let _ = child.start_kill();
                return Err(PlaneError::Spawn(format!(
                    "unexpected first message: {other:?}"
                )));
            }
        }
        let id = self.inner.next_executor.fetch_add(1, Ordering::Relaxed);
        self.emit(PlaneEvent::ExecutorStarted { executor: id, pid });
        Ok(Executor {
            id,
            generation,
            child,
            stdin,
            stdout,
            pid,
            _proxy: served,
        })
    }

    /// Receive the listener an executor's jail hands out and serve it with `proxy`.
    #[cfg(target_os = "linux")]
    async fn serve_listener(
        &self,
        pending: crate::fence::PendingListener,
        proxy: crate::net::Proxy,
    ) -> Result<crate::net::Running, PlaneError> {
        let deadline = std::time::Instant::now() + READY_TIMEOUT;
        let listener = tokio::task::spawn_blocking(move || pending.receive(deadline))
            .await
            .map_err(|e| PlaneError::Spawn(e.to_string()))?
            .map_err(|e| PlaneError::Spawn(format!("the proxy's listener: {e}")))?;
        proxy
            .spawn(listener)
            .map_err(|e| PlaneError::Spawn(format!("the allow-list proxy: {e}")))
    }

    #[cfg(not(target_os = "linux"))]
    async fn serve_listener(
        &self,
        _pending: crate::fence::PendingListener,
        _proxy: crate::net::Proxy,
    ) -> Result<crate::net::Running, PlaneError> {
        Err(PlaneError::Spawn("the allow-list proxy needs Linux".into()))
    }

    /// Run one command in the fence on an idle executor (starting one if none is idle).
    pub async fn run(&self, request: RunRequest) -> Result<RunOutcome, PlaneError> {
        if request.argv.is_empty() {
            return Err(PlaneError::Request("empty command".into()));
        }
        let _permit = self
            .inner
            .permits
            .acquire()
            .await
            .map_err(|e| PlaneError::Spawn(e.to_string()))?;
        let current = lock(&self.inner.state).generation;
        let popped = {
            let mut idle = lock(&self.inner.idle);
            idle.retain(|e| e.generation == current);
            idle.pop()
        };
        if request.terminal {
            return self.run_on_terminal(request).await;
        }
        let (mut ex, warm) = match popped {
            Some(e) => (e, true),
            None => (self.spawn_executor().await?, false),
        };
        let timeout = request.timeout.unwrap_or(self.inner.config.default_timeout);
        let id = self.inner.next_request.fetch_add(1, Ordering::Relaxed);
        let req = ExecRequest {
            id,
            argv: request.argv.clone(),
            cwd: request.cwd.clone(),
            stdin: request.stdin.clone(),
            timeout_ms: Some(timeout.as_millis() as u64),
            max_output: None,
        };
        match exchange(&mut ex, &req, timeout + GRACE).await {
            Ok((exit, stdout, stderr, timed_out)) => {
                let posture = self.posture();
                self.log(
                    "run",
                    serde_json::json!({
                        "argv": request.argv, "exit": exit, "timed_out": timed_out,
                        "executor": ex.id, "warm": warm, "fence": posture.backend,
                    }),
                );
                let executor = ex.id;
                lock(&self.inner.idle).push(ex);
                Ok(RunOutcome {
                    exit,
                    stdout,
                    stderr,
                    timed_out,
                    posture,
                    executor,
                    warm,
                })
            }
            Err(e) => {
                let detail = e.to_string();
                let old = ex.id;
                let _ = ex.child.start_kill();
                let _ = ex.child.wait().await;
                self.emit(PlaneEvent::ExecutorCrashed {
                    executor: old,
                    detail: detail.clone(),
                });
                // The broker lives on: replace the executor before answering.
                if let Ok(new) = self.spawn_executor().await {
                    self.emit(PlaneEvent::ExecutorReplaced { old, new: new.id });
                    lock(&self.inner.idle).push(new);
                }
                Err(PlaneError::ExecutorCrashed {
                    executor: old,
                    detail,
                })
            }
        }
    }

    /// [`Broker::run`] on a terminal (FENCE-TTY-6).
    async fn run_on_terminal(&self, request: RunRequest) -> Result<RunOutcome, PlaneError> {
        let (fence, env) = {
            let st = lock(&self.inner.state);
            (st.fence.clone(), st.env.clone())
        };
        let timeout = request.timeout.unwrap_or(self.inner.config.default_timeout);
        let req = request.clone();
        let out = tokio::task::spawn_blocking(move || {
            super::terminal::run(
                &fence,
                req.argv,
                env,
                req.cwd,
                req.stdin.as_deref().unwrap_or_default(),
                timeout,
            )
        })
        .await
        .map_err(|e| PlaneError::Spawn(e.to_string()))??;
        let posture = self.posture();
        self.log(
            "run",
            serde_json::json!({
                "argv": request.argv, "exit": out.exit, "timed_out": out.timed_out,
                "terminal": true, "fence": posture.backend,
            }),
        );
        Ok(RunOutcome {
            exit: out.exit,
            stdout: out.shown,
            stderr: out.helper_stderr,
            timed_out: out.timed_out,
            posture,
            executor: 0,
            warm: false,
        })
    }

    /// Switch this session's fence off (commands then run unfenced) — only with the exact
    /// confirmation [`CONFIRM_OFF`]. Never persisted; recorded in the session log.
    pub async fn switch_off(&self, confirmation: &str) -> Result<Posture, PlaneError> {
        if confirmation != CONFIRM_OFF {
            return Err(PlaneError::Unconfirmed);
        }
        let mut options = self.inner.config.options.clone();
        options.backend = BackendChoice::Off;
        self.switch(options).await
    }

    /// Switch this session's fence back on with the options it started with.
    pub async fn switch_on(&self) -> Result<Posture, PlaneError> {
        let mut options = self.inner.config.options.clone();
        if options.backend == BackendChoice::Off {
            options.backend = BackendChoice::Auto;
        }
        self.switch(options).await
    }

    /// Replace the session's fence. Every change is written to the session's log with the
    /// posture before and after (FENCE-TOGGLE-3); a switch that fails (the probe refused
    /// the new fence) is written too, with the error, the posture in force unchanged.
    async fn switch(&self, options: FenceOptions) -> Result<Posture, PlaneError> {
        let generation = lock(&self.inner.state).generation + 1;
        let cfg = self.inner.config.clone();
        let dir = self.inner.log_dir.clone();
        let to = if options.backend == BackendChoice::Off {
            "off"
        } else {
            "on"
        };
        let built = tokio::task::spawn_blocking(move || {
            build_state(&cfg, &options, dir.as_ref(), generation)
        })
        .await
        .map_err(|e| PlaneError::Spawn(e.to_string()))
        .and_then(|r| r.map_err(PlaneError::from));
        let state = match built {
            Ok(state) => state,
            Err(e) => {
                let current = self.posture();
                self.log(
                    "fence-toggle",
                    serde_json::json!({
                        "to": to,
                        "changed": false,
                        "error": e.to_string(),
                        "before": current,
                        "after": current,
                        "rendered_before": current.render(),
                        "rendered_after": current.render(),
                    }),
                );
                return Err(e);
            }
        };
        let after = state.posture.clone();
        // Before and after are taken under the same lock: no other switch slips between.
        let before = std::mem::replace(&mut *lock(&self.inner.state), state).posture;
        let old: Vec<Executor> = std::mem::take(&mut *lock(&self.inner.idle));
        drop(old);
        self.log(
            "fence-toggle",
            serde_json::json!({
                "to": to,
                "changed": true,
                "before": before,
                "after": after,
                "rendered_before": before.render(),
                "rendered_after": after.render(),
            }),
        );
        self.emit(PlaneEvent::FenceSwitched {
            before: before.render(),
            posture: after.render(),
        });
        Ok(after)
    }

    /// Close every idle executor and wait for it.
    pub async fn shutdown(&self) {
        let all: Vec<Executor> = std::mem::take(&mut *lock(&self.inner.idle));
        for mut ex in all {
            drop(ex.stdin);
            let _ = tokio::time::timeout(Duration::from_secs(5), ex.child.wait()).await;
            let _ = ex.child.start_kill();
            let _ = ex.child.wait().await;
        }
        // No executor of this broker holds a mount point any more.
        drop(lock(&self.inner.mount_points).take());
        self.log("session-end", serde_json::json!({}));
    }
}

async fn exchange(
    ex: &mut Executor,
    req: &ExecRequest,
    deadline: Duration,
) -> Result<(ExitInfo, Vec<u8>, Vec<u8>, bool), ExchangeError> {
    let mut line = serde_json::to_vec(req).map_err(ExchangeError::Encode)?;
    line.push(b'\n');
    ex.stdin
        .write_all(&line)
        .await
        .map_err(|e| ExchangeError::Io("write", e))?;
    ex.stdin
        .flush()
        .await
        .map_err(|e| ExchangeError::Io("flush", e))?;
    let mut answer = String::new();
    match tokio::time::timeout(deadline, ex.stdout.read_line(&mut answer)).await {
        Err(_) => return Err(ExchangeError::NoAnswer),
        Ok(Err(e)) => return Err(ExchangeError::Io("read", e)),
        Ok(Ok(0)) => {
            let status = ex.child.try_wait().ok().flatten();
            return Err(ExchangeError::Exited(status));
        }
        Ok(Ok(_)) => {}
    }
    match serde_json::from_str::<ExecutorMessage>(&answer) {
        Ok(ExecutorMessage::Done {
            id,
            exit,
            stdout,
            stderr,
            timed_out,
            ..
        }) if id == req.id => Ok((exit, stdout, stderr, timed_out)),
        other => Err(ExchangeError::Unexpected(format!("{other:?}"))),
    }
}

/// Why one request to an executor got no answer: the executor is taken for crashed.
#[derive(Debug, thiserror::Error)]
enum ExchangeError {
    /// The request could not be written as JSON.
    #[error("the request as JSON: {0}")]
    Encode(serde_json::Error),
    /// Writing, flushing or reading the executor's pipes failed (the step is named).
    #[error("{0}: {1}")]
    Io(&'static str, std::io::Error),
    /// Nothing came back before the deadline.
    #[error("no answer before the deadline")]
    NoAnswer,
    /// The executor exited (its status, if it could be read).
    #[error("the executor exited ({0:?})")]
    Exited(Option<std::process::ExitStatus>),
    /// A line that is not the answer to this request (as read).
    #[error("unexpected answer: {0}")]
    Unexpected(String),
}

/// The data behind `m`, even if a thread panicked while it held the lock: every update
/// made under these locks is one push, one field or one swap, never left half done.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
