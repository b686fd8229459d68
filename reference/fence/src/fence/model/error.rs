//! The fence's one error type: every variant names the object it concerns and says what a
//! person can do about it.

use std::path::PathBuf;

use crate::fence::coverage::Coverage;

/// Why a fence could not be prepared, or a command could not be run in it.
#[derive(Debug, thiserror::Error)]
pub enum FenceError {
    /// A required protection is missing and the degraded opt-in was not given.
    #[error(
        "fence refused: {backend} cannot provide {}: {reason}; pass --allow-degraded to run without them (the posture will say so)",
        list(missing)
    )]
    Refused {
        /// The backend that would have run.
        backend: String,
        /// What it cannot cover.
        missing: Vec<Coverage>,
        /// Why (what the kernel or host lacks).
        reason: String,
    },
    /// The backend cannot run on this host at all.
    #[error("fence backend {backend} unavailable: {reason}")]
    Unavailable {
        /// The backend.
        backend: String,
        /// What is missing.
        reason: String,
    },
    /// The probe ran in a real jail and disproved a claim (or could not run).
    #[error("fence probe failed for {backend}: {leg}: {detail}")]
    ProbeFailed {
        /// The backend probed.
        backend: String,
        /// The leg that failed (`write-outside`, `write-inside`, `truncate-outside`, ...).
        leg: String,
        /// What happened.
        detail: String,
    },
    /// The policy is unusable.
    #[error("fence policy: {}: {reason}", path.display())]
    Policy {
        /// The path concerned.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The session-log directory lies inside a writable root, where jailed code could
    /// rewrite its own record: the setup's mistake, not the host's.
    #[error(
        "fence policy: {}: the session-log directory lies inside the writable root {}",
        log.display(),
        root.display()
    )]
    LogDirInWritableRoot {
        /// The session-log directory.
        log: PathBuf,
        /// The writable root holding it.
        root: PathBuf,
    },
    /// The options are unusable.
    #[error("fence options: {reason}")]
    Options {
        /// Why.
        reason: String,
    },
    /// The plan failed validation (a bug in the builder, or a hand-made plan).
    #[error("fence plan: step {index} ({step}): {reason}")]
    Plan {
        /// Index of the offending step.
        index: usize,
        /// Its name.
        step: String,
        /// Why.
        reason: String,
    },
    /// The fence is down (probe failed or no backend) and the command was not run.
    #[error("no fence: {reason}")]
    NoFence {
        /// The probe's or the platform's reason.
        reason: String,
    },
    /// Starting a process failed.
    #[error("cannot start {}: {source}", program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// An I/O operation on a named object failed.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: String,
        /// The object.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

fn list(items: &[Coverage]) -> String {
    items
        .iter()
        .map(|c| c.name())
        .collect::<Vec<_>>()
        .join(", ")
}
