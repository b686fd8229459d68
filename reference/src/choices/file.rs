//! One TOML choices file (`config.toml`, the user's or the project's), parsed strictly: every key is known, every value has the type
//! it must have, and the first mistake is one error naming the file, the line and the
//! key. Each value keeps the line it was written on, for the provenance `gatehouse info`
//! shows.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

/// A configuration file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file exists but cannot be read.
    #[error("{}: cannot read: {source}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A syntax error, an unknown key or a value of the wrong type.
    #[error("{}:{line}: {message}", file.display())]
    Invalid {
        /// The file.
        file: PathBuf,
        /// The line (1-based; 0 when the parser gave no position).
        line: usize,
        /// The parser's message, naming the key.
        message: String,
    },
}

/// The `[network]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct NetworkTable {
    /// `off`, `host` or `allow-list`.
    pub mode: Option<Spanned<String>>,
    /// Domain allow-list entries.
    #[serde(default)]
    pub allow_domains: Vec<Spanned<String>>,
}

/// The `[env]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct EnvTable {
    /// Variables passed by name (never a secret-looking one).
    #[serde(default)]
    pub pass: Vec<Spanned<String>>,
    /// Secret-looking variables passed on purpose (the user's file only).
    #[serde(default)]
    pub pass_secrets: Vec<Spanned<String>>,
    /// Variables set to a value.
    #[serde(default)]
    pub set: BTreeMap<String, Spanned<String>>,
}

/// The `[paths]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PathsTable {
    /// Visible read-only.
    #[serde(default)]
    pub read_only: Vec<Spanned<String>>,
    /// Extra writable roots.
    #[serde(default)]
    pub writable: Vec<Spanned<String>>,
    /// Absent inside the jail.
    #[serde(default)]
    pub hidden: Vec<Spanned<String>>,
}

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FileConfig {
    /// Project directories whose `.gatehouse/config.toml` is honoured (the user's file
    /// only).
    #[serde(default)]
    pub trusted_projects: Vec<Spanned<String>>,
    /// `[network]`.
    #[serde(default)]
    pub network: NetworkTable,
    /// `[env]`.
    #[serde(default)]
    pub env: EnvTable,
    /// `[paths]`.
    #[serde(default)]
    pub paths: PathsTable,
}

/// The 1-based line holding byte `offset` of `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// A parsed file with its text, so spans become lines.
#[derive(Debug)]
pub struct Parsed {
    /// Where it was read from.
    pub file: PathBuf,
    /// The text.
    pub text: String,
    /// The content.
    pub config: FileConfig,
}

impl Parsed {
    /// The line of a spanned value.
    pub fn line<T>(&self, v: &Spanned<T>) -> usize {
        line_of(&self.text, v.span().start)
    }

    /// An error about a value of this file.
    pub fn invalid<T>(&self, v: &Spanned<T>, message: String) -> FileError {
        FileError::Invalid {
            file: self.file.clone(),
            line: self.line(v),
            message,
        }
    }
}

/// Parse `text` as the file `file`.
pub fn parse(file: &Path, text: String) -> Result<Parsed, FileError> {
    match toml::from_str::<FileConfig>(&text) {
        Ok(config) => Ok(Parsed {
            file: file.to_path_buf(),
            text,
            config,
        }),
        Err(e) => Err(FileError::Invalid {
            file: file.to_path_buf(),
            line: e.span().map(|s| line_of(&text, s.start)).unwrap_or(0),
            message: e.message().trim().to_string(),
        }),
    }
}

/// Read and parse `file`; `Ok(None)` when it does not exist.
pub fn load(file: &Path) -> Result<Option<Parsed>, FileError> {
    match std::fs::read_to_string(file) {
        Ok(text) => parse(file, text).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(FileError::Read {
            file: file.to_path_buf(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(Path::new("/u/config.toml"), text.into())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn an_unknown_key_names_file_line_and_key() {
        let e = err("[network]\nmode = \"off\"\nallow-domain = [\"x.org\"]\n");
        assert!(
            e.starts_with("/u/config.toml:3: unknown field `allow-domain`"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_table_names_its_line() {
        let e = err("[env]\npass = []\n\n[netwrok]\nmode = \"off\"\n");
        assert!(
            e.starts_with("/u/config.toml:4: unknown field `netwrok`"),
            "{e}"
        );
    }

    #[test]
    fn a_wrong_type_names_its_line() {
        let e = err("[env]\npass = \"HOME\"\n");
        assert!(e.starts_with("/u/config.toml:2: invalid type"), "{e}");
    }

    #[test]
    fn values_keep_their_lines() {
        let p = parse(
            Path::new("/u/c.toml"),
            "[network]\n\nallow-domains = [\n  \"a.org\",\n  \"b.org\",\n]\n".into(),
        )
        .unwrap();
        let lines: Vec<usize> = p
            .config
            .network
            .allow_domains
            .iter()
            .map(|v| p.line(v))
            .collect();
        assert_eq!(lines, [4, 5]);
    }

    #[test]
    fn an_empty_file_is_the_default() {
        let p = parse(Path::new("/u/c.toml"), String::new()).unwrap();
        assert!(p.config.network.mode.is_none());
    }
}
