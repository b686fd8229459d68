//! The control of capabilities `permissions` and `hooks` (and the records they keep):
//! turns an `open` setup into a [`GuardedSession`], which every tool call of the session
//! goes through (`decide` of the gate included), and answers the ops `call`, `calls`,
//! `act`, `rule`, `load` and `crash_at`, one library call each.
//!
//! Touches the filesystem only to read the files a setup names and, where the runner
//! names no state directory, to make a private one for the session.

use super::control::{parse_as, Control, Opening, Sessions};
use super::wire::order::{OrderRequest, OPS};
use super::wire::{field, Body, WireError};
use gatehouse::config::{AgentFile, SettingsFile};
use gatehouse::gate::{GateConfig, Grant};
use gatehouse::order::session::act::{ActError, Acted, NotRun};
use gatehouse::order::{GuardedSession, Ruling, SessionConfig};
use gatehouse::permissions::{List, Mode};
use gatehouse::records::crash::{arm, CrashPoint};
use gatehouse::records::StateDir;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

super::control::setup! {
    /// The setup fields of `permissions` and `hooks`.
    pub struct OrderSetup {
        /// The agent file (YAML), read strictly.
        agent_file: PathBuf,
        /// The person's settings file (YAML), read strictly.
        settings_file: PathBuf,
        /// The safety mode given as a flag.
        safety: String,
        /// The state directory; without one, a private one for the session.
        state_dir: PathBuf,
        /// Resume the records of the state directory.
        resume: bool,
    }
}

/// The input object of a call: a string becomes the tool's one text argument.
pub fn input_object(tool: &str, input: &Value) -> Value {
    match input {
        Value::String(s) => {
            let key = match tool {
                "shell" => "cmd",
                "execute_code" => "code",
                _ => "input",
            };
            json!({ key: s })
        }
        other => other.clone(),
    }
}

/// The state directory a session without one named gets: private, under the system's
/// temporary directory (outside every workspace the runner makes).
fn private_state_dir(session: &str) -> PathBuf {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::env::temp_dir().join(format!(
        "gatehouse-state-{}-{session}-{n}",
        std::process::id()
    ))
}

