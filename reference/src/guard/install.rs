//! `gatehouse guard install|uninstall|doctor`: the hook merged into each agent's settings
//! file (everything already there kept, a backup beside it, the change shown as a diff),
//! taken out again, and a check of what is installed, whether the agent will run it and
//! what fence this machine gives (GUARD-INSTALL-1 to -4).
//!
//! The merge itself ([`merged`], [`removed`]) is pure; [`install`] and [`uninstall`] read
//! and replace the agent's files (atomically, through [`crate::records::atomic`]).

use super::Agent;
use crate::records::atomic::write_atomic;

pub mod layout;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Where a hook is installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The project in this directory (Claude Code, Gemini CLI).
    Project(PathBuf),
    /// The person's own settings.
    User,
}

/// Installing failed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The agent has no settings of that scope.
    #[error("{0} reads hooks only from the user's settings ({1}); use --user")]
    NoProjectScope(&'static str, String),
    /// `HOME` (or `CODEX_HOME`) is not set.
    #[error("HOME is not set: cannot find the user's settings")]
    NoHome,
    /// A file cannot be read or written.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// The settings file is not a JSON object; nothing is changed.
    #[error("{0} is not a JSON object ({1}); fix it first, nothing was changed")]
    NotObject(PathBuf, String),
    /// An agent whose project hooks load only in a folder it trusts, where the project's
    /// own settings can switch every hook off.
    #[error("{0} loads a project's hooks only in a folder it trusts, and a trusted project's settings can switch every hook off (disableAllHooks); install into your own settings ({1}), the default")]
    UntrustedProject(&'static str, String),
    /// A project's settings file the fence does not keep read-only.
    #[error("{0} lies in the project, where a command the guard lets run could rewrite it (and switch the guard off for the next session); the fence does not keep it read-only here, so install into your own settings (the default, or --user)")]
    Unprotected(PathBuf),
    /// A record write failed.
    #[error(transparent)]
    Write(#[from] crate::records::RecordError),
}

/// The person's home (`HOME`, absolute).
pub fn home() -> Result<PathBuf, InstallError> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .ok_or(InstallError::NoHome)
}

/// The settings file the hook goes into: the agent's ([`super::dialect::Dialect::settings_file`]).
pub fn settings_file(agent: Agent, scope: &Scope) -> Result<PathBuf, InstallError> {
    agent.dialect().settings_file(scope)
}

/// The events and matchers of the agent's hook.
fn events(agent: Agent) -> &'static [(&'static str, &'static str)] {
    agent.dialect().hook_events()
}

/// The hook's command line: `PROGRAM guard AGENT`, the program quoted for the agent's
/// shell.
pub fn hook_command(agent: Agent, program: &Path) -> String {
    format!(
        "{} guard {}",
        super::rewrite::quote(&program.to_string_lossy()),
        agent.name()
    )
}

/// Whether a hook entry's command is this guard's for `agent`: in a group's `hooks`
/// (Claude Code's shape), or the entry's own `bash` (GitHub Copilot CLI's).
fn is_ours(agent: Agent, entry: &Value) -> bool {
    let tail = format!(" guard {}", agent.name());
    let ours = |c: &Value| c.as_str().is_some_and(|c| c.trim_end().ends_with(&tail));
    ours(&entry["bash"])
        || entry["hooks"]
            .as_array()
            .is_some_and(|hs| hs.iter().any(|h| ours(&h["command"])))
}

/// `settings` without this guard's entries (everything else kept as it was).
pub fn removed(agent: Agent, settings: &Map<String, Value>) -> Map<String, Value> {
    let mut out = settings.clone();
    let Some(Value::Object(hooks)) = out.get_mut("hooks") else {
        return out;
    };
    for (event, _) in events(agent) {
        if let Some(Value::Array(list)) = hooks.get_mut(*event) {
            list.retain(|e| !is_ours(agent, e));
            if list.is_empty() {
                hooks.remove(*event);
            }
        }
    }
    if hooks.is_empty() {
        out.remove("hooks");
    }
    out
}

/// `settings` with this guard's entries, first in each event's list (an old entry of
/// the guard replaced).
pub fn merged(agent: Agent, settings: &Map<String, Value>, command: &str) -> Map<String, Value> {
    let mut out = removed(agent, settings);
    let hooks = out
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    if !hooks.is_object() {
        *hooks = Value::Object(Map::new());
    }
    if let Value::Object(hooks) = hooks {
        for (event, matcher) in events(agent) {
            let list = hooks
                .entry(event.to_string())
                .or_insert_with(|| Value::Array(Vec::new()));
            if !list.is_array() {
                *list = Value::Array(Vec::new());
            }
            if let Value::Array(list) = list {
                let entry = agent.dialect().hook_entry(matcher, command);
                let at = list.iter().take_while(|e| is_ours(agent, e)).count();
                list.insert(at, entry);
            }
        }
    }
    out
}

