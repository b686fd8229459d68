//! The gate's part of a scenario file: its setup fields (host, asker, allow-list, saved
//! grants, card window), its steps (`decide`, `code`, `tool`, `answer`, `grants`,
//! `revoke`, `audit`) and the `expect` keys that judge their answers.

use serde::de::{Error as _, MapAccess};
use serde::{Deserialize, Serialize};

use crate::vocab::{GrantTool, OrNull};

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

crate::setup! {
    @ctx = can_ask;
    /// `posix` or `windows`.
    host: Host = Host::Posix,
    /// `terminal`, `web`, `speech` or `none`.
    asker: Asker = Asker::Terminal,
    /// Literal actions that always pass.
    allow_list: Vec<String> = Vec::new(),
    /// Grants saved before the session.
    grants: Vec<Grant> = Vec::new(),
    /// Card window override in milliseconds.
    card_window_ms: u64,
}

/// With `asker = "none"` an `ask` protects nobody (PROTO-VERDICT-5).
fn can_ask(s: &Setup, c: &mut crate::verdict::Ctx) {
    c.can_ask = s.asker != Asker::None;
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

/// The action keys this control owns.
pub const ACTION_KEYS: &[&str] = &[
    "decide", "code", "tool", "answer", "grants", "revoke", "audit",
];

/// One gate step.
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

/// Reads the value of action `key` (one of [`ACTION_KEYS`]); the second part holds the
/// problems serde cannot see (`grants = false`).
pub fn parse<'de, A: MapAccess<'de>>(
    key: &str,
    map: &mut A,
) -> Result<(Action, crate::controls::Problems), A::Error> {
    let mut problems = Vec::new();
    let action = match key {
        "decide" => Action::Call {
            key: "decide",
            tool: "shell".into(),
            input: map.next_value()?,
        },
        "code" => Action::Call {
            key: "code",
            tool: "execute_code".into(),
            input: map.next_value()?,
        },
        "tool" => {
            let t: ToolCall = map.next_value()?;
            Action::Call {
                key: "tool",
                tool: t.name,
                input: t.input,
            }
        }
        "answer" => Action::Answer(map.next_value()?),
        "grants" | "audit" => {
            if !map.next_value::<bool>()? {
                problems.push(format!("`{key}` must be `true`"));
            }
            if key == "grants" {
                Action::Grants
            } else {
                Action::Audit
            }
        }
        "revoke" => Action::Revoke(map.next_value()?),
        _ => return Err(A::Error::custom(format!("`{key}` is not a gate step"))),
    };
    Ok((action, problems))
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

    /// The `expect` keys that apply.
    pub fn expect_keys(&self) -> &'static [&'static str] {
        match self {
            Action::Call { .. } => &["decision", "route", "reason", "offers", "card"],
            Action::Answer(_) => &["outcome", "saved"],
            Action::Grants => &["grants"],
            Action::Revoke(_) => &["revoked"],
            Action::Audit => &["outcomes", "records"],
        }
    }
}

/// The gate's `expect` keys: only those written are checked.
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
    /// Every audit record (subset tables, in order; `false` stands for null).
    pub records: Option<Vec<toml::Value>>,
}

/// Every `expect` key of this control.
pub const EXPECT_KEYS: &[&str] = &[
    "decision", "route", "reason", "offers", "card", "outcome", "saved", "grants", "revoked",
    "outcomes", "records",
];

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

impl crate::controls::ControlAction for Action {
    crate::forward_action!();
    fn capability(&self) -> Option<&'static str> {
        None
    }
    fn kind(&self) -> crate::controls::StepKind {
        match self {
            Action::Call { .. } => crate::controls::StepKind::Call,
            Action::Answer(Choice::Silence) => crate::controls::StepKind::Silence,
            _ => crate::controls::StepKind::Other,
        }
    }
}

/// The approval gate: `decide`, `call`, `answer`, `grants`, `revoke`, `audit`.
pub struct Gate;

impl crate::controls::Control for Gate {
    type Action = Action;
    type Setup = SetupPatch;
    const CAPABILITIES: &'static [&'static str] = &["gate"];
}
