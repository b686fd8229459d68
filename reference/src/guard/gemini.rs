//! Gemini CLI's hook dialect (FACTS.md section 13): `BeforeTool` and `AfterTool`, the
//! `run_shell_command` tool's `command`, the file tools' `file_path` or `absolute_path`
//! (the searches and listings: their directory, a glob's from its pattern);
//! answers `{"decision":"allow","hookSpecificOutput":{"tool_input":…}}`, blocks by exit
//! 2. An `ask` hangs a headless Gemini forever, so this dialect cannot ask: an `Ask`
//! given here anyway is written as a block.
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
        // The searches and listings (both names each tool has had), decided on the tree
        // beneath their directory; read_many_files on every path and pattern it names.
        "list_directory" | "ls" => Guarded::File {
            tool: "list",
            paths: vec![dir_of(input, &["dir_path", "path", "absolute_path"])?],
        },
        "search_file_content" | "grep_search" | "grep" => Guarded::File {
            tool: "search",
            paths: vec![dir_of(input, &["dir_path", "path", "absolute_path"])?],
        },
        "glob" => Guarded::File {
            tool: "list",
            paths: vec![glob_base(
                &dir_of(input, &["dir_path", "path", "absolute_path"])?,
                &string_field(input, "pattern")?,
            )?],
        },
        "read_many_files" => {
            let mut paths = Vec::new();
            for key in ["paths", "include"] {
                match input.get(key) {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(list)) => {
                        for p in list {
                            let Value::String(p) = p else {
                                return Err(ShapeError::Field("paths"));
                            };
                            paths.push(glob_base(".", p)?);
                        }
                    }
                    Some(_) => return Err(ShapeError::Field("paths")),
                }
            }
            if paths.is_empty() {
                return Err(ShapeError::Field("paths"));
            }
            Guarded::File {
                tool: "search",
                paths,
            }
        }
        // Every other tool (web_fetch, google_web_search, save_memory, MCP tools) passes:
        // spec/guard.md section 1 says what happens to each.
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
    fn title(&self) -> &'static str {
        "Gemini CLI"
    }

    fn settings_file(&self, scope: &Scope) -> Result<PathBuf, InstallError> {
        Ok(match scope {
            Scope::Project(d) => d.join(".gemini").join("settings.json"),
            Scope::User => home()?.join(".gemini").join("settings.json"),
        })
    }

    fn hook_events(&self) -> &'static [(&'static str, &'static str)] {
        const TOOLS: &str = "run_shell_command|read_file|write_file|replace|read_many_files|list_directory|ls|glob|search_file_content|grep_search|grep";
        &[("BeforeTool", TOOLS), ("AfterTool", TOOLS)]
    }

    /// Gemini CLI 0.61.0 has none (a hook takes `type`, `command`, `name`, `env`,
    /// `timeout`; a timed-out hook is a failed one and the call runs): the guard's own
    /// deadline is all that stands.
    fn fail_closed(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// Sixty seconds, in milliseconds: 60 there timed the guard out on a loaded machine,
    /// and Gemini ran the call unjudged.
    fn hook_timeout(&self) -> u64 {
        60_000
    }

    fn timeout_unit_ms(&self) -> u64 {
        1
    }

    fn runs_hooks(&self) -> Result<(bool, Vec<String>), InstallError> {
        Ok((
            true,
            vec!["runs it: yes, Gemini CLI runs BeforeTool hooks by default".into()],
        ))
    }
}
