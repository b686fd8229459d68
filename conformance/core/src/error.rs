//! The runner's own errors (`thiserror`): each names the file, directory, flag or step it
//! concerns, and displays as the one line the command prints before exiting with
//! [`crate::exit::USAGE`]. Problems inside scenario files are
//! [`crate::scenario::ScenarioError`]s; failures of the implementation during a step are
//! [`crate::protocol::client::Failure`]s.

use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;

/// Why a command could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A directory given with a flag does not exist.
    #[error("{flag} {}: no such directory", path.display())]
    NoSuchDir {
        /// The flag (`--scenarios`).
        flag: &'static str,
        /// The path given.
        path: PathBuf,
    },
    /// A directory was not given and is not found.
    #[error("no `{name}` directory here or in the workspace; pass {flag} DIR")]
    DirNotFound {
        /// `scenarios` or `spec`.
        name: &'static str,
        /// The flag that names it.
        flag: &'static str,
    },
    /// A directory could not be read.
    #[error("cannot read the {what} in {}: {source}", dir.display())]
    ReadDir {
        /// `spec` or `scenarios`.
        what: &'static str,
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A report or log file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A file of the suite could not be read to compute its identity.
    #[error(transparent)]
    Identity(#[from] crate::identity::IdentityError),
    /// An expectations file cannot be read or is not of the format.
    #[error(transparent)]
    Expectations(#[from] crate::expectations::ExpectationsError),
    /// A `--filter` or `--exclude` selects no scenario.
    #[error(transparent)]
    Unmatched(#[from] crate::filter::Unmatched),
    /// A certify, verify, diff or checklist input that cannot be used, in one line.
    #[error("{0}")]
    Certify(String),
    /// `--tier` leaves nothing of what the filters selected.

    #[error("--tier {0}: none of the selected scenarios is of this tier")]
    EmptyTier(String),
    /// `--step-timeout` is not a positive number.
    #[error("--step-timeout {0}: must be a positive number of seconds")]
    StepTimeout(f64),
    /// No reference binary to run.
    #[error("no `gatehouse` executable beside the runner or on PATH: run `cargo build -p gatehouse`, or pass --impl 'CMD'")]
    NoReference,
    /// Cargo could not be started to build the reference.
    #[error("could not run cargo to build the reference in {}: {source}", workspace.display())]
    CargoSpawn {
        /// The workspace it was to build in.
        workspace: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Building the reference failed.
    #[error("building the reference `gatehouse` failed ({0}); fix the build or pass --impl 'CMD'")]
    Build(ExitStatus),
    /// The implementation could not be started or refused the handshake.
    #[error("{command}: {source}")]
    Start {
        /// The implementation command.
        command: String,
        /// What went wrong.
        source: crate::protocol::client::Failure,
    },
}
