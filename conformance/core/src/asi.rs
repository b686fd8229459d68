//! `spec/asi.toml`: the OWASP Top 10 for Agentic Applications (2026), each risk with the
//! requirements that address it: the one declaration from which each requirement's risks
//! are read. A risk names requirement IDs (`GATE-NEVER-1`) or ID prefixes ending in `-`
//! (`FENCE-ENV-`: every ID that starts so), or, where no requirement addresses it, a
//! `none` reason. `gatehouse-conform lint` checks it: every ID exists, every prefix
//! matches one, every risk has requirements or its reason.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::scenario::ScenarioError;

/// One risk of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Risk {
    /// `ASI01`.
    pub id: String,
    /// Its name as OWASP writes it.
    pub name: String,
    /// Requirement IDs and prefixes (ending in `-`), as written.
    pub requirements: Vec<String>,
    /// Why no requirement addresses it, when none does.
    pub none: Option<String>,
    /// 1-based line of its entry.
    pub line: usize,
}

impl Risk {
    /// The requirement IDs of `ids` it names, each once, in `ids`' order.
    pub fn expand<'a>(&self, ids: &'a BTreeSet<String>) -> Vec<&'a String> {
        ids.iter()
            .filter(|id| self.requirements.iter().any(|r| matches(r, id)))
            .collect()
    }
}

/// Whether the entry `r` (an ID, or a prefix ending in `-`) names `id`.
pub fn matches(r: &str, id: &str) -> bool {
    if r.ends_with('-') {
        id.starts_with(r)
    } else {
        r == id
    }
}

/// The file: where the list was read, and its risks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Asi {
    /// The list as published: its title and date.
    pub source: String,
    /// Its page, an `https://` address.
    pub url: String,
    /// The risks, in order.
    pub risks: Vec<Risk>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    source: String,
    url: String,
    #[serde(default)]
    risk: Vec<Spanned<Entry>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: String,
    name: String,
    #[serde(default)]
    requirements: Vec<String>,
    #[serde(default)]
    none: Option<String>,
}

/// Loads the file; a missing file is an empty list.
pub fn load(path: &Path) -> Result<Asi, Vec<ScenarioError>> {
    let display = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(s) => parse(&s, &display),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Asi::default()),
        Err(e) => Err(vec![ScenarioError {
            file: display,
            position: None,
            message: format!("cannot read: {e}"),
        }]),
    }
}

/// Parses the text of an ASI file: each risk `ASI` and two digits, once, with a name and
/// either requirements or a `none` reason.
pub fn parse(source: &str, display: &str) -> Result<Asi, Vec<ScenarioError>> {
    let file: File =
        toml::from_str(source).map_err(|e| vec![ScenarioError::toml(display, source, &e)])?;
    let mut errors = Vec::new();
    if file.source.trim().is_empty() {
        errors.push(ScenarioError::at(
            display,
            source,
            None,
            "`source` is empty".into(),
        ));
    }
    if !file.url.starts_with("https://") || file.url.contains(char::is_whitespace) {
        errors.push(ScenarioError::at(
            display,
            source,
            None,
            format!("`url` `{}` is not an https address", file.url),
        ));
    }
    let mut risks: Vec<Risk> = Vec::new();
    for entry in file.risk {
        let start = entry.span().start;
        let line = crate::scenario::line_col(source, start).0;
        let e = entry.into_inner();
        let mut err = |m: &str| {
            errors.push(ScenarioError::at(
                display,
                source,
                Some(start),
                format!("risk `{}`: {m}", e.id),
            ))
        };
        let well_formed = e.id.len() == 5
            && e.id.starts_with("ASI")
            && e.id[3..].bytes().all(|b| b.is_ascii_digit());
        if !well_formed {
            err("the id must be `ASI` and two digits");
        }
        if risks.iter().any(|r| r.id == e.id) {
            err("listed twice");
        }
        if e.name.trim().is_empty() {
            err("`name` is empty");
        }
        let reason = e.none.as_deref().map(str::trim).filter(|r| !r.is_empty());
        match (e.requirements.is_empty(), reason) {
            (true, None) => err("names no requirement and gives no `none` reason"),
            (false, Some(_)) => err("names requirements and a `none` reason: keep one"),
            _ => {}
        }
        risks.push(Risk {
            id: e.id,
            name: e.name,
            requirements: e.requirements,
            none: e.none,
            line,
        });
    }
    if errors.is_empty() {
        Ok(Asi {
            source: file.source,
            url: file.url,
            risks,
        })
    } else {
        Err(errors)
    }
}

/// The problems of `asi` against the spec's `ids`, one line each: an ID no chapter
/// defines, a prefix no ID starts with. `display` is the file as messages name it.
pub fn check(asi: &Asi, display: &str, ids: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    for risk in &asi.risks {
        for r in &risk.requirements {
            if !ids.iter().any(|id| matches(r, id)) {
                let what = if r.ends_with('-') {
                    "a prefix no requirement ID starts with"
                } else {
                    "an ID no chapter defines"
                };
                out.push(format!(
                    "{display}:{}: risk `{}` names `{r}`, {what}",
                    risk.line, risk.id
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn risks_are_strict_and_their_entries_exist() {
        let text = "source = \"OWASP (2025-12-09)\"\nurl = \"https://genai.owasp.org/\"\n\
                    [[risk]]\nid = \"ASI01\"\nname = \"Agent Goal Hijack\"\nrequirements = [\"GATE-A-\", \"GATE-B-1\"]\n\
                    [[risk]]\nid = \"ASI07\"\nname = \"Insecure Inter-Agent Communication\"\nnone = \"one agent\"\n";
        let asi = parse(text, "a.toml").unwrap();
        let ids: BTreeSet<String> = ["GATE-A-1", "GATE-A-2", "GATE-C-1"]
            .map(String::from)
            .into();
        assert_eq!(asi.risks[0].expand(&ids), ["GATE-A-1", "GATE-A-2"]);
        assert_eq!(
            check(&asi, "a.toml", &ids),
            ["a.toml:3: risk `ASI01` names `GATE-B-1`, an ID no chapter defines"]
        );
        let empty: BTreeSet<String> = BTreeSet::new();
        assert_eq!(
            check(&asi, "a.toml", &empty)[0],
            "a.toml:3: risk `ASI01` names `GATE-A-`, a prefix no requirement ID starts with"
        );
        let neither = text.replace("none = \"one agent\"\n", "");
        let e = parse(&neither, "a.toml").unwrap_err();
        assert_eq!(
            e[0].to_string(),
            "a.toml:7:1: risk `ASI07`: names no requirement and gives no `none` reason"
        );
        let both = text.replace("none = ", "requirements = [\"GATE-C-1\"]\nnone = ");
        assert!(parse(&both, "a.toml").unwrap_err()[0]
            .message
            .ends_with("keep one"));
        let bad = text.replace("ASI07", "ASI7");
        assert!(parse(&bad, "a.toml").unwrap_err()[0]
            .message
            .contains("`ASI` and two digits"));
    }
}
