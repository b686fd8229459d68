//! How hooks are declared (HOOK-DECL-1, -2): per event, a list of matchers, each with a
//! tool-name matcher, the `preempt_yolo` lane flag and its hooks. This is the `hooks:`
//! block of an agent, read strictly (an unknown key is an error naming its path).
//!
//! Pure data: touches nothing.

use crate::permissions::glob::{fold_text, Glob, GlobError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// The default timeout of a command hook (HOOK-RUN-4).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// An event at which hooks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// Before a call, to decide it.
    PreToolUse,
    /// After a call ran, with its response.
    PostToolUse,
    /// Before everything: may rewrite the call's input.
    ToolInputTransform,
    /// After the call: may rewrite the response the model sees.
    ToolResponseTransform,
}

impl Event {
    /// The event's name on the wire and in the files.
    pub fn name(self) -> &'static str {
        match self {
            Event::PreToolUse => "pre_tool_use",
            Event::PostToolUse => "post_tool_use",
            Event::ToolInputTransform => "tool_input_transform",
            Event::ToolResponseTransform => "tool_response_transform",
        }
    }
}

/// The `hooks:` block of an agent: matchers per event.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksConfig {
    /// Guards run before a call.
    #[serde(default)]
    pub pre_tool_use: Vec<Matcher>,
    /// Observers run after a call.
    #[serde(default)]
    pub post_tool_use: Vec<Matcher>,
    /// Input rewriters, run in sequence before everything.
    #[serde(default)]
    pub tool_input_transform: Vec<Matcher>,
    /// Response rewriters, run in sequence after the call.
    #[serde(default)]
    pub tool_response_transform: Vec<Matcher>,
}

impl HooksConfig {
    /// The matchers of `event`.
    pub fn matchers(&self, event: Event) -> &[Matcher] {
        match event {
            Event::PreToolUse => &self.pre_tool_use,
            Event::PostToolUse => &self.post_tool_use,
            Event::ToolInputTransform => &self.tool_input_transform,
            Event::ToolResponseTransform => &self.tool_response_transform,
        }
    }

    /// Every matcher with its event, for checks at load.
    pub fn all(&self) -> impl Iterator<Item = (Event, &Matcher)> {
        [
            Event::PreToolUse,
            Event::PostToolUse,
            Event::ToolInputTransform,
            Event::ToolResponseTransform,
        ]
        .into_iter()
        .flat_map(move |e| self.matchers(e).iter().map(move |m| (e, m)))
    }
}

/// One matcher: which tools, which lane, which hooks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matcher {
    /// Tool-name globs separated by `|` (`shell`, `edit_*|write`); absent or `*`: every
    /// tool.
    #[serde(default)]
    pub matcher: Option<String>,
    /// `pre_tool_use` only: the hooks run first and their deny or ask is final
    /// (HOOK-LANE-1).
    #[serde(default)]
    pub preempt_yolo: bool,
    /// The hooks, run in parallel for a guard event, in sequence for a transform.
    pub hooks: Vec<HookDef>,
}

impl Matcher {
    /// Compiles the matcher's globs (checked at load, PERM-LOAD-1 applies to them too).
    pub fn globs(&self) -> Result<Vec<Glob>, GlobError> {
        match self.matcher.as_deref() {
            None => Ok(vec![]),
            Some(m) => {
                let mut offset = 0;
                let mut out = Vec::new();
                for part in m.split('|') {
                    out.push(Glob::compile(part.trim(), offset)?);
                    offset += part.chars().count() + 1;
                }
                Ok(out)
            }
        }
    }

    /// Whether the matcher covers `tool` (a matcher that does not compile covers nothing:
    /// it was refused at load).
    pub fn covers(&self, tool: &str) -> bool {
        match self.globs() {
            Ok(globs) if globs.is_empty() => true,
            Ok(globs) => {
                let t = fold_text(tool);
                globs.iter().any(|g| g.matches_folded(&t))
            }
            Err(_) => false,
        }
    }
}

/// One hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum HookDef {
    /// A program: `sh -c COMMAND`, JSON on stdin, JSON on stdout.
    Command {
        /// The shell command line that starts it, run in the session's working directory.
        command: String,
        /// Extra environment for it.
        #[serde(default)]
        env: BTreeMap<String, String>,
        /// Seconds before the whole process group is killed (default 60).
        #[serde(default)]
        timeout: Option<u64>,
    },
    /// A hook built into the implementation (`redact_secrets`).
    Builtin {
        /// Its name.
        name: String,
    },
}

impl HookDef {
    /// The timeout of a command hook.
    pub fn timeout(&self) -> Duration {
        match self {
            HookDef::Command {
                timeout: Some(s), ..
            } => Duration::from_secs(*s),
            _ => DEFAULT_TIMEOUT,
        }
    }

    /// How the hook is named in records: its command line, or `builtin:NAME`.
    pub fn label(&self) -> String {
        match self {
            HookDef::Command { command, .. } => command.clone(),
            HookDef::Builtin { name } => format!("builtin:{name}"),
        }
    }
}

/// The builtins this implementation has.
pub const BUILTINS: [&str; 1] = ["redact_secrets"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matcher_alternatives() {
        let m = Matcher {
            matcher: Some("edit_*|write".into()),
            preempt_yolo: false,
            hooks: vec![],
        };
        assert!(m.covers("EDIT_file"));
        assert!(m.covers("write"));
        assert!(!m.covers("shell"));
        let all = Matcher {
            matcher: None,
            preempt_yolo: false,
            hooks: vec![],
        };
        assert!(all.covers("anything"));
    }

    #[test]
    fn a_bad_matcher_is_an_error_with_its_position() {
        let m = Matcher {
            matcher: Some("shell|ed[it".into()),
            preempt_yolo: false,
            hooks: vec![],
        };
        assert_eq!(m.globs().unwrap_err().position, 9);
    }
}
