//! GitHub Copilot CLI's hook dialect (spec/guard.md section 6, captured from Copilot CLI
//! 1.0.102): a `preToolUse` command hook reads `{"sessionId", "timestamp", "cwd",
//! "toolName", "toolArgs"}` (no event name, no call id; `toolArgs` an object); the
//! `bash` tool's `command`, the file tools' `path` (`view`, `create`, `edit`), the
//! searches' `paths` (`grep`, `glob`, a string or a list, the working directory when
//! none). An allow is `{"permissionDecision":"allow","modifiedArgs":…}` (Copilot runs the
//! modified arguments); a deny is exit 2 with `{"permissionDecision":"deny",
//! "permissionDecisionReason":…}` on standard output, which Copilot shows as the reason
//! (exit 2 alone denies too, with "hook exited with code 2"). Copilot puts a hook's ask
//! to the person only in an interactive session (headless and in autopilot it refuses
//! the call), so this dialect does not ask: what would ask is denied with its reason.
//!
//! Also the agent's installation facts (the [`Dialect`] trait's second half): the hook
//! goes into `$COPILOT_HOME/settings.json` (`~/.copilot/settings.json`), Copilot's own
//! `hooks` key, as one entry with no matcher, so that every tool reaches the guard.
//!
//! Pure translation, but for `runs_hooks` (reads the user's settings and the current
//! directory's project settings) and the `view` tool (whether its path, read from the
//! agent's working directory, is a directory).

use super::dialect::{
    glob_base, optional_string, string_field, Answer, Dialect, Guarded, HookEvent, PreTool, Reply,
    ShapeError,
};
use super::install::{home, InstallError, Scope};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// GitHub Copilot CLI.
#[derive(Debug, Clone, Copy, Default)]
pub struct Copilot;

/// The directories a `grep` or `glob` call searches: its `paths` (one string or a list),
/// the working directory when none is given.
fn paths_of(input: &Map<String, Value>) -> Result<Vec<String>, ShapeError> {
    match input.get("paths") {
        None | Some(Value::Null) => Ok(vec![".".into()]),
        Some(Value::String(s)) if s.is_empty() => Ok(vec![".".into()]),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(list)) if !list.is_empty() => list
            .iter()
            .map(|p| match p {
                Value::String(s) if !s.is_empty() => Ok(s.clone()),
                _ => Err(ShapeError::Field("paths")),
            })
            .collect(),
        Some(_) => Err(ShapeError::Field("paths")),
    }
}

fn classify(tool: &str, input: &Map<String, Value>, cwd: &str) -> Result<Guarded, ShapeError> {
    Ok(match tool {
        "bash" => Guarded::Shell {
            command: string_field(input, "command")?,
            field: "command",
        },
        // `view` reads a file, or lists a directory (one level): a directory is decided
        // as a listing, so that a hidden path beneath it is refused (GUARD-FILE-2).
        "view" => {
            let path = string_field(input, "path")?;
            let tool = if Path::new(cwd).join(&path).is_dir() {
                "list"
            } else {
                "read"
            };
            Guarded::File {
                tool,
                paths: vec![path],
            }
        }
        "create" => Guarded::File {
            tool: "write",
            paths: vec![string_field(input, "path")?],
        },
        "edit" => Guarded::File {
            tool: "edit",
            paths: vec![string_field(input, "path")?],
        },
        "grep" => Guarded::File {
            tool: "search",
            paths: paths_of(input)?,
        },
        "glob" => {
            let pattern = string_field(input, "pattern")?;
            Guarded::File {
                tool: "list",
                paths: paths_of(input)?
                    .iter()
                    .map(|d| glob_base(d, &pattern))
                    .collect::<Result<_, _>>()?,
            }
        }
        // Every other tool passes: read_bash, write_bash, stop_bash and list_bash reach a
        // shell the guard already fenced; task starts a subagent whose own tool calls
        // come to this hook; sql and session_store_sql query Copilot's session store;
        // skill, fetch_copilot_cli_documentation, web_fetch and MCP tools are Copilot's
        // own rules' (spec/guard.md section 6).
        _ => Guarded::Unguarded,
    })
}

