//! A call acted on (ORDER-RUN-1 to -6): decided by the order, and, when the order allowed
//! it, run in the session's fence through the plane's public session API
//! ([`crate::plane::session::Session::run`]), with its redirections marked in the trust map
//! before the first byte lands, its response redacted and cut before anything else sees
//! it, the `tool_response_transform` chain and the `post_tool_use` hooks run on the real
//! output, and one journal record of what ran.
//!
//! May touch: the process table (the plane and hooks), the state directory (the journal,
//! the session record), the trust map of the attached file tools.

use super::{Answered, GuardedSession, NoCard};
use crate::gate::{AnswerOutcome, Choice, Verdict};
use crate::hooks::{CallFacts, Code, Event, HookRecord, Verdict as HookVerdict};
use crate::order::redirect;
use crate::order::{Call, Ruling};
use crate::plane::session::{RunAnswer, RunTool, Session as Plane, SessionError as PlaneError};
use crate::records::RecordError;
use crate::workspace::Answer;
use serde_json::{json, Value};

/// The longest stretch of each output stream the model and the hooks are given, in
/// bytes (ORDER-RUN-4). The cut comes after redaction, so it never leaves half a secret.
pub const MAX_STREAM: usize = 256 * 1024;

/// Why an acted call did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotRun {
    /// The order denied it.
    Denied,
    /// The order asks: the card is open, and nothing runs until it is answered.
    Pending,
    /// A redirection's trust prompt was declined (ORDER-REDIR-1).
    RedirectDeclined,
    /// The plane refused it (no fence it can prove, ...).
    Refused,
}

impl NotRun {
    /// Its stable name.
    pub fn name(self) -> &'static str {
        match self {
            NotRun::Denied => "denied",
            NotRun::Pending => "pending",
            NotRun::RedirectDeclined => "redirect_declined",
            NotRun::Refused => "refused",
        }
    }
}

