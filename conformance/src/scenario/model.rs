//! The data model of a scenario file, deserialized strictly (`deny_unknown_fields`
//! everywhere), plus the resolved forms the runner uses.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::controls::*;
use super::OrNull;

/// One scenario file exactly as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// States the behaviour, present tense.
    pub title: String,
    /// The requirement IDs the file covers.
    pub requirements: Spanned<Vec<Spanned<String>>>,
    /// `decision` or `enforcement`.
    pub tier: Tier,
    /// Capabilities the implementation must declare.
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// Prose for reviewers; read by people only, never sent.
    #[allow(dead_code)]
    #[serde(default)]
    pub info: Option<String>,
    /// Where the scenario applies.
    #[serde(default)]
    pub platform: Platform,
    /// The files built fresh for every session.
    #[serde(default)]
    pub fixture: Fixture,
    /// The session's setup (fields not written take the defaults).
    #[serde(default)]
    pub setup: SetupPatch,
    /// Table form: each row its own session.
    #[serde(default, rename = "case")]
    pub cases: Option<Vec<Spanned<Entry>>>,
    /// Sequence form: all steps in one session.
    #[serde(default, rename = "step")]
    pub steps: Option<Vec<Spanned<Entry>>>,
}

/// The scenario's tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Pure policy: nothing runs.
    Decision,
    /// Commands really run inside the fence.
    Enforcement,
}

/// `[platform]`: where a scenario applies.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    /// The runner's host os (`std::env::consts::OS`); absent means any.
    #[serde(default)]
    pub os: Option<Vec<String>>,
    /// The Landlock ABI the implementation declares (`null` counts as 0).
    #[serde(default)]
    pub landlock_abi: Option<Range>,
    /// The fence backends the implementation may declare (`environment.fence_backend`).
    #[serde(default)]
    pub fence_backend: Option<Vec<String>>,
}

/// One tree of the fixture: directories, files and symlinks, paths relative to its root.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tree {
    /// Directories to create.
    #[serde(default)]
    pub dirs: Vec<String>,
    /// Files and their contents (written as given).
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Link path = target (placeholders substituted in the target).
    #[serde(default)]
    pub symlinks: BTreeMap<String, String>,
    /// Files given as hex bytes (for contents a TOML string cannot hold).
    #[serde(default)]
    pub binary: BTreeMap<String, String>,
    /// Named pipes to create.
    #[serde(default)]
    pub fifos: Vec<String>,
    /// Octal permission bits applied last (`"0644"`), to any entry but a symlink.
    #[serde(default)]
    pub modes: BTreeMap<String, String>,
}

/// `[fixture]`: the workspace tree plus the outside tree and the fake home.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    /// Directories inside the workspace.
    #[serde(default)]
    pub dirs: Vec<String>,
    /// Files inside the workspace.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Symlinks inside the workspace.
    #[serde(default)]
    pub symlinks: BTreeMap<String, String>,
    /// Hex-byte files inside the workspace.
    #[serde(default)]
    pub binary: BTreeMap<String, String>,
    /// Named pipes inside the workspace.
    #[serde(default)]
    pub fifos: Vec<String>,
    /// Permission bits inside the workspace.
    #[serde(default)]
    pub modes: BTreeMap<String, String>,
    /// `[fixture.outside]`: a tree beside the workspace.
    #[serde(default)]
    pub outside: Tree,
    /// `[fixture.home]`: the fake home directory.
    #[serde(default)]
    pub home: Tree,
    /// `[fixture.extra]`: a directory beside the workspace for extra roots (`@EXTRA@`).
    #[serde(default)]
    pub extra: Tree,
    /// `[fixture.sibling]`: the workspace of another session (`@SIBLING@`).
    #[serde(default)]
    pub sibling: Tree,
    /// `[fixture.socket]`: a UNIX socket the runner listens on (`@SOCKET@`).
    #[serde(default)]
    pub socket: Option<SocketSpec>,
}

