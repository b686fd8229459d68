//! The scenario vocabulary of protocol 1.1: the file tools (`paths`), the trust map
//! (`trust`) and the fence (`fence`): their step tables as written, the expectation
//! sub-tables they add, the runner-evaluated `check` table and the `[platform]` ranges.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::OrNull;

/// What the person answers to a trust question: `yes`, `no` or `leave`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum YesNo {
    /// Yes.
    Yes,
    /// No.
    No,
    /// Stop (Ctrl-C): leave.
    Leave,
}

/// The trust of a write's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DataTrust {
    /// The turn observed nothing untrusted.
    Trusted,
    /// The turn observed something untrusted.
    Untrusted,
}

/// The path resolver an implementation is asked to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolver {
    /// `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`.
    Openat2,
    /// The component walk.
    Walk,
}

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

/// One directory named by a settings layer, and what the person answers if asked.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SettingsDir {
    /// `user`, `project` or `local`.
    pub layer: SettingsLayer,
    /// The name as the settings file wrote it.
    pub name: String,
    /// The answer if this name is asked about.
    pub answer: YesNo,
}

/// A settings layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SettingsLayer {
    /// The person's own settings.
    User,
    /// The project's checked-in settings.
    Project,
    /// The project's local settings.
    Local,
}

/// `read = "PATH"` or `read = { path, if_asked }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ReadSpec {
    /// Just the path.
    Path(String),
    /// The path and the answer to a quarantined-read prompt.
    Full(ReadFull),
}

/// The table form of `read`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadFull {
    /// The path, as the tool is given it.
    pub path: String,
    /// What the person answers if a prompt is offered (default `no`).
    pub if_asked: Option<YesNo>,
}

/// `write = { path, content, data, if_asked }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteSpec {
    /// The path.
    pub path: String,
    /// The new contents (default empty).
    #[serde(default)]
    pub content: String,
    /// The data's trust (default: `setup.data_trust`).
    pub data: Option<DataTrust>,
    /// What the person answers if the write prompts (default `yes`).
    pub if_asked: Option<YesNo>,
}

/// `edit = { path, old, new, data, if_asked }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditSpec {
    /// The path.
    pub path: String,
    /// The text replaced; it must occur exactly once.
    pub old: String,
    /// The replacement.
    pub new: String,
    /// The data's trust (default: `setup.data_trust`).
    pub data: Option<DataTrust>,
    /// What the person answers if the edit prompts (default `yes`).
    pub if_asked: Option<YesNo>,
}

/// `search = { path, pattern }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchSpec {
    /// Where the search starts.
    pub path: String,
    /// A literal substring.
    pub pattern: String,
}

/// The gestures a `gesture` step may make (the others come through setup or `read`).
pub const STEP_GESTURES: &[&str] = &[
    "at_path",
    "file_flag",
    "drop",
    "add_dir",
    "cli_add_dir",
    "cd",
    "untrust",
];

/// `gesture = { name, path, answer }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GestureSpec {
    /// One of [`STEP_GESTURES`].
    pub name: String,
    /// The path the person gave.
    pub path: String,
    /// What the person answers if the gesture puts a question (default `yes`).
    pub answer: Option<YesNo>,
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
    pub tool: Option<super::GrantTool>,
    /// The working directory (default: the workspace).
    pub cwd: Option<String>,
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

/// One entry of a `list` answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectEntry {
    /// The name.
    pub name: String,
    /// `file`, `dir`, `symlink` or `other`.
    pub kind: String,
}

/// One rule of a `status` answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectRule {
    /// `relative` or `absolute`.
    pub namespace: String,
    /// The key (`""` is the working directory).
    pub key: String,
    /// `trusted` or `untrusted`.
    pub trust: String,
    /// The gesture (or `write`, `redirect`) that wrote it; unchecked when absent.
    pub origin: Option<String>,
}

/// One open root of a `status` or `resume` answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectRoot {
    /// The canonical path.
    pub path: String,
    /// How it was opened.
    pub how: String,
}

/// A root `resume` could not reopen.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectUnreopened {
    /// Its path.
    pub path: String,
    /// The path refusal code.
    pub code: String,
}

/// One settings-named directory as the `open` answer reports it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectSetting {
    /// The name as written.
    pub name: String,
    /// `asked`, `reported` or `merged`.
    pub result: String,
    /// The resolved path shown in the question; unchecked when absent.
    pub resolved: Option<String>,
    /// The code of a `reported` name (or `false`: null); unchecked when absent.
    pub code: Option<OrNull<String>>,
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
}

/// `check = { ... }`: evaluated by the runner on the real filesystem and on the answer,
/// never taken from the implementation's word.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// Paths whose every property (recursively for directories) must not change.
    #[serde(default)]
    pub unchanged: Vec<String>,
    /// Paths where nothing may exist after the step.
    #[serde(default)]
    pub absent: Vec<String>,
    /// Paths where something must exist after the step.
    #[serde(default)]
    pub exists: Vec<String>,
    /// Regular files and their exact contents after the step.
    #[serde(default)]
    pub content: BTreeMap<String, String>,
    /// Strings the `run` answer's stdout must hold.
    #[serde(default)]
    pub stdout_has: Vec<String>,
    /// Strings the `run` answer's stdout must not hold.
    #[serde(default)]
    pub stdout_lacks: Vec<String>,
    /// No planted secret anywhere in the answer.
    #[serde(default)]
    pub no_bait: bool,
    /// Nothing connected to the runner's socket.
    #[serde(default)]
    pub socket_untouched: bool,
    /// The runner's own process is alive and not stopped.
    #[serde(default)]
    pub process_alive: bool,
    /// `false` turns off the implicit guard of enforcement `run` steps.
    pub guard: Option<bool>,
}

impl Check {
    /// Whether it proves a positive effect (the allowed twin of a refused run).
    pub fn proves_effect(&self) -> bool {
        !self.exists.is_empty() || !self.content.is_empty() || !self.stdout_has.is_empty()
    }
}

/// `[fixture.socket]`: a UNIX socket the runner listens on.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SocketSpec {
    /// `path` (default) or `abstract`.
    #[serde(default)]
    pub kind: SocketKind,
    /// For `path`: where (default `@OUTSIDE@/gatehouse-bait.sock`).
    pub path: Option<String>,
}

/// The kind of the runner's socket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SocketKind {
    /// A pathname socket.
    #[default]
    Path,
    /// A Linux abstract socket.
    Abstract,
}

/// An integer range over the implementation's declared environment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    /// Lowest value accepted.
    pub min: Option<i64>,
    /// Highest value accepted.
    pub max: Option<i64>,
}

impl Range {
    /// Whether `v` (`None`: the environment says null, read as 0) lies in the range.
    pub fn holds(&self, v: Option<i64>) -> bool {
        let v = v.unwrap_or(0);
        self.min.map_or(true, |m| v >= m) && self.max.map_or(true, |m| v <= m)
    }

    /// `>= 3`, `<= 2`, `3..=5`.
    pub fn describe(&self) -> String {
        match (self.min, self.max) {
            (Some(a), Some(b)) => format!("{a}..={b}"),
            (Some(a), None) => format!(">= {a}"),
            (None, Some(b)) => format!("<= {b}"),
            (None, None) => "any".into(),
        }
    }
}
