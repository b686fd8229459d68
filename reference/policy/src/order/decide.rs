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
use crate::gate::{Gate, GrantTable, Host, Route as GateRoute, Tool, Verdict};
use crate::hooks::input::{CallFacts, DecisionSoFar};
use crate::hooks::{Event, HookRunner, HooksConfig, Lane, Verdict as HookVerdict};
use crate::paths::Roots;
use crate::permissions::{label_of, Label, ModeChoice, ModeVerdict, RuleSet};
use crate::trust::TrustMap;
use serde_json::Value;

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

/// Decides one call (ORDER-STAGE-1 to -10, ORDER-REDIR-1).
pub fn decide(controls: Controls<'_>, policy: &Policy, call: &Call) -> Ruling {
    let gate = controls.gate;
    // What hooks are told is built only when a hook covers the call.
    let hooked = policy.hooks.all().any(|(_, m)| m.covers(&call.tool));
    let cwd = if hooked {
        gate.workspace().display().to_string()
    } else {
        String::new()
    };
    // Built only when a hook will read it (most calls have none).
    let mut facts = if hooked {
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
    let mut r = Ruling::new(&call.tool, &call.tool_use_id, &call.input, policy.mode);

    // 1. Transform hooks, redaction first: every later stage sees the rewritten input.
    let transforms = policy
        .hooks
        .tool_input_transform
        .iter()
        .any(|m| m.covers(&call.tool));
    if transforms {
        facts.tool_input = call.input.clone();
        let chain = controls.hooks.transform(
            &policy.hooks,
            Event::ToolInputTransform,
            policy.redact,
            &facts,
            call.input.clone(),
        );
        r.hooks.extend(chain.runs);
        if let Some(failed) = chain.failed {
            return r.deny(
                Stage::Transform,
                Route::Transform,
                failed.code,
                Some(SourceRef::hook(&failed)),
            );
        }
        r.input = chain.value;
    } else if policy.redact {
        // Only the builtin: no process, no stdin object.
        let redacted = controls.hooks.redactor().redact_value(&mut r.input);
        if redacted > 0 {
            r.hooks.push(crate::hooks::HookRecord {
                event: Event::ToolInputTransform.name(),
                hook: "builtin:redact_secrets".into(),
                verdict: HookVerdict::NoDecision,
                code: crate::hooks::Code::HookNoDecision.name(),
                message: Some(format!("{redacted} string(s) redacted")),
            });
        }
    }
    if hooked {
        facts.tool_input = r.input.clone();
    }

    let gated: Option<Tool> = call.tool.parse().ok();
    let text = match gated {
        Some(t) => match gated_text(t, &r.input) {
            Some(s) => Some(s),
            None => return r.deny(Stage::Transform, Route::Transform, "bad_input", None),
        },
        None => None,
    };
    let line = (gated == Some(Tool::Shell)).then(|| text.clone().unwrap_or_default());

    // 2. Preempting hooks: deny or ask is final, allow is advice.
    let preempt = if hooked {
        controls.hooks.guard(
            &policy.hooks,
            Lane::Preempt,
            &facts,
            &DecisionSoFar {
                decision: None,
                stage: Stage::PreemptHook.name().into(),
                reason: None,
            },
        )
    } else {
        crate::hooks::LaneResult::none()
    };
    r.hooks.extend(preempt.runs.iter().cloned());
    let mut preempt_ask = None;
    match (preempt.verdict, preempt.deciding) {
        (HookVerdict::Deny, Some(h)) => {
            return r.deny(
                Stage::PreemptHook,
                Route::PreemptHook,
                h.code,
                Some(SourceRef::hook(&h)),
            )
        }
        (HookVerdict::Ask, Some(h)) => preempt_ask = Some(h),
        (HookVerdict::Allow, Some(h)) => r.advice = Some(h),
        _ => {}
    }

    // 3. Deny patterns, from any source.
    let verdicts = policy.rules.judge(&call.tool, &r.input);
    if let Some(m) = verdicts.deny {
        return r.deny(
            Stage::DenyPattern,
            Route::DenyPattern,
            "deny_pattern",
            Some(SourceRef::pattern(&m)),
        );
    }
    if let Some(h) = preempt_ask {
        return r.ask(
            controls,
            Stage::PreemptHook,
            h.code.to_string(),
            Some(SourceRef::hook(&h)),
        );
    }

    // The gate's reading, once: its offers, and where it would stop.
    let decision = gated.map(|t| gate.decide(t, text.as_deref().unwrap_or(""), controls.grants));
    if let Some(d) = &decision {
        r.offers = Some(d.offers.clone());
        r.card = d.card;
    }
    r.label = match (&decision, gated) {
        (Some(d), Some(Tool::Shell)) => {
            let granted = matches!(
                d.route,
                GateRoute::AllowList | GateRoute::GrantExact | GateRoute::GrantFamily
            );
            if d.reason == crate::gate::Reason::Dangerous {
                Label::Destructive
            } else if d.route == GateRoute::AutoSafe
                || (granted
                    && gate.host() == Host::Posix
                    && gate.auto_safe(line.as_deref().unwrap_or("")).is_ok())
            {
                Label::Safe
            } else {
                Label::Unknown
            }
        }
        _ => label_of(gate, &call.tool, None),
    };

    // 4. What always asks: the dangerous list, card-only tools, a shell line on Windows.
    if let Some(d) = &decision {
        use crate::gate::Reason;
        if matches!(
            d.reason,
            Reason::Dangerous | Reason::CardOnly | Reason::WindowsHost
        ) {
            return r.ask(controls, Stage::AlwaysAsk, d.reason.to_string(), None);
        }
    }

    // 5. Allow patterns, then the installation's allow-list.
    if let Some(m) = verdicts.allow {
        return r.allow_then_redirects(
            controls,
            Stage::Allow,
            Route::AllowPattern,
            "allow_pattern",
            Some(SourceRef::pattern(&m)),
            line.as_deref(),
        );
    }
    if let Some(d) = &decision {
        match d.route {
            GateRoute::AllowList => {
                let src = SourceRef::AllowList {
                    key: text.clone().unwrap_or_default(),
                };
                return r.allow_then_redirects(
                    controls,
                    Stage::Allow,
                    Route::AllowList,
                    "allow_list",
                    Some(src),
                    line.as_deref(),
                );
            }
            // 6. Saved grants.
            GateRoute::GrantExact | GateRoute::GrantFamily => {
                let (route, kind) = if d.route == GateRoute::GrantExact {
                    (Route::GrantExact, "exact")
                } else {
                    (Route::GrantFamily, "family")
                };
                let key = match kind {
                    "exact" => text.clone().unwrap_or_default(),
                    _ => crate::gate::words::first_word(line.as_deref().unwrap_or(""))
                        .and_then(Result::ok)
                        .map(|w| w.as_str().to_string())
                        .unwrap_or_default(),
                };
                let src = SourceRef::Grant {
                    grant_kind: kind.into(),
                    key,
                };
                return r.allow_then_redirects(
                    controls,
                    Stage::Grant,
                    route,
                    d.reason.to_string(),
                    Some(src),
                    line.as_deref(),
                );
            }
            _ => {}
        }
    }

    // 7. Ask patterns: the person's always prompt; an author's yield to a mode the person
    // chose.
    if let Some(m) = verdicts.persons_ask {
        return r.ask(
            controls,
            Stage::AskPattern,
            "ask_pattern".into(),
            Some(SourceRef::pattern(&m)),
        );
    }
    if let Some(m) = verdicts.authors_ask {
        if !policy.mode.source.is_persons_choice() {
            return r.ask(
                controls,
                Stage::AskPattern,
                "ask_pattern".into(),
                Some(SourceRef::pattern(&m)),
            );
        }
    }

    // 8. The safety mode on the label.
    let mode_reason = match &decision {
        Some(d) => d.reason.to_string(),
        None => r.label.name().to_string(),
    };
    let mode_src = SourceRef::Mode {
        mode: policy.mode.mode.name().into(),
        mode_source: policy.mode.source.name().into(),
        label: r.label.name().into(),
    };
    match policy.mode.mode.verdict(r.label) {
        ModeVerdict::Allow => {
            let route = if r.label == Label::Safe && gated == Some(Tool::Shell) {
                Route::AutoSafe
            } else {
                Route::Mode
            };
            return r.allow_then_redirects(
                controls,
                Stage::Mode,
                route,
                mode_reason,
                Some(mode_src),
                line.as_deref(),
            );
        }
        ModeVerdict::Deny => return r.deny(Stage::Mode, Route::Mode, &mode_reason, Some(mode_src)),
        ModeVerdict::Ask => {}
    }

    // 9. On a mode ask, the default-lane hooks.
    let lane = if hooked {
        controls.hooks.guard(
            &policy.hooks,
            Lane::Default,
            &facts,
            &DecisionSoFar {
                decision: Some("ask".into()),
                stage: Stage::Mode.name().into(),
                reason: Some(mode_reason.clone()),
            },
        )
    } else {
        crate::hooks::LaneResult::none()
    };
    r.hooks.extend(lane.runs.iter().cloned());
    match (lane.verdict, lane.deciding) {
        (HookVerdict::Deny, Some(h)) => {
            return r.deny(
                Stage::DefaultHook,
                Route::DefaultHook,
                h.code,
                Some(SourceRef::hook(&h)),
            )
        }
        (HookVerdict::Allow, Some(h)) => {
            return r.allow_then_redirects(
                controls,
                Stage::DefaultHook,
                Route::DefaultHook,
                h.code,
                Some(SourceRef::hook(&h)),
                line.as_deref(),
            )
        }
        (HookVerdict::Ask, Some(h)) => {
            return r.ask(
                controls,
                Stage::DefaultHook,
                h.code.to_string(),
                Some(SourceRef::hook(&h)),
            )
        }
        _ => {}
    }

    // 10. Ask the person.
    r.ask(controls, Stage::Mode, mode_reason, Some(mode_src))
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
