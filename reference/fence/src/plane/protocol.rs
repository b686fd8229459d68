//! The executor protocol: JSON lines over the executor's stdin (requests) and stdout
//! (messages). The executor announces itself with `ready` (and what its fence enforced),
//! then answers each request with `done`, in order.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::fence::Enforcement;

/// Run one command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecRequest {
    /// Echoed in the answer.
    pub id: u64,
    /// The command and its arguments.
    pub argv: Vec<String>,
    /// Working directory (default: the plan's).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Bytes fed to the command's stdin (default: `/dev/null`).
    #[serde(default)]
    pub stdin: Option<Vec<u8>>,
    /// Kill the command's process group after this long.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Keep at most this many bytes of each output stream.
    #[serde(default)]
    pub max_output: Option<usize>,
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitInfo {
    /// Exit code, when it exited.
    pub code: Option<i32>,
    /// Signal, when one killed it.
    pub signal: Option<i32>,
}

impl ExitInfo {
    /// The status as a shell reports it (code, or 128 + signal).
    pub fn shell_code(&self) -> i32 {
        self.code
            .or(self.signal.map(|s| 128 + s))
            .unwrap_or(crate::exit::SETUP_FAILED)
    }

    /// Exited with code 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// What the executor writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ExecutorMessage {
    /// The fence is up and the executor waits for requests.
    Ready {
        /// The executor's pid as it sees itself (1 inside a PID namespace).
        pid: u32,
        /// What its fence enforced.
        enforcement: Enforcement,
    },
    /// A request's result.
    Done {
        /// The request's id.
        id: u64,
        /// How the command ended.
        exit: ExitInfo,
        /// Its standard output.
        stdout: Vec<u8>,
        /// Its standard error.
        stderr: Vec<u8>,
        /// Killed at the deadline.
        timed_out: bool,
        /// Output beyond `max_output` was dropped.
        truncated: bool,
    },
}
