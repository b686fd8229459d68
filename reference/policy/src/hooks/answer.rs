//! Reading what a hook did (HOOK-OUT-1 to -4, HOOK-FAIL-1 to -3): its exit, its stdout as
//! the JSON answer (the seed's `permission_decision`, or Claude Code's
//! `hookSpecificOutput.permissionDecision`), and every way it can fail, each with its own
//! stable code. A failure is a deny (fail closed), never a pass.
//!
//! Pure: interprets bytes it is given.

use super::config::Event;
use serde::Serialize;
use serde_json::{Map, Value};

/// How a hook process ended, as [`super::run`] observed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this status.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
    /// It outran its timeout; its process group was killed.
    TimedOut,
    /// It could not be started.
    SpawnFailed(String),
}

/// What one hook run means for the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The hook allows (advice only in the preempting lane).
    Allow,
    /// The hook asks.
    Ask,
    /// The hook denies, or failed.
    Deny,
    /// The hook answered without a decision.
    NoDecision,
}

/// The stable code of a hook run's outcome (`hooks.md` section 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// Answered `allow`.
    HookAllow,
    /// Answered `ask`.
    HookAsk,
    /// Answered `deny`.
    HookDeny,
    /// Answered with no decision (`{}`), or rewrote the input only.
    HookNoDecision,
    /// Exited 2: blocks, its stderr is the reason.
    HookExit2,
    /// Outran its timeout; the whole process group was killed.
    HookTimeout,
    /// Exited with a status other than 0 and 2.
    HookExitStatus,
    /// Killed by a signal.
    HookSignal,
    /// Exited 0 with nothing on stdout.
    HookEmptyOutput,
    /// Exited 0 with stdout that is not one JSON object of the right shape.
    HookMalformedOutput,
    /// Its answer holds a field this event does not define.
    HookUnknownField,
    /// It could not be started (also `sh -c` exiting 126 or 127: the program named is not
    /// executable or not found).
    HookSpawnFailed,
}

impl Code {
    /// Whether the code is a failure of the hook (as opposed to a decision it made).
    pub fn is_failure(self) -> bool {
        !matches!(
            self,
            Code::HookAllow
                | Code::HookAsk
                | Code::HookDeny
                | Code::HookNoDecision
                | Code::HookExit2
        )
    }

    /// The code's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Code::HookAllow => "hook_allow",
            Code::HookAsk => "hook_ask",
            Code::HookDeny => "hook_deny",
            Code::HookNoDecision => "hook_no_decision",
            Code::HookExit2 => "hook_exit_2",
            Code::HookTimeout => "hook_timeout",
            Code::HookExitStatus => "hook_exit_status",
            Code::HookSignal => "hook_signal",
            Code::HookEmptyOutput => "hook_empty_output",
            Code::HookMalformedOutput => "hook_malformed_output",
            Code::HookUnknownField => "hook_unknown_field",
            Code::HookSpawnFailed => "hook_spawn_failed",
        }
    }
}

/// The meaning of one hook run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// What it means for the call.
    pub verdict: Verdict,
    /// The stable code.
    pub code: Code,
    /// The reason a person reads: the hook's own reason, its stderr on exit 2, or what
    /// failed.
    pub message: Option<String>,
    /// A rewritten input or response (transform events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated: Option<Value>,
}

impl Outcome {
    fn fail(code: Code, message: impl Into<String>) -> Outcome {
        Outcome {
            verdict: Verdict::Deny,
            code,
            message: Some(message.into()),
            updated: None,
        }
    }
}

/// Longest reason text kept from a hook.
pub const MAX_REASON: usize = 2000;

fn clip(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(MAX_REASON) {
        Some((i, _)) => s[..i].to_string(),
        None => s.to_string(),
    }
}