impl Fixture {
    /// The workspace part as a [`Tree`].
    pub fn workspace(&self) -> Tree {
        Tree {
            dirs: self.dirs.clone(),
            files: self.files.clone(),
            symlinks: self.symlinks.clone(),
            binary: self.binary.clone(),
            fifos: self.fifos.clone(),
            modes: self.modes.clone(),
        }
    }
}

/// The kind of host the agent must behave as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Host {
    /// A POSIX host.
    Posix,
    /// A Windows host.
    Windows,
}

/// How a card reaches a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Asker {
    /// A terminal prompt.
    Terminal,
    /// A web page.
    Web,
    /// A speech interface.
    Speech,
    /// No way to ask.
    None,
}

/// The kind of a grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantKind {
    /// The exact line.
    Exact,
    /// A command family.
    Family,
}

/// The tools a grant may be bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantTool {
    /// The `shell` tool.
    Shell,
    /// The `execute_code` tool.
    ExecuteCode,
}

/// A grant, saved before the session or expected in an answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    /// `exact` or `family`.
    pub kind: GrantKind,
    /// The line or the family key.
    pub key: String,
    /// The tool it is bound to, when written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<GrantTool>,
}

/// `[setup]` as written: every field optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetupPatch {
    /// `posix` or `windows`.
    pub host: Option<Host>,
    /// `terminal`, `web`, `speech` or `none`.
    pub asker: Option<Asker>,
    /// Literal actions that always pass.
    pub allow_list: Option<Vec<String>>,
    /// Grants saved before the session.
    pub grants: Option<Vec<Grant>>,
    /// Card window override in milliseconds.
    pub card_window_ms: Option<u64>,
    /// `paths`: directories opened with `--add-dir` (reach only).
    pub roots: Option<Vec<String>>,
    /// `paths`: the resolver to use.
    pub resolver: Option<Resolver>,
    /// `trust`: the answer to the startup question (default `yes`).
    pub startup: Option<YesNo>,
    /// `trust`: started with `--dangerously-skip-permissions`.
    pub skip_permissions: Option<bool>,
    /// `trust`: directories named by settings layers, with the answers.
    pub settings_dirs: Option<Vec<SettingsDir>>,
    /// Runner-side only: the data trust of writes that do not say (default `trusted`).
    pub data_trust: Option<DataTrust>,
    /// `fence`: `required`, `degraded` or `off`.
    pub fence_policy: Option<FencePolicy>,
    /// `fence`: workspace roots besides the workspace.
    pub workspaces: Option<Vec<String>>,
    /// `fence`: run as if the kernel offered less.
    pub limits: Option<Limits>,
}

impl SetupPatch {
    /// `self` with every field written in `over` replaced.
    pub fn overlay(&self, over: &SetupPatch) -> SetupPatch {
        SetupPatch {
            host: over.host.or(self.host),
            asker: over.asker.or(self.asker),
            allow_list: over.allow_list.clone().or_else(|| self.allow_list.clone()),
            grants: over.grants.clone().or_else(|| self.grants.clone()),
            card_window_ms: over.card_window_ms.or(self.card_window_ms),
            roots: over.roots.clone().or_else(|| self.roots.clone()),
            resolver: over.resolver.or(self.resolver),
            startup: over.startup.or(self.startup),
            skip_permissions: over.skip_permissions.or(self.skip_permissions),
            settings_dirs: over
                .settings_dirs
                .clone()
                .or_else(|| self.settings_dirs.clone()),
            data_trust: over.data_trust.or(self.data_trust),
            fence_policy: over.fence_policy.or(self.fence_policy),
            workspaces: over.workspaces.clone().or_else(|| self.workspaces.clone()),
            limits: over.limits.clone().or_else(|| self.limits.clone()),
        }
    }

