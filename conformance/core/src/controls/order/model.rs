//! The order's part of a scenario file: its setup fields (`agent`, `agent_file`,
//! `settings`, `safety`, `state_dir`), its steps (`call`, `calls`, `rule`, `load`,
//! `restart`, `crash`, and the runner's own `jsonl`, `file`, `pidfile`) and their `expect`
//! keys.

use serde::de::{Error as _, MapAccess};
use serde::Deserialize;
use serde_json::Value;

crate::setup! {
    @wire = <Setup as crate::controls::setup::CustomWire>::custom_wire;
    /// The agent file's contents, written by the runner to `R/config/agent.yaml`.
    agent: String => custom,
    /// A path to the agent file (a fixture file, placeholders allowed).
    agent_file: String => custom,
    /// The settings file's contents, written to `R/config/settings.yaml`.
    settings: String => custom,
    /// The person's flag.
    safety: String => custom,
    /// The state directory (default `@STATE@`).
    state_dir: String => custom,
}

/// One call: `{ tool, input, id }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallSpec {
    /// The tool.
    pub tool: String,
    /// A string, or a table of arguments.
    pub input: toml::Value,
    /// The call's id.
    #[serde(default)]
    pub id: Option<String>,
}

/// `act = { tool, input, id, if_asked }`: a call through the order that, when allowed,
/// runs in the session's fence.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActSpec {
    /// The tool (`shell` or `execute_code`).
    pub tool: String,
    /// A string, or a table of arguments.
    pub input: toml::Value,
    /// The call's id.
    #[serde(default)]
    pub id: Option<String>,
    /// The person's answer to a redirection's trust prompt (`yes`, `no`, `leave`).
    #[serde(default)]
    pub if_asked: Option<String>,
}

/// `rule = { list, pattern }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// `allow`, `ask`, `deny`.
    pub list: String,
    /// The pattern.
    pub pattern: String,
}

/// `load = { agent, agent_file, settings, state_dir }`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadSpec {
    /// Agent file contents.
    #[serde(default)]
    pub agent: Option<String>,
    /// Agent file path.
    #[serde(default)]
    pub agent_file: Option<String>,
    /// Settings file contents.
    #[serde(default)]
    pub settings: Option<String>,
    /// A state directory to check.
    #[serde(default)]
    pub state_dir: Option<String>,
}

/// `crash = { at, call | answer | rule }`: arm a crash point, then send a step the
/// implementation dies in; then restart and resume.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrashSpec {
    /// `before_rename` or `mid_append`.
    pub at: String,
    /// A call to die in.
    #[serde(default)]
    pub call: Option<CallSpec>,
    /// An answer to die in (`family`, `exact`, ...).
    #[serde(default)]
    pub answer: Option<String>,
    /// A session pattern to die in.
    #[serde(default)]
    pub rule: Option<RuleSpec>,
}

/// The action keys this control owns.
pub const ACTION_KEYS: &[&str] = &[
    "call", "calls", "act", "rule", "load", "restart", "crash", "jsonl", "file", "pidfile",
];

/// One step of this control.
#[derive(Debug, Clone)]
pub enum Action {
    /// One call through the order.
    Call(CallSpec),
    /// Calls decided at once.
    Calls(Vec<CallSpec>),
    /// One call through the order, run in the fence when allowed.
    Act(ActSpec),
    /// A pattern added in the session.
    Rule(RuleSpec),
    /// Whether files load.
    Load(LoadSpec),
    /// End the implementation (`clean` or `kill`), start it again, resume the session.
    Restart(String),
    /// Die at a crash point, then resume.
    Crash(CrashSpec),
    /// The runner reads a JSON-lines file.
    Jsonl(String),
    /// The runner reads a file.
    File(String),
    /// The runner reads a pid from a file and looks at the process.
    Pidfile(String),
}

