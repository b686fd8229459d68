//! The control of capability `fence`: reads the `open` setup into a
//! [`plane::Session`](gatehouse::plane::session::Session) and its ops `run`, `posture` and
//! `toggle` into its calls; the answers go back through [`super::wire::fence`]. Decides nothing:
//! the toggle's confirmations, the refusals and the fallback after a failed probe are the
//! plane session's.
//!
//! Touches nothing itself: the plane session does.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::{json, Value};

use super::control::{parse_as, Control, Opening, Sessions, Setup};
use super::wire::fence::{FenceRequest, WirePosture, WireRun, WireToggle, OPS};
use super::wire::{Body, WireError};
use super::Setups;
use gatehouse::choices::table::{Kind, Slot as ChoiceSlot, TABLE};
use gatehouse::choices::{Flags, Raw};
use gatehouse::fence::{current_posture, FenceOptions};
use gatehouse::plane::session::{
    FencePolicy, Limits, RunTool, Session, SessionChoices, SessionError, SessionSetup, Switch,
};
use std::collections::BTreeMap;

super::control::setup! {
    /// The setup fields of capability `fence` (its workspace and home are the gate's).
    pub struct FenceSetup {
        /// `strict`, `degraded` or `off`.
        fence_policy: FencePolicy,
        /// More workspaces beside the workspace.
        workspaces: Vec<PathBuf>,
        /// Where the plane writes its log.
        log_dir: PathBuf,
        /// An emulated poorer kernel.
        limits: Limits,
        /// The person's choices (protocol 1.4), read by [`choices_of`].
        choices: Value,
    }
}

/// The setup field `choices` (protocol 1.4) translated into the flags as sent, key by
/// key through the table of choices (each row with a `wire` key, its value in the shape
/// of the row's kind); the plane session checks them when it opens (a bad variable name
/// is a refused choice, FENCE-ENV-11), as the command line's flags are checked by the
/// same constructor. An unknown key, a value of the wrong shape or a network mode that is
/// none is refused here.
fn choices_of(given: Option<&Value>) -> Result<Option<SessionChoices>, WireError> {
    let bad = |e: String| WireError::unsupported(format!("setup field \"choices\": {e}"));
    let given = match given {
        None => return Ok(None),
        Some(Value::Object(given)) => given,
        Some(v) => return Err(bad(format!("invalid type: {v}, expected an object"))),
    };
    fn shaped<T: serde::de::DeserializeOwned>(v: &Value) -> Result<T, String> {
        T::deserialize(v).map_err(|e| e.to_string())
    }
    let mut flags = Flags::default();
    for (key, v) in given {
        let Some(spec) = TABLE.iter().find(|s| s.wire == Some(key.as_str())) else {
            return Err(bad(format!("unknown field `{key}`")));
        };
        let raw = match (spec.kind(), spec.slot) {
            (Kind::One, _) => match shaped::<Option<String>>(v).map_err(&bad)? {
                Some(one) => Raw::One(one),
                None => continue,
            },
            (Kind::List, ChoiceSlot::Paths) => Raw::Paths(shaped(v).map_err(&bad)?),
            (Kind::List, _) => Raw::List(shaped(v).map_err(&bad)?),
            (Kind::Map, _) => Raw::Map(
                shaped::<BTreeMap<String, String>>(v)
                    .map_err(&bad)?
                    .into_iter()
                    .collect(),
            ),
            (Kind::Switch, _) => Raw::Switch(shaped(v).map_err(&bad)?),
        };
        flags.set(spec, raw);
    }
    if let Some((_, e)) = flags.bad_one() {
        return Err(bad(e));
    }
    Ok(Some(SessionChoices {
        config_files: flags.switch("config-files"),
        trust_project: flags.switch("trust-project-config"),
        flags,
    }))
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

/// The plane's posture on this host with the operator's options, before any session
/// (PROTO-HELLO-4), probed once per process.
pub fn host_posture() -> &'static WirePosture {
    static HOST: OnceLock<WirePosture> = OnceLock::new();
    HOST.get_or_init(|| WirePosture::of(&current_posture(&operator_options())))
}

fn wire_error(e: SessionError) -> WireError {
    if e.is_setup() {
        WireError::unsupported(e.to_string())
    } else {
        WireError::error(e.to_string())
    }
}