/// Interprets a finished hook run for `event`.
pub fn interpret(event: Event, exit: &Exit, stdout: &[u8], stderr: &[u8]) -> Outcome {
    match exit {
        Exit::TimedOut => Outcome::fail(
            Code::HookTimeout,
            "the hook outran its timeout; its process group was killed",
        ),
        Exit::SpawnFailed(e) => Outcome::fail(
            Code::HookSpawnFailed,
            format!("the hook could not be started: {e}"),
        ),
        Exit::Signal(s) => Outcome::fail(
            Code::HookSignal,
            format!("the hook was killed by signal {s}"),
        ),
        Exit::Code(2) => {
            let reason = clip(&String::from_utf8_lossy(stderr));
            Outcome {
                verdict: Verdict::Deny,
                code: Code::HookExit2,
                message: Some(if reason.is_empty() {
                    "the hook blocked the call (exit 2) and gave no reason".into()
                } else {
                    reason
                }),
                updated: None,
            }
        }
        Exit::Code(0) => parse_answer(event, stdout),
        // `sh -c` reports a program it could not start with 126 (not executable) or 127
        // (not found): the hook never ran.
        Exit::Code(c @ (126 | 127)) => Outcome::fail(
            Code::HookSpawnFailed,
            format!(
                "the hook could not be started (sh: exit {c}): {}",
                clip(&String::from_utf8_lossy(stderr))
            ),
        ),
        Exit::Code(n) => Outcome::fail(
            Code::HookExitStatus,
            format!("the hook exited with status {n}"),
        ),
    }
}

/// The fields each shape may hold, per event.
fn allowed_top(event: Event) -> &'static [&'static str] {
    match event {
        Event::PreToolUse => &[
            "permission_decision",
            "permission_decision_reason",
            "hook_specific_output",
            "hookSpecificOutput",
        ],
        Event::PostToolUse => &["hook_specific_output", "hookSpecificOutput"],
        Event::ToolInputTransform => &[
            "updated_input",
            "hook_specific_output",
            "hookSpecificOutput",
        ],
        Event::ToolResponseTransform => &[
            "updated_response",
            "hook_specific_output",
            "hookSpecificOutput",
        ],
    }
}

fn allowed_nested(event: Event, camel: bool) -> &'static [&'static str] {
    match (event, camel) {
        (Event::PreToolUse, false) => &[
            "hook_event_name",
            "permission_decision",
            "permission_decision_reason",
        ],
        (Event::PreToolUse, true) => &[
            "hookEventName",
            "permissionDecision",
            "permissionDecisionReason",
        ],
        (Event::ToolInputTransform, false) => &["hook_event_name", "updated_input"],
        (Event::ToolInputTransform, true) => &["hookEventName", "updatedInput"],
        (Event::ToolResponseTransform, false) => &["hook_event_name", "updated_response"],
        (Event::ToolResponseTransform, true) => &["hookEventName", "updatedResponse"],
        (Event::PostToolUse, false) => &["hook_event_name"],
        (Event::PostToolUse, true) => &["hookEventName"],
    }
}

/// The decision and reason, and the update, one shape gives.
#[derive(Default)]
struct Said {
    decision: Option<String>,
    reason: Option<String>,
    updated: Option<Value>,
}

fn read_shape(obj: &Map<String, Value>, camel: bool) -> Result<Said, Outcome> {
    let key =
        |snake: &'static str, camel_name: &'static str| if camel { camel_name } else { snake };
    let string = |k: &str| -> Result<Option<String>, Outcome> {
        match obj.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(Outcome::fail(
                Code::HookMalformedOutput,
                format!("`{k}` is not a string"),
            )),
        }
    };
    let updated = obj
        .get(key("updated_input", "updatedInput"))
        .or_else(|| obj.get(key("updated_response", "updatedResponse")))
        .cloned();
    Ok(Said {
        decision: string(key("permission_decision", "permissionDecision"))?,
        reason: string(key(
            "permission_decision_reason",
            "permissionDecisionReason",
        ))?,
        updated,
    })
}

fn check_fields(obj: &Map<String, Value>, allowed: &[&str], path: &str) -> Result<(), Outcome> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(Outcome::fail(
            Code::HookUnknownField,
            format!("the hook's answer holds `{path}{k}`, which this event does not define"),
        )),
        None => Ok(()),
    }
}

