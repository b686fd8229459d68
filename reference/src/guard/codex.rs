//! Codex CLI's hook dialect (FACTS.md section 13): `PreToolUse` and `PostToolUse` from
//! `CODEX_HOME/hooks.json`, the `Bash` tool's `command` (a string), `apply_patch`'s files
//! (from its patch text, and from a shell line that carries a patch); deny by exit 2,
//! `updatedInput` rewrites. Codex silently ignores `ask` and runs the command, so this
//! dialect cannot ask: the guard tells the library so, and an `Ask` given here anyway is
//! written as a block.
//!
//! Also the agent's installation facts (the [`Dialect`] trait's second half).
//!
//! Pure translation, but for installing: `enable_hooks` reads and appends to
//! `CODEX_HOME/config.toml`, `runs_hooks` reads it.

use super::dialect::{
    common, patch_paths, post_tool, pre_tool, string_field, Answer, Dialect, Guarded, HookEvent,
    Reply, ShapeError,
};
use super::install::{append, home, Change, InstallError, Scope};
use serde_json::{json, Map, Value};
use std::path::PathBuf;

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
    fn title(&self) -> &'static str {
        "Codex CLI"
    }

    fn settings_file(&self, scope: &Scope) -> Result<PathBuf, InstallError> {
        match scope {
            Scope::Project(_) => Err(InstallError::NoProjectScope(
                self.title(),
                codex_home()?.join("hooks.json").display().to_string(),
            )),
            Scope::User => Ok(codex_home()?.join("hooks.json")),
        }
    }

    /// One entry per tool, which reads the same whether its matcher is a pattern or a
    /// name.
    fn hook_events(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("PreToolUse", "Bash"),
            ("PreToolUse", "apply_patch"),
            ("PostToolUse", "Bash"),
            ("PostToolUse", "apply_patch"),
        ]
    }

    /// Codex CLI 0.171.0 has none (a command handler takes `command`, `timeout`,
    /// `statusMessage` and no failure setting): the guard's own deadline is all that
    /// stands.
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

    /// Codex runs hooks only with `[features] hooks = true` in `CODEX_HOME/config.toml`:
    /// appended when the file has no `[features]` table (otherwise left to the person, and
    /// the doctor says so).
    fn enable_hooks(&self) -> Result<Option<Change>, InstallError> {
        let file = codex_home()?.join("config.toml");
        let before = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(InstallError::Io(file, e)),
        };
        if hooks_enabled(&before).is_some() || before.contains("[features]") {
            return Ok(Some(Change {
                file,
                backup: None,
                diff: String::new(),
                changed: false,
            }));
        }
        let mut after = before.clone();
        if !after.is_empty() && !after.ends_with('\n') {
            after.push('\n');
        }
        after.push_str("\n[features]\nhooks = true\n");
        append(&file, &before, &after).map(Some)
    }

    fn runs_hooks(&self) -> Result<(bool, Vec<String>), InstallError> {
        let file = codex_home()?.join("config.toml");
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let (on, first) = match hooks_enabled(&text) {
            Some(true) => (
                true,
                format!("runs it: [features] hooks = true in {}", file.display()),
            ),
            _ => (
                false,
                format!(
                    "runs it: no, {} does not set [features] hooks = true",
                    file.display()
                ),
            ),
        };
        Ok((
            on,
            vec![
                first,
                "runs it: only when Codex trusts its hooks: start it with --dangerously-bypass-hook-trust (otherwise it skips them silently)".into(),
            ],
        ))
    }

    fn applies_patches_from_shell(&self) -> bool {
        true
    }
}

/// Codex's home: `$CODEX_HOME`, else `~/.codex`.
pub fn codex_home() -> Result<PathBuf, InstallError> {
    match std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        Some(h) => Ok(PathBuf::from(h)),
        None => Ok(home()?.join(".codex")),
    }
}

/// `Some(on)` when Codex's config text sets `features.hooks`.
pub fn hooks_enabled(config: &str) -> Option<bool> {
    let v: toml::Value = toml::from_str(config).ok()?;
    v.get("features")?.get("hooks")?.as_bool()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_feature_flag_is_read() {
        assert_eq!(hooks_enabled("[features]\nhooks = true\n"), Some(true));
        assert_eq!(hooks_enabled("model = \"m\"\n"), None);
    }
}