/// A line diff of `before` and `after` (`-` removed, `+` added, two spaces kept).
pub fn diff(before: &str, after: &str) -> String {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push_str(&format!("  {}\n", a[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push_str(&format!("+ {}\n", b[j]));
            j += 1;
        } else {
            out.push_str(&format!("- {}\n", a[i]));
            i += 1;
        }
    }
    out
}

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The file.
    pub file: PathBuf,
    /// Its backup, when one was made.
    pub backup: Option<PathBuf>,
    /// The diff shown.
    pub diff: String,
    /// Whether anything changed.
    pub changed: bool,
}

fn read_object(file: &Path) -> Result<(String, Map<String, Value>), InstallError> {
    match std::fs::read_to_string(file) {
        Ok(text) if text.trim().is_empty() => Ok((text, Map::new())),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => Ok((text, m)),
            Ok(_) => Err(InstallError::NotObject(file.into(), "not an object".into())),
            Err(e) => Err(InstallError::NotObject(file.into(), e.to_string())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((String::new(), Map::new())),
        Err(e) => Err(InstallError::Io(file.into(), e)),
    }
}

/// The backup beside `file`.
fn backup_of(file: &Path) -> PathBuf {
    PathBuf::from(format!("{}.gatehouse-backup", file.display()))
}

fn replace(
    file: &Path,
    before: &str,
    after: Map<String, Value>,
    backup: bool,
) -> Result<Change, InstallError> {
    let text = if after.is_empty() && before.is_empty() {
        String::new()
    } else {
        // The file as the person had it, byte for byte, when the result is what the
        // backup held (an uninstall after an install); otherwise in the file's own
        // layout: its indent, its keys' order, its final newline (GUARD-INSTALL-5).
        let after = Value::Object(after);
        let kept = std::fs::read_to_string(backup_of(file))
            .ok()
            .filter(|b| serde_json::from_str::<Value>(b).ok().as_ref() == Some(&after));
        match kept {
            Some(b) => b,
            None => layout::render(&after, before),
        }
    };
    let changed = text != before;
    let mut saved = None;
    if changed {
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| InstallError::Io(dir.into(), e))?;
        }
        // The first backup is the person's file: a later install never replaces it.
        let b = backup_of(file);
        if backup && !before.is_empty() && !b.exists() {
            write_atomic(&b, before.as_bytes())?;
            saved = Some(b);
        }
        write_atomic(file, text.as_bytes())?;
    }
    Ok(Change {
        file: file.into(),
        backup: saved,
        diff: diff(before, &text),
        changed,
    })
}

/// Whether `file`, a project's settings file under `dir`, is on the fence's protected
/// list, so that nothing the guard lets run can rewrite it (GUARD-INSTALL-4).
pub fn protected_in_project(dir: &Path, file: &Path) -> bool {
    use crate::fence::protect::{covers, discover};
    let root = super::reach::real_path(dir);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let roots = std::slice::from_ref(&root);
    let list = discover(roots, roots, home.as_deref());
    covers(&list, &super::reach::real_path(file))
}

/// Merges the hook into the agent's settings file for `scope`. A project's settings file
/// is taken only where the fence keeps it read-only (GUARD-INSTALL-4).
pub fn install(agent: Agent, scope: &Scope, program: &Path) -> Result<Vec<Change>, InstallError> {
    let file = settings_file(agent, scope)?;
    if let Scope::Project(dir) = scope {
        if !protected_in_project(dir, &file) {
            return Err(InstallError::Unprotected(file));
        }
    }
    let (before, settings) = read_object(&file)?;
    let after = merged(agent, &settings, &hook_command(agent, program));
    let mut changes = vec![replace(&file, &before, after, true)?];
    changes.extend(agent.dialect().enable_hooks()?);
    Ok(changes)
}

/// The configuration written when there is none: every default, each setting shown
/// commented out.
pub const DEFAULT_CONFIG: &str = "\
# gatehouse guard: the decision order and the fence in front of your agent.
# Every setting is optional; see the README, \"Put Gatehouse in front of your agent\".
# workspaces = [\"/home/me/src/app\"]   # default: where the agent session starts
# settings-file = \"/home/me/.config/gatehouse/settings.yaml\"   # permissions, safety
# allow = [\"make test\"]               # lines that always pass
# [exec]
# network = \"off\"                     # off | allow-list | host
# allow-domains = [\"registry.npmjs.org\"]
# pass-env = [\"CARGO_HOME\"]
";