fn parse_answer(event: Event, stdout: &[u8]) -> Outcome {
    let text = match std::str::from_utf8(stdout) {
        Ok(t) => t.trim(),
        Err(_) => {
            return Outcome::fail(Code::HookMalformedOutput, "the hook's stdout is not UTF-8")
        }
    };
    if text.is_empty() {
        return Outcome::fail(
            Code::HookEmptyOutput,
            "the hook exited 0 and printed nothing",
        );
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Outcome::fail(
                Code::HookMalformedOutput,
                format!("the hook's stdout is not JSON: {e}"),
            )
        }
    };
    let Value::Object(top) = value else {
        return Outcome::fail(
            Code::HookMalformedOutput,
            "the hook's stdout is not a JSON object",
        );
    };
    if let Err(o) = check_fields(&top, allowed_top(event), "") {
        return o;
    }
    let mut said = match read_shape(&top, false) {
        Ok(s) => s,
        Err(o) => return o,
    };
    for (name, camel) in [
        ("hook_specific_output", false),
        ("hookSpecificOutput", true),
    ] {
        let Some(nested) = top.get(name) else {
            continue;
        };
        let Value::Object(nested) = nested else {
            return Outcome::fail(
                Code::HookMalformedOutput,
                format!("`{name}` is not an object"),
            );
        };
        if let Err(o) = check_fields(nested, allowed_nested(event, camel), &format!("{name}.")) {
            return o;
        }
        let event_key = if camel {
            "hookEventName"
        } else {
            "hook_event_name"
        };
        if let Some(e) = nested.get(event_key) {
            // Claude Code's hooks name their event in its own spelling; either is accepted.
            let claude = match event {
                Event::PreToolUse => "PreToolUse",
                Event::PostToolUse => "PostToolUse",
                _ => "",
            };
            if e != event.name() && (claude.is_empty() || e != claude) {
                return Outcome::fail(
                    Code::HookMalformedOutput,
                    format!("`{name}.{event_key}` names another event: {e}"),
                );
            }
        }
        let inner = match read_shape(nested, camel) {
            Ok(s) => s,
            Err(o) => return o,
        };
        for (mine, theirs, what) in [
            (&mut said.decision, inner.decision, "decision"),
            (&mut said.reason, inner.reason, "reason"),
        ] {
            match (mine.as_ref(), theirs) {
                (Some(a), Some(b)) if *a != b => {
                    return Outcome::fail(
                        Code::HookMalformedOutput,
                        format!("the answer gives two different {what}s"),
                    )
                }
                (None, Some(b)) => *mine = Some(b),
                _ => {}
            }
        }
        if said.updated.is_none() {
            said.updated = inner.updated;
        }
    }
    if let Some(u) = &said.updated {
        if !u.is_object() && event == Event::ToolInputTransform {
            return Outcome::fail(
                Code::HookMalformedOutput,
                "the rewritten input is not a JSON object",
            );
        }
    }
    let (verdict, code) = match said.decision.as_deref() {
        None => (Verdict::NoDecision, Code::HookNoDecision),
        Some("allow") => (Verdict::Allow, Code::HookAllow),
        Some("ask") => (Verdict::Ask, Code::HookAsk),
        Some("deny") => (Verdict::Deny, Code::HookDeny),
        Some(other) => {
            return Outcome::fail(
                Code::HookMalformedOutput,
                format!("`{other}` is not a decision (allow, ask, deny)"),
            )
        }
    };
    Outcome {
        verdict,
        code,
        message: said.reason.map(|r| clip(&r)),
        updated: said.updated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn pre(exit: Exit, out: &str, err: &str) -> Outcome {
        interpret(Event::PreToolUse, &exit, out.as_bytes(), err.as_bytes())
    }

    #[rstest]
    #[case(r#"{"permission_decision":"allow"}"#, Verdict::Allow, Code::HookAllow)]
    #[case(
        r#"{"permission_decision":"deny","permission_decision_reason":"no"}"#,
        Verdict::Deny,
        Code::HookDeny
    )]
    #[case(r#"{"permission_decision":"ask"}"#, Verdict::Ask, Code::HookAsk)]
    #[case(r#"{}"#, Verdict::NoDecision, Code::HookNoDecision)]
    #[case(
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}"#,
        Verdict::Deny,
        Code::HookDeny
    )]
    #[case(
        r#"{"hook_specific_output":{"permission_decision":"ask"}}"#,
        Verdict::Ask,
        Code::HookAsk
    )]
    #[case(
        r#"  {"permission_decision":"allow"}  "#,
        Verdict::Allow,
        Code::HookAllow
    )]
    #[case(
        r#"{"permission_decision":"allow","hookSpecificOutput":{"permissionDecision":"allow"}}"#,
        Verdict::Allow,
        Code::HookAllow
    )]
    fn answers(#[case] out: &str, #[case] verdict: Verdict, #[case] code: Code) {
        let o = pre(Exit::Code(0), out, "");
        assert_eq!((o.verdict, o.code), (verdict, code), "{out}");
    }

    #[rstest]
    #[case(Exit::Code(0), "", Code::HookEmptyOutput)]
    #[case(Exit::Code(0), "   \n", Code::HookEmptyOutput)]
    #[case(Exit::Code(0), "allow", Code::HookMalformedOutput)]
    #[case(Exit::Code(0), "[1]", Code::HookMalformedOutput)]
    #[case(
        Exit::Code(0),
        r#"{"permission_decision":"yes"}"#,
        Code::HookMalformedOutput
    )]
    #[case(
        Exit::Code(0),
        r#"{"permission_decision":1}"#,
        Code::HookMalformedOutput
    )]
    #[case(
        Exit::Code(0),
        r#"{"permission_decision":"allow"} {}"#,
        Code::HookMalformedOutput
    )]
    #[case(
        Exit::Code(0),
        r#"{"permission_decision":"allow","hookSpecificOutput":{"permissionDecision":"deny"}}"#,
        Code::HookMalformedOutput
    )]
    #[case(Exit::Code(0), r#"{"decision":"allow"}"#, Code::HookUnknownField)]
    #[case(
        Exit::Code(0),
        r#"{"hookSpecificOutput":{"permissionDecision":"allow","extra":1}}"#,
        Code::HookUnknownField
    )]
    #[case(
        Exit::Code(0),
        r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"allow"}}"#,
        Code::HookMalformedOutput
    )]
    #[case(
        Exit::Code(1),
        r#"{"permission_decision":"allow"}"#,
        Code::HookExitStatus
    )]
    #[case(Exit::Code(3), "", Code::HookExitStatus)]
    #[case(Exit::Signal(9), "", Code::HookSignal)]
    #[case(
        Exit::TimedOut,
        r#"{"permission_decision":"allow"}"#,
        Code::HookTimeout
    )]
    #[case(Exit::SpawnFailed("ENOENT".into()), "", Code::HookSpawnFailed)]
    fn every_failure_denies_with_its_code(
        #[case] exit: Exit,
        #[case] out: &str,
        #[case] code: Code,
    ) {
        let o = pre(exit, out, "");
        assert_eq!(o.code, code, "{out}");
        assert_eq!(o.verdict, Verdict::Deny);
        assert!(code.is_failure());
    }

    #[test]
    fn exit_2_blocks_with_stderr_as_the_reason() {
        let o = pre(
            Exit::Code(2),
            r#"{"permission_decision":"allow"}"#,
            "  not on my watch\n",
        );
        assert_eq!((o.verdict, o.code), (Verdict::Deny, Code::HookExit2));
        assert_eq!(o.message.as_deref(), Some("not on my watch"));
        let o = pre(Exit::Code(2), "", "");
        assert_eq!(o.verdict, Verdict::Deny);
        assert!(!o.code.is_failure());
    }

    #[test]
    fn a_decision_in_a_post_hook_is_an_unknown_field() {
        let o = interpret(
            Event::PostToolUse,
            &Exit::Code(0),
            br#"{"permission_decision":"deny"}"#,
            b"",
        );
        assert_eq!(o.code, Code::HookUnknownField);
        let o = interpret(Event::PostToolUse, &Exit::Code(0), b"{}", b"");
        assert_eq!(o.code, Code::HookNoDecision);
    }

    #[test]
    fn transforms_give_updates() {
        let o = interpret(
            Event::ToolInputTransform,
            &Exit::Code(0),
            br#"{"updated_input":{"cmd":"ls"}}"#,
            b"",
        );
        assert_eq!(o.updated, Some(serde_json::json!({"cmd": "ls"})));
        let o = interpret(
            Event::ToolInputTransform,
            &Exit::Code(0),
            br#"{"hookSpecificOutput":{"updatedInput":{"cmd":"ls"}}}"#,
            b"",
        );
        assert_eq!(o.updated, Some(serde_json::json!({"cmd": "ls"})));
        let o = interpret(
            Event::ToolInputTransform,
            &Exit::Code(0),
            br#"{"updated_input":"ls"}"#,
            b"",
        );
        assert_eq!(o.code, Code::HookMalformedOutput);
    }
}
