//! The fence steps of the adapter (capability `fence`): each session gets its own plane (a
//! [`Broker`] holding the session's fence and its executors), built from the `open`
//! setup; `run` executes through that plane exactly as an approved call of the tool would
//! run and reports what it observed, `posture` reports the session's posture, and `toggle`
//! is the session's runtime switch (FENCE-TOGGLE-*).
//!
//! The protocol speaks of *protections* (`write`, `rename_link`, `hidden`, ...); the
//! reference's layers speak of [`Coverage`] items. [`protections`] is the one translation
//! between them, and every `not_covered` list on the wire is recomputed from the layers
//! through it, so that the wire never claims more than a layer covers.
//!
//! Touches: a private scratch directory per session (removed at close), the session's log
//! directory, and whatever the jailed commands touch inside the fence.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::wire::WireError;
use crate::fence::{
    current_posture, BackendChoice, BackendKind, Coverage, Fence, FenceError, FenceOptions, Policy,
    Posture, REQUIRED,
};
use crate::plane::{Broker, PlaneConfig, PlaneError, RunRequest, CONFIRM_OFF};

/// The setup fields of capability `fence`.
pub const SETUP_FIELDS: &[&str] = &["fence_policy", "workspaces", "log_dir", "limits"];

/// Every protection code of the execution-plane chapter (section 6), in its order.
pub const PROTECTIONS: [&str; 13] = [
    "write",
    "rename_link",
    "truncate",
    "metadata",
    "hidden",
    "protected_paths",
    "signal",
    "unix_socket",
    "unix_abstract",
    "capabilities",
    "process_view",
    "ipc",
    "uts",
];

/// The deadline of one `run`, below the runner's default step timeout (10 s), so that a
/// command that hangs is killed and reported rather than taking the adapter down with it.
const RUN_TIMEOUT: Duration = Duration::from_secs(8);

/// The protection codes a reference coverage item stands for.
///
/// `Writes` covers renames and hard links as well (the read-only bind answers `EROFS` or
/// `EXDEV`, Landlock refuses a reparenting that would gain rights); `Ipc` stands for the
/// UTS namespace too, which every backend that has one unshares in the same call; `HostTmp`
/// is part of `write` and `hidden`, and `Network` is no protection of the chapter
/// (FENCE-SOCK-3), so neither is named on the wire.
pub fn protections(item: Coverage) -> &'static [&'static str] {
    match item {
        Coverage::Writes => &["write", "rename_link"],
        Coverage::Truncate => &["truncate"],
        Coverage::Metadata => &["metadata"],
        Coverage::Reads => &["hidden"],
        Coverage::ProtectedPaths => &["protected_paths"],
        Coverage::Processes => &["process_view"],
        Coverage::Signals => &["signal"],
        Coverage::Ipc => &["ipc", "uts"],
        Coverage::UnixSockets => &["unix_socket"],
        Coverage::AbstractSockets => &["unix_abstract"],
        Coverage::Capabilities => &["capabilities"],
        Coverage::HostTmp | Coverage::Network => &[],
    }
}

/// One layer as the protocol shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WireLayer {
    /// The layer's name.
    pub name: String,
    /// The protections it covers.
    pub covers: Vec<&'static str>,
}

/// The posture object of the protocol (execution-plane chapter, section 13).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WirePosture {
    /// `fence`, `off` or `none`.
    pub state: &'static str,
    /// The backend holding the commands, `null` when `off` or `none`.
    pub backend: Option<&'static str>,
    /// The layers present and what each covers.
    pub layers: Vec<WireLayer>,
    /// The Landlock ABI in force.
    pub landlock_abi: Option<crate::fence::Abi>,
    /// The protections no layer covers.
    pub not_covered: Vec<&'static str>,
    /// The fence lacks a required protection.
    pub degraded: bool,
    /// Why `off` or `none`, or what made it degraded.
    pub reason: Option<String>,
    /// `scrubbed` or `full`.
    pub env: &'static str,
    /// `protected` or `unprotected`.
    pub session_log: &'static str,
}