/// The fence fields of `setup`; `None` when it names none of them (the session then gets
/// the defaults the first time a fence step needs one).
pub fn setup_of(setups: &Setups) -> Result<Option<SessionSetup>, WireError> {
    let setup = &setups.fence;
    if !setup.named() {
        return Ok(None);
    }
    let mut workspaces: Vec<PathBuf> = setup.workspaces.clone().unwrap_or_default();
    if let Some(ws) = &setups.gate.workspace {
        if !workspaces.contains(ws) {
            workspaces.insert(0, ws.clone());
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
    Ok(Some(SessionSetup {
        policy: setup.fence_policy.unwrap_or_default(),
        workspaces,
        log_dir: setup.log_dir.clone(),
        limits: setup.limits,
        home: setups.gate.home.clone(),
        choices: choices_of(setup.choices.as_ref())?,
        guarded: guarded_of(setups),
    }))
}

/// The files and directories of the session's other parts that jailed code must never
/// change (FENCE-PATHS-3): the agent's and the person's settings files and the state
/// directory, when the setup names them.
fn guarded_of(setups: &Setups) -> Vec<PathBuf> {
    let order = &setups.order;
    [&order.agent_file, &order.settings_file, &order.state_dir]
        .into_iter()
        .flatten()
        .cloned()
        .collect()
}

/// The fence's state in one session: its setup until a fence step first needs the
/// plane, then the plane.
#[derive(Debug)]
pub enum FenceState {
    /// Not started yet.
    Pending(Box<SessionSetup>),
    /// Started.
    Live(Box<Session>),
}

impl FenceState {
    /// Takes the fence part of an `open` setup. A setup naming a fence field opens the
    /// session's plane at once, and its posture goes in the `open` answer; any other
    /// session gets the defaults the first time a fence step needs one.
    fn open(opening: &mut Opening<'_>) -> Result<FenceState, WireError> {
        // Replacing a session of the same name ends its plane first.
        if let Some(replaced) = opening.replaced.as_deref_mut() {
            replaced.fence = None;
        }
        let session = opening.session;
        match setup_of(opening.setup)? {
            Some(s) => {
                let live = Session::open(session, s, operator_options()).map_err(wire_error)?;
                let posture = WirePosture::of(&live.posture());
                opening.answer.insert("posture".into(), json!(posture));
                Ok(FenceState::Live(Box::new(live)))
            }
            None => {
                let ws = opening
                    .setup
                    .gate
                    .workspace
                    .as_ref()
                    .ok_or_else(|| WireError::error("setup needs a \"workspace\""))?;
                let mut pending = SessionSetup::new(ws);
                pending.guarded = guarded_of(opening.setup);
                Ok(FenceState::Pending(Box::new(pending)))
            }
        }
    }

    /// The session's plane, started with the defaults if no fence step has needed it
    /// yet: what an `act` step runs its allowed call in.
    pub fn plane(&mut self, session: &str) -> Result<&mut Session, WireError> {
        if let FenceState::Pending(setup) = self {
            let live = Session::open(session, (**setup).clone(), operator_options())
                .map_err(wire_error)?;
            *self = FenceState::Live(Box::new(live));
        }
        match self {
            FenceState::Live(s) => Ok(s),
            FenceState::Pending(_) => Err(WireError::error("the session's fence did not start")),
        }
    }
}

/// The control of `fence`: its ops answered on the session's plane.
pub struct Fence;

impl Control for Fence {
    const CAPABILITIES: &'static [&'static str] = &["fence"];
    const OPS: &'static [&'static str] = OPS;
    type Setup = FenceSetup;
    type State = FenceState;
    type Request = FenceRequest;

    fn open(opening: &mut Opening<'_>) -> Result<FenceState, WireError> {
        FenceState::open(opening)
    }

    /// Ends the session's plane, if it started.
    fn close(state: FenceState) {
        if let FenceState::Live(s) = state {
            s.close();
        }
    }

    fn parse(op: &str, request: &Value) -> Result<FenceRequest, WireError> {
        parse_as(op, request)
    }

    fn answer(request: FenceRequest, sessions: &mut dyn Sessions) -> Result<Body, WireError> {
        match request {
            FenceRequest::Run {
                session,
                tool,
                input,
                cwd,
                tty,
            } => {
                sessions.started(&session)?;
                let plane = sessions.plane(&session)?;
                Ok(Body::Run(run(plane, &tool, &input, cwd.as_deref(), tty)?))
            }
            FenceRequest::Posture { session } => {
                sessions.started(&session)?;
                let posture = posture(sessions.plane(&session)?);
                Ok(Body::Posture { posture })
            }
            FenceRequest::Toggle {
                session,
                to,
                confirmed,
            } => {
                sessions.started(&session)?;
                let plane = sessions.plane(&session)?;
                Ok(Body::Toggle(toggle(plane, &to, confirmed)?))
            }
        }
    }
}

/// `run` (FENCE-RUN-1, PROTO-FENCE-1).
pub fn run(
    s: &mut Session,
    tool: &str,
    input: &str,
    cwd: Option<&str>,
    tty: bool,
) -> Result<WireRun, WireError> {
    let tool = RunTool::from_name(tool).ok_or_else(|| {
        WireError::unsupported(format!(
            "the plane runs `shell` and `execute_code`, not {tool:?}"
        ))
    })?;
    Ok(WireRun::of(
        s.run_with(tool, input, cwd, tty).map_err(wire_error)?,
    ))
}

