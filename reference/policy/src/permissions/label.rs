//! Labels (PERM-LABEL-1 to -3): `safe`, `destructive` or `unknown`, what a safety mode
//! reads. A label comes from the tool, and for `shell` from the gate's reading of the
//! line: a shell call is `safe` exactly when the gate's auto-safe reading holds (read
//! list, no metacharacter, no escape flag, every path inside the working directory),
//! `destructive` when the line is on the dangerous list, `unknown` otherwise.
//!
//! Touches the filesystem only through the gate's jail (resolving the line's paths).

use crate::gate::{is_dangerous, Gate, Host};
use serde::{Deserialize, Serialize};

/// A call's label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// Reads only, inside the session's reach.
    Safe,
    /// May destroy or overwrite.
    Destructive,
    /// Anything else.
    Unknown,
}

impl Label {
    /// The label's name.
    pub fn name(self) -> &'static str {
        match self {
            Label::Safe => "safe",
            Label::Destructive => "destructive",
            Label::Unknown => "unknown",
        }
    }
}

/// The file tools that only read (PERM-LABEL-2).
pub const READ_TOOLS: [&str; 3] = ["read", "list", "search"];
/// The file tools that replace bytes (PERM-LABEL-2).
pub const WRITE_TOOLS: [&str; 2] = ["write", "edit"];

/// The label of a call to `tool`; `line` is the command line of a `shell` call.
pub fn label_of(gate: &Gate, tool: &str, line: Option<&str>) -> Label {
    match (tool, line) {
        ("shell", Some(line)) => {
            if is_dangerous(line) {
                Label::Destructive
            } else if gate.host() == Host::Posix && gate.auto_safe(line).is_ok() {
                Label::Safe
            } else {
                Label::Unknown
            }
        }
        (t, _) if READ_TOOLS.contains(&t) => Label::Safe,
        (t, _) if WRITE_TOOLS.contains(&t) => Label::Destructive,
        _ => Label::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::GateConfig;
    use rstest::rstest;

    #[rstest]
    #[case("wc -l notes.txt", Label::Safe)]
    #[case("pwd", Label::Safe)]
    #[case("wc -l /etc/passwd", Label::Unknown)]
    #[case("cat notes.txt | wc -l", Label::Unknown)]
    #[case("npm test", Label::Unknown)]
    #[case("rm -rf sub", Label::Destructive)]
    #[case("ls && rm -r sub", Label::Destructive)]
    fn shell_labels_follow_the_gate(#[case] line: &str, #[case] label: Label) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "a\n").unwrap();
        let gate = Gate::new(GateConfig::new(dir.path())).unwrap();
        assert_eq!(label_of(&gate, "shell", Some(line)), label);
    }

    #[test]
    fn windows_closes_the_safe_label() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = GateConfig::new(dir.path());
        config.host = Host::Windows;
        let gate = Gate::new(config).unwrap();
        assert_eq!(label_of(&gate, "shell", Some("pwd")), Label::Unknown);
    }

    #[test]
    fn tool_labels() {
        let dir = tempfile::tempdir().unwrap();
        let gate = Gate::new(GateConfig::new(dir.path())).unwrap();
        assert_eq!(label_of(&gate, "read", None), Label::Safe);
        assert_eq!(label_of(&gate, "write", None), Label::Destructive);
        assert_eq!(label_of(&gate, "execute_code", None), Label::Unknown);
        assert_eq!(label_of(&gate, "mcp_install", None), Label::Unknown);
    }
}
