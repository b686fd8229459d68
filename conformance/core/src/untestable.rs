//! `spec/untestable.toml`: requirements no scenario can check, each with its reason.
//! Strict: `[[untestable]]` entries with a requirement `id` and a non-empty `reason`.

use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::scenario::ScenarioError;

/// One entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untestable {
    /// The requirement ID.
    pub id: String,
    /// Why it cannot be tested.
    pub reason: String,
    /// 1-based line of the entry.
    pub line: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    untestable: Vec<Spanned<Entry>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: String,
    reason: String,
}

/// Loads the file; a missing file is an empty list.
pub fn load(path: &Path) -> Result<Vec<Untestable>, Vec<ScenarioError>> {
    let display = path.display().to_string();
    let source = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(vec![ScenarioError {
                file: display,
                position: None,
                message: format!("cannot read: {e}"),
            }])
        }
    };
    parse(&source, &display)
}

/// Parses the text of an untestable file.
pub fn parse(source: &str, display: &str) -> Result<Vec<Untestable>, Vec<ScenarioError>> {
    let file: File =
        toml::from_str(source).map_err(|e| vec![ScenarioError::toml(display, source, &e)])?;
    let mut errors = Vec::new();
    let mut out: Vec<Untestable> = Vec::new();
    for entry in file.untestable {
        let start = entry.span().start;
        let line = crate::scenario::line_col(source, start).0;
        let e = entry.into_inner();
        if e.reason.trim().is_empty() {
            errors.push(ScenarioError::at(
                display,
                source,
                Some(start),
                format!("`{}`: `reason` is empty", e.id),
            ));
        }
        if out.iter().any(|u| u.id == e.id) {
            errors.push(ScenarioError::at(
                display,
                source,
                Some(start),
                format!("`{}` is listed twice", e.id),
            ));
        }
        out.push(Untestable {
            id: e.id,
            reason: e.reason,
            line,
        });
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_entries() {
        let ok = parse(
            "[[untestable]]\nid = \"GATE-X-1\"\nreason = \"needs a person\"\n",
            "u.toml",
        )
        .unwrap();
        assert_eq!(
            ok,
            vec![Untestable {
                id: "GATE-X-1".into(),
                reason: "needs a person".into(),
                line: 1
            }]
        );
        let e = parse(
            "[[untestable]]\nid = \"GATE-X-1\"\nreason = \"r\"\nwhy = 1\n",
            "u.toml",
        )
        .unwrap_err();
        assert!(
            e[0].to_string()
                .starts_with("u.toml:4:1: unknown field `why`"),
            "{}",
            e[0]
        );
        let e = parse(
            "[[untestable]]\nid = \"GATE-X-1\"\nreason = \" \"\n",
            "u.toml",
        )
        .unwrap_err();
        assert_eq!(
            e[0].to_string(),
            "u.toml:1:1: `GATE-X-1`: `reason` is empty"
        );
    }
}
