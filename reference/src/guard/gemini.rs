//! Gemini CLI's hook dialect (FACTS.md section 13): `BeforeTool` and `AfterTool`, the
//! `run_shell_command` tool's `command`, the file tools' `file_path` or `absolute_path`;
//! answers `{"decision":"allow","hookSpecificOutput":{"tool_input":…}}`, blocks by exit
//! 2. An `ask` hangs a headless Gemini forever, so this dialect cannot ask: an `Ask`
//! given here anyway is written as a block.
//!
//! Pure translation; touches nothing.

use super::dialect::{
    common, path_of, post_tool, pre_tool, string_field, Answer, Dialect, Guarded, HookEvent, Reply,
    ShapeError,
};
use serde_json::{json, Map, Value};

/// Gemini CLI.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gemini;

fn classify(tool: &str, input: &Map<String, Value>) -> Result<Guarded, ShapeError> {
    Ok(match tool {
        "run_shell_command" => Guarded::Shell {
            command: string_field(input, "command")?,
            field: "command",
        },
        "read_file" => path_of(input, &["absolute_path", "file_path"], "read")?,
        "write_file" => path_of(input, &["file_path", "absolute_path"], "write")?,
        "replace" => path_of(input, &["file_path", "absolute_path"], "edit")?,
        _ => Guarded::Unguarded,
    })
}

impl Dialect for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn can_ask(&self) -> bool {
        false
    }

    fn parse(&self, input: &Value) -> Result<HookEvent, ShapeError> {
        let c = common(input)?;
        match c.event.as_str() {
            "BeforeTool" => pre_tool(c.obj, c.session_id, c.cwd, classify),
            "AfterTool" => post_tool(c.obj, c.session_id, c.cwd),
            _ => Err(ShapeError::UnknownEvent(c.event)),
        }
    }

    fn render(&self, answer: &Answer) -> Reply {
        match answer {
            Answer::Allow { input, reason } => {
                let mut out = json!({ "decision": "allow", "reason": reason });
                if let Some(i) = input {
                    out["hookSpecificOutput"] =
                        json!({ "hookEventName": "BeforeTool", "tool_input": i });
                }
                Reply::json(&out)
            }
            // Gemini hangs on an ask: never say it.
            Answer::Ask { reason, .. } | Answer::Deny { reason } => Reply::block(reason),
            Answer::Pass => Reply::silent(),
        }
    }
}
