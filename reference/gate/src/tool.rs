//! The tools the gate stands in front of (GATE-SCOPE-1, -2), by their protocol names.
//!
//! Pure data: touches nothing.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A tool whose calls the gate decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    /// A command line (risk kind `exec`).
    #[default]
    Shell,
    /// A piece of code (risk kind `code`).
    ExecuteCode,
    /// Installing an MCP server: card only.
    McpInstall,
    /// Connecting a discovered MCP server: card only.
    McpConnect,
}

impl Tool {
    /// The tool's protocol name.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Shell => "shell",
            Tool::ExecuteCode => "execute_code",
            Tool::McpInstall => "mcp_install",
            Tool::McpConnect => "mcp_connect",
        }
    }

    /// Whether the tool has no grant machinery: every call shows a card (GATE-SCOPE-2).
    pub fn is_card_only(self) -> bool {
        matches!(self, Tool::McpInstall | Tool::McpConnect)
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tool name the gate does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool {0:?}: the gate knows shell, execute_code, mcp_install and mcp_connect")]
pub struct UnknownTool(pub String);

impl FromStr for Tool {
    type Err = UnknownTool;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "shell" => Ok(Tool::Shell),
            "execute_code" => Ok(Tool::ExecuteCode),
            "mcp_install" => Ok(Tool::McpInstall),
            "mcp_connect" => Ok(Tool::McpConnect),
            other => Err(UnknownTool(other.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for tool in [
            Tool::Shell,
            Tool::ExecuteCode,
            Tool::McpInstall,
            Tool::McpConnect,
        ] {
            assert_eq!(tool.name().parse::<Tool>(), Ok(tool));
        }
        assert!("bash".parse::<Tool>().is_err());
    }
}