/// Reads action `key`.
pub fn parse<'de, A: MapAccess<'de>>(
    key: &str,
    map: &mut A,
) -> Result<(Action, crate::controls::Problems), A::Error> {
    let mut problems = Vec::new();
    let a = match key {
        "call" => Action::Call(map.next_value()?),
        "calls" => Action::Calls(map.next_value()?),
        "act" => {
            let a: ActSpec = map.next_value()?;
            if let Some(x) = &a.if_asked {
                if !["yes", "no", "leave"].contains(&x.as_str()) {
                    problems.push(format!(
                        "`act.if_asked` is `yes`, `no` or `leave`, not {x:?}"
                    ));
                }
            }
            if a.tool != "shell" && a.tool != "execute_code" {
                problems.push(format!(
                    "`act` runs `shell` or `execute_code`, not {:?}",
                    a.tool
                ));
            }
            Action::Act(a)
        }
        "rule" => Action::Rule(map.next_value()?),
        "load" => Action::Load(map.next_value()?),
        "restart" => {
            let k: String = map.next_value()?;
            if k != "clean" && k != "kill" {
                problems.push(format!("`restart` is `clean` or `kill`, not {k:?}"));
            }
            Action::Restart(k)
        }
        "crash" => {
            let c: CrashSpec = map.next_value()?;
            let inner = [c.call.is_some(), c.answer.is_some(), c.rule.is_some()];
            if inner.iter().filter(|x| **x).count() != 1 {
                problems.push("`crash` needs exactly one of `call`, `answer`, `rule`".into());
            }
            Action::Crash(c)
        }
        "jsonl" => Action::Jsonl(map.next_value()?),
        "file" => Action::File(map.next_value()?),
        "pidfile" => Action::Pidfile(map.next_value()?),
        _ => return Err(A::Error::custom(format!("`{key}` is not an order step"))),
    };
    Ok((a, problems))
}

impl Action {
    /// A short label for messages.
    pub fn label(&self) -> String {
        match self {
            Action::Call(c) => format!("call {} {}", c.tool, show(&c.input)),
            Action::Calls(c) => format!("calls ({})", c.len()),
            Action::Act(a) => format!("act {} {}", a.tool, show(&a.input)),
            Action::Rule(r) => format!("rule {} {:?}", r.list, r.pattern),
            Action::Load(_) => "load".into(),
            Action::Restart(k) => format!("restart {k:?}"),
            Action::Crash(c) => format!("crash at {}", c.at),
            Action::Jsonl(p) => format!("jsonl {p:?}"),
            Action::File(p) => format!("file {p:?}"),
            Action::Pidfile(p) => format!("pidfile {p:?}"),
        }
    }

    /// The `expect` keys that apply.
    pub fn expect_keys(&self) -> &'static [&'static str] {
        match self {
            Action::Call(_) => CALL_KEYS,
            Action::Calls(_) => &["rulings"],
            Action::Act(_) => ACT_KEYS,
            Action::Rule(_) => &["added", "error_has"],
            Action::Load(_) => &["loaded", "error_has"],
            Action::Restart(_) | Action::Crash(_) => {
                &["died", "resumed", "error_has", "notices_has"]
            }
            Action::Jsonl(_) => &["count", "keys", "lines", "lacks"],
            Action::File(_) => &["has", "lacks", "no_bait"],
            Action::Pidfile(_) => &["alive"],
        }
    }

    /// Whether the runner answers the step itself from the filesystem.
    pub fn is_local(&self) -> bool {
        matches!(
            self,
            Action::Jsonl(_) | Action::File(_) | Action::Pidfile(_)
        )
    }
}

