//! Records that survive the process (spec `decision-order.md`, section *Records*):
//! documents replaced whole (write a temporary file beside it, fsync, rename, fsync the
//! directory: [`atomic`]), journals appended one record per write and synced before the
//! append is acknowledged ([`journal`]), both under a state directory outside every
//! workspace root ([`state`]). A corrupt record is an error with one line naming the file
//! and what is wrong, never silently reset.
//!
//! May touch: only files under the state directory it is given.

pub mod atomic;
pub mod crash;
pub mod journal;
pub mod state;

pub use journal::Journal;
pub use state::StateDir;

use std::path::{Path, PathBuf};

/// A record that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// An I/O error on a record file.
    #[error("{}: {source}", .file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A record file whose contents cannot be read back. It is left exactly as it is.
    #[error("{}: corrupt record{at}: {what} (left as it is; nothing was reset)", .file.display(), at = .line.map(|l| format!(" at line {l}")).unwrap_or_default())]
    Corrupt {
        /// The file.
        file: PathBuf,
        /// The 1-based line, for a journal.
        line: Option<usize>,
        /// What is wrong.
        what: String,
    },
    /// The state directory lies inside a workspace root, where a jailed command could
    /// rewrite its own grants.
    #[error("{}: the state directory lies inside the workspace root {}; it must be outside every root", .dir.display(), .root.display())]
    InsideWorkspace {
        /// The state directory.
        dir: PathBuf,
        /// The root it is inside.
        root: PathBuf,
    },
}

impl RecordError {
    /// The I/O error `source` met on `file` (the guard's lock file uses it too).
    pub fn io(file: &Path, source: std::io::Error) -> RecordError {
        RecordError::Io {
            file: file.to_path_buf(),
            source,
        }
    }
}

/// Reads a JSON document written by [`atomic::write_json`]: `None` when there is none yet.
pub fn read_json<T: serde::de::DeserializeOwned>(file: &Path) -> Result<Option<T>, RecordError> {
    match std::fs::read(file) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| RecordError::Corrupt {
                file: file.to_path_buf(),
                line: None,
                what: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(RecordError::io(file, e)),
    }
}
