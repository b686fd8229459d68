//! The two files the permissions and hooks come from (PERM-FILE-1 to -3, PERM-LOAD-1): the agent file
//! (YAML in the seed's `version` / `agents` / `models` / `permissions` shape, each agent
//! with its `toolsets` and `hooks`) and the person's settings file (`settings:` with
//! `safety` and `permissions`). Both are read strictly: an unknown key is an error naming
//! its path, a bad pattern or matcher an error naming the file, the pattern and the
//! position; nothing is ever dropped with a warning.
//!
//! May touch: reads the one file it is given.

pub mod agent;
pub mod settings;

pub use agent::{Agent, AgentFile, Toolset};
pub use settings::{Settings, SettingsFile};

use std::path::{Path, PathBuf};

/// A file that cannot be used, as one line: the file, then where in it, then what.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("{}: cannot be read: {source}", .file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The YAML does not fit the shape (an unknown key, a wrong type): the parser's
    /// message names the key's path and its line.
    #[error("{}: {message}", .file.display())]
    Shape {
        /// The file.
        file: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A value that parses but cannot be used.
    #[error("{}: {path}: {message}", .file.display())]
    Invalid {
        /// The file.
        file: PathBuf,
        /// The key path (`agents.root.hooks.pre_tool_use[0].matcher`).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A pattern that cannot be parsed (its error names the list, the pattern and the
    /// position).
    #[error(transparent)]
    Pattern(#[from] crate::permissions::LoadError),
}

/// Reads `file` and parses it as `T`, strictly.
pub(crate) fn read_yaml<T: serde::de::DeserializeOwned>(file: &Path) -> Result<T, ConfigError> {
    let text = std::fs::read_to_string(file).map_err(|source| ConfigError::Read {
        file: file.to_path_buf(),
        source,
    })?;
    parse_yaml(file, &text)
}

/// Parses `text` (the contents of `file`) as `T`, strictly.
pub(crate) fn parse_yaml<T: serde::de::DeserializeOwned>(
    file: &Path,
    text: &str,
) -> Result<T, ConfigError> {
    serde_yaml_ng::from_str(text).map_err(|e| ConfigError::Shape {
        file: file.to_path_buf(),
        message: e.to_string().replace('\n', " "),
    })
}
