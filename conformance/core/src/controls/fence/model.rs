//! The fence's part of a scenario file (`fence`): the setup fields (the policy, extra
//! workspace roots, kernel limits), the steps `run`, `posture`, `toggle` and their
//! `expect` keys (exit, signal, the fence that held, the posture).

use serde::de::{Error as _, MapAccess};
use serde::{Deserialize, Serialize};

use crate::vocab::{GrantTool, OrNull};

/// `fence_policy`: what the plane does where a protection is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FencePolicy {
    /// Refuse unless the fence is whole (the default).
    Required,
    /// The explicit opt-in: a degraded fence may run commands.
    Degraded,
    /// The fence is switched off.
    Off,
}

/// `limits`: run as if the kernel offered less.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// `false`: behave as if user namespaces were unavailable.
    #[serde(default = "yes")]
    pub userns: bool,
    /// Cap Landlock at this ABI (`0` means none); absent: no cap.
    #[serde(default)]
    pub landlock_abi: Option<u32>,
}

fn yes() -> bool {
    true
}

pub use super::choices::Choices;

crate::setup! {
    @wire = <Setup as crate::controls::setup::CustomWire>::custom_wire;
    /// `required`, `degraded` or `off`.
    fence_policy: FencePolicy = FencePolicy::Required,
    /// Workspace roots besides the workspace.
    workspaces: Vec<String> = Vec::new() => custom,
    /// Run as if the kernel offered less.
    limits: Limits,
    /// The person's choices (section 15).
    choices: Choices => custom,
}

/// `run = "LINE"` or `run = { input, tool, cwd }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RunSpec {
    /// A `shell` command line run in the workspace.
    Line(String),
    /// The full form.
    Full(RunFull),
}

/// The table form of `run`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunFull {
    /// The command line or code.
    pub input: String,
    /// `shell` (default) or `execute_code`.
    pub tool: Option<GrantTool>,
    /// The working directory (default: the workspace).
    pub cwd: Option<String>,
    /// Run it on a fresh terminal of the jail's own (protocol 1.5).
    #[serde(default)]
    pub tty: bool,
}

/// `toggle = { to, confirmed }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToggleSpec {
    /// `on` or `off`.
    pub to: OnOff,
    /// Whether the person confirmed (default `false`).
    #[serde(default)]
    pub confirmed: bool,
}

/// `on` or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnOff {
    /// On.
    On,
    /// Off.
    Off,
}

/// The action keys this control owns.
pub const ACTION_KEYS: &[&str] = &["run", "posture", "toggle"];

/// One fence step.
#[derive(Debug, Clone)]
pub enum Action {
    /// `run`.
    Run {
        /// `shell` or `execute_code`.
        tool: GrantTool,
        /// The command line or code.
        input: String,
        /// The working directory, if given.
        cwd: Option<String>,
        /// On a terminal (`tty = true`).
        tty: bool,
    },
    /// `posture = true`.
    Posture,
    /// `toggle`.
    Toggle {
        /// `on` or `off`.
        to: OnOff,
        /// Confirmed.
        confirmed: bool,
    },
}

/// Reads the value of action `key` (one of [`ACTION_KEYS`]); the second part holds the
/// problems serde cannot see (`posture = false`).
pub fn parse<'de, A: MapAccess<'de>>(
    key: &str,
    map: &mut A,
) -> Result<(Action, crate::controls::Problems), A::Error> {
    let mut problems = Vec::new();
    let action = match key {
        "run" => {
            let (tool, input, cwd, tty) = match map.next_value()? {
                RunSpec::Line(l) => (GrantTool::Shell, l, None, false),
                RunSpec::Full(f) => (f.tool.unwrap_or(GrantTool::Shell), f.input, f.cwd, f.tty),
            };
            Action::Run {
                tool,
                input,
                cwd,
                tty,
            }
        }
        "posture" => {
            if !map.next_value::<bool>()? {
                problems.push("`posture` must be `true`".to_string());
            }
            Action::Posture
        }
        "toggle" => {
            let t: ToggleSpec = map.next_value()?;
            Action::Toggle {
                to: t.to,
                confirmed: t.confirmed,
            }
        }
        _ => return Err(A::Error::custom(format!("`{key}` is not a fence step"))),
    };
    Ok((action, problems))
}

