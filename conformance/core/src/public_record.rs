//! `spec/public-record.toml`: the public classes of bypass the suite knows, each with a
//! stable id, a title, the sources that reported it (in the forms of a scenario's
//! `sources`) and the requirements it breaks; and the check `gatehouse-conform lint` runs
//! over it and the scenarios: every class has a scenario citing one of its sources, every
//! source a scenario cites is some class's, every requirement named exists.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::scenario::{check_source_form, Scenario, ScenarioError};

/// One public class of bypass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Class {
    /// The stable id (`git-config-runs`).
    pub id: String,
    /// Its number in issue 45's table (the order of the known-attacks page).
    pub number: u32,
    /// One line: what the bypass is.
    pub title: String,
    /// The public reports of it, each in a form of `scenarios/README.md`.
    pub sources: Vec<String>,
    /// The requirements it breaks.
    pub requirements: Vec<String>,
    /// 1-based line of its entry.
    pub line: usize,
}

impl Class {
    /// The ids of the scenarios that cite one of its sources, in the order given.
    pub fn scenarios<'a>(&self, scenarios: &'a [Scenario]) -> Vec<&'a Scenario> {
        scenarios
            .iter()
            .filter(|s| s.sources.iter().any(|src| self.sources.contains(src)))
            .collect()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    class: Vec<Spanned<Entry>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: String,
    number: u32,
    title: String,
    sources: Vec<String>,
    requirements: Vec<String>,
}

/// Loads the file; a missing file is an empty list.
pub fn load(path: &Path) -> Result<Vec<Class>, Vec<ScenarioError>> {
    let display = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(s) => parse(&s, &display),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(vec![ScenarioError {
            file: display,
            position: None,
            message: format!("cannot read: {e}"),
        }]),
    }
}

/// Whether `s` is fit for a class id: lowercase letters, digits and single hyphens.
fn is_id(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Parses the text of a public-record file: each entry's form, no id, number or source
/// twice.
pub fn parse(source: &str, display: &str) -> Result<Vec<Class>, Vec<ScenarioError>> {
    let file: File =
        toml::from_str(source).map_err(|e| vec![ScenarioError::toml(display, source, &e)])?;
    let mut errors = Vec::new();
    let mut out: Vec<Class> = Vec::new();
    for entry in file.class {
        let start = entry.span().start;
        let line = crate::scenario::line_col(source, start).0;
        let e = entry.into_inner();
        let mut err = |m: String| {
            errors.push(ScenarioError::at(
                display,
                source,
                Some(start),
                format!("class `{}`: {m}", e.id),
            ))
        };
        if !is_id(&e.id) {
            err("the id must be lowercase letters, digits and single hyphens".into());
        }
        if e.title.trim().is_empty() {
            err("`title` is empty".into());
        }
        if e.sources.is_empty() {
            err("`sources` is empty".into());
        }
        if e.requirements.is_empty() {
            err("`requirements` is empty".into());
        }
        for s in &e.sources {
            if let Err(m) = check_source_form(s) {
                err(m);
            }
        }
        let mut seen = BTreeSet::new();
        for s in &e.sources {
            if !seen.insert(s) {
                err(format!("source `{s}` is listed twice"));
            }
        }
        for other in &out {
            if other.id == e.id {
                err("the id is used twice".into());
            }
            if other.number == e.number {
                err(format!(
                    "number {} is also class `{}`'s",
                    e.number, other.id
                ));
            }
            for s in e.sources.iter().filter(|s| other.sources.contains(s)) {
                err(format!("source `{s}` is also class `{}`'s", other.id));
            }
        }
        out.push(Class {
            id: e.id,
            number: e.number,
            title: e.title,
            sources: e.sources,
            requirements: e.requirements,
            line,
        });
    }
    if errors.is_empty() {
        out.sort_by_key(|c| c.number);
        Ok(out)
    } else {
        Err(errors)
    }
}

/// What the check found: each error fails the lint.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Checked {
    /// One line each.
    pub errors: Vec<String>,
}