/// What acting on one call came to.
#[derive(Debug, Clone)]
pub struct Acted {
    /// The order's ruling.
    pub ruling: Ruling,
    /// Why it did not run, or `None` when it ran.
    pub not_run: Option<NotRun>,
    /// The plane's answer, its streams as the model gets them (redacted, cut, transformed;
    /// empty when withheld). `None` when the plane was not reached.
    pub run: Option<RunAnswer>,
    /// The response the model gets: `{exit, signal, stdout, stderr, truncated}` after the
    /// transforms, or `{withheld: CODE}`.
    pub response: Value,
    /// A stream was longer than [`MAX_STREAM`] and was cut.
    pub truncated: bool,
    /// The code of the response hook that failed or blocked: the response is withheld
    /// from the model (ORDER-RUN-5).
    pub withheld: Option<String>,
    /// The runs after the call: the response chain and the `post_tool_use` hooks.
    pub after: Vec<HookRecord>,
    /// Each redirection target marked in the trust map before the line ran, with its
    /// effect.
    pub marked: Vec<(String, &'static str)>,
}

/// Acting failed outright: a record could not be written, or the plane broke.
#[derive(Debug, thiserror::Error)]
pub enum ActError {
    /// A record could not be written.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The plane failed (not a refusal: those are answers).
    #[error("the plane failed: {0}")]
    Plane(#[from] PlaneError),
    /// The tool is not one the plane runs.
    #[error("the plane runs `shell` and `execute_code`, not {0:?}")]
    NotRunnable(String),
}

/// `s` cut to at most `max` bytes at a character boundary; whether it was cut.
fn cut(s: &str, max: usize) -> (String, bool) {
    if s.len() <= max {
        return (s.to_string(), false);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (s[..end].to_string(), true)
}

/// The text the plane runs for `tool`: the line of `shell`, the code of `execute_code`.
fn run_text(tool: RunTool, input: &Value) -> String {
    let key = match tool {
        RunTool::Shell => "cmd",
        RunTool::ExecuteCode => "code",
    };
    input
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

impl GuardedSession {
    fn facts(&self, call: &Call, input: &Value) -> CallFacts {
        let cwd = self.gate.workspace().display().to_string();
        CallFacts {
            agent_name: self.policy.agent_name.clone(),
            cwd: cwd.clone(),
            safety_policy: self.policy.mode.mode.policy_name().to_string(),
            session_id: call.session_id.clone(),
            tool_name: call.tool.clone(),
            tool_input: input.clone(),
            tool_use_id: call.tool_use_id.clone(),
            effective_cwd: cwd,
        }
    }

    /// Acts on one call: decides it (recording the ruling), and when the order allowed it
    /// runs it in `plane`, the session's fence (ORDER-RUN-1). `if_asked` is the person's
    /// answer to a redirection's trust prompt (ORDER-REDIR-1). A call the order denies or
    /// asks about does not run; an asked call's card stays open.
    pub fn act(
        &mut self,
        call: &Call,
        plane: &mut Plane,
        if_asked: Answer,
    ) -> Result<Acted, ActError> {
        let tool = RunTool::from_name(&call.tool)
            .ok_or_else(|| ActError::NotRunnable(call.tool.clone()))?;
        let ruling = self.rule(call, None);
        self.record(&ruling)?;
        let mut acted = Acted {
            ruling,
            not_run: None,
            run: None,
            response: Value::Null,
            truncated: false,
            withheld: None,
            after: Vec::new(),
            marked: Vec::new(),
        };
        match acted.ruling.decision {
            Verdict::Deny => acted.not_run = Some(NotRun::Denied),
            Verdict::Ask => acted.not_run = Some(NotRun::Pending),
            Verdict::Allow => {}
        }
        if acted.not_run.is_some() {
            self.record_act(&acted)?;
            if acted.ruling.decision == Verdict::Ask {
                self.pending_act = Some(call.clone());
            }
            return Ok(acted);
        }
        self.run_allowed(call, tool, acted, plane, if_asked)
    }

    /// Whether the open card is of a call acted on (answering it may run the call).
    pub fn card_is_acted(&self) -> bool {
        self.pending_act.is_some() && self.pending.is_some()
    }

    /// Answers the open card (as [`GuardedSession::answer`]) and, when the card was of a
    /// call acted on and the person approved it, runs that call in `plane` as an allowed
    /// call runs (ORDER-RUN-1, ORDER-FENCE-1: the approval never widens the fence).
    pub fn answer_act(
        &mut self,
        choice: Choice,
        plane: &mut Plane,
        if_asked: Answer,
    ) -> Result<Result<(Answered, Option<Acted>), NoCard>, ActError> {
        let call = self.pending_act.take();
        let ruling = self.pending.as_ref().map(|(r, _)| r.clone());
        let answered = match self.answer(choice)? {
            Ok(a) => a,
            Err(e) => return Ok(Err(e)),
        };
        let (Some(call), Some(ruling), AnswerOutcome::Approved) = (call, ruling, answered.outcome)
        else {
            return Ok(Ok((answered, None)));
        };
        let tool = RunTool::from_name(&call.tool)
            .ok_or_else(|| ActError::NotRunnable(call.tool.clone()))?;
        let mut ruling = ruling;
        if tool == RunTool::Shell {
            // An asked line's redirections were not planned (only an allow plans them):
            // the person's approval of the card is not their answer to the trust prompt.
            if let Some(files) = &self.files {
                let line = run_text(tool, &ruling.input);
                ruling.redirects = crate::order::decide::plan_redirects(
                    &self.gate,
                    files.map(),
                    files.roots(),
                    &line,
                );
            }
        }
        let acted = Acted {
            ruling,
            not_run: None,
            run: None,
            response: Value::Null,
            truncated: false,
            withheld: None,
            after: Vec::new(),
            marked: Vec::new(),
        };
        let acted = self.run_allowed(&call, tool, acted, plane, if_asked)?;
        Ok(Ok((answered, Some(acted))))
    }

    /// Runs a call the order (or the person) allowed: the redirections' prompt, the marks,
    /// the plane, the response, the record.
    fn run_allowed(
        &mut self,
        call: &Call,
        tool: RunTool,
        mut acted: Acted,
        plane: &mut Plane,
        if_asked: Answer,
    ) -> Result<Acted, ActError> {
        if acted.ruling.redirects.iter().any(|r| r.prompt) && if_asked != Answer::Yes {
            acted.not_run = Some(NotRun::RedirectDeclined);
            self.record_act(&acted)?;
            return Ok(acted);
        }
        let text = run_text(tool, &acted.ruling.input);
        if tool == RunTool::Shell {
            acted.marked = self.mark_redirects(&text)?;
        }
        let answer = plane.run(tool, &text, None)?;
        if answer.refused.is_some() {
            acted.not_run = Some(NotRun::Refused);
            acted.run = Some(answer);
            self.record_act(&acted)?;
            return Ok(acted);
        }
        self.respond(call, &mut acted, answer);
        self.record_act(&acted)?;
        Ok(acted)
    }

    /// Marks each redirection target of `line` in the attached trust map before the line
    /// runs (ORDER-REDIR-3), recording the map.
    fn mark_redirects(&mut self, line: &str) -> Result<Vec<(String, &'static str)>, RecordError> {
        let workspace = self.gate.workspace().to_path_buf();
        let marked = self
            .with_files(|files| {
                redirect::targets(line)
                    .into_iter()
                    .filter_map(|t| {
                        let p = std::path::Path::new(&t.path);
                        let abs = if p.is_absolute() {
                            p.to_path_buf()
                        } else {
                            workspace.join(p)
                        };
                        files.redirected(&abs).map(|e| (t.path, e))
                    })
                    .collect()
            })?
            .unwrap_or_default();
        Ok(marked)
    }

    /// Builds the response the model gets from what ran: redaction over the whole output,
    /// the cut, the response transforms, the `post_tool_use` hooks (ORDER-RUN-3 to -5).
    fn respond(&mut self, call: &Call, acted: &mut Acted, mut answer: RunAnswer) {
        let mut response = json!({
            "exit": answer.exit,
            "signal": answer.signal,
            "stdout": answer.stdout,
            "stderr": answer.stderr,
        });
        if self.policy.redact {
            let n = self.runner.redactor().redact_value(&mut response);
            if n > 0 {
                acted.after.push(HookRecord {
                    event: Event::ToolResponseTransform.name(),
                    hook: "builtin:redact_secrets".into(),
                    verdict: HookVerdict::NoDecision,
                    code: Code::HookNoDecision.name(),
                    message: Some(format!("{n} string(s) redacted")),
                });
            }
        }
        for stream in ["stdout", "stderr"] {
            let text = response[stream].as_str().unwrap_or_default().to_string();
            let (kept, was_cut) = cut(&text, MAX_STREAM);
            acted.truncated |= was_cut;
            response[stream] = json!(kept);
        }
        response["truncated"] = json!(acted.truncated);
        let facts = self.facts(call, &acted.ruling.input);
        let chain = self.runner.transform(
            &self.policy.hooks,
            Event::ToolResponseTransform,
            false,
            &facts,
            response,
        );
        acted.after.extend(chain.runs);
        let mut response = chain.value;
        if let Some(failed) = chain.failed {
            acted.withheld = Some(failed.code.to_string());
            response = json!({ "withheld": failed.code });
        }
        let post = self.runner.post(&self.policy.hooks, &facts, &response);
        if acted.withheld.is_none() {
            if let Some(h) = post.iter().find(|h| h.verdict == HookVerdict::Deny) {
                acted.withheld = Some(h.code.to_string());
                response = json!({ "withheld": h.code });
            }
        }
        acted.after.extend(post);
        let text = |k: &str| {
            response
                .get(k)
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .unwrap_or_default()
        };
        answer.stdout = text("stdout");
        answer.stderr = text("stderr");
        acted.response = response;
        acted.run = Some(answer);
    }

    /// One journal record of what acting came to (one write, synced): whether it ran, how
    /// it ended, and every run after it, never the output itself.
    fn record_act(&mut self, acted: &Acted) -> Result<(), RecordError> {
        let run = acted.run.as_ref();
        let record = json!({
            "kind": "act",
            "session": self.id,
            "tool_use_id": acted.ruling.tool_use_id,
            "ran": acted.not_run.is_none(),
            "not_run": acted.not_run.map(NotRun::name),
            "exit": run.and_then(|r| r.exit),
            "signal": run.and_then(|r| r.signal),
            "refused": run.and_then(|r| r.refused).map(|r| r.code()),
            "truncated": acted.truncated,
            "withheld": acted.withheld,
            "marked": acted.marked.iter().map(|(p, e)| json!({"path": p, "effect": e})).collect::<Vec<_>>(),
            "hooks": acted.after,
        });
        self.append(record)?;
        // The audit trail's decision record says what ran, as a journal read back would.
        let last = self.audit.len() - 1;
        super::fold_one(&mut self.audit, last);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_lands_on_a_character_boundary() {
        assert_eq!(cut("abc", 5), ("abc".into(), false));
        assert_eq!(cut("abcdef", 3), ("abc".into(), true));
        // "é" is two bytes: a cut inside it keeps the character out whole.
        assert_eq!(cut("aé", 2), ("a".into(), true));
    }
}