impl Action {
    /// A short label for messages: `run "ls"`.
    pub fn label(&self) -> String {
        match self {
            Action::Run { input, .. } => format!("run {input:?}"),
            Action::Posture => "posture".to_string(),
            Action::Toggle { to, .. } => format!("toggle {}", crate::vocab::word(to)),
        }
    }

    /// The `expect` keys that apply.
    pub fn expect_keys(&self) -> &'static [&'static str] {
        match self {
            Action::Run { .. } => &["exit", "signal", "held_by", "refused", "posture"],
            Action::Posture => &["posture"],
            Action::Toggle { .. } => &["refused", "posture"],
        }
    }
}

/// The fence's `expect` keys.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// `run`: the exit status.
    pub exit: Option<OrNull<ExitSpec>>,
    /// `run`: the signal number (or `false`: null).
    pub signal: Option<OrNull<i64>>,
    /// `run`: the fence that held it.
    pub held_by: Option<String>,
    /// `run`, `toggle`: the refusal code (or `false`: null).
    pub refused: Option<OrNull<String>>,
    /// The posture.
    pub posture: Option<ExpectPosture>,
}

/// Every `expect` key of this control.
pub const EXPECT_KEYS: &[&str] = &["exit", "signal", "held_by", "refused", "posture"];

/// `exit = 0`, `exit = "zero"`, `exit = "nonzero"` (or `false`: null).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum ExitSpec {
    /// An exact status.
    Code(i64),
    /// `zero` or `nonzero`.
    Word(ExitWord),
}

/// The words `exit` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitWord {
    /// Status 0.
    Zero,
    /// Any status but 0 (a number: not null).
    Nonzero,
}

/// `posture = { ... }`: only the keys written are checked.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectPosture {
    /// `fence`, `off` or `none`.
    pub state: Option<String>,
    /// The backend (or `false`: null).
    pub backend: Option<OrNull<String>>,
    /// Whether it is degraded.
    pub degraded: Option<bool>,
    /// The Landlock ABI (or `false`: null).
    pub landlock_abi: Option<OrNull<i64>>,
    /// The whole `not_covered` list, as a set.
    pub not_covered: Option<Vec<String>>,
    /// Codes `not_covered` must hold (others allowed).
    pub not_covered_has: Option<Vec<String>>,
    /// Codes `not_covered` must not hold.
    pub not_covered_lacks: Option<Vec<String>>,
    /// `scrubbed` or `full`.
    pub env: Option<String>,
    /// `protected` or `unprotected`.
    pub session_log: Option<String>,
    /// A substring of `reason`.
    pub reason_contains: Option<String>,
    /// A text `reason` must not hold (a null reason holds none).
    pub reason_lacks: Option<String>,
    /// `choices.network`: the network mode named (protocol 1.4).
    pub network: Option<String>,
    /// `choices.passed_secrets`, as a set: every secret-looking name passed on purpose.
    pub passed_secrets: Option<Vec<String>>,
    /// `choices.ro`, as a set of paths (placeholders substituted): every extra read-only
    /// path the posture names (FENCE-PATHS-1).
    pub ro: Option<Vec<String>>,
    /// `choices.rw`, likewise: every extra writable root.
    pub rw: Option<Vec<String>>,
    /// `choices.hide`, likewise: every hidden path.
    pub hide: Option<Vec<String>>,
    /// `path_dropped`, as a set (placeholders substituted, compared as written): every
    /// entry of `PATH` left out because the jail cannot read it (FENCE-ENV-12).
    pub path_dropped: Option<Vec<String>>,
}

impl crate::controls::ControlAction for Action {
    crate::forward_action!();
    fn capability(&self) -> Option<&'static str> {
        Some("fence")
    }
    fn kind(&self) -> crate::controls::StepKind {
        match self {
            Action::Run { .. } => crate::controls::StepKind::Run,
            _ => crate::controls::StepKind::Other,
        }
    }
}

/// The fence: `run`, `posture`, `toggle`.
pub struct Fence;

impl crate::controls::Control for Fence {
    type Action = Action;
    type Setup = SetupPatch;
    const CAPABILITIES: &'static [&'static str] = &["fence"];
}