    /// The capabilities the fields written here need.
    pub fn implied_capabilities(&self) -> Vec<&'static str> {
        let mut caps = Vec::new();
        if self.roots.is_some() || self.resolver.is_some() {
            caps.push("paths");
        }
        if self.startup.is_some() || self.skip_permissions.is_some() || self.settings_dirs.is_some()
        {
            caps.push("trust");
        }
        if self.fence_policy.is_some() || self.workspaces.is_some() || self.limits.is_some() {
            caps.push("fence");
        }
        caps
    }

    /// The setup with defaults filled in (workspace and home are added by the runner).
    pub fn resolve(&self) -> Setup {
        Setup {
            host: self.host.unwrap_or(Host::Posix),
            asker: self.asker.unwrap_or(Asker::Terminal),
            allow_list: self.allow_list.clone().unwrap_or_default(),
            grants: self.grants.clone().unwrap_or_default(),
            card_window_ms: self.card_window_ms,
            roots: self.roots.clone().unwrap_or_default(),
            resolver: self.resolver,
            startup: self.startup.unwrap_or(YesNo::Yes),
            skip_permissions: self.skip_permissions.unwrap_or(false),
            settings_dirs: self.settings_dirs.clone().unwrap_or_default(),
            data_trust: self.data_trust.unwrap_or(DataTrust::Trusted),
            fence_policy: self.fence_policy.unwrap_or(FencePolicy::Required),
            workspaces: self.workspaces.clone().unwrap_or_default(),
            limits: self.limits.clone(),
        }
    }
}

/// A resolved setup, defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup {
    /// Host kind.
    pub host: Host,
    /// Asker.
    pub asker: Asker,
    /// Allow-list entries.
    pub allow_list: Vec<String>,
    /// Saved grants.
    pub grants: Vec<Grant>,
    /// Card window override.
    pub card_window_ms: Option<u64>,
    /// Extra roots (`--add-dir`).
    pub roots: Vec<String>,
    /// Resolver, or the implementation's default.
    pub resolver: Option<Resolver>,
    /// The startup answer.
    pub startup: YesNo,
    /// `--dangerously-skip-permissions`.
    pub skip_permissions: bool,
    /// Settings-named directories.
    pub settings_dirs: Vec<SettingsDir>,
    /// Default data trust of writes.
    pub data_trust: DataTrust,
    /// The fence policy.
    pub fence_policy: FencePolicy,
    /// Extra workspace roots.
    pub workspaces: Vec<String>,
    /// Kernel limits.
    pub limits: Option<Limits>,
}

/// What the person did with a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    /// Approve this run only.
    Once,
    /// Refuse.
    Refuse,
    /// Approve and save the exact line.
    Exact,
    /// Approve and save the family.
    Family,
    /// Nobody answers.
    Silence,
}

impl Choice {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Choice::Once => "once",
            Choice::Refuse => "refuse",
            Choice::Exact => "exact",
            Choice::Family => "family",
            Choice::Silence => "silence",
        }
    }
}

/// `tool = { name, input }`: a call to another tool.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The tool name.
    pub name: String,
    /// Its input.
    pub input: String,
}