/// Checks the classes against the spec's `ids` and the `scenarios` loaded; `display` is
/// the file as messages name it.
pub fn check(
    classes: &[Class],
    display: &str,
    ids: &BTreeSet<String>,
    scenarios: &[Scenario],
) -> Checked {
    let mut c = Checked::default();
    for class in classes {
        for id in class.requirements.iter().filter(|id| !ids.contains(*id)) {
            c.errors.push(format!(
                "{display}:{}: class `{}` names `{id}`, which no chapter defines",
                class.line, class.id
            ));
        }
        let citing = class.scenarios(scenarios);
        if citing.is_empty() {
            c.errors.push(format!(
                "{display}:{}: class `{}` has no scenario citing one of its sources ({})",
                class.line,
                class.id,
                class.sources.join(", ")
            ));
        }
    }
    for s in scenarios {
        for src in &s.sources {
            if !classes.iter().any(|k| k.sources.contains(src)) {
                c.errors.push(format!(
                    "{}: cites source `{src}`, which no class of {display} lists",
                    s.path
                ));
            }
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_file;

    const ONE: &str = "[[class]]\nid = \"git-config-runs\"\nnumber = 1\ntitle = \"t\"\n\
                       sources = [\"mistralai/mistral-vibe#962\"]\nrequirements = [\"GATE-A-1\"]\n";

    fn scenario(sources: &str) -> Scenario {
        let src = format!(
            "title = \"t\"\nrequirements = [\"GATE-A-1\"]\ntier = \"decision\"\nsources = {sources}\n\
             [[case]]\ndecide = \"ls\"\nexpect = {{ decision = \"allow\" }}\n"
        );
        load_file(&src, "s/gate/t.toml", "gate/t", None).unwrap()
    }

    #[test]
    fn entries_are_strict() {
        let ok = parse(ONE, "r.toml").unwrap();
        assert_eq!(ok[0].id, "git-config-runs");
        assert_eq!(ok[0].line, 1);
        let twice = format!("{ONE}{}", ONE.replace("number = 1", "number = 2"));
        let e = parse(&twice, "r.toml").unwrap_err();
        let lines: Vec<String> = e.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "r.toml:7:1: class `git-config-runs`: the id is used twice",
                "r.toml:7:1: class `git-config-runs`: source `mistralai/mistral-vibe#962` is also class `git-config-runs`'s",
            ]
        );
        let bad = ONE.replace("mistralai/mistral-vibe#962", "see the vibe PR");
        let e = parse(&bad, "r.toml").unwrap_err();
        assert!(e[0].message.contains("has no known form"), "{}", e[0]);
        let e = parse(&format!("{ONE}why = 1\n"), "r.toml").unwrap_err();
        assert!(e[0].message.starts_with("unknown field `why`"), "{}", e[0]);
    }

    #[test]
    fn a_class_without_a_scenario_and_a_source_without_a_class_fail() {
        let classes = parse(ONE, "r.toml").unwrap();
        let ids: BTreeSet<String> = ["GATE-A-1".to_string()].into();
        let cited = [scenario("[\"mistralai/mistral-vibe#962\"]")];
        assert_eq!(check(&classes, "r.toml", &ids, &cited), Checked::default());
        let stray = [scenario("[\"openai/codex#1\"]")];
        let c = check(&classes, "r.toml", &ids, &stray);
        assert_eq!(
            c.errors,
            [
                "r.toml:1: class `git-config-runs` has no scenario citing one of its sources (mistralai/mistral-vibe#962)",
                "s/gate/t.toml: cites source `openai/codex#1`, which no class of r.toml lists",
            ]
        );
        let c = check(&classes, "r.toml", &BTreeSet::new(), &cited);
        assert_eq!(
            c.errors,
            ["r.toml:1: class `git-config-runs` names `GATE-A-1`, which no chapter defines"]
        );
    }

    #[test]
    fn a_pending_key_is_refused() {
        let pending = ONE.replace("requirements", "scenarios_pending = true\nrequirements");
        assert!(parse(&pending, "r.toml").is_err());
    }
}
