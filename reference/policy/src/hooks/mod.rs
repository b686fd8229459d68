//! Hooks (spec chapter `hooks.md`): programs the agent file names, run as real child
//! processes at `pre_tool_use`, `post_tool_use` and the two transform events; their
//! answers; their failures, each of which denies with its own code; the parallel merge;
//! the transform chain; and the builtin `redact_secrets`.
//!
//! One concern per file: [`config`] declares hooks, [`input`] builds the stdin object,
//! [`run`] runs one process in its own process group (plain threads, no runtime), [`answer`] reads what it
//! did, [`merge`] combines a lane, [`redact`] is the builtin. This module ([`HookRunner`])
//! runs a lane or a chain for one call and returns every run's record; where a lane sits in
//! the decision order is [`crate::order`]'s.
//!
//! May touch: the process table (through [`run`]). Writes no file.

pub mod answer;
pub mod config;
pub mod input;
pub mod merge;
pub mod redact;
pub mod run;

pub use answer::{Code, Exit, Outcome, Verdict};
pub use config::{Event, HookDef, HooksConfig, Matcher, DEFAULT_TIMEOUT};
pub use input::{CallFacts, DecisionSoFar};
pub use redact::Redactor;

use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;

/// Which `pre_tool_use` hooks a lane runs (HOOK-LANE-1, -2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lane {
    /// `preempt_yolo: true`: first in the order.
    Preempt,
    /// The others: only on a mode ask.
    Default,
}

/// The record of one hook run, for the audit trail.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookRecord {
    /// The event.
    pub event: &'static str,
    /// The hook (its command line, or `builtin:NAME`).
    pub hook: String,
    /// What it meant.
    pub verdict: Verdict,
    /// Its stable code.
    pub code: &'static str,
    /// Its reason text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// What a lane of guards decided.
#[derive(Debug, Clone, PartialEq)]
pub struct LaneResult {
    /// The merged verdict.
    pub verdict: Verdict,
    /// The record of the hook that gave it.
    pub deciding: Option<HookRecord>,
    /// Every run, in declaration order.
    pub runs: Vec<HookRecord>,
}

impl LaneResult {
    /// No hook ran.
    pub fn none() -> LaneResult {
        LaneResult {
            verdict: Verdict::NoDecision,
            deciding: None,
            runs: Vec::new(),
        }
    }
}

/// What a transform chain did.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainResult {
    /// The value after every transform (unchanged when one failed).
    pub value: Value,
    /// The record of the transform that failed: the call is denied (fail closed).
    pub failed: Option<HookRecord>,
    /// Every run, in order.
    pub runs: Vec<HookRecord>,
}

/// Runs hooks for one session: where they start and the redactor of the agent's
/// environment.
#[derive(Debug)]
pub struct HookRunner {
    redactor: Redactor,
    cwd: PathBuf,
}

impl HookRunner {
    /// A runner whose hooks start in `cwd`, redacting the secrets of this process's
    /// environment.
    pub fn new(cwd: impl Into<PathBuf>) -> HookRunner {
        HookRunner {
            redactor: Redactor::from_process_env(),
            cwd: cwd.into(),
        }
    }

    /// The redactor.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Runs the `pre_tool_use` hooks of `lane` that cover the call, all at once, and merges
    /// them (HOOK-PAR-1).
    pub fn guard(
        &self,
        hooks: &HooksConfig,
        lane: Lane,
        call: &CallFacts,
        so_far: &DecisionSoFar,
    ) -> LaneResult {
        let defs: Vec<&HookDef> = hooks
            .pre_tool_use
            .iter()
            .filter(|m| m.preempt_yolo == (lane == Lane::Preempt) && m.covers(&call.tool_name))
            .flat_map(|m| m.hooks.iter())
            .collect();
        if defs.is_empty() {
            return LaneResult {
                verdict: Verdict::NoDecision,
                deciding: None,
                runs: Vec::new(),
            };
        }
        let stdin = input::hook_input(Event::PreToolUse, call, so_far, None);
        let outcomes = self.run_parallel(Event::PreToolUse, &defs, &stdin);
        let merged = merge::merge(&outcomes);
        let runs: Vec<HookRecord> = defs
            .iter()
            .zip(&outcomes)
            .map(|(d, o)| record(Event::PreToolUse, d, o))
            .collect();
        LaneResult {
            verdict: merged.verdict,
            deciding: merged.hook.map(|i| runs[i].clone()),
            runs,
        }
    }