/// One `[[case]]` row or `[[step]]` entry as written. Exactly one action key must be set;
/// `setup` and `requirements` are allowed in cases only (checked by validation).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Optional name, unique in the file.
    pub name: Option<String>,
    /// A `shell` call.
    pub decide: Option<String>,
    /// An `execute_code` call.
    pub code: Option<String>,
    /// A call to another tool.
    pub tool: Option<ToolCall>,
    /// What the person did with the last card.
    pub answer: Option<Choice>,
    /// List the grant table (`true`).
    pub grants: Option<bool>,
    /// Take grants back by key or number.
    pub revoke: Option<String>,
    /// The session's audit trail (`true`).
    pub audit: Option<bool>,
    /// `paths`: read one file.
    pub read: Option<ReadSpec>,
    /// `paths`: create or replace one file.
    pub write: Option<WriteSpec>,
    /// `paths`: change part of one file.
    pub edit: Option<EditSpec>,
    /// `paths`: list one directory.
    pub list: Option<String>,
    /// `paths`: search beneath a path.
    pub search: Option<SearchSpec>,
    /// `trust`: the map's answer for a path.
    pub query: Option<String>,
    /// `trust`: a gesture.
    pub gesture: Option<GestureSpec>,
    /// `trust`: list the rules and open roots (`true`).
    pub status: Option<bool>,
    /// `trust`: close the session and resume it from its record (`true`).
    pub resume: Option<bool>,
    /// `trust`: `/clear`, with the answer to the startup question it asks again.
    pub clear: Option<YesNo>,
    /// `trust`: start a new turn (`true`).
    pub turn: Option<bool>,
    /// Judge the answer to `open` (`true`); first step only.
    pub opened: Option<bool>,
    /// `fence`: run a command in the plane.
    pub run: Option<RunSpec>,
    /// `fence`: the session's posture (`true`).
    pub posture: Option<bool>,
    /// `fence`: the runtime toggle.
    pub toggle: Option<ToggleSpec>,
    /// What the answer must show.
    pub expect: Option<Expect>,
    /// What the runner checks itself after the step.
    pub check: Option<Check>,
    /// Case only: setup fields replacing the file's.
    pub setup: Option<SetupPatch>,
    /// Case only: requirement IDs added to the file's.
    pub requirements: Option<Vec<Spanned<String>>>,
}

/// `expect = { ... }`: only the keys written are checked.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// `allow`, `ask` or `deny`.
    pub decision: Option<String>,
    /// The stage that decided.
    pub route: Option<String>,
    /// The reason code.
    pub reason: Option<String>,
    /// What the card offers.
    pub offers: Option<ExpectOffers>,
    /// The card (or `false`: no card).
    pub card: Option<OrNull<ExpectCard>>,
    /// `answer` outcome.
    pub outcome: Option<String>,
    /// The grant written by `answer` (or `false`: none).
    pub saved: Option<OrNull<Grant>>,
    /// The whole grant table, in order.
    pub grants: Option<Vec<Grant>>,
    /// The whole list of revoked grants.
    pub revoked: Option<Vec<Grant>>,
    /// Every audit record's outcome, in order.
    pub outcomes: Option<Vec<String>>,
    /// File tools and gestures: `read`, `written`, ..., or a refusal code.
    pub result: Option<String>,
    /// `read`: the exact contents given to the model (or `false`: null).
    pub content: Option<OrNull<String>>,
    /// `read`, `write`, `edit`: whether a prompt was offered.
    pub prompted: Option<bool>,
    /// `read`: the preview kind (or `false`: null).
    pub preview: Option<OrNull<String>>,
    /// `write`, `edit`: the effect on the map (or `false`: null).
    pub effect: Option<OrNull<String>>,
    /// `list`: every entry, as a set.
    pub entries: Option<Vec<ExpectEntry>>,
    /// `search`: the files with matches, as a set.
    pub matched: Option<Vec<String>>,
    /// `search`: the files withheld, as a set.
    pub withheld: Option<Vec<String>>,
    /// `query`: `trusted`, `untrusted` or `unknown`.
    pub trust: Option<String>,
    /// `query`: `relative` or `absolute`.
    pub namespace: Option<String>,
    /// `query`: the key.
    pub key: Option<String>,
    /// `query`: the deciding rule's key (or `false`: none).
    pub rule: Option<OrNull<String>>,
    /// `query`, `run`, `toggle`: the refusal code (or `false`: null).
    pub refused: Option<OrNull<String>>,
    /// `status`: every rule, as a set.
    pub rules: Option<Vec<ExpectRule>>,
    /// `status`, `resume`: every open root, as a set.
    pub roots: Option<Vec<ExpectRoot>>,
    /// `resume`: the roots it could not reopen, as a set.
    pub unreopened: Option<Vec<ExpectUnreopened>>,
    /// `opened`, `clear`: whether a session is running.
    pub started: Option<bool>,
    /// `opened`: the settings-named directories, in order.
    pub settings: Option<Vec<ExpectSetting>>,
    /// `run`: the exit status.
    pub exit: Option<OrNull<ExitSpec>>,
    /// `run`: the signal number (or `false`: null).
    pub signal: Option<OrNull<i64>>,
    /// `run`: the fence that held it.
    pub held_by: Option<String>,
    /// `run`, `posture`, `toggle`, `opened`: the posture.
    pub posture: Option<ExpectPosture>,
}