impl Dialect for Copilot {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn can_ask(&self) -> bool {
        false
    }

    /// Every event is a pre-tool event: `install` writes no `postToolUse` hook (its input
    /// names no call, so there is nothing to record it against), and an input carrying a
    /// `toolResult` (a post-tool event) is refused rather than passed.
    fn parse(&self, input: &Value) -> Result<HookEvent, ShapeError> {
        let Value::Object(obj) = input else {
            return Err(ShapeError::NotJson("not an object".into()));
        };
        if obj.contains_key("toolResult") {
            return Err(ShapeError::UnknownEvent("postToolUse".into()));
        }
        if let Some(event) = optional_string(obj, "hookEventName")? {
            if event != "preToolUse" {
                return Err(ShapeError::UnknownEvent(event));
            }
        }
        let session_id = string_field(obj, "sessionId")?;
        if session_id.is_empty() {
            return Err(ShapeError::Field("sessionId"));
        }
        let cwd = string_field(obj, "cwd")?;
        let tool_name = string_field(obj, "toolName")?;
        let tool_input = match obj.get("toolArgs") {
            Some(Value::Object(m)) => m.clone(),
            _ => return Err(ShapeError::Field("toolArgs")),
        };
        let guarded = classify(&tool_name, &tool_input, &cwd)?;
        Ok(HookEvent::PreTool(PreTool {
            session_id,
            cwd,
            tool_name,
            tool_input,
            tool_use_id: None,
            guarded,
            asks: false,
        }))
    }

    fn render(&self, answer: &Answer) -> Reply {
        match answer {
            Answer::Allow { input, reason } => {
                let mut out = json!({
                    "permissionDecision": "allow",
                    "permissionDecisionReason": reason,
                });
                if let Some(i) = input {
                    out["modifiedArgs"] = Value::Object(i.clone());
                }
                Reply::json(&out)
            }
            // Headless and in autopilot, Copilot refuses an ask; interactive, it would put
            // it to the person: this dialect does not ask (GUARD-ASK-2).
            Answer::Ask { reason, .. } | Answer::Deny { reason } => self.block(reason),
            Answer::Pass => Reply::silent(),
        }
    }

    /// Exit 2 (a deny whatever Copilot makes of the output: "hook exited with code 2"),
    /// the line on standard error, and the same line as the JSON deny on standard output,
    /// which Copilot shows to the model and the person as the reason.
    fn block(&self, reason: &str) -> Reply {
        let mut r = Reply::block(reason);
        r.stdout = format!(
            "{}\n",
            json!({
                "permissionDecision": "deny",
                "permissionDecisionReason": r.stderr.trim_end(),
            })
        );
        r
    }