impl WirePosture {
    /// The wire form of a posture of the reference.
    pub fn of(p: &Posture) -> WirePosture {
        let state = match p.backend {
            BackendKind::Off => "off",
            BackendKind::None => "none",
            _ => "fence",
        };
        let layers: Vec<WireLayer> = p
            .layers
            .iter()
            .map(|l| {
                let mut covers: Vec<&'static str> = Vec::new();
                for c in &l.covers {
                    for name in protections(*c) {
                        if !covers.contains(name) {
                            covers.push(name);
                        }
                    }
                }
                WireLayer {
                    name: l.name.clone(),
                    covers,
                }
            })
            .collect();
        let not_covered: Vec<&'static str> = PROTECTIONS
            .iter()
            .copied()
            .filter(|code| !layers.iter().any(|l| l.covers.contains(code)))
            .collect();
        let lacks_required = REQUIRED
            .iter()
            .flat_map(|c| protections(*c).iter())
            .any(|code| not_covered.contains(code));
        WirePosture {
            state,
            backend: (state == "fence").then(|| p.backend.name()),
            layers,
            landlock_abi: p.landlock_abi,
            not_covered,
            degraded: state == "fence" && (p.degraded || lacks_required),
            reason: p.reason.clone(),
            env: if p.env_scrubbing { "scrubbed" } else { "full" },
            session_log: if p.logs_writable_by_tools {
                "unprotected"
            } else {
                "protected"
            },
        }
    }

    /// `none`, with the reason.
    fn none(reason: impl Into<String>) -> WirePosture {
        WirePosture::of(&Posture::unfenced(BackendKind::None, reason))
    }
}

/// What `hello` reports of the fence on this host, before any session.
#[derive(Debug, Clone)]
pub struct HostFence {
    /// The Landlock ABI the fence uses here.
    pub landlock_abi: Option<u32>,
    /// The backend a session would get.
    pub backend: Option<String>,
    /// The plane's posture at start (PROTO-HELLO-4).
    pub posture: WirePosture,
}

/// The operator's fence options: the defaults, changed by the `GATEHOUSE_*` environment
/// variables `FenceOptions::from_env` reads (a backend choice, an emulated poorer kernel),
/// so that one suite can be run against each backend. A variable it cannot read stops
/// the adapter with one line rather than run with options nobody asked for.
pub fn operator_options() -> FenceOptions {
    static OPTIONS: OnceLock<FenceOptions> = OnceLock::new();
    OPTIONS
        .get_or_init(|| {
            FenceOptions::from_env().unwrap_or_else(|e| {
                eprintln!("gatehouse adapter: {e}");
                std::process::exit(2);
            })
        })
        .clone()
}

/// The fence of this host with the operator's options, probed once per process.
pub fn host_fence() -> &'static HostFence {
    static HOST: OnceLock<HostFence> = OnceLock::new();
    HOST.get_or_init(|| {
        let posture = WirePosture::of(&current_posture(&operator_options()));
        HostFence {
            landlock_abi: posture.landlock_abi.map(|a| u32::from(a.number())),
            backend: posture.backend.map(str::to_string),
            posture,
        }
    })
}

/// `environment` as `hello` reports it with `fence` declared: the Landlock ABI, the backend
/// and the posture this host actually has (PROTO-HELLO-4).
pub fn declare(mut env: super::environment::Environment) -> super::environment::Environment {
    let host = host_fence();
    env.landlock_abi = host.landlock_abi;
    env.fence_backend = host.backend.clone();
    env.posture = Some(host.posture.clone());
    env
}

fn runtime() -> Result<&'static tokio::runtime::Runtime, WireError> {
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
    .ok_or_else(|| WireError::error("cannot start the plane's runtime"))
}

/// `fence_policy`: what happens where a protection is missing.
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

/// `limits`: run as if the kernel offered less.
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

/// The fence part of a session's setup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FenceSetup {
    /// The policy.
    pub policy: FencePolicy,
    /// Every workspace root, the session's workspace first.
    pub workspaces: Vec<PathBuf>,
    /// The session-log directory.
    pub log_dir: Option<PathBuf>,
    /// The emulated kernel.
    pub limits: Option<Limits>,
}

