//! The errors of `gatehouse-conform docs`: each names the file or flag it concerns and
//! displays as the one line the command prints before exiting with
//! [`gatehouse_conform_core::exit::USAGE`].

use std::io;
use std::path::PathBuf;

/// Why the site could not be built or does not hold what it must.
#[derive(Debug, thiserror::Error)]
pub enum DocsError {
    /// The suite could not be found or read, or the site's directory could not be made:
    /// the runner's own errors.
    #[error(transparent)]
    Runner(#[from] gatehouse_conform_core::error::Error),
    /// A file of the inputs could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A report is not a canonical JSON report of the runner.
    #[error("{}: not a canonical JSON report of gatehouse-conform: {source}", path.display())]
    Report {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// `--report` not written `LABEL=FILE`, or a label not fit for a file name.
    #[error("--report {0}: write LABEL=FILE, LABEL of letters, digits, `-`, `_` and `.`")]
    ReportArg(String),
    /// Two reports under one label.
    #[error("--report {0}: two reports for this label")]
    DuplicateLabel(String),
    /// `--report-sha256` not of the form `LABEL=HEX`, or naming no `--report`.
    #[error("--report-sha256 {0}: expected LABEL=HEX (64 hex digits) naming a --report")]
    HashArg(String),
    /// A report whose bytes are not the ones the run's log pinned.
    #[error("--report {label}={}: its sha256 is {got}, not the {want} given by --report-sha256", path.display())]
    HashMismatch {
        /// The column.
        label: String,
        /// The report.
        path: std::path::PathBuf,
        /// The hash given.
        want: String,
        /// The file's.
        got: String,
    },
    /// A scenario file no longer parses as TOML (the loader reported why).
    #[error("{}: {source}", path.display())]
    Scenario {
        /// The file.
        path: PathBuf,
        /// Why.
        source: toml::de::Error,
    },
    /// A file of the site could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// `spec/public-record.toml` or `spec/asi.toml` cannot be read (`gatehouse-conform
    /// lint` says the same), one line per problem.
    #[error("the spec's lists cannot be read:\n  {}", .0.join("\n  "))]
    Lists(Vec<String>),
    /// The generated site lacks what the check requires, one line per problem.
    #[error("the generated site is incomplete:\n  {}", .0.join("\n  "))]
    Incomplete(Vec<String>),
}