/// `offers = { ... }`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectOffers {
    /// Whether the exact line is offered.
    pub exact: Option<bool>,
    /// Why the exact line is withheld, or `false` for null.
    pub exact_withheld: Option<OrNull<String>>,
    /// The family key offered, or `false` for null.
    pub family: Option<OrNull<String>>,
    /// Why the family is withheld, or `false` for null.
    pub family_withheld: Option<OrNull<String>>,
    /// A substring of the card's withheld text.
    pub text_contains: Option<String>,
}

/// `card = { ... }`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectCard {
    /// The channel.
    pub channel: Option<String>,
    /// The window in milliseconds.
    pub window_ms: Option<u64>,
}

/// The one action of a resolved step.
#[derive(Debug, Clone)]
pub enum Action {
    /// A tool call: `shell` for `decide`, `execute_code` for `code`, or another tool.
    Call {
        /// The action key as written (`decide`, `code` or `tool`).
        key: &'static str,
        /// The tool name sent.
        tool: String,
        /// The input sent.
        input: String,
    },
    /// `answer = ...`.
    Answer(Choice),
    /// `grants = true`.
    Grants,
    /// `revoke = ...`.
    Revoke(String),
    /// `audit = true`.
    Audit,
    /// `read`.
    Read {
        /// The path.
        path: String,
        /// The answer to a prompt.
        if_asked: YesNo,
    },
    /// `write` or `edit` (`old` set for an edit).
    Write {
        /// The path.
        path: String,
        /// The contents (the replacement for an edit).
        content: String,
        /// For an edit: the text replaced.
        old: Option<String>,
        /// The data's trust, or the setup's default.
        data: Option<DataTrust>,
        /// The answer to a prompt.
        if_asked: YesNo,
    },
    /// `list`.
    List(String),
    /// `search`.
    Search {
        /// Where it starts.
        path: String,
        /// The literal pattern.
        pattern: String,
    },
    /// `query`.
    Query(String),
    /// `gesture`.
    Gesture {
        /// Its protocol name.
        name: String,
        /// The path.
        path: String,
        /// The answer to a question it puts.
        answer: YesNo,
    },
    /// `status = true`.
    Status,
    /// `resume = true`.
    Resume,
    /// `clear = ANSWER`.
    Clear(YesNo),
    /// `turn = true`.
    Turn,
    /// `opened = true`: judge the open answer.
    Opened,
    /// `run`.
    Run {
        /// `shell` or `execute_code`.
        tool: GrantTool,
        /// The command line or code.
        input: String,
        /// The working directory, if given.
        cwd: Option<String>,
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

/// Lowercase wire word of a serde unit enum value.
pub fn word<T: Serialize>(v: T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

impl Action {
    /// A short label for messages: `decide "ls /etc"`.
    pub fn label(&self) -> String {
        match self {
            Action::Call { key, input, .. } => format!("{key} {input:?}"),
            Action::Answer(c) => format!("answer {:?}", c.as_str()),
            Action::Grants => "grants".to_string(),
            Action::Revoke(t) => format!("revoke {t:?}"),
            Action::Audit => "audit".to_string(),
            Action::Read { path, .. } => format!("read {path:?}"),
            Action::Write {
                path, old: None, ..
            } => format!("write {path:?}"),
            Action::Write { path, .. } => format!("edit {path:?}"),
            Action::List(p) => format!("list {p:?}"),
            Action::Search { path, pattern } => format!("search {pattern:?} in {path:?}"),
            Action::Query(p) => format!("query {p:?}"),
            Action::Gesture { name, path, .. } => format!("gesture {name} {path:?}"),
            Action::Status => "status".to_string(),
            Action::Resume => "resume".to_string(),
            Action::Clear(r) => format!("clear {:?}", word(r)),
            Action::Turn => "turn".to_string(),
            Action::Opened => "opened".to_string(),
            Action::Run { input, .. } => format!("run {input:?}"),
            Action::Posture => "posture".to_string(),
            Action::Toggle { to, .. } => format!("toggle {}", word(to)),
        }
    }

    /// The capability the action needs, beyond `gate` for the gate's own steps.
    pub fn capability(&self) -> Option<&'static str> {
        match self {
            Action::Read { .. }
            | Action::Write { .. }
            | Action::List(_)
            | Action::Search { .. } => Some("paths"),
            Action::Query(_)
            | Action::Gesture { .. }
            | Action::Status
            | Action::Resume
            | Action::Clear(_)
            | Action::Turn => Some("trust"),
            Action::Run { .. } | Action::Posture | Action::Toggle { .. } => Some("fence"),
            _ => None,
        }
    }
}

/// A validated step or case, ready to run.
#[derive(Debug, Clone)]
pub struct Step {
    /// 1-based position in the file.
    pub index: usize,
    /// Optional name.
    pub name: Option<String>,
    /// The action.
    pub action: Action,
    /// The expectation (empty when not written).
    pub expect: Expect,
    /// The runner's own checks (empty when not written).
    pub check: Check,
}

/// A table row: its own setup and extra requirements.
#[derive(Debug, Clone)]
pub struct Case {
    /// The step to run.
    pub step: Step,
    /// The file's setup overlaid with the row's.
    pub setup: SetupPatch,
    /// Requirement IDs added by the row.
    pub requirements: Vec<String>,
}

/// The body of a scenario: table or sequence.
#[derive(Debug, Clone)]
pub enum Body {
    /// `[[case]]` rows, each a fresh session.
    Table(Vec<Case>),
    /// `[[step]]` entries in one session.
    Sequence(Vec<Step>),
}

/// A loaded, validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Path under `scenarios/` without `.toml`, with `/` separators.
    pub id: String,
    /// The file it came from (as displayed in messages).
    pub path: String,
    /// The title.
    pub title: String,
    /// The file-level requirement IDs.
    pub requirements: Vec<String>,
    /// The tier.
    pub tier: Tier,
    /// Required capabilities.
    pub capabilities: Vec<String>,
    /// Allowed host operating systems (`None`: any).
    pub platform_os: Option<Vec<String>>,
    /// The ranges over the implementation's declared environment.
    pub platform: Platform,
    /// Whether the text uses `@SIBLING@` or has `[fixture.sibling]`: a second session.
    pub uses_sibling: bool,
    /// Whether the text uses `@RUNNER_PID@` or checks `process_alive`.
    pub uses_runner_pid: bool,
    /// The fixture.
    pub fixture: Fixture,
    /// The file's setup.
    pub setup: SetupPatch,
    /// Table or sequence.
    pub body: Body,
}

impl Scenario {
    /// Every requirement the scenario cites, file-level and per case, deduplicated.
    pub fn all_requirements(&self) -> Vec<String> {
        let mut all = self.requirements.clone();
        if let Body::Table(cases) = &self.body {
            for case in cases {
                all.extend(case.requirements.iter().cloned());
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        all.retain(|id| seen.insert(id.clone()));
        all
    }
}
