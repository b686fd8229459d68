//! The agent file (PERM-FILE-1, -2; HOOK-DECL-1, -2).
//!
//! ```yaml
//! version: "16"
//! agents:
//!   root:
//!     model: local
//!     toolsets: [{ type: shell }]
//!     hooks:
//!       pre_tool_use:
//!         - matcher: shell
//!           preempt_yolo: true
//!           hooks: [{ type: command, command: ./fixtures/hooks/log-hook.sh }]
//! permissions:
//!   allow: ["shell:cmd=echo*"]
//!   deny: ["shell:cmd=rm*"]
//! ```

use super::{parse_yaml, read_yaml, ConfigError};
use crate::hooks::config::{Event, HookDef, HooksConfig, BUILTINS};
use crate::permissions::{Mode, PatternLists, RuleSet, Source};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file's `version`, a string or a number as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Version {
    /// `"16"`.
    Text(String),
    /// `16`.
    Number(u64),
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentFile {
    /// The schema version the author wrote against.
    #[serde(default)]
    pub version: Option<Version>,
    /// The agents by name; the one named `root` (or the only one) is the one that runs.
    pub agents: BTreeMap<String, Agent>,
    /// Models by name.
    #[serde(default)]
    pub models: BTreeMap<String, Model>,
    /// The author's patterns.
    #[serde(default)]
    pub permissions: Option<PatternLists>,
}

/// One agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    /// The model's name in `models`, or a provider/model spelling.
    #[serde(default)]
    pub model: Option<String>,
    /// What it is for.
    #[serde(default)]
    pub description: Option<String>,
    /// Its instruction.
    #[serde(default)]
    pub instruction: Option<String>,
    /// Most model turns per message.
    #[serde(default)]
    pub max_iterations: Option<u32>,
    /// Its tools.
    #[serde(default)]
    pub toolsets: Vec<Toolset>,
    /// Its hooks.
    #[serde(default)]
    pub hooks: HooksConfig,
    /// The builtin `redact_secrets` on both transform events (default on, HOOK-REDACT-1).
    #[serde(default)]
    pub redact_secrets: Option<bool>,
    /// The author's default safety mode: outranked by every choice of the person
    /// (PERM-MODE-4).
    #[serde(default)]
    pub safety: Option<String>,
}

/// One toolset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Toolset {
    /// `shell`, `filesystem`, `mcp`, ...
    #[serde(rename = "type")]
    pub kind: String,
    /// An MCP server's command.
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// A catalogue reference.
    #[serde(default, rename = "ref")]
    pub reference: Option<String>,
    /// Its environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// One model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// The provider.
    pub provider: String,
    /// The provider's model name.
    pub model: String,
    /// An endpoint.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Most tokens per answer.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
}

/// An agent file that loaded: the running agent and the file's patterns, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedAgent {
    /// The file it came from.
    pub file: PathBuf,
    /// The running agent's name.
    pub name: String,
    /// The running agent.
    pub agent: Agent,
    /// The author's patterns.
    pub permissions: PatternLists,
    /// The author's default mode.
    pub safety: Option<Mode>,
}

impl LoadedAgent {
    /// Whether `redact_secrets` is on.
    pub fn redact_secrets(&self) -> bool {
        self.agent.redact_secrets.unwrap_or(true)
    }
}

impl AgentFile {
    /// Reads and checks `file`.
    pub fn load(file: &Path) -> Result<LoadedAgent, ConfigError> {
        let parsed: AgentFile = read_yaml(file)?;
        parsed.check(file)
    }

    /// Parses and checks `text` as the contents of `file`.
    pub fn parse(file: &Path, text: &str) -> Result<LoadedAgent, ConfigError> {
        let parsed: AgentFile = parse_yaml(file, text)?;
        parsed.check(file)
    }

    fn check(self, file: &Path) -> Result<LoadedAgent, ConfigError> {
        let invalid = |path: String, message: String| ConfigError::Invalid {
            file: file.to_path_buf(),
            path,
            message,
        };
        let name = if self.agents.contains_key("root") {
            "root".to_string()
        } else if self.agents.len() == 1 {
            self.agents.keys().next().cloned().unwrap_or_default()
        } else {
            return Err(invalid(
                "agents".into(),
                "no agent named `root`, and more than one agent".into(),
            ));
        };
        for (agent_name, agent) in &self.agents {
            check_hooks(
                &agent.hooks,
                &format!("agents.{agent_name}.hooks"),
                &invalid,
            )?;
            if let Some(s) = &agent.safety {
                if Mode::parse(s).is_none() {
                    return Err(invalid(
                        format!("agents.{agent_name}.safety"),
                        format!("`{s}` is not a mode (strict, balanced, restricted, autonomous)"),
                    ));
                }
            }
        }
        let permissions = self.permissions.unwrap_or_default();
        RuleSet::new().add(Source::AgentFile(file.to_path_buf()), &permissions)?;
        let agent = self
            .agents
            .get(&name)
            .cloned()
            .ok_or_else(|| invalid("agents".into(), "empty".into()))?;
        let safety = agent.safety.as_deref().and_then(Mode::parse);
        Ok(LoadedAgent {
            file: file.to_path_buf(),
            name,
            agent,
            permissions,
            safety,
        })
    }
}

