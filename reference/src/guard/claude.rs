//! Claude Code's hook dialect (FACTS.md section 13): `PreToolUse` and `PostToolUse`, the
//! `Bash` tool's `command`, the file tools' `file_path` (Grep, Glob and LS: the directory
//! they search or list, Glob's from its pattern); answers in `hookSpecificOutput`
//! with `permissionDecision` allow or ask and an `updatedInput`, blocks by exit 2. The
//! only agent here that really asks.
//!
//! Also the agent's installation facts (the [`Dialect`] trait's second half).
//!
//! Pure translation; touches nothing.

use super::dialect::{
    common, dir_of, glob_base, path_of, post_tool, pre_tool, string_field, Answer, Dialect,
    Guarded, HookEvent, Reply, ShapeError,
};
use super::install::{home, InstallError, Scope};
use serde_json::{json, Map, Value};
use std::path::PathBuf;

/// Claude Code.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaudeCode;

fn classify(tool: &str, input: &Map<String, Value>) -> Result<Guarded, ShapeError> {
    Ok(match tool {
        "Bash" => Guarded::Shell {
            command: string_field(input, "command")?,
            field: "command",
        },
        "Read" => path_of(input, &["file_path"], "read")?,
        "NotebookRead" => path_of(input, &["notebook_path"], "read")?,
        "Write" => path_of(input, &["file_path"], "write")?,
        "Edit" | "MultiEdit" => path_of(input, &["file_path"], "edit")?,
        "NotebookEdit" => path_of(input, &["notebook_path"], "edit")?,
        // The searches and listings read the tree beneath their directory (the working
        // directory when none is given); Glob's pattern may name a directory of its own.
        "Grep" => Guarded::File {
            tool: "search",
            paths: vec![dir_of(input, &["path"])?],
        },
        "LS" => Guarded::File {
            tool: "list",
            paths: vec![dir_of(input, &["path"])?],
        },
        "Glob" => Guarded::File {
            tool: "list",
            paths: vec![glob_base(
                &dir_of(input, &["path"])?,
                &string_field(input, "pattern")?,
            )?],
        },
        // Every other tool (Task, WebFetch, WebSearch, TodoWrite, mcp__*) passes:
        // spec/guard.md section 1 says what happens to each.
        _ => Guarded::Unguarded,
    })
}

fn decision(kind: &str, input: &Option<Map<String, Value>>, reason: &str) -> Reply {
    let mut out = json!({
        "hookEventName": "PreToolUse",
        "permissionDecision": kind,
        "permissionDecisionReason": reason,
    });
    if let Some(i) = input {
        out["updatedInput"] = Value::Object(i.clone());
    }
    Reply::json(&json!({ "hookSpecificOutput": out }))
}

impl Dialect for ClaudeCode {
    fn name(&self) -> &'static str {
        "claude-code"
    }

    fn can_ask(&self) -> bool {
        true
    }

    fn parse(&self, input: &Value) -> Result<HookEvent, ShapeError> {
        let c = common(input)?;
        match c.event.as_str() {
            "PreToolUse" => {
                let mut event = pre_tool(c.obj, c.session_id, c.cwd, classify)?;
                // Under bypassPermissions, Claude Code 2.1.332 honours a hook's ask for
                // Bash but runs any other tool it was asked about (FACTS.md section 16):
                // there only Bash can ask.
                let bypass = c.obj.get("permission_mode").and_then(Value::as_str)
                    == Some("bypassPermissions");
                if let HookEvent::PreTool(p) = &mut event {
                    p.asks = !bypass || p.tool_name == "Bash";
                }
                Ok(event)
            }
            "PostToolUse" => post_tool(c.obj, c.session_id, c.cwd),
            _ => Err(ShapeError::UnknownEvent(c.event)),
        }
    }

    fn render(&self, answer: &Answer) -> Reply {
        match answer {
            Answer::Allow { input, reason } => decision("allow", input, reason),
            Answer::Ask { input, reason } => decision("ask", input, reason),
            Answer::Deny { reason } => Reply::block(reason),
            Answer::Pass => Reply::silent(),
        }
    }
    fn title(&self) -> &'static str {
        "Claude Code"
    }

    fn settings_file(&self, scope: &Scope) -> Result<PathBuf, InstallError> {
        Ok(match scope {
            Scope::Project(d) => d.join(".claude").join("settings.json"),
            // Claude Code reads its user settings from CLAUDE_CONFIG_DIR when that is set.
            Scope::User => match std::env::var_os("CLAUDE_CONFIG_DIR")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
            {
                Some(dir) => dir.join("settings.json"),
                None => home()?.join(".claude").join("settings.json"),
            },
        })
    }

    fn hook_events(&self) -> &'static [(&'static str, &'static str)] {
        const TOOLS: &str = "Bash|Read|NotebookRead|Write|Edit|MultiEdit|NotebookEdit|Grep|Glob|LS";
        &[("PreToolUse", TOOLS), ("PostToolUse", TOOLS)]
    }

    /// Claude Code 2.1.332 reads `onFailure` on a hook matcher (`continue` or `block`; an
    /// unknown value reads as `block`).
    fn fail_closed(&self) -> Option<(&'static str, &'static str)> {
        Some(("onFailure", "block"))
    }

    /// Sixty seconds: the guard answers in milliseconds, but a limit a loaded machine can
    /// reach would let calls through unjudged.
    fn hook_timeout(&self) -> u64 {
        60
    }

    fn timeout_unit_ms(&self) -> u64 {
        1000
    }

    fn runs_hooks(&self) -> Result<(bool, Vec<String>), InstallError> {
        Ok((
            true,
            vec!["runs it: yes, Claude Code runs user and project hooks at once (unless disableAllHooks is set)".into()],
        ))
    }
}
