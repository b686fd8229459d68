//! One problem with one scenario file, and where in the file it is: `file:line:col:
//! message`. Shared by loading and validation (and the trace's `untestable.toml`).

use std::fmt;

/// One problem with one scenario file; displays as `file:line:col: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file as displayed.
    pub file: String,
    /// 1-based line and column, when known.
    pub position: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, col)) => write!(f, "{}:{line}:{col}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    /// An error at a byte offset of `source`.
    pub fn at(file: &str, source: &str, offset: Option<usize>, message: String) -> Self {
        ScenarioError {
            file: file.to_string(),
            position: offset.map(|o| line_col(source, o)),
            message,
        }
    }

    /// A TOML parse error of `source`, at its span, on one line.
    pub fn toml(file: &str, source: &str, e: &toml::de::Error) -> Self {
        Self::at(
            file,
            source,
            e.span().map(|s| s.start),
            e.message().trim_end().replace('\n', " "),
        )
    }
}

/// 1-based line and column of byte `offset` in `source`.
pub fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}
