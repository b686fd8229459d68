//! The decision order (spec `decision-order.md`, section 2): one function every tool call
//! goes through, whatever its tool, combining the transform hooks, the preempting hooks,
//! the patterns, the gate's dangerous list, allow-list, grants and auto-safe reading, the
//! safety mode, the default-lane hooks, the card, and the trust map's plan for a shell
//! line's redirections. The first stage that decides ends the walk.
//!
//! Runs hook processes (through [`HookRunner`]) and reads the filesystem through the gate's
//! jail and the path roots; writes nothing: recording the ruling is the session's job
//! ([`super::session`]).

use super::redirect;
use super::ruling::{Redirect, Route, Ruling, SourceRef, Stage};
use crate::gate::{Decision, Gate, GrantTable, Host, Reason, Route as GateRoute, Tool, Verdict};
use crate::hooks::input::{CallFacts, DecisionSoFar};
use crate::hooks::{
    Event, HookRecord, HookRunner, HooksConfig, Lane, LaneResult, Verdict as HookVerdict,
};
use crate::paths::Roots;
use crate::permissions::{label_of, Label, ModeChoice, ModeVerdict, RuleSet, Verdicts};
use crate::trust::TrustMap;
use serde_json::Value;
use std::ops::ControlFlow;

/// What a session holds fixed for its calls: the merged patterns, the hooks, whether
/// secrets are redacted, the mode in force and the agent's name.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Every pattern of every source.
    pub rules: RuleSet,
    /// The running agent's hooks.
    pub hooks: HooksConfig,
    /// `redact_secrets`.
    pub redact: bool,
    /// The mode in force and its source.
    pub mode: ModeChoice,
    /// The agent's name (`root`).
    pub agent_name: String,
}

/// The controls a call is decided against.
#[derive(Debug, Clone, Copy)]
pub struct Controls<'a> {
    /// The approval gate (working directory, host, asker, allow-list, windows).
    pub gate: &'a Gate,
    /// The saved grants.
    pub grants: &'a GrantTable,
    /// The hook runner.
    pub hooks: &'a HookRunner,
    /// The trust map and the roots its keys are resolved in, when the session has them.
    pub trust: Option<(&'a TrustMap, &'a Roots)>,
}

/// One tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The tool's name.
    pub tool: String,
    /// Its input, a JSON object (`{"cmd": LINE}` for `shell`, `{"code": TEXT}` for
    /// `execute_code`).
    pub input: Value,
    /// The call's id.
    pub tool_use_id: String,
    /// The session's id.
    pub session_id: String,
}

/// The text the gate reads for a gated tool: the line of `shell`, the code of
/// `execute_code`, the input of a card-only tool.
fn gated_text(tool: Tool, input: &Value) -> Option<String> {
    let key = match tool {
        Tool::Shell => "cmd",
        Tool::ExecuteCode => "code",
        Tool::McpInstall | Tool::McpConnect => "input",
    };
    match input.get(key) {
        Some(Value::String(s)) => Some(s.clone()),
        None if tool.is_card_only() => Some(String::new()),
        _ => None,
    }
}

/// One stage of the order: it ends the walk with a ruling, or passes the walk on.
type StageFn = for<'a> fn(Walk<'a>) -> ControlFlow<Ruling, Walk<'a>>;

/// A stage of the order: its row in the spec's table (section 2), the `stage` it reports
/// when it decides, and its function. The row and the stage are read by the test that
/// holds the table to the spec.
#[cfg_attr(not(test), allow(dead_code))]
struct OrderStage {
    /// The row of `decision-order.md`, section 2.
    row: u8,
    /// The `stage` it reports.
    reports: Stage,
    /// What it does.
    run: StageFn,
}