    fn title(&self) -> &'static str {
        "GitHub Copilot CLI"
    }

    /// `$COPILOT_HOME/settings.json` (`~/.copilot/settings.json`). A project's hooks
    /// (`.github/hooks/*.json`) load only in a folder Copilot trusts, and a trusted
    /// project's settings can switch every hook off: no project scope.
    fn settings_file(&self, scope: &Scope) -> Result<PathBuf, InstallError> {
        let file = copilot_home()?.join("settings.json");
        match scope {
            Scope::Project(_) => Err(InstallError::UntrustedProject(
                self.title(),
                file.display().to_string(),
            )),
            Scope::User => Ok(file),
        }
    }

    /// One `preToolUse` entry with no matcher: every tool comes to the guard, which
    /// passes those it does not decide (GUARD-DECIDE-2); none can be missed by a name.
    fn hook_events(&self) -> &'static [(&'static str, &'static str)] {
        &[("preToolUse", "")]
    }

    /// Copilot's own entry shape: `{"type": "command", "bash": COMMAND, "timeoutSec": T}`.
    fn hook_entry(&self, _matcher: &str, command: &str) -> Value {
        json!({ "type": "command", "bash": command, "timeoutSec": self.hook_timeout() })
    }

    /// Copilot CLI 1.0.102 has none: an entry takes `type`, `bash`, `powershell`, `cwd`,
    /// `env`, `timeoutSec` (or `timeout`) and `matcher`, and a hook that times out lets
    /// the call run (its changelog, 1.0.67, and measured). A hook that exits non-zero, is
    /// killed or cannot start denies; the guard's deadline covers the timeout.
    fn fail_closed(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// Sixty seconds.
    fn hook_timeout(&self) -> u64 {
        60
    }

    fn timeout_unit_ms(&self) -> u64 {
        1000
    }

    fn runs_hooks(&self) -> Result<(bool, Vec<String>), InstallError> {
        let file = copilot_home()?.join("settings.json");
        let mut lines = Vec::new();
        let mut on = true;
        if disables_hooks(&file) {
            on = false;
            lines.push(format!(
                "runs it: no, {} sets disableAllHooks",
                file.display()
            ));
        } else {
            lines.push("runs it: yes, Copilot CLI runs the user's preToolUse hooks in every folder, trusted or not".into());
        }
        // A folder Copilot trusts loads its project settings, which can switch every hook
        // off (checked on 1.0.102): the fence keeps them read-only, but one already there
        // is read at the next start.
        if let Ok(cwd) = std::env::current_dir() {
            for rel in PROJECT_SETTINGS {
                let f = cwd.join(rel);
                if disables_hooks(&f) {
                    on = false;
                    lines.push(format!(
                        "runs it: no, in this folder once Copilot trusts it: {} sets disableAllHooks",
                        f.display()
                    ));
                }
            }
        }
        Ok((on, lines))
    }
}

/// The project settings Copilot CLI 1.0.102 reads in a folder it trusts, each of which
/// can set `disableAllHooks` and switch the user's hooks off.
pub const PROJECT_SETTINGS: [&str; 4] = [
    ".github/copilot/settings.json",
    ".github/copilot/settings.local.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
];

/// Whether the JSON settings file `file` sets `disableAllHooks` to true.
fn disables_hooks(file: &Path) -> bool {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|v| v["disableAllHooks"] == json!(true))
}

/// Copilot's home: `$COPILOT_HOME`, else `~/.copilot`.
pub fn copilot_home() -> Result<PathBuf, InstallError> {
    match std::env::var_os("COPILOT_HOME").filter(|v| !v.is_empty()) {
        Some(h) => Ok(PathBuf::from(h)),
        None => Ok(home()?.join(".copilot")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pre(tool: &str, args: Value) -> Value {
        json!({"sessionId": "s", "timestamp": 1, "cwd": "/w", "toolName": tool, "toolArgs": args})
    }

    #[test]
    fn the_captured_input_reads() {
        let HookEvent::PreTool(p) = Copilot
            .parse(&pre("bash", json!({"command": "ls", "description": "d"})))
            .unwrap()
        else {
            panic!("not a pre-tool event")
        };
        assert_eq!(
            p.guarded,
            Guarded::Shell {
                command: "ls".into(),
                field: "command"
            }
        );
        let grep = Copilot
            .parse(&pre("grep", json!({"pattern": "x", "paths": ["a", "/b"]})))
            .unwrap();
        let HookEvent::PreTool(g) = grep else {
            panic!()
        };
        assert_eq!(
            g.guarded,
            Guarded::File {
                tool: "search",
                paths: vec!["a".into(), "/b".into()]
            }
        );
        // A post-tool event, a string toolArgs, a missing session: refused.
        let mut post = pre("bash", json!({"command": "ls"}));
        post["toolResult"] = json!({});
        assert!(Copilot.parse(&post).is_err());
        assert!(Copilot
            .parse(&pre("bash", json!("{\"command\":\"ls\"}")))
            .is_err());
        assert!(Copilot
            .parse(&json!({"cwd": "/w", "toolName": "bash", "toolArgs": {"command": "ls"}}))
            .is_err());
    }
}