/// Checks matchers, builtins and timeouts of a `hooks:` block.
pub(crate) fn check_hooks(
    hooks: &HooksConfig,
    at: &str,
    invalid: &dyn Fn(String, String) -> ConfigError,
) -> Result<(), ConfigError> {
    let mut index: BTreeMap<Event, usize> = BTreeMap::new();
    for (event, m) in hooks.all() {
        let i = index.entry(event).or_default();
        let here = format!("{at}.{}[{}]", event.name(), *i);
        *i += 1;
        if let Err(e) = m.globs() {
            return Err(invalid(
                format!("{here}.matcher"),
                format!("{:?}: {e}", m.matcher.as_deref().unwrap_or("")),
            ));
        }
        if m.preempt_yolo && event != Event::PreToolUse {
            return Err(invalid(
                format!("{here}.preempt_yolo"),
                "only pre_tool_use hooks can preempt".into(),
            ));
        }
        if m.hooks.is_empty() {
            return Err(invalid(
                format!("{here}.hooks"),
                "a matcher with no hooks".into(),
            ));
        }
        for (j, h) in m.hooks.iter().enumerate() {
            let path = format!("{here}.hooks[{j}]");
            match h {
                HookDef::Command {
                    command, timeout, ..
                } => {
                    if command.trim().is_empty() {
                        return Err(invalid(format!("{path}.command"), "empty command".into()));
                    }
                    if *timeout == Some(0) {
                        return Err(invalid(
                            format!("{path}.timeout"),
                            "a timeout of 0 s".into(),
                        ));
                    }
                }
                HookDef::Builtin { name } => {
                    if !BUILTINS.contains(&name.as_str()) {
                        return Err(invalid(
                            format!("{path}.name"),
                            format!("no builtin hook `{name}`"),
                        ));
                    }
                    if !matches!(
                        event,
                        Event::ToolInputTransform | Event::ToolResponseTransform
                    ) {
                        return Err(invalid(
                            format!("{path}.name"),
                            format!("`{name}` runs only at the transform events"),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed's `capture/fixtures/agents/guarded.yaml` (models block added: the seed
    /// cut it).
    pub const GUARDED: &str = r#"version: "16"

agents:
  root:
    model: local
    description: Runs shell commands under a permission list and a hook.
    instruction: |
      Run exactly the shell commands the user lists, one tool call per
      command, in the given order. Then report each command and its
      result or refusal in one line each.
    max_iterations: 8
    toolsets:
      - type: shell
    hooks:
      pre_tool_use:
        - matcher: shell
          preempt_yolo: true
          hooks:
            - type: command
              command: ./fixtures/hooks/log-hook.sh
              env:
                M101_HOOK_LOG: ./work/hook-stdin.jsonl

models:
  local:
    provider: dmr
    model: ai/qwen3

permissions:
  allow:
    - "shell:cmd=echo*"
  deny:
    - "shell:cmd=rm*"
"#;

    fn parse(text: &str) -> Result<LoadedAgent, ConfigError> {
        AgentFile::parse(Path::new("guarded.yaml"), text)
    }

    #[test]
    fn the_seeds_guarded_agent_loads() {
        let a = parse(GUARDED).unwrap();
        assert_eq!(a.name, "root");
        assert_eq!(a.permissions.allow, ["shell:cmd=echo*"]);
        assert_eq!(a.permissions.deny, ["shell:cmd=rm*"]);
        assert!(a.agent.hooks.pre_tool_use[0].preempt_yolo);
        assert!(a.redact_secrets());
        assert_eq!(a.safety, None);
    }

    #[test]
    fn an_unknown_key_names_its_path() {
        let bad = GUARDED.replace(
            "          preempt_yolo: true",
            "          preempt_yolo: true\n          preempt: true",
        );
        let e = parse(&bad).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "guarded.yaml: agents.root.hooks.pre_tool_use[0]: unknown field `preempt`"
            ),
            "{e}"
        );
        let bad = GUARDED.replace("  allow:", "  alow:");
        let e = parse(&bad).unwrap_err().to_string();
        assert!(
            e.starts_with("guarded.yaml: permissions: unknown field `alow`"),
            "{e}"
        );
        let bad = GUARDED.replace("  pre_tool_use:", "  pre_tool_usee:");
        let e = parse(&bad).unwrap_err().to_string();
        assert!(
            e.contains("agents.root.hooks: unknown field `pre_tool_usee`"),
            "{e}"
        );
    }

    #[test]
    fn a_bad_pattern_names_file_pattern_and_position() {
        let bad = GUARDED.replace("shell:cmd=rm*", "shell:cmd=[rm*");
        let e = parse(&bad).unwrap_err().to_string();
        assert_eq!(
            e,
            "agent file guarded.yaml: permissions.deny[0] \"shell:cmd=[rm*\": position 11: a character class `[` is never closed"
        );
    }

    #[test]
    fn bad_hooks_are_refused_with_their_path() {
        let bad = GUARDED.replace("matcher: shell", "matcher: \"sh[ell\"");
        let e = parse(&bad).unwrap_err().to_string();
        assert!(
            e.starts_with("guarded.yaml: agents.root.hooks.pre_tool_use[0].matcher:"),
            "{e}"
        );
        let bad = GUARDED.replace(
            "            - type: command\n              command: ./fixtures/hooks/log-hook.sh\n              env:\n                M101_HOOK_LOG: ./work/hook-stdin.jsonl",
            "            - type: builtin\n              name: redact_secrets",
        );
        let e = parse(&bad).unwrap_err().to_string();
        assert!(e.contains("runs only at the transform events"), "{e}");
        let bad = GUARDED.replace(
            "    max_iterations: 8",
            "    max_iterations: 8\n    safety: reckless",
        );
        assert!(parse(&bad)
            .unwrap_err()
            .to_string()
            .contains("agents.root.safety"));
    }
}