/// The order (ORDER-ONE-1): rows 1 to 9 of the spec's table, each applied only when every
/// stage before it passed. A call no stage decided is put to the person ([`ask_person`],
/// row 10); row 11, the redirections, follows every allow
/// ([`Ruling::allow_then_redirects`]); row 12, the fence, is the runner's.
const STAGES: [OrderStage; 9] = [
    at(1, Stage::Transform, transform),
    at(2, Stage::PreemptHook, preempt_hooks),
    at(3, Stage::DenyPattern, deny_patterns),
    at(4, Stage::AlwaysAsk, always_ask),
    at(5, Stage::Allow, allow_patterns),
    at(6, Stage::Grant, saved_grants),
    at(7, Stage::AskPattern, ask_patterns),
    at(8, Stage::Mode, safety_mode),
    at(9, Stage::DefaultHook, default_hooks),
];

/// A row of [`STAGES`].
const fn at(row: u8, reports: Stage, run: StageFn) -> OrderStage {
    OrderStage { row, reports, run }
}

/// The spec's row of [`ask_person`], the stage that ends every walk no earlier stage
/// ended.
#[cfg_attr(not(test), allow(dead_code))]
const ASK_PERSON_ROW: u8 = 10;

/// What the stages carry forward for one call: the controls and the call, what hooks are
/// told, the ruling being built, and what earlier stages read for later ones.
struct Walk<'a> {
    controls: Controls<'a>,
    policy: &'a Policy,
    call: &'a Call,
    /// A hook covers the call (what hooks are told is built only then).
    hooked: bool,
    /// What hooks are told.
    facts: CallFacts,
    /// The ruling so far.
    r: Ruling,
    /// The call's tool, when it is one the gate reads (row 1).
    gated: Option<Tool>,
    /// The text the gate reads (row 1).
    text: Option<String>,
    /// The line of a `shell` call (row 1).
    line: Option<String>,
    /// A preempting hook's ask, final once no deny pattern matches (row 2).
    preempt_ask: Option<HookRecord>,
    /// The patterns' verdicts (row 3).
    verdicts: Verdicts,
    /// The gate's reading (row 4).
    decision: Option<Decision>,
    /// The mode's reason and source (row 8).
    mode_reason: String,
    mode_src: Option<SourceRef>,
}

/// Decides one call (ORDER-ONE-1, ORDER-STAGE-1 to -10, ORDER-REDIR-1): the stages of
/// `STAGES` in turn, the first that decides ending the walk.
pub fn decide(controls: Controls<'_>, policy: &Policy, call: &Call) -> Ruling {
    let mut walk = Walk::new(controls, policy, call);
    for stage in &STAGES {
        match (stage.run)(walk) {
            ControlFlow::Break(ruling) => return ruling,
            ControlFlow::Continue(next) => walk = next,
        }
    }
    ask_person(walk)
}

impl<'a> Walk<'a> {
    /// The walk before its first stage: the facts hooks are told, built only when a hook
    /// covers the call (most calls have none).
    fn new(controls: Controls<'a>, policy: &'a Policy, call: &'a Call) -> Walk<'a> {
        let hooked = policy.hooks.all().any(|(_, m)| m.covers(&call.tool));
        let cwd = if hooked {
            controls.gate.workspace().display().to_string()
        } else {
            String::new()
        };
        let facts = if hooked {
            CallFacts {
                agent_name: policy.agent_name.clone(),
                cwd: cwd.clone(),
                safety_policy: policy.mode.mode.policy_name().to_string(),
                session_id: call.session_id.clone(),
                tool_name: call.tool.clone(),
                tool_input: Value::Null,
                tool_use_id: call.tool_use_id.clone(),
                effective_cwd: cwd,
            }
        } else {
            CallFacts::default()
        };
        Walk {
            controls,
            policy,
            call,
            hooked,
            facts,
            r: Ruling::new(&call.tool, &call.tool_use_id, &call.input, policy.mode),
            gated: None,
            text: None,
            line: None,
            preempt_ask: None,
            verdicts: Verdicts::default(),
            decision: None,
            mode_reason: String::new(),
            mode_src: None,
        }
    }

    /// An allow at `stage`, then the line's redirections (row 11).
    fn allow(
        self,
        stage: Stage,
        route: Route,
        reason: impl Into<String>,
        source: Option<SourceRef>,
    ) -> ControlFlow<Ruling, Walk<'a>> {
        let line = self.line.as_deref();
        ControlFlow::Break(self.r.allow_then_redirects(
            self.controls,
            stage,
            route,
            reason,
            source,
            line,
        ))
    }

