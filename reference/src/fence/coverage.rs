//! What a fence layer can cover: the closed list of protections the posture talks about.
//!
//! Every layer of every backend names the items it covers; the posture lists the items no
//! layer covers. [`REQUIRED`] is the set whose absence makes the default refuse to run.

use serde::{Deserialize, Serialize};

/// One protection a layer can provide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Coverage {
    /// Creating, writing, deleting, renaming or linking files outside the writable roots.
    Writes,
    /// `truncate(2)` and `O_TRUNC` on files outside the writable roots.
    Truncate,
    /// `chmod`, `chown`, `utimes` and extended attributes on files outside the writable roots.
    Metadata,
    /// Reading the home directory, config files and everything not bound into the fence.
    Reads,
    /// Protected paths inside a workspace (`.git/hooks`, the agent's own config), existing or not.
    ProtectedPaths,
    /// The host's `/tmp` (never writable from inside).
    HostTmp,
    /// Host processes invisible (own PID namespace).
    Processes,
    /// No signal reaches a host process.
    Signals,
    /// Own System V IPC and POSIX message queue namespace.
    Ipc,
    /// No network access.
    Network,
    /// `connect()` to pathname UNIX sockets refused.
    UnixSockets,
    /// Abstract UNIX sockets of the host unreachable.
    AbstractSockets,
    /// No capability left to the jailed process, even when the agent runs as root.
    Capabilities,
}

impl Coverage {
    /// Every item, in display order.
    pub const ALL: [Coverage; 13] = [
        Coverage::Writes,
        Coverage::Truncate,
        Coverage::Metadata,
        Coverage::Reads,
        Coverage::ProtectedPaths,
        Coverage::HostTmp,
        Coverage::Processes,
        Coverage::Signals,
        Coverage::Ipc,
        Coverage::Network,
        Coverage::UnixSockets,
        Coverage::AbstractSockets,
        Coverage::Capabilities,
    ];

    /// The stable kebab-case name used in JSON and in the human rendering.
    pub fn name(self) -> &'static str {
        match self {
            Coverage::Writes => "writes",
            Coverage::Truncate => "truncate",
            Coverage::Metadata => "metadata",
            Coverage::Reads => "reads",
            Coverage::ProtectedPaths => "protected-paths",
            Coverage::HostTmp => "host-tmp",
            Coverage::Processes => "processes",
            Coverage::Signals => "signals",
            Coverage::Ipc => "ipc",
            Coverage::Network => "network",
            Coverage::UnixSockets => "unix-sockets",
            Coverage::AbstractSockets => "abstract-sockets",
            Coverage::Capabilities => "capabilities",
        }
    }
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Protections without which the default refuses to run (an explicit degraded opt-in runs
/// anyway and the posture names what is missing).
///
/// Process visibility, IPC and network are reported but not required: Seatbelt cannot hide
/// host processes, and the plane does not promise an air gap.
pub const REQUIRED: [Coverage; 10] = [
    Coverage::Writes,
    Coverage::Truncate,
    Coverage::Metadata,
    Coverage::Reads,
    Coverage::ProtectedPaths,
    Coverage::HostTmp,
    Coverage::Signals,
    Coverage::UnixSockets,
    Coverage::AbstractSockets,
    Coverage::Capabilities,
];
