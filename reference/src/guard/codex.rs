//! Codex CLI's hook dialect (FACTS.md section 13): `PreToolUse` and `PostToolUse` from
//! `CODEX_HOME/hooks.json`, the `Bash` tool's `command` (a string), `apply_patch`'s files
//! (from its patch text, and from a shell line that carries a patch); deny by exit 2,
//! `updatedInput` rewrites. Codex silently ignores `ask` and runs the command, so this
//! dialect cannot ask: the guard tells the library so, and an `Ask` given here anyway is
//! written as a block.
//!
//! Pure translation; touches nothing.

use super::dialect::{
    common, patch_paths, post_tool, pre_tool, string_field, Answer, Dialect, Guarded, HookEvent,
    Reply, ShapeError,
};
use serde_json::{json, Map, Value};

/// Codex CLI.
#[derive(Debug, Clone, Copy, Default)]
pub struct Codex;

fn classify(tool: &str, input: &Map<String, Value>) -> Result<Guarded, ShapeError> {
    Ok(match tool {
        // The command as one string; an argv array is a shape this dialect does not
        // read, so it blocks (fail closed) rather than passing unjudged.
        "Bash" | "shell" | "exec_command" => Guarded::Shell {
            command: string_field(input, "command")?,
            field: "command",
        },
        // Codex's only file tool: every file its patch adds, updates, deletes or moves to
        // is decided as a write.
        "apply_patch" => {
            let text = ["input", "patch", "command"]
                .iter()
                .find_map(|k| input.get(*k).and_then(Value::as_str))
                .ok_or(ShapeError::Field("input"))?;
            let paths = patch_paths(text)?;
            if paths.is_empty() {
                return Err(ShapeError::Undecidable("patch names no file".into()));
            }
            Guarded::File {
                tool: "write",
                paths,
            }
        }
        _ => Guarded::Unguarded,
    })
}

impl Dialect for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn can_ask(&self) -> bool {
        false
    }

    fn parse(&self, input: &Value) -> Result<HookEvent, ShapeError> {
        let c = common(input)?;
        match c.event.as_str() {
            "PreToolUse" => pre_tool(c.obj, c.session_id, c.cwd, classify),
            "PostToolUse" => post_tool(c.obj, c.session_id, c.cwd),
            _ => Err(ShapeError::UnknownEvent(c.event)),
        }
    }

    fn render(&self, answer: &Answer) -> Reply {
        match answer {
            Answer::Allow { input, reason } => {
                let mut out = json!({
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "allow",
                    "permissionDecisionReason": reason,
                });
                if let Some(i) = input {
                    out["updatedInput"] = Value::Object(i.clone());
                }
                Reply::json(&json!({ "hookSpecificOutput": out }))
            }
            // Codex would run the command on an ask: never say it.
            Answer::Ask { reason, .. } | Answer::Deny { reason } => Reply::block(reason),
            Answer::Pass => Reply::silent(),
        }
    }
}