    /// An ask at `stage` (a card, or a deny where nobody may be asked).
    fn ask(
        self,
        stage: Stage,
        reason: String,
        source: Option<SourceRef>,
    ) -> ControlFlow<Ruling, Walk<'a>> {
        ControlFlow::Break(self.r.ask(self.controls, stage, reason, source))
    }

    /// A deny at `stage`.
    fn deny(
        self,
        stage: Stage,
        route: Route,
        reason: &str,
        source: Option<SourceRef>,
    ) -> ControlFlow<Ruling, Walk<'a>> {
        ControlFlow::Break(self.r.deny(stage, route, reason, source))
    }
}

/// Row 1 (ORDER-STAGE-1, HOOK-XFORM-2): the transform hooks, redaction first; every later
/// stage sees the rewritten input. A failing transform denies, and so does the input of a
/// gated tool that lacks its text.
fn transform(mut w: Walk<'_>) -> ControlFlow<Ruling, Walk<'_>> {
    let (policy, call) = (w.policy, w.call);
    let transforms = policy
        .hooks
        .tool_input_transform
        .iter()
        .any(|m| m.covers(&call.tool));
    if transforms {
        w.facts.tool_input = call.input.clone();
        let chain = w.controls.hooks.transform(
            &policy.hooks,
            Event::ToolInputTransform,
            policy.redact,
            &w.facts,
            call.input.clone(),
        );
        w.r.hooks.extend(chain.runs);
        if let Some(failed) = chain.failed {
            return w.deny(
                Stage::Transform,
                Route::Transform,
                failed.code,
                Some(SourceRef::hook(&failed)),
            );
        }
        w.r.input = chain.value;
    } else if policy.redact {
        // Only the builtin: no process, no stdin object.
        let redacted = w.controls.hooks.redactor().redact_value(&mut w.r.input);
        if redacted > 0 {
            w.r.hooks.push(HookRecord {
                event: Event::ToolInputTransform.name(),
                hook: "builtin:redact_secrets".into(),
                verdict: HookVerdict::NoDecision,
                code: crate::hooks::Code::HookNoDecision.name(),
                message: Some(format!("{redacted} string(s) redacted")),
            });
        }
    }
    if w.hooked {
        w.facts.tool_input = w.r.input.clone();
    }
    w.gated = call.tool.parse().ok();
    if let Some(t) = w.gated {
        match gated_text(t, &w.r.input) {
            Some(s) => w.text = Some(s),
            None => return w.deny(Stage::Transform, Route::Transform, "bad_input", None),
        }
    }
    w.line = (w.gated == Some(Tool::Shell)).then(|| w.text.clone().unwrap_or_default());
    ControlFlow::Continue(w)
}

/// Row 2 (ORDER-STAGE-2, HOOK-LANE-1): the preempting hooks. Their deny is final, their
/// ask final after row 3, their allow only advice.
fn preempt_hooks(mut w: Walk<'_>) -> ControlFlow<Ruling, Walk<'_>> {
    let preempt = if w.hooked {
        w.controls.hooks.guard(
            &w.policy.hooks,
            Lane::Preempt,
            &w.facts,
            &DecisionSoFar {
                decision: None,
                stage: Stage::PreemptHook.name().into(),
                reason: None,
            },
        )
    } else {
        LaneResult::none()
    };
    w.r.hooks.extend(preempt.runs.iter().cloned());
    match (preempt.verdict, preempt.deciding) {
        (HookVerdict::Deny, Some(h)) => {
            return w.deny(
                Stage::PreemptHook,
                Route::PreemptHook,
                h.code,
                Some(SourceRef::hook(&h)),
            )
        }
        (HookVerdict::Ask, Some(h)) => w.preempt_ask = Some(h),
        (HookVerdict::Allow, Some(h)) => w.r.advice = Some(h),
        _ => {}
    }
    ControlFlow::Continue(w)
}

/// Row 3 (ORDER-STAGE-3): the deny patterns of every source; then a preempting hook's ask
/// (ORDER-STAGE-2: a deny is the stricter answer and wins).
fn deny_patterns(mut w: Walk<'_>) -> ControlFlow<Ruling, Walk<'_>> {
    w.verdicts = w.policy.rules.judge(&w.call.tool, &w.r.input);
    if let Some(m) = w.verdicts.deny.take() {
        return w.deny(
            Stage::DenyPattern,
            Route::DenyPattern,
            "deny_pattern",
            Some(SourceRef::pattern(&m)),
        );
    }
    if let Some(h) = w.preempt_ask.take() {
        let code = h.code.to_string();
        return w.ask(Stage::PreemptHook, code, Some(SourceRef::hook(&h)));
    }
    ControlFlow::Continue(w)
}

/// Row 4 (ORDER-STAGE-4): the gate reads the call once (its offers, its card, the call's
/// label), and what always asks asks: the dangerous list, card-only tools, a `shell` line
/// on Windows.
fn always_ask(mut w: Walk<'_>) -> ControlFlow<Ruling, Walk<'_>> {
    let gate = w.controls.gate;
    w.decision = w
        .gated
        .map(|t| gate.decide(t, w.text.as_deref().unwrap_or(""), w.controls.grants));
    if let Some(d) = &w.decision {
        w.r.offers = Some(d.offers.clone());
        w.r.card = d.card;
    }
    w.r.label = match (&w.decision, w.gated) {
        (Some(d), Some(Tool::Shell)) => {
            let granted = matches!(
                d.route,
                GateRoute::AllowList | GateRoute::GrantExact | GateRoute::GrantFamily
            );
            if d.reason == Reason::Dangerous {
                Label::Destructive
            } else if d.route == GateRoute::AutoSafe
                || (granted
                    && gate.host() == Host::Posix
                    && gate.auto_safe(w.line.as_deref().unwrap_or("")).is_ok())
            {
                Label::Safe
            } else {
                Label::Unknown
            }
        }
        _ => label_of(gate, &w.call.tool, None),
    };
    if let Some(d) = &w.decision {
        if matches!(
            d.reason,
            Reason::Dangerous | Reason::CardOnly | Reason::WindowsHost
        ) {
            let reason = d.reason.to_string();
            return w.ask(Stage::AlwaysAsk, reason, None);
        }
    }
    ControlFlow::Continue(w)
}

/// Row 5 (ORDER-STAGE-5, PERM-SRC-2, GATE-ORDER-3): an allow pattern, then the
/// installation's allow-list byte for byte.
fn allow_patterns(mut w: Walk<'_>) -> ControlFlow<Ruling, Walk<'_>> {
    if let Some(m) = w.verdicts.allow.take() {
        let src = Some(SourceRef::pattern(&m));
        return w.allow(Stage::Allow, Route::AllowPattern, "allow_pattern", src);
    }
    if matches!(&w.decision, Some(d) if d.route == GateRoute::AllowList) {
        let src = SourceRef::AllowList {
            key: w.text.clone().unwrap_or_default(),
        };
        return w.allow(Stage::Allow, Route::AllowList, "allow_list", Some(src));
    }
    ControlFlow::Continue(w)
}

/// Row 6 (ORDER-STAGE-6): a saved grant, the exact line, then the family.
fn saved_grants(w: Walk<'_>) -> ControlFlow<Ruling, Walk<'_>> {
    let Some(d) = &w.decision else {
        return ControlFlow::Continue(w);
    };
    let (route, kind) = match d.route {
        GateRoute::GrantExact => (Route::GrantExact, "exact"),
        GateRoute::GrantFamily => (Route::GrantFamily, "family"),
        _ => return ControlFlow::Continue(w),
    };
    let reason = d.reason.to_string();
    let key = match kind {
        "exact" => w.text.clone().unwrap_or_default(),
        _ => crate::gate::words::first_word(w.line.as_deref().unwrap_or(""))
            .and_then(Result::ok)
            .map(|word| word.as_str().to_string())
            .unwrap_or_default(),
    };
    let src = SourceRef::Grant {
        grant_kind: kind.into(),
        key,
    };
    w.allow(Stage::Grant, route, reason, Some(src))
}

/// Row 7 (ORDER-STAGE-7, PERM-ASK-1, PERM-ASK-2): the person's ask patterns always ask; an
/// author's yield to a mode the person chose.
fn ask_patterns(mut w: Walk<'_>) -> ControlFlow<Ruling, Walk<'_>> {
    if let Some(m) = w.verdicts.persons_ask.take() {
        let src = Some(SourceRef::pattern(&m));
        return w.ask(Stage::AskPattern, "ask_pattern".into(), src);
    }
    if let Some(m) = w.verdicts.authors_ask.take() {
        if !w.policy.mode.source.is_persons_choice() {
            let src = Some(SourceRef::pattern(&m));
            return w.ask(Stage::AskPattern, "ask_pattern".into(), src);
        }
    }
    ControlFlow::Continue(w)
}

/// Row 8 (ORDER-STAGE-8, PERM-MODE-1): the safety mode on the call's label. An allowed
/// `shell` line that is `safe` reports `auto_safe`; a gated tool's reason is the gate's.
fn safety_mode(mut w: Walk<'_>) -> ControlFlow<Ruling, Walk<'_>> {
    w.mode_reason = match &w.decision {
        Some(d) => d.reason.to_string(),
        None => w.r.label.name().to_string(),
    };
    let mode = w.policy.mode;
    let mode_src = SourceRef::Mode {
        mode: mode.mode.name().into(),
        mode_source: mode.source.name().into(),
        label: w.r.label.name().into(),
    };
    match mode.mode.verdict(w.r.label) {
        ModeVerdict::Allow => {
            let route = if w.r.label == Label::Safe && w.gated == Some(Tool::Shell) {
                Route::AutoSafe
            } else {
                Route::Mode
            };
            let reason = w.mode_reason.clone();
            w.allow(Stage::Mode, route, reason, Some(mode_src))
        }
        ModeVerdict::Deny => {
            let reason = w.mode_reason.clone();
            w.deny(Stage::Mode, Route::Mode, &reason, Some(mode_src))
        }
        ModeVerdict::Ask => {
            w.mode_src = Some(mode_src);
            ControlFlow::Continue(w)
        }
    }
}

/// Row 9 (ORDER-STAGE-9, HOOK-LANE-2): on the mode's ask, and only there, the default-lane
/// hooks: their allow allows, their deny denies, their ask asks.
fn default_hooks(mut w: Walk<'_>) -> ControlFlow<Ruling, Walk<'_>> {
    let lane = if w.hooked {
        w.controls.hooks.guard(
            &w.policy.hooks,
            Lane::Default,
            &w.facts,
            &DecisionSoFar {
                decision: Some("ask".into()),
                stage: Stage::Mode.name().into(),
                reason: Some(w.mode_reason.clone()),
            },
        )
    } else {
        LaneResult::none()
    };
    w.r.hooks.extend(lane.runs.iter().cloned());
    let Some(h) = lane.deciding else {
        return ControlFlow::Continue(w);
    };
    let src = Some(SourceRef::hook(&h));
    match lane.verdict {
        HookVerdict::Deny => w.deny(Stage::DefaultHook, Route::DefaultHook, h.code, src),
        HookVerdict::Allow => w.allow(Stage::DefaultHook, Route::DefaultHook, h.code, src),
        HookVerdict::Ask => w.ask(Stage::DefaultHook, h.code.to_string(), src),
        _ => ControlFlow::Continue(w),
    }
}

/// Row 10 (ORDER-STAGE-10, ORDER-ASK-1, ORDER-ASK-2): a call that still asks is shown to
/// the person on a card, with the mode's reason (denied where nobody may be asked).
fn ask_person(w: Walk<'_>) -> Ruling {
    w.r.ask(w.controls, Stage::Mode, w.mode_reason, w.mode_src)
}

#[cfg(test)]
mod tests;

impl Ruling {
    /// An allow, then the trust map's plan for the line's redirections (ORDER-REDIR-1):
    /// a plan that must ask where nobody can be asked means the line does not run.
    fn allow_then_redirects(
        mut self,
        controls: Controls<'_>,
        stage: Stage,
        route: Route,
        reason: impl Into<String>,
        source: Option<SourceRef>,
        line: Option<&str>,
    ) -> Ruling {
        if let (Some(line), Some((map, roots))) = (line, controls.trust) {
            self.redirects = plan_redirects(controls.gate, map, roots, line);
        }
        let prompts = self.redirects.iter().any(|r| r.prompt);
        let can_ask = controls.gate.asker().channel().is_some() && !self.mode.mode.never_prompts();
        if prompts && !can_ask {
            let route = if self.mode.mode.never_prompts() {
                Route::Restricted
            } else {
                Route::NoAsker
            };
            return self.finish(
                Verdict::Deny,
                Stage::Redirect,
                route,
                "redirect_prompt".into(),
                source,
            );
        }
        self.finish(Verdict::Allow, stage, route, reason.into(), source)
    }

    fn deny(self, stage: Stage, route: Route, reason: &str, source: Option<SourceRef>) -> Ruling {
        self.finish(Verdict::Deny, stage, route, reason.to_string(), source)
    }

    /// An ask: a card, or a deny where the mode forbids prompts (ORDER-ASK-2) or nobody can
    /// be asked (ORDER-ASK-1).
    fn ask(
        mut self,
        controls: Controls<'_>,
        stage: Stage,
        reason: String,
        source: Option<SourceRef>,
    ) -> Ruling {
        if self.mode.mode.never_prompts() {
            return self.finish(Verdict::Deny, stage, Route::Restricted, reason, source);
        }
        match controls.gate.asker().channel() {
            None => self.finish(Verdict::Deny, stage, Route::NoAsker, reason, source),
            Some(_) => {
                if self.card.is_none() {
                    self.card = card_of(controls.gate);
                }
                self.finish(Verdict::Ask, stage, Route::Card, reason, source)
            }
        }
    }

    fn finish(
        mut self,
        decision: Verdict,
        stage: Stage,
        route: Route,
        reason: String,
        source: Option<SourceRef>,
    ) -> Ruling {
        if decision != Verdict::Ask {
            self.card = None;
        }
        self.decision = decision;
        self.stage = stage;
        self.route = route;
        self.reason = reason;
        self.source = source;
        self
    }
}

/// The card this gate shows (its channel and window), read from a call the gate always
/// shows a card for.
fn card_of(gate: &Gate) -> Option<crate::gate::CardSpec> {
    gate.decide(Tool::McpInstall, "", &GrantTable::new()).card
}

/// Plans each redirection target of `line` as an untrusted write (TRUST-WRITE-11). A
/// target outside every root is not recorded (the map has no key for it).
pub(crate) fn plan_redirects(
    gate: &Gate,
    map: &TrustMap,
    roots: &Roots,
    line: &str,
) -> Vec<Redirect> {
    redirect::targets(line)
        .into_iter()
        .map(|t| {
            let path = std::path::Path::new(&t.path);
            let abs = if path.is_absolute() {
                path.to_path_buf()
            } else {
                gate.workspace().join(path)
            };
            match map.key_in(roots, &abs) {
                Ok(key) => {
                    let plan = map.plan_redirect(&key);
                    Redirect {
                        op: t.op,
                        path: t.path,
                        key: Some(plan.key.spelling()),
                        prompt: plan.prompt,
                        effect: plan.effect_name().into(),
                    }
                }
                Err(_) => Redirect {
                    op: t.op,
                    path: t.path,
                    key: None,
                    prompt: false,
                    effect: "not_recorded".into(),
                },
            }
        })
        .collect()
}