    /// Runs the `post_tool_use` hooks that cover the call (observers: their failures are
    /// recorded, they change nothing).
    pub fn post(&self, hooks: &HooksConfig, call: &CallFacts, response: &Value) -> Vec<HookRecord> {
        let defs: Vec<&HookDef> = hooks
            .post_tool_use
            .iter()
            .filter(|m| m.covers(&call.tool_name))
            .flat_map(|m| m.hooks.iter())
            .collect();
        if defs.is_empty() {
            return Vec::new();
        }
        let so_far = DecisionSoFar {
            decision: Some("allow".into()),
            stage: "ran".into(),
            reason: None,
        };
        let stdin = input::hook_input(Event::PostToolUse, call, &so_far, Some(response));
        let outcomes = self.run_parallel(Event::PostToolUse, &defs, &stdin);
        defs.iter()
            .zip(&outcomes)
            .map(|(d, o)| record(Event::PostToolUse, d, o))
            .collect()
    }

    /// Runs a transform chain in sequence (HOOK-XFORM-1): `redact_secrets` first when
    /// `redact` is on, then every transform hook covering the call in declaration order,
    /// each given the value the previous one left.
    pub fn transform(
        &self,
        hooks: &HooksConfig,
        event: Event,
        redact: bool,
        call: &CallFacts,
        value: Value,
    ) -> ChainResult {
        let mut value = value;
        let mut runs = Vec::new();
        let builtin = HookDef::Builtin {
            name: "redact_secrets".into(),
        };
        let mut defs: Vec<&HookDef> = Vec::new();
        if redact {
            defs.push(&builtin);
        }
        defs.extend(
            hooks
                .matchers(event)
                .iter()
                .filter(|m| m.covers(&call.tool_name))
                .flat_map(|m| m.hooks.iter()),
        );
        for def in defs {
            if let HookDef::Builtin { name } = def {
                // A builtin needs no stdin object: it works on the value itself.
                let outcome = self.builtin_on(event, name, &mut value);
                runs.push(record(event, def, &outcome));
                if outcome.code.is_failure() {
                    return ChainResult {
                        value,
                        failed: runs.last().cloned(),
                        runs,
                    };
                }
                continue;
            }
            let mut facts = call.clone();
            let response = if event == Event::ToolInputTransform {
                facts.tool_input = value.clone();
                None
            } else {
                Some(&value)
            };
            let so_far = DecisionSoFar {
                decision: None,
                stage: "transform".into(),
                reason: None,
            };
            let stdin = input::hook_input(event, &facts, &so_far, response);
            let outcome = self.run_one(event, def, &stdin);
            let rec = record(event, def, &outcome);
            runs.push(rec.clone());
            if outcome.code.is_failure() || outcome.verdict == Verdict::Deny {
                return ChainResult {
                    value,
                    failed: Some(rec),
                    runs,
                };
            }
            if let Some(updated) = outcome.updated {
                value = updated;
            }
        }
        ChainResult {
            value,
            failed: None,
            runs,
        }
    }

    fn run_one(&self, event: Event, def: &HookDef, stdin: &Value) -> Outcome {
        self.run_parallel(event, &[def], stdin).remove(0)
    }