/// A session name usable as a record folder.
fn folder(session: &str) -> String {
    session
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A private state directory: removed when it is dropped (the session closes or is
/// replaced, the adapter ends, or the `open` that made it fails after all). A suite run
/// opens some 1,500 sessions, whose directories were left in the system's temporary
/// directory.
#[derive(Debug)]
struct PrivateDir(PathBuf);

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The order's state in one session: the guarded session every tool call of the session
/// goes through, and the private state directory made for it when the setup named none.
#[derive(Debug)]
pub struct OrderState {
    /// Dropped first: it may still write to its state directory.
    session: GuardedSession,
    _private: Option<PrivateDir>,
}

impl OrderState {
    /// The guarded session.
    pub fn session(&mut self) -> &mut GuardedSession {
        &mut self.session
    }
}

/// Builds the guarded session an `open` request describes around the gate the gate's
/// `open` configured; with it, the private state directory made for it when the request
/// named none (no one can name it again, so it goes with the session).
pub fn open_session(
    session: &str,
    setup: &OrderSetup,
    (gate, grants): (GateConfig, Vec<Grant>),
) -> Result<OrderState, WireError> {
    let resume: bool = setup.resume.unwrap_or(false);
    let flag = match setup.safety.as_deref() {
        None => None,
        Some(s) => Some(
            Mode::parse(s)
                .ok_or_else(|| WireError::unsupported(format!("unknown safety mode {s:?}")))?,
        ),
    };
    let agent = setup
        .agent_file
        .as_ref()
        .map(|f| AgentFile::load(f))
        .transpose()
        .map_err(|e| WireError::refused(e.to_string()))?;
    let settings = setup
        .settings_file
        .as_ref()
        .map(|f| SettingsFile::load(f))
        .transpose()
        .map_err(|e| WireError::refused(e.to_string()))?;
    let workspace = gate.workspace.clone();
    // A named state directory, or a private one this session made (removed at its end).
    let (state_dir, private) = match &setup.state_dir {
        Some(dir) => (dir.clone(), None),
        None => {
            let dir = private_state_dir(&folder(session));
            (dir.clone(), Some(PrivateDir(dir)))
        }
    };
    let config = SessionConfig {
        id: folder(session),
        gate,
        agent,
        settings,
        flag,
        state_dir,
        roots: vec![workspace],
        grants,
        trust: None,
        resume,
    };
    let session = GuardedSession::open(config).map_err(|e| WireError::refused(e.to_string()))?;
    Ok(OrderState {
        session,
        _private: private,
    })
}

/// Why a file `load` reads cannot be used (each error names its file or directory).
#[derive(Debug, thiserror::Error)]
enum LoadError {
    /// The agent file or the settings file.
    #[error(transparent)]
    Config(#[from] gatehouse::config::ConfigError),
    /// The state directory.
    #[error(transparent)]
    State(#[from] gatehouse::records::RecordError),
}

/// `load`: reads the files an `open` would read and checks the state directory, and says
/// whether they load, with the one line of the first error.
pub fn load(request: &Map<String, Value>) -> Result<Map<String, Value>, WireError> {
    let agent_file: Option<PathBuf> = field(request, "agent_file")?;
    let settings_file: Option<PathBuf> = field(request, "settings_file")?;
    let state_dir: Option<PathBuf> = field(request, "state_dir")?;
    let roots: Vec<PathBuf> = field(request, "roots")?.unwrap_or_default();
    let outcome: Result<(), LoadError> = (|| {
        if let Some(f) = &agent_file {
            AgentFile::load(f)?;
        }
        if let Some(f) = &settings_file {
            SettingsFile::load(f)?;
        }
        if let Some(d) = &state_dir {
            let roots: Vec<&Path> = roots.iter().map(PathBuf::as_path).collect();
            StateDir::open(d, &roots)?;
        }
        Ok(())
    })();
    let mut m = Map::new();
    m.insert("loaded".into(), json!(outcome.is_ok()));
    m.insert("error".into(), json!(outcome.err().map(|e| e.to_string())));
    Ok(m)
}

/// The answer fields of a ruling.
pub fn ruling_fields(r: &Ruling) -> Map<String, Value> {
    let mut m = match serde_json::to_value(r) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    // The mode as two plain fields.
    m.insert("mode".into(), json!(r.mode.mode.name()));
    m.insert("mode_source".into(), json!(r.mode.source.name()));
    m
}

/// `rule`: adds a pattern in the session.
pub fn rule(
    s: &mut GuardedSession,
    list: &str,
    pattern: &str,
) -> Result<Map<String, Value>, WireError> {
    let list = match list {
        "allow" => List::Allow,
        "ask" => List::Ask,
        "deny" => List::Deny,
        other => return Err(WireError::unsupported(format!("unknown list {other:?}"))),
    };
    let added = s
        .add_rule(list, pattern)
        .map_err(|e| WireError::error(e.to_string()))?;
    let mut m = Map::new();
    m.insert("added".into(), json!(added.is_ok()));
    m.insert("error".into(), json!(added.err().map(|e| e.to_string())));
    Ok(m)
}

/// `crash_at`: arms a crash point of the records.
pub fn crash_at(point: &str) -> Result<Map<String, Value>, WireError> {
    let p: CrashPoint = serde_json::from_value(json!(point))
        .map_err(|_| WireError::unsupported(format!("unknown crash point {point:?}")))?;
    arm(p);
    Ok(Map::new())
}

/// The answer fields of `act`: the ruling's, what ran (the run's fields as `run` gives
/// them, its streams as the model gets them), and every hook run before and after it.
pub fn act_fields(a: Acted) -> Map<String, Value> {
    let mut m = ruling_fields(&a.ruling);
    let hooks: Vec<Value> = a
        .ruling
        .hooks
        .iter()
        .chain(&a.after)
        .map(|h| serde_json::to_value(h).unwrap_or(Value::Null))
        .collect();
    m.insert("hooks".into(), Value::Array(hooks));
    m.insert("ran".into(), json!(a.not_run.is_none()));
    m.insert("not_run".into(), json!(a.not_run.map(NotRun::name)));
    let run = a.run.map(super::wire::fence::WireRun::of);
    for (k, v) in match serde_json::to_value(&run) {
        Ok(Value::Object(r)) => r,
        _ => Map::new(),
    } {
        m.insert(k, v);
    }
    if run.is_none() {
        for k in ["exit", "signal", "held_by", "refused"] {
            m.insert(k.into(), Value::Null);
        }
        m.insert("stdout".into(), json!(""));
        m.insert("stderr".into(), json!(""));
    }
    m.insert("truncated".into(), json!(a.truncated));
    m.insert("withheld".into(), json!(a.withheld));
    m.insert("response".into(), a.response);
    m.insert(
        "marked".into(),
        Value::Array(
            a.marked
                .iter()
                .map(|(p, e)| json!({"path": p, "effect": e}))
                .collect(),
        ),
    );
    m
}

/// One call through the session's order, decided and recorded: the answer of `decide`
/// and `call`.
pub fn decide_one(
    s: &mut GuardedSession,
    tool: &str,
    input: Value,
    id: Option<String>,
) -> Result<Body, WireError> {
    let call = s.call(tool, input, id);
    let ruling = s
        .decide(&call)
        .map_err(|e| WireError::error(e.to_string()))?;
    Ok(Body::Decision(ruling_fields(&ruling)))
}

/// The control of `permissions` and `hooks`.
pub struct Order;

impl Control for Order {
    const CAPABILITIES: &'static [&'static str] = &["permissions", "hooks"];
    const OPS: &'static [&'static str] = OPS;
    type Setup = OrderSetup;
    type State = OrderState;
    type Request = OrderRequest;

    fn open(opening: &mut Opening<'_>) -> Result<OrderState, WireError> {
        let gate = opening
            .opened
            .gate
            .take()
            .ok_or_else(|| WireError::error("the gate did not open"))?;
        open_session(opening.session, &opening.setup.order, gate)
    }

    fn parse(op: &str, request: &Value) -> Result<OrderRequest, WireError> {
        parse_as(op, request)
    }

    fn answer(request: OrderRequest, sessions: &mut dyn Sessions) -> Result<Body, WireError> {
        match request {
            OrderRequest::Call {
                session,
                tool,
                input,
                call_id,
            } => {
                let input = input_object(&tool, &input);
                decide_one(sessions.started(&session)?, &tool, input, call_id)
            }
            OrderRequest::Act {
                session,
                tool,
                input,
                call_id,
                if_asked,
            } => {
                let input = input_object(&tool, &input);
                let call = sessions.started(&session)?.call(&tool, input, call_id);
                let (s, plane) = sessions.with_plane(&session)?;
                let acted = s.act(&call, plane, if_asked).map_err(|e| match e {
                    ActError::NotRunnable(_) => WireError::unsupported(e.to_string()),
                    _ => WireError::error(e.to_string()),
                })?;
                Ok(Body::Fields(act_fields(acted)))
            }
            OrderRequest::Calls { session, calls } => {
                let s = sessions.started(&session)?;
                let calls: Vec<_> = calls
                    .iter()
                    .map(|c| s.call(&c.tool, input_object(&c.tool, &c.input), c.call_id.clone()))
                    .collect();
                let rulings = s
                    .decide_many(&calls)
                    .map_err(|e| WireError::error(e.to_string()))?;
                let mut m = Map::new();
                m.insert(
                    "rulings".into(),
                    Value::Array(
                        rulings
                            .iter()
                            .map(|r| Value::Object(ruling_fields(r)))
                            .collect(),
                    ),
                );
                Ok(Body::Fields(m))
            }
            OrderRequest::Rule {
                session,
                list,
                pattern,
            } => Ok(Body::Fields(rule(
                sessions.started(&session)?,
                &list,
                &pattern,
            )?)),
            OrderRequest::Load { fields } => Ok(Body::Fields(load(&fields)?)),
            OrderRequest::CrashAt { session, point } => {
                sessions.started(&session)?;
                Ok(Body::Fields(crash_at(&point)?))
            }
        }
    }
}
