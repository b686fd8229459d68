//! The order's messages of the adapter protocol: the `open` setup fields of `permissions`
//! and `hooks` (the agent and settings files the runner writes under `R/config`, the state
//! directory `R/state`) and the requests of its steps, every string through the session's
//! placeholder substitution.

use serde_json::{json, Map, Value};
use std::path::Path;

use super::model::{json as to_json, ActSpec, Action, CallSpec, CrashSpec, LoadSpec, Setup};

/// Writes `text` to `dir/name` and returns the path. Only into a session's own `R/config`
/// (an absolute path): a setup built without a session (the schema tests) writes nothing.
fn write_config(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    if dir.is_absolute() {
        let _ = std::fs::create_dir_all(dir);
        // A failure to write shows as the implementation failing to read it.
        let _ = std::fs::write(&path, text);
    }
    path.to_string_lossy().into_owned()
}

/// The setup fields (sent when the scenario needs `permissions` or `hooks`): the agent
/// and settings files written under `@CONFIG@`, the state directory (default `@STATE@`).
impl crate::controls::setup::CustomWire for Setup {
    fn custom_wire(
        &self,
        dirs: &crate::protocol::SessionDirs,
        sub: &dyn Fn(&str) -> String,
        out: &mut Map<String, Value>,
    ) {
        setup(self, dirs, sub, out);
    }
}

pub fn setup(
    s: &Setup,
    _: &crate::protocol::SessionDirs,
    sub: &dyn Fn(&str) -> String,
    m: &mut Map<String, Value>,
) {
    let config_dir = Path::new(&sub("@CONFIG@")).to_path_buf();
    let config_dir = config_dir.as_path();
    let state_dir = sub("@STATE@");
    let agent = match (&s.agent, &s.agent_file) {
        (Some(text), _) => Some(write_config(config_dir, "agent.yaml", &sub(text))),
        (None, Some(path)) => Some(locate(path, sub)),
        (None, None) => None,
    };
    m.insert("agent_file".into(), json!(agent));
    let settings = s
        .settings
        .as_ref()
        .map(|text| write_config(config_dir, "settings.yaml", &sub(text)));
    m.insert("settings_file".into(), json!(settings));
    m.insert("safety".into(), json!(s.safety));
    let state = match &s.state_dir {
        Some(d) => sub(d),
        None => state_dir,
    };
    m.insert("state_dir".into(), json!(state));
}

/// A path as given: placeholders replaced, a relative one under the workspace.
fn locate(path: &str, sub: &dyn Fn(&str) -> String) -> String {
    let p = sub(path);
    if Path::new(&p).is_absolute() {
        p
    } else {
        sub(&format!("@WORKSPACE@/{p}"))
    }
}

fn substitute(v: Value, sub: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::String(s) => Value::String(sub(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(|x| substitute(x, sub)).collect()),
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, x)| (k, substitute(x, sub)))
                .collect(),
        ),
        other => other,
    }
}

fn call_fields(c: &CallSpec, sub: &dyn Fn(&str) -> String) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("tool".into(), json!(c.tool));
    m.insert("input".into(), substitute(to_json(&c.input), sub));
    m.insert("call_id".into(), json!(c.id));
    m
}

fn act_fields(a: &ActSpec, sub: &dyn Fn(&str) -> String) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("tool".into(), json!(a.tool));
    m.insert("input".into(), substitute(to_json(&a.input), sub));
    m.insert("call_id".into(), json!(a.id));
    if let Some(x) = &a.if_asked {
        m.insert("if_asked".into(), json!(x));
    }
    m
}