    /// Runs every hook at once and returns their outcomes in declaration order.
    fn run_parallel(&self, event: Event, defs: &[&HookDef], stdin: &Value) -> Vec<Outcome> {
        let mut line = serde_json::to_vec(stdin).unwrap_or_default();
        line.push(b'\n');
        let mut outcomes: Vec<Option<Outcome>> = vec![None; defs.len()];
        let mut commands = Vec::new();
        for (i, def) in defs.iter().enumerate() {
            match def {
                HookDef::Builtin { name } => outcomes[i] = Some(self.builtin(event, name, stdin)),
                HookDef::Command { command, env, .. } => {
                    commands.push((i, command.as_str(), env, def.timeout()))
                }
            }
        }
        let ran = std::thread::scope(|scope| {
            // Every hook at once, each on a thread of its own (HOOK-PAR-1); a lone hook,
            // or one whose thread cannot start, runs on this one once the others started.
            let alone = commands.len() == 1;
            let mut started = Vec::new();
            let mut inline = Vec::new();
            for &(i, command, env, timeout) in &commands {
                let spec = run::CommandSpec {
                    command,
                    env,
                    timeout,
                    cwd: &self.cwd,
                };
                if alone {
                    inline.push((i, spec));
                    continue;
                }
                let line = &line;
                let kept = spec.clone();
                let thread = std::thread::Builder::new()
                    .name("hook".into())
                    .spawn_scoped(scope, move || run::run_command(&spec, line));
                match thread {
                    Ok(handle) => started.push((i, handle)),
                    Err(_) => inline.push((i, kept)),
                }
            }
            let mut ran: Vec<(usize, Option<run::RawRun>)> = inline
                .into_iter()
                .map(|(i, spec)| (i, Some(run::run_command(&spec, &line))))
                .collect();
            ran.extend(started.into_iter().map(|(i, h)| (i, h.join().ok())));
            ran
        });
        for (i, raw) in ran {
            // A thread that panicked leaves its hook without an outcome: denied below.
            let Some(raw) = raw else { continue };
            let mut o = answer::interpret(event, &raw.exit, &raw.stdout, &raw.stderr);
            if raw.stdout.len() > run::MAX_OUTPUT {
                o = Outcome {
                    verdict: Verdict::Deny,
                    code: Code::HookMalformedOutput,
                    message: Some("the hook printed more than 1 MiB".into()),
                    updated: None,
                };
            }
            outcomes[i] = Some(o);
        }
        outcomes
            .into_iter()
            .map(|o| {
                o.unwrap_or(Outcome {
                    verdict: Verdict::Deny,
                    code: Code::HookSpawnFailed,
                    message: Some("the hook's task was lost".into()),
                    updated: None,
                })
            })
            .collect()
    }

    fn builtin(&self, event: Event, name: &str, stdin: &Value) -> Outcome {
        let field = match event {
            Event::ToolInputTransform => "tool_input",
            _ => "tool_response",
        };
        let mut v = stdin.get(field).cloned().unwrap_or(Value::Null);
        let mut o = self.builtin_on(event, name, &mut v);
        if o.message.is_some() {
            o.updated = Some(v);
        }
        o
    }

    /// Runs a builtin on `value` in place.
    fn builtin_on(&self, event: Event, name: &str, value: &mut Value) -> Outcome {
        let serves = matches!(
            event,
            Event::ToolInputTransform | Event::ToolResponseTransform
        );
        if name != "redact_secrets" || !serves {
            return Outcome {
                verdict: Verdict::Deny,
                code: Code::HookSpawnFailed,
                message: Some(format!("no builtin hook `{name}` at {}", event.name())),
                updated: None,
            };
        }
        let changed = self.redactor.redact_value(value);
        Outcome {
            verdict: Verdict::NoDecision,
            code: Code::HookNoDecision,
            message: (changed > 0).then(|| format!("{changed} string(s) redacted")),
            updated: None,
        }
    }
}

fn record(event: Event, def: &HookDef, o: &Outcome) -> HookRecord {
    HookRecord {
        event: event.name(),
        hook: def.label(),
        verdict: o.verdict,
        code: o.code.name(),
        message: o.message.clone(),
    }
}

#[cfg(test)]
mod tests;