fn field<T: serde::de::DeserializeOwned>(
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

impl FenceSetup {
    /// The fence fields of `setup`, with their defaults; `None` when it names none of them
    /// (the session then gets a default fence the first time a fence step needs one).
    pub fn from_setup(setup: &Map<String, Value>) -> Result<Option<FenceSetup>, WireError> {
        if !SETUP_FIELDS.iter().any(|f| setup.contains_key(*f)) {
            return Ok(None);
        }
        let workspace: Option<PathBuf> = field(setup, "workspace")?;
        let mut workspaces: Vec<PathBuf> = field(setup, "workspaces")?.unwrap_or_default();
        if let Some(ws) = workspace {
            if !workspaces.contains(&ws) {
                workspaces.insert(0, ws);
            }
        }
        for w in &workspaces {
            if !w.is_absolute() {
                return Err(WireError::unsupported(format!(
                    "setup field \"workspaces\": {} is not absolute",
                    w.display()
                )));
            }
        }
        Ok(Some(FenceSetup {
            policy: field(setup, "fence_policy")?.unwrap_or_default(),
            workspaces,
            log_dir: field(setup, "log_dir")?,
            limits: field(setup, "limits")?,
        }))
    }

    /// The defaults for a session that named no fence field.
    pub fn default_for(workspace: &Path) -> FenceSetup {
        FenceSetup {
            policy: FencePolicy::Required,
            workspaces: vec![workspace.to_path_buf()],
            log_dir: None,
            limits: None,
        }
    }

    /// The fence options this setup asks for (FENCE-RUN-3, FENCE-DEGRADE-4).
    pub fn options(&self) -> FenceOptions {
        let mut o = FenceOptions {
            allow_degraded: self.policy == FencePolicy::Degraded,
            ..operator_options()
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

/// Where the session's plane stands.
enum Plane {
    /// A broker runs the session's commands.
    Up(Broker),
    /// No broker: every `run` is refused with this code, and the posture says why.
    Refusing {
        code: &'static str,
        posture: WirePosture,
    },
}

/// A session's fence: its setup until a fence step first needs it, then its plane.
#[derive(Debug)]
enum Slot {
    Pending(FenceSetup),
    Live(Box<FenceSession>),
}

/// The fences of the adapter's open sessions, by session name.
#[derive(Debug, Default)]
pub struct Fences {
    slots: std::collections::HashMap<String, Slot>,
}

impl Fences {
    /// Takes the fence part of an `open` setup. A setup naming a fence field starts the
    /// session's plane at once, and the posture is returned for the `open` answer; any
    /// other session gets the default fence the first time a fence step needs one.
    pub fn open(
        &mut self,
        session: &str,
        setup: &Map<String, Value>,
    ) -> Result<Option<WirePosture>, WireError> {
        // Replacing a session of the same name ends its plane first.
        self.slots.remove(session);
        match FenceSetup::from_setup(setup)? {
            Some(fs) => {
                let live = FenceSession::open(session, fs)?;
                let posture = live.posture();
                self.slots
                    .insert(session.to_string(), Slot::Live(Box::new(live)));
                Ok(Some(posture))
            }
            None => {
                if let Some(ws) = field::<PathBuf>(setup, "workspace")? {
                    let pending = Slot::Pending(FenceSetup::default_for(&ws));
                    self.slots.insert(session.to_string(), pending);
                }
                Ok(None)
            }
        }
    }

    /// The session's fence, started if it was still pending.
    pub fn session(&mut self, session: &str) -> Result<&mut FenceSession, WireError> {
        let slot = self
            .slots
            .get_mut(session)
            .ok_or_else(|| WireError::error(format!("no open session {session:?}")))?;
        if let Slot::Pending(setup) = slot {
            *slot = Slot::Live(Box::new(FenceSession::open(session, setup.clone())?));
        }
        match slot {
            Slot::Live(s) => Ok(s),
            Slot::Pending(_) => Err(WireError::error("the session's fence did not start")),
        }
    }

    /// Ends the session's plane, if it has one.
    pub fn close(&mut self, session: &str) {
        if let Some(Slot::Live(s)) = self.slots.remove(session) {
            s.close();
        }
    }
}

/// The answer to `run`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunAnswer {
    /// The exit status, `null` when killed by a signal or refused.
    pub exit: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// The fence that held it.
    pub held_by: &'static str,
    /// The refusal code, or `null` when it ran.
    pub refused: Option<&'static str>,
    /// The posture in force.
    pub posture: WirePosture,
}

/// The answer to `toggle`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToggleAnswer {
    /// `confirmation_required`, or `null` when the switch happened.
    pub refused: Option<&'static str>,
    /// The posture now in force.
    pub posture: WirePosture,
}

/// One session's plane, its setup and its private scratch directory.
pub struct FenceSession {
    name: String,
    setup: FenceSetup,
    scratch: PathBuf,
    plane: Plane,
}

impl std::fmt::Debug for FenceSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FenceSession")
            .field("name", &self.name)
            .field("setup", &self.setup)
            .field("scratch", &self.scratch)
            .field("posture", &self.posture())
            .finish()
    }
}