/// The request of a step that sends one (`call`, `calls`, `act`, `rule`, `load`).
pub fn request(
    a: &Action,
    session: &str,
    config_dir: &Path,
    sub: &dyn Fn(&str) -> String,
) -> Option<Map<String, Value>> {
    let mut m = Map::new();
    match a {
        Action::Call(c) => {
            m.insert("op".into(), json!("call"));
            m.insert("session".into(), json!(session));
            m.extend(call_fields(c, sub));
        }
        Action::Act(a) => {
            m.insert("op".into(), json!("act"));
            m.insert("session".into(), json!(session));
            m.extend(act_fields(a, sub));
        }
        Action::Calls(cs) => {
            m.insert("op".into(), json!("calls"));
            m.insert("session".into(), json!(session));
            let calls: Vec<Value> = cs
                .iter()
                .map(|c| Value::Object(call_fields(c, sub)))
                .collect();
            m.insert("calls".into(), Value::Array(calls));
        }
        Action::Rule(r) => {
            m.insert("op".into(), json!("rule"));
            m.insert("session".into(), json!(session));
            m.insert("list".into(), json!(r.list));
            m.insert("pattern".into(), json!(sub(&r.pattern)));
        }
        Action::Load(l) => {
            m.insert("op".into(), json!("load"));
            m.extend(load_fields(l, config_dir, sub));
        }
        _ => return None,
    }
    Some(m)
}

fn load_fields(
    l: &LoadSpec,
    config_dir: &Path,
    sub: &dyn Fn(&str) -> String,
) -> Map<String, Value> {
    let mut m = Map::new();
    let agent = match (&l.agent, &l.agent_file) {
        (Some(text), _) => Some(write_config(config_dir, "agent.yaml", &sub(text))),
        (None, Some(p)) => Some(locate(p, sub)),
        _ => None,
    };
    m.insert("agent_file".into(), json!(agent));
    let settings = l
        .settings
        .as_ref()
        .map(|t| write_config(config_dir, "settings.yaml", &sub(t)));
    m.insert("settings_file".into(), json!(settings));
    m.insert(
        "state_dir".into(),
        json!(l.state_dir.as_ref().map(|d| sub(d))),
    );
    m.insert("roots".into(), json!([sub("@WORKSPACE@")]));
    m
}

/// The request that arms a crash point.
pub fn crash_at(session: &str, at: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("op".into(), json!("crash_at"));
    m.insert("session".into(), json!(session));
    m.insert("point".into(), json!(at));
    m
}

impl crate::controls::ToRequest for Action {
    fn request(
        &self,
        session: &str,
        _: &crate::controls::Setup,
        sub: &dyn Fn(&str) -> String,
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        request(self, session, std::path::Path::new(&sub("@CONFIG@")), sub)
    }
    /// The records the runner reads itself, restarts and crashes.
    fn by_runner(&self, env: &crate::controls::RunnerEnv<'_>) -> Option<crate::controls::ByRunner> {
        use crate::controls::ByRunner;
        match self {
            a if a.is_local() => Some(ByRunner::Answer(super::judge::local(
                a,
                env.locate,
                env.has_bait,
            ))),
            Action::Restart(kind) => Some(ByRunner::Restart {
                kill: kind == "kill",
            }),
            Action::Crash(c) => Some(ByRunner::Crash {
                arm: crash_at(env.session, &c.at),
                inner: crash_inner(c, env.session, env.sub),
            }),
            _ => None,
        }
    }
}

/// The request a `crash` step expects the implementation to die in.
pub fn crash_inner(
    c: &CrashSpec,
    session: &str,
    sub: &dyn Fn(&str) -> String,
) -> Map<String, Value> {
    let action = if let Some(call) = &c.call {
        Action::Call(call.clone())
    } else if let Some(rule) = &c.rule {
        Action::Rule(rule.clone())
    } else {
        let mut m = Map::new();
        m.insert("op".into(), Value::String("answer".into()));
        m.insert("session".into(), Value::String(session.into()));
        m.insert(
            "choice".into(),
            Value::String(c.answer.clone().unwrap_or_default()),
        );
        return m;
    };
    request(
        &action,
        session,
        std::path::Path::new(&sub("@CONFIG@")),
        sub,
    )
    .unwrap_or_default()
}
