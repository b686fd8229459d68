//! What a fence layer can cover: the closed list of protections of the execution-plane
//! chapter (`spec/execution-plane.md`, section 6), by the chapter's own codes. The layers,
//! the posture, `gatehouse info` and the protocol all speak this one vocabulary.
//!
//! Every layer of every backend names the protections it covers; the posture lists those
//! no layer covers ([`Coverage::missing`], the one place that computes it). [`REQUIRED`] is
//! the set whose absence makes the fence degraded and the default refuse to run
//! (FENCE-LAYER-5).

use serde::{Deserialize, Serialize};

/// One protection a layer can provide, named by the chapter's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Coverage {
    /// `write`: no write, create, append, delete or mkdir outside the writable roots (the
    /// host's `/tmp` included).
    Write,
    /// `rename_link`: no rename or hard link across the boundary of the writable roots.
    RenameLink,
    /// `truncate`: no `truncate(2)`, `ftruncate` or `O_TRUNC` outside the writable roots.
    Truncate,
    /// `metadata`: no `chmod`, `chown`, `utimes` or extended attribute change outside the
    /// writable roots.
    Metadata,
    /// `hidden`: home, configuration, other sessions and session logs cannot be read.
    Hidden,
    /// `protected_paths`: `.git/hooks`, `.git/config`, the agent's own configuration are
    /// read-only, existing or not.
    ProtectedPaths,
    /// `signal`: no signal reaches a host process.
    Signal,
    /// `unix_socket`: no `connect()` to a host pathname UNIX socket.
    UnixSocket,
    /// `unix_abstract`: no `connect()` to a host abstract UNIX socket.
    UnixAbstract,
    /// `capabilities`: running as root inside gives no power over the fence.
    Capabilities,
    /// `keyring`: none of the kernel's keyrings (the launcher's session keyring, the
    /// user's, a named one) is reachable (FENCE-JAIL-19).
    Keyring,
    /// `process_view`: host processes are invisible.
    ProcessView,
    /// `ipc`: no IPC object shared with the host.
    Ipc,
    /// `uts`: the host's name cannot be changed.
    Uts,
    /// `network`: a network namespace of its own, only loopback (FENCE-SOCK-4 names it
    /// among the covered protections).
    Network,
}

impl Coverage {
    /// Every protection, in the chapter's order.
    pub const ALL: [Coverage; 15] = [
        Coverage::Write,
        Coverage::RenameLink,
        Coverage::Truncate,
        Coverage::Metadata,
        Coverage::Hidden,
        Coverage::ProtectedPaths,
        Coverage::Signal,
        Coverage::UnixSocket,
        Coverage::UnixAbstract,
        Coverage::Capabilities,
        Coverage::Keyring,
        Coverage::ProcessView,
        Coverage::Ipc,
        Coverage::Uts,
        Coverage::Network,
    ];

    /// The chapter's code, as the posture, the protocol and `gatehouse info` show it.
    pub fn name(self) -> &'static str {
        match self {
            Coverage::Write => "write",
            Coverage::RenameLink => "rename_link",
            Coverage::Truncate => "truncate",
            Coverage::Metadata => "metadata",
            Coverage::Hidden => "hidden",
            Coverage::ProtectedPaths => "protected_paths",
            Coverage::Signal => "signal",
            Coverage::UnixSocket => "unix_socket",
            Coverage::UnixAbstract => "unix_abstract",
            Coverage::Capabilities => "capabilities",
            Coverage::Keyring => "keyring",
            Coverage::ProcessView => "process_view",
            Coverage::Ipc => "ipc",
            Coverage::Uts => "uts",
            Coverage::Network => "network",
        }
    }

    /// The protections no layer in `covered` names, in the chapter's order: the one place
    /// the posture's `not_covered` is computed.
    pub fn missing<'a>(covered: impl IntoIterator<Item = &'a [Coverage]> + Clone) -> Vec<Coverage> {
        Coverage::ALL
            .iter()
            .copied()
            .filter(|c| !covered.clone().into_iter().any(|l| l.contains(c)))
            .collect()
    }

    /// Whether lacking this protection makes a fence degraded (FENCE-LAYER-5).
    pub fn is_required(self) -> bool {
        REQUIRED.contains(&self)
    }
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Protections without which a fence is degraded and the default refuses to run (an
/// explicit degraded opt-in runs anyway and the posture names what is missing),
/// FENCE-LAYER-5.
///
/// Process visibility, IPC, UTS and network are reported but not required: Seatbelt cannot
/// hide host processes, and the plane does not promise an air gap.
pub const REQUIRED: [Coverage; 11] = [
    Coverage::Write,
    Coverage::RenameLink,
    Coverage::Truncate,
    Coverage::Metadata,
    Coverage::Hidden,
    Coverage::ProtectedPaths,
    Coverage::Signal,
    Coverage::UnixSocket,
    Coverage::UnixAbstract,
    Coverage::Capabilities,
    Coverage::Keyring,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_chapters_codes() {
        for c in Coverage::ALL {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.name()));
        }
        let chapter = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../spec/execution-plane.md"
        ))
        .unwrap();
        for c in Coverage::ALL {
            assert!(
                chapter.contains(&format!("`{}`", c.name())),
                "{} is not a code of the execution-plane chapter",
                c.name()
            );
        }
    }

    #[test]
    fn missing_lists_what_no_layer_names() {
        let a = [Coverage::Write, Coverage::Hidden];
        let b = [Coverage::Network];
        let missing = Coverage::missing([&a[..], &b[..]]);
        assert_eq!(missing.len(), Coverage::ALL.len() - 3);
        assert!(!missing.contains(&Coverage::Write) && missing.contains(&Coverage::Truncate));
    }
}