/// `posture`.
pub fn posture(s: &mut Session) -> WirePosture {
    WirePosture::of(&s.posture())
}

/// `toggle` (FENCE-TOGGLE-*).
pub fn toggle(s: &mut Session, to: &str, confirmed: bool) -> Result<WireToggle, WireError> {
    let to = match to {
        "on" => Switch::On,
        "off" => Switch::Off,
        other => {
            return Err(WireError::error(format!(
                "toggle \"to\" is \"on\" or \"off\", not {other:?}"
            )))
        }
    };
    Ok(WireToggle::of(s.toggle(to, confirmed).map_err(wire_error)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::wire::WireError;
    use gatehouse::fence::BackendChoice;
    use serde_json::json;

    /// The fence's part of a setup, read as `open` reads it.
    fn setup_of(v: Value) -> Result<Option<SessionSetup>, WireError> {
        match v {
            Value::Object(m) => super::setup_of(&Setups::read(&m)?),
            _ => unreachable!(),
        }
    }

    #[test]
    fn setups_become_options() {
        assert_eq!(setup_of(json!({"workspace": "/w"})).unwrap(), None);
        let s = setup_of(json!({
            "workspace": "/w", "fence_policy": "degraded", "workspaces": ["/w", "/x"],
            "log_dir": "/l", "limits": {"userns": false, "landlock_abi": 2}
        }))
        .unwrap()
        .unwrap();
        assert_eq!(s.workspaces, vec![PathBuf::from("/w"), PathBuf::from("/x")]);
        let o = s.options(&FenceOptions::default());
        assert!(o.allow_degraded && o.no_user_namespaces);
        assert_eq!(o.max_landlock_abi, Some(2));
        let off = setup_of(json!({"workspace": "/w", "fence_policy": "off"}))
            .unwrap()
            .unwrap();
        assert_eq!(
            off.options(&FenceOptions::default()).backend,
            BackendChoice::Off
        );
        let c = setup_of(json!({
            "workspace": "/w",
            "choices": {"pass_env": ["A"], "pass_secret_env": ["T_TOKEN"], "set_env": {"B": "1"},
                        "ro": ["/r"], "rw": ["/x"], "hide": ["/h"], "network": "off",
                        "config_files": true, "trust_project": true}
        }))
        .unwrap()
        .unwrap()
        .choices
        .unwrap();
        assert!(c.config_files && c.trust_project);
        let want = [
            ("pass-env", Raw::List(vec!["A".into()])),
            ("pass-secret-env", Raw::List(vec!["T_TOKEN".into()])),
            ("set-env", Raw::Map(vec![("B".into(), "1".into())])),
            ("ro", Raw::Paths(vec![PathBuf::from("/r")])),
            ("rw", Raw::Paths(vec![PathBuf::from("/x")])),
            ("hide", Raw::Paths(vec![PathBuf::from("/h")])),
            ("network", Raw::One("off".into())),
            ("config-files", Raw::Switch(true)),
            ("trust-project-config", Raw::Switch(true)),
        ]
        .into_iter()
        .try_fold(Flags::default(), |f, (name, raw)| f.with(name, raw))
        .unwrap();
        assert_eq!(c.flags, want);
        // A bad name is not the adapter's to judge: it reaches the session as sent, which
        // refuses it (FENCE-ENV-11), as it refuses the command line's.
        let c = setup_of(json!({
            "workspace": "/w", "choices": {"set_env": {"HOME=/x/evil": "x"}}
        }))
        .unwrap()
        .unwrap()
        .choices
        .unwrap();
        assert_eq!(
            c.flags.map("set-env"),
            [("HOME=/x/evil".into(), "x".into())]
        );
        for bad in [
            json!({"workspace": "/w", "choices": {"unhide": ["/x"]}}),
            json!({"workspace": "/w", "choices": {"network": "wide-open"}}),
            json!({"workspace": "/w", "choices": {"pass_env": "A"}}),
            json!({"workspace": "/w", "choices": {"set_env": ["A=1"]}}),
            json!({"workspace": "/w", "choices": {"trust_project": "yes"}}),
            json!({"workspace": "/w", "choices": {"allow_degraded": true}}),
            json!({"workspace": "/w", "choices": ["pass_env"]}),
            json!({"workspace": "/w", "fence_policy": "maybe"}),
            json!({"workspace": "/w", "limits": {"userns": false, "seccomp": false}}),
            json!({"workspace": "/w", "workspaces": ["relative"]}),
        ] {
            let err = setup_of(bad).unwrap_err();
            assert_eq!(err.kind, super::super::wire::ErrorKind::Unsupported);
        }
    }
}