fn refusal_of(err: &PlaneError) -> &'static str {
    match err {
        PlaneError::Fence(FenceError::Refused { .. }) => "degraded_refused",
        PlaneError::ExecutorCrashed { .. } => "executor_crashed",
        _ => "fence_unavailable",
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl FenceSession {
    /// Builds the session's plane from its setup: the policy (workspaces, a fresh scratch
    /// directory, the log directory) and the options (fence policy, emulated limits). A
    /// fence that cannot be built is a posture, not an error: the session opens and its
    /// runs are refused.
    pub fn open(name: &str, setup: FenceSetup) -> Result<FenceSession, WireError> {
        let scratch = crate::fence::probe::tempdir()
            .map_err(|e| WireError::error(format!("cannot create the scratch directory: {e}")))?;
        let mut session = FenceSession {
            name: name.to_string(),
            setup,
            scratch,
            plane: Plane::Refusing {
                code: "fence_unavailable",
                posture: WirePosture::none("not started"),
            },
        };
        let options = session.setup.options();
        session.plane = session.start(options)?;
        Ok(session)
    }

    fn policy(&self) -> Policy {
        let mut policy = Policy::new(self.setup.workspaces.clone(), self.scratch.clone());
        policy.log_dir = self.setup.log_dir.clone();
        policy
    }

    fn start(&self, options: FenceOptions) -> Result<Plane, WireError> {
        let policy = self.policy();
        // A policy the fence cannot take is the setup's problem, not a posture.
        let policy = match policy.resolve() {
            Ok(p) => p,
            Err(FenceError::Policy { path, reason }) if reason.contains("session-log") => {
                return Err(WireError::unsupported(format!(
                    "setup field \"log_dir\": {}: {reason}",
                    path.display()
                )))
            }
            Err(e) => return Err(WireError::error(e.to_string())),
        };
        let mut config = PlaneConfig::new(policy.clone(), options.clone(), self.name.clone());
        config.pool_size = 1;
        config.default_timeout = RUN_TIMEOUT;
        let rt = runtime()?;
        match rt.block_on(Broker::start(config)) {
            Ok(broker) => Ok(Plane::Up(broker)),
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
                        let mut w = WirePosture::of(&p);
                        w.degraded = true;
                        w
                    }
                    Err(e) => WirePosture::none(e.to_string()),
                };
                Ok(Plane::Refusing {
                    code: "degraded_refused",
                    posture,
                })
            }
            Err(e) => Ok(Plane::Refusing {
                code: "fence_unavailable",
                posture: WirePosture::none(e.to_string()),
            }),
        }
    }

    /// The session's posture.
    pub fn posture(&self) -> WirePosture {
        match &self.plane {
            Plane::Up(b) => WirePosture::of(&b.posture()),
            Plane::Refusing { posture, .. } => posture.clone(),
        }
    }

    fn held_by(posture: &WirePosture) -> &'static str {
        posture.backend.unwrap_or(posture.state)
    }

    /// Runs one approved call of `tool` through the plane (FENCE-RUN-1, PROTO-FENCE-1); a
    /// refusal is an answer (FENCE-RUN-2).
    pub fn run(
        &mut self,
        tool: &str,
        input: &str,
        cwd: Option<&str>,
    ) -> Result<RunAnswer, WireError> {
        let argv: Vec<String> = match tool {
            "shell" => vec!["sh".into(), "-c".into(), input.into()],
            "execute_code" => vec!["python3".into(), "-c".into(), input.into()],
            other => {
                return Err(WireError::unsupported(format!(
                    "the plane runs `shell` and `execute_code`, not {other:?}"
                )))
            }
        };
        let workspace = self.setup.workspaces.first().cloned().unwrap_or_default();
        let cwd = match cwd {
            None => workspace,
            Some(c) if Path::new(c).is_absolute() => PathBuf::from(c),
            Some(c) => workspace.join(c),
        };
        let broker = match &self.plane {
            Plane::Up(b) => b.clone(),
            Plane::Refusing { code, posture } => {
                return Ok(RunAnswer {
                    exit: None,
                    signal: None,
                    stdout: String::new(),
                    stderr: String::new(),
                    held_by: Self::held_by(posture),
                    refused: Some(code),
                    posture: posture.clone(),
                })
            }
        };
        let request = RunRequest {
            argv,
            cwd: Some(cwd),
            stdin: None,
            timeout: Some(RUN_TIMEOUT),
        };
        let rt = runtime()?;
        match rt.block_on(broker.run(request)) {
            Ok(out) => {
                let posture = WirePosture::of(&out.posture);
                Ok(RunAnswer {
                    exit: out.exit.code,
                    signal: out.exit.signal,
                    stdout: lossy(&out.stdout),
                    stderr: lossy(&out.stderr),
                    held_by: Self::held_by(&posture),
                    refused: None,
                    posture,
                })
            }
            Err(PlaneError::Request(m)) => Err(WireError::error(m)),
            Err(e) => {
                let code = refusal_of(&e);
                let posture = if code == "fence_unavailable" {
                    // The backend is gone or refused at spawn: never run outside it
                    // (FENCE-PROBE-3); the session stays refusing.
                    let p = WirePosture::none(e.to_string());
                    rt.block_on(broker.shutdown());
                    self.plane = Plane::Refusing {
                        code,
                        posture: p.clone(),
                    };
                    p
                } else {
                    WirePosture::of(&broker.posture())
                };
                Ok(RunAnswer {
                    exit: None,
                    signal: None,
                    stdout: String::new(),
                    stderr: e.to_string(),
                    held_by: Self::held_by(&posture),
                    refused: Some(code),
                    posture,
                })
            }
        }
    }

    /// The session's runtime toggle: off only with the confirmation (FENCE-TOGGLE-4), on
    /// through a fresh probe (FENCE-TOGGLE-5); never persisted, this session only.
    pub fn toggle(&mut self, to: &str, confirmed: bool) -> Result<ToggleAnswer, WireError> {
        let rt = runtime()?;
        match to {
            "off" if !confirmed => Ok(ToggleAnswer {
                refused: Some("confirmation_required"),
                posture: self.posture(),
            }),
            "off" => {
                match &self.plane {
                    Plane::Up(b) => {
                        let b = b.clone();
                        if let Err(e) = rt.block_on(b.switch_off(CONFIRM_OFF)) {
                            return Err(WireError::error(e.to_string()));
                        }
                    }
                    Plane::Refusing { .. } => {
                        let options = FenceOptions {
                            backend: BackendChoice::Off,
                            ..self.setup.options()
                        };
                        self.plane = self.start(options)?;
                    }
                }
                Ok(ToggleAnswer {
                    refused: None,
                    posture: self.posture(),
                })
            }
            "on" => {
                let result = match &self.plane {
                    Plane::Up(b) => {
                        let b = b.clone();
                        rt.block_on(b.switch_on()).map(|_| ()).map_err(|e| (b, e))
                    }
                    Plane::Refusing { .. } => {
                        let mut options = self.setup.options();
                        if options.backend == BackendChoice::Off {
                            options.backend = BackendChoice::Auto;
                        }
                        self.plane = self.start(options)?;
                        Ok(())
                    }
                };
                if let Err((broker, e)) = result {
                    // The probe failed: the session does not stay unfenced silently, its
                    // posture turns to what refuses (FENCE-TOGGLE-5).
                    rt.block_on(broker.shutdown());
                    self.plane = Plane::Refusing {
                        code: refusal_of(&e),
                        posture: WirePosture::none(e.to_string()),
                    };
                }
                Ok(ToggleAnswer {
                    refused: None,
                    posture: self.posture(),
                })
            }
            other => Err(WireError::error(format!(
                "toggle \"to\" is \"on\" or \"off\", not {other:?}"
            ))),
        }
    }

    /// Ends the session: its executors stop, its scratch directory is removed
    /// (FENCE-JAIL-4).
    pub fn close(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let plane = std::mem::replace(
            &mut self.plane,
            Plane::Refusing {
                code: "fence_unavailable",
                posture: WirePosture::none("session closed"),
            },
        );
        if let Plane::Up(broker) = plane {
            if let Ok(rt) = runtime() {
                rt.block_on(broker.shutdown());
            }
        }
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

impl Drop for FenceSession {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fence::Layer;
    use serde_json::json;

    #[test]
    fn postures_speak_in_protections() {
        let p = Posture::fenced(
            BackendKind::Native,
            vec![Layer {
                name: "landlock ABI 2".into(),
                covers: vec![Coverage::Writes, Coverage::Reads, Coverage::HostTmp],
            }],
            Some(crate::fence::Abi::V2),
            None,
        );
        let w = WirePosture::of(&p);
        assert_eq!(w.state, "fence");
        assert_eq!(w.backend, Some("native"));
        assert_eq!(w.layers[0].covers, vec!["write", "rename_link", "hidden"]);
        assert!(w.degraded);
        assert!(w.not_covered.contains(&"truncate"));
        assert!(w.not_covered.contains(&"metadata"));
        assert!(!w.not_covered.contains(&"write"));
        let off = WirePosture::of(&Posture::unfenced(BackendKind::Off, "toggle"));
        assert_eq!(off.state, "off");
        assert_eq!(off.backend, None);
        assert_eq!(off.not_covered.len(), PROTECTIONS.len());
        assert!(!off.degraded);
        assert_eq!(off.session_log, "unprotected");
    }

    #[test]
    fn setups_become_options() {
        let setup = |v: Value| match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        assert_eq!(
            FenceSetup::from_setup(&setup(json!({"workspace": "/w"}))).unwrap(),
            None
        );
        let s = FenceSetup::from_setup(&setup(json!({
            "workspace": "/w", "fence_policy": "degraded", "workspaces": ["/w", "/x"],
            "log_dir": "/l", "limits": {"userns": false, "landlock_abi": 2}
        })))
        .unwrap()
        .unwrap();
        assert_eq!(s.workspaces, vec![PathBuf::from("/w"), PathBuf::from("/x")]);
        let o = s.options();
        assert!(o.allow_degraded && o.no_user_namespaces);
        assert_eq!(o.max_landlock_abi, Some(2));
        let off = FenceSetup::from_setup(&setup(json!({"workspace": "/w", "fence_policy": "off"})))
            .unwrap()
            .unwrap();
        assert_eq!(off.options().backend, BackendChoice::Off);
        for bad in [
            json!({"workspace": "/w", "fence_policy": "maybe"}),
            json!({"workspace": "/w", "limits": {"userns": false, "seccomp": false}}),
            json!({"workspace": "/w", "workspaces": ["relative"]}),
        ] {
            let err = FenceSetup::from_setup(&setup(bad)).unwrap_err();
            assert_eq!(err.kind, super::super::wire::ErrorKind::Unsupported);
        }
    }
}