fn show(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

const CALL_KEYS: &[&str] = &[
    "decision",
    "stage",
    "route",
    "reason",
    "label",
    "mode",
    "mode_source",
    "source",
    "hooks",
    "advice",
    "input",
    "redirects",
    "hook_message_contains",
];

const ACT_KEYS: &[&str] = &[
    "decision",
    "stage",
    "route",
    "reason",
    "label",
    "mode",
    "source",
    "hooks",
    "advice",
    "input",
    "redirects",
    "hook_message_contains",
    "ran",
    "not_run",
    "exit",
    "withheld",
    "truncated",
    "post_hooks",
    "response_hooks",
    "marked",
];

/// Every `expect` key of this control.
pub const EXPECT_KEYS: &[&str] = &[
    "ran",
    "not_run",
    "withheld",
    "truncated",
    "post_hooks",
    "response_hooks",
    "marked",
    "stage",
    "label",
    "mode",
    "mode_source",
    "source",
    "hooks",
    "advice",
    "input",
    "redirects",
    "hook_message_contains",
    "rulings",
    "added",
    "error_has",
    "loaded",
    "died",
    "resumed",
    "notices_has",
    "count",
    "keys",
    "lines",
    "lacks",
    "has",
    "no_bait",
    "alive",
];

/// The order's `expect` keys (only those written are checked).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// `allow`, `ask`, `deny`.
    pub decision: Option<String>,
    /// The stage.
    pub stage: Option<String>,
    /// The route.
    pub route: Option<String>,
    /// The reason code.
    pub reason: Option<String>,
    /// The label.
    pub label: Option<String>,
    /// The mode in force.
    pub mode: Option<String>,
    /// Its source.
    pub mode_source: Option<String>,
    /// A table every key of which the source must hold.
    pub source: Option<toml::Value>,
    /// The codes of every hook run, in order.
    pub hooks: Option<Vec<String>>,
    /// The code of the preempting hook's allow, or `false` for none.
    pub advice: Option<toml::Value>,
    /// The input after the transforms, exactly.
    pub input: Option<toml::Value>,
    /// Each redirection (subset tables), in order.
    pub redirects: Option<Vec<toml::Value>>,
    /// A substring of the deciding hook's message.
    pub hook_message_contains: Option<String>,
    /// `calls`: each ruling (subset tables), in order.
    pub rulings: Option<Vec<toml::Value>>,
    /// `rule`: whether it was added.
    pub added: Option<bool>,
    /// Substrings of the one-line error.
    pub error_has: Option<Vec<String>>,
    /// `load`: whether the files loaded.
    pub loaded: Option<bool>,
    /// `crash`: whether the implementation died.
    pub died: Option<bool>,
    /// `restart`, `crash`: whether the session resumed.
    pub resumed: Option<bool>,
    /// Substrings of the notices the resumed session reports.
    pub notices_has: Option<Vec<String>>,
    /// `jsonl`: the number of lines.
    pub count: Option<usize>,
    /// `jsonl`: the exact key set of every line.
    pub keys: Option<Vec<String>>,
    /// `jsonl`: each line (subset tables), in order; also fixes the count.
    pub lines: Option<Vec<toml::Value>>,
    /// `jsonl`, `file`: strings the file must not hold.
    pub lacks: Option<Vec<String>>,
    /// `file`: strings the file must hold.
    pub has: Option<Vec<String>>,
    /// `file`: no planted secret in it.
    pub no_bait: Option<bool>,
    /// `pidfile`: whether the process is alive.
    pub alive: Option<bool>,
    /// `act`: whether the call ran.
    pub ran: Option<bool>,
    /// `act`: why it did not run (`denied`, `pending`, `redirect_declined`, `refused`),
    /// or `false` for none.
    pub not_run: Option<toml::Value>,
    /// `act`: the exit status, or `"nonzero"`.
    pub exit: Option<toml::Value>,
    /// `act`: the code the response was withheld for, or `false` for none.
    pub withheld: Option<toml::Value>,
    /// `act`: whether a stream was cut.
    pub truncated: Option<bool>,
    /// `act`: the codes of the `post_tool_use` runs, in order.
    pub post_hooks: Option<Vec<String>>,
    /// `act`: the codes of the `tool_response_transform` runs, in order.
    pub response_hooks: Option<Vec<String>>,
    /// `act`: each redirection target marked before the line ran (subset tables).
    pub marked: Option<Vec<toml::Value>>,
}

/// A TOML value as JSON.
pub fn json(v: &toml::Value) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

impl crate::controls::ControlAction for Action {
    crate::forward_action!();
    fn capability(&self) -> Option<&'static str> {
        match self {
            Action::Act(_) => Some("fence"),
            _ => Some("permissions"),
        }
    }
    fn kind(&self) -> crate::controls::StepKind {
        match self {
            Action::Act(_) => crate::controls::StepKind::Run,
            _ => crate::controls::StepKind::Other,
        }
    }
}

/// The decision order: permissions, hooks, `act`, records.
pub struct Order;

impl crate::controls::Control for Order {
    type Action = Action;
    type Setup = SetupPatch;
    const CAPABILITIES: &'static [&'static str] = &["permissions", "hooks"];
}
