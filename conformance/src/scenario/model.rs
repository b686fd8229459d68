//! The data model of a scenario file, deserialized strictly (`deny_unknown_fields`
//! everywhere), plus the resolved forms the runner uses.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

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
    /// `[fixture.outside]`: a tree beside the workspace.
    #[serde(default)]
    pub outside: Tree,
    /// `[fixture.home]`: the fake home directory.
    #[serde(default)]
    pub home: Tree,
}

impl Fixture {
    /// The workspace part as a [`Tree`].
    pub fn workspace(&self) -> Tree {
        Tree {
            dirs: self.dirs.clone(),
            files: self.files.clone(),
            symlinks: self.symlinks.clone(),
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
        }
    }

    /// The setup with defaults filled in (workspace and home are added by the runner).
    pub fn resolve(&self) -> Setup {
        Setup {
            host: self.host.unwrap_or(Host::Posix),
            asker: self.asker.unwrap_or(Asker::Terminal),
            allow_list: self.allow_list.clone().unwrap_or_default(),
            grants: self.grants.clone().unwrap_or_default(),
            card_window_ms: self.card_window_ms,
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
    /// What the answer must show.
    pub expect: Option<Expect>,
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