/// Writes [`DEFAULT_CONFIG`] at `file` when nothing is there.
pub fn ensure_config(file: &Path) -> Result<Option<Change>, InstallError> {
    if file.exists() {
        return Ok(None);
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| InstallError::Io(dir.into(), e))?;
    }
    write_atomic(file, DEFAULT_CONFIG.as_bytes())?;
    Ok(Some(Change {
        file: file.into(),
        backup: None,
        diff: diff("", DEFAULT_CONFIG),
        changed: true,
    }))
}

/// Takes the guard's entries out of the agent's settings file (the rest stays as it is
/// now; the backup made at install is left for the person).
pub fn uninstall(agent: Agent, scope: &Scope) -> Result<Vec<Change>, InstallError> {
    let file = settings_file(agent, scope)?;
    let (before, settings) = read_object(&file)?;
    let after = removed(agent, &settings);
    Ok(vec![replace(&file, &before, after, false)?])
}

/// Writes `after` over `file`, whose text was `before` (created with its directory when
/// missing; a first backup kept beside it, never replaced).
pub fn append(file: &Path, before: &str, after: &str) -> Result<Change, InstallError> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| InstallError::Io(dir.into(), e))?;
    }
    let mut backup = None;
    let b = backup_of(file);
    if !before.is_empty() && !b.exists() {
        write_atomic(&b, before.as_bytes())?;
        backup = Some(b);
    }
    write_atomic(file, after.as_bytes())?;
    Ok(Change {
        diff: diff(before, after),
        file: file.into(),
        backup,
        changed: true,
    })
}

/// Whether the guard's hook is in the agent's settings file for `scope`, for every event
/// it is installed for.
pub fn installed(agent: Agent, scope: &Scope) -> Result<bool, InstallError> {
    let file = settings_file(agent, scope)?;
    let (_, settings) = read_object(&file)?;
    Ok(events(agent).iter().all(|(event, _)| {
        settings
            .get("hooks")
            .and_then(|h| h.get(*event))
            .and_then(Value::as_array)
            .is_some_and(|l| l.iter().any(|e| is_ours(agent, e)))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_keeps_what_was_there_and_removal_gives_it_back() {
        let before: Map<String, Value> = serde_json::from_value(json!({
            "model": "x",
            "hooks": { "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "mine" }] }] },
        }))
        .unwrap();
        let after = merged(Agent::ClaudeCode, &before, "/g guard claude-code");
        assert_eq!(after["model"], "x");
        let pre = after["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[1]["hooks"][0]["command"], "mine");
        // Installing twice changes nothing more.
        assert_eq!(
            merged(Agent::ClaudeCode, &after, "/g guard claude-code"),
            after
        );
        assert_eq!(removed(Agent::ClaudeCode, &after), before);
        // Another agent's guard entry is not this one's.
        assert_eq!(removed(Agent::Gemini, &after), after);
    }

    #[test]
    fn each_agent_waits_sixty_seconds_in_its_own_unit() {
        // Gemini CLI reads a hook's timeout in milliseconds: 60 there timed the guard out
        // on a loaded machine, and Gemini ran the call unjudged.
        for (agent, want) in [
            (Agent::ClaudeCode, 60),
            (Agent::Codex, 60),
            (Agent::Gemini, 60_000),
            (Agent::Copilot, 60),
        ] {
            let s = merged(agent, &Map::new(), "/g guard x");
            for (event, _) in events(agent) {
                let entry = &s["hooks"][*event][0];
                let t = if agent == Agent::Copilot {
                    &entry["timeoutSec"]
                } else {
                    &entry["hooks"][0]["timeout"]
                };
                assert_eq!(*t, want, "{agent:?}");
            }
        }
    }

    #[test]
    fn the_guards_deadline_is_well_under_every_timeout_it_installs() {
        for agent in Agent::ALL {
            let d = agent.dialect();
            let secs = d.hook_timeout() * d.timeout_unit_ms() / 1000;
            assert!(
                super::super::DEADLINE.as_secs() * 3 <= secs,
                "{agent:?}: {secs} s"
            );
        }
    }

    #[test]
    fn the_diff_marks_added_and_removed_lines() {
        assert_eq!(diff("a\nb\n", "a\nc\n"), "  a\n+ c\n- b\n");
    }
}
