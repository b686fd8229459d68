//! What the order decided for one call, with everything the audit record needs: the stage
//! and the route, the stable reason code, the source (which file and pattern, which hook,
//! which grant, which mode), the label and mode, every hook run, the advice of a
//! preempting allow, and the redirections planned.
//!
//! Pure data.

use crate::gate::{CardSpec, Offers, Verdict};
use crate::hooks::HookRecord;
use crate::permissions::{Label, ModeChoice, RuleMatch, Source};
use serde::Serialize;
use serde_json::Value;

/// The stages of the order (ORDER-STAGE-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Input transforms (a failing transform denies).
    Transform,
    /// `preempt_yolo` hooks.
    PreemptHook,
    /// Deny patterns.
    DenyPattern,
    /// The dangerous list, card-only tools, shell lines on Windows.
    AlwaysAsk,
    /// Allow patterns and the allow-list.
    Allow,
    /// Saved grants.
    Grant,
    /// Ask patterns.
    AskPattern,
    /// The safety mode on the label.
    Mode,
    /// Default-lane hooks on a mode ask.
    DefaultHook,
    /// The trust map's plan for a shell line's redirections.
    Redirect,
}

impl Stage {
    /// The stage's name.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Transform => "transform",
            Stage::PreemptHook => "preempt_hook",
            Stage::DenyPattern => "deny_pattern",
            Stage::AlwaysAsk => "always_ask",
            Stage::Allow => "allow",
            Stage::Grant => "grant",
            Stage::AskPattern => "ask_pattern",
            Stage::Mode => "mode",
            Stage::DefaultHook => "default_hook",
            Stage::Redirect => "redirect",
        }
    }
}

/// How the decision was reached (ORDER-AUDIT-1): for an allow, the automatic route; for an
/// ask, `card`; for a deny, what refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// An input transform failed.
    Transform,
    /// A preempting hook.
    PreemptHook,
    /// A deny pattern.
    DenyPattern,
    /// An allow pattern.
    AllowPattern,
    /// The installation's allow-list.
    AllowList,
    /// An exact-line grant.
    GrantExact,
    /// A family grant.
    GrantFamily,
    /// A `shell` line the gate reads as a plain read inside the working directory.
    AutoSafe,
    /// The safety mode.
    Mode,
    /// A default-lane hook.
    DefaultHook,
    /// A card is shown.
    Card,
    /// It would ask, and nobody can be asked.
    NoAsker,
    /// It would ask, and the mode forbids every prompt.
    Restricted,
}

/// Which source decided (ORDER-AUDIT-2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SourceRef {
    /// A pattern.
    Pattern {
        /// `agent_file`, `settings` or `session`.
        origin: String,
        /// The file, for the two file sources.
        #[serde(skip_serializing_if = "Option::is_none")]
        file: Option<String>,
        /// `allow`, `ask` or `deny`.
        list: String,
        /// The pattern as written.
        pattern: String,
        /// Its place in the list.
        index: usize,
    },
    /// A hook.
    Hook {
        /// The event.
        event: String,
        /// The hook's command line or builtin name.
        hook: String,
    },
    /// A saved grant.
    Grant {
        /// `exact` or `family`.
        grant_kind: String,
        /// Its key.
        key: String,
    },
    /// The allow-list.
    AllowList {
        /// The entry.
        key: String,
    },
    /// The safety mode.
    Mode {
        /// The mode.
        mode: String,
        /// Where it came from.
        mode_source: String,
        /// The call's label.
        label: String,
    },
}

impl SourceRef {
    /// The source of a matched pattern.
    pub fn pattern(m: &RuleMatch) -> SourceRef {
        let (origin, file) = match &m.source {
            Source::AgentFile(p) => ("agent_file", Some(p.display().to_string())),
            Source::Settings(p) => ("settings", Some(p.display().to_string())),
            Source::Session => ("session", None),
        };
        SourceRef::Pattern {
            origin: origin.into(),
            file,
            list: m.list.name().into(),
            pattern: m.pattern.clone(),
            index: m.index,
        }
    }

    /// The source of a hook run.
    pub fn hook(h: &HookRecord) -> SourceRef {
        SourceRef::Hook {
            event: h.event.into(),
            hook: h.hook.clone(),
        }
    }
}

/// One redirection of a shell line and the trust map's plan for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redirect {
    /// The operator.
    pub op: String,
    /// The target as written.
    pub path: String,
    /// The trust key it lands on, or `None` outside every root.
    pub key: Option<String>,
    /// Whether the write table asks before the line runs.
    pub prompt: bool,
    /// The write table's effect (`unchanged`, `marked_untrusted`, `took_data_trust`, ...,
    /// or `not_recorded`).
    pub effect: String,
}

/// The ruling on one call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ruling {
    /// The call's tool.
    pub tool: String,
    /// The call's id.
    pub tool_use_id: String,
    /// Allow, ask or deny.
    pub decision: Verdict,
    /// The stage that decided.
    pub stage: Stage,
    /// How.
    pub route: Route,
    /// The stable reason code.
    pub reason: String,
    /// Which source decided.
    pub source: Option<SourceRef>,
    /// The call's label.
    pub label: Label,
    /// The mode in force.
    pub mode: ModeChoice,
    /// The input after the transforms (what ran, or would run).
    pub input: Value,
    /// What a card offers, for a gated tool.
    pub offers: Option<Offers>,
    /// The card shown.
    pub card: Option<CardSpec>,
    /// Every hook run for the call, in order.
    pub hooks: Vec<HookRecord>,
    /// A preempting hook's allow: advice only, recorded.
    pub advice: Option<HookRecord>,
    /// The redirections of a shell line, planned.
    pub redirects: Vec<Redirect>,
}

impl Ruling {
    pub(crate) fn new(tool: &str, tool_use_id: &str, input: &Value, mode: ModeChoice) -> Ruling {
        Ruling {
            tool: tool.to_string(),
            tool_use_id: tool_use_id.to_string(),
            decision: Verdict::Deny,
            stage: Stage::Transform,
            route: Route::Transform,
            reason: String::new(),
            source: None,
            label: Label::Unknown,
            mode,
            input: input.clone(),
            offers: None,
            card: None,
            hooks: Vec::new(),
            advice: None,
            redirects: Vec::new(),
        }
    }
}
