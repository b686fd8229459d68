//! Known failures as data (`spec/verdicts.md`, PROTO-VERDICT-13 to 15): an expectations
//! file names, per scenario id, the safety and exactness verdicts an implementation is
//! known to get and why; a run compared with it passes when every verdict is as
//! expected, and fails on a regression, on an unexpected pass, and on a scenario id the
//! suite no longer has. `--update-expectations` writes the file from a run.
//!
//! ```toml
//! suite = "sha256:…"            # the suite it was made against
//!
//! ["gate/read-list"]
//! safety = "passed"
//! exactness = "failed"
//! reason = "denies where the spec asks"
//! ```
//!
//! A scenario the file does not name is expected to pass (or skip) at both levels;
//! `skipped` and `passed` are the same to the comparison (a skip is no failure, and
//! which scenarios skip depends on the host).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::record::{Comparison, Outcome, ScenarioRecord, SuiteCheck};

/// An expectations file that cannot be read or is not of the format.
#[derive(Debug, thiserror::Error)]
pub enum ExpectationsError {
    /// It cannot be read.
    #[error("cannot read the expectations file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It is not TOML.
    #[error("{}: not TOML: {message}", path.display())]
    Toml {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A key or value is not of the format.
    #[error("{}: {message}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the key.
        message: String,
    },
}

/// One scenario's expected verdicts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The safety verdict.
    pub safety: Outcome,
    /// The exactness verdict.
    pub exactness: Outcome,
    /// One line saying why.
    pub reason: String,
}

/// An expectations file as read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expectations {
    /// The suite hash it was made against (`sha256:…`), if written.
    pub suite: Option<String>,
    /// Per scenario id.
    pub scenarios: BTreeMap<String, Expected>,
}

fn outcome(word: &str) -> Option<Outcome> {
    [
        Outcome::Passed,
        Outcome::Failed,
        Outcome::Skipped,
        Outcome::Errored,
        Outcome::NotShown,
    ]
    .into_iter()
    .find(|o| o.as_str() == word)
}

impl Expectations {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<Self, ExpectationsError> {
        let text = std::fs::read_to_string(path).map_err(|source| ExpectationsError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text).map_err(|e| match e {
            Problem::Toml(message) => ExpectationsError::Toml {
                path: path.to_path_buf(),
                message,
            },
            Problem::Format(message) => ExpectationsError::Format {
                path: path.to_path_buf(),
                message,
            },
        })
    }

    fn parse(text: &str) -> Result<Self, Problem> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| Problem::Toml(e.message().trim_end().to_string()))?;
        let mut out = Expectations::default();
        for (key, value) in table {
            if key == "suite" {
                match value {
                    toml::Value::String(s) if s.starts_with("sha256:") => out.suite = Some(s),
                    other => {
                        return Err(Problem::Format(format!(
                            "suite: expected a string \"sha256:...\", got {other}"
                        )))
                    }
                }
                continue;
            }
            let toml::Value::Table(t) = value else {
                return Err(Problem::Format(format!(
                    "{key:?}: expected a table of `safety`, `exactness` and `reason` (scenario ids hold a `/`; the only other key is `suite`)"
                )));
            };
            let verdict = |k: &str| -> Result<Outcome, Problem> {
                let word = t.get(k).and_then(toml::Value::as_str).ok_or_else(|| {
                    Problem::Format(format!(
                        "{key:?}: `{k}` must be one of \"passed\", \"failed\", \"skipped\", \"errored\""
                    ))
                })?;
                outcome(word).ok_or_else(|| {
                    Problem::Format(format!(
                        "{key:?}: `{k}` = {word:?}: must be one of \"passed\", \"failed\", \"skipped\", \"errored\""
                    ))
                })
            };
            if let Some(extra) = t
                .keys()
                .find(|k| !["safety", "exactness", "reason"].contains(&k.as_str()))
            {
                return Err(Problem::Format(format!(
                    "{key:?}: unknown key `{extra}` (expected `safety`, `exactness`, `reason`)"
                )));
            }
            let reason = match t.get("reason") {
                None => String::new(),
                Some(toml::Value::String(s)) if !s.contains('\n') => s.clone(),
                Some(_) => {
                    return Err(Problem::Format(format!(
                        "{key:?}: `reason` must be a one-line string"
                    )))
                }
            };
            out.scenarios.insert(
                key.clone(),
                Expected {
                    safety: verdict("safety")?,
                    exactness: verdict("exactness")?,
                    reason,
                },
            );
        }
        Ok(out)
    }

    /// The file's text: the suite, then every scenario in id order.
    pub fn render(&self) -> String {
        let q = |s: &str| toml::Value::String(s.to_string()).to_string();
        let mut out = String::from(
            "# gatehouse-conform expectations: the verdicts this implementation is known to get\n\
             # (spec/verdicts.md). Written by --update-expectations; edit the reasons freely.\n",
        );
        if let Some(s) = &self.suite {
            out.push_str(&format!("suite = {}\n", q(s)));
        }
        for (id, e) in &self.scenarios {
            out.push_str(&format!(
                "\n[{}]\nsafety = {}\nexactness = {}\nreason = {}\n",
                q(id),
                q(e.safety.as_str()),
                q(e.exactness.as_str()),
                q(&e.reason)
            ));
        }
        out
    }

    /// The expectations this run gives: every scenario run whose verdicts are not both
    /// passed or skipped, with the reason `self` has for it or else the run's first
    /// (safety first) difference; scenarios `self` names that were not run but that the
    /// suite still has (`known`) are kept as they are.
    pub fn updated(
        &self,
        suite: &str,
        records: &[ScenarioRecord],
        known: &BTreeSet<String>,
    ) -> Expectations {
        let mut out = Expectations {
            suite: Some(suite.to_string()),
            scenarios: self
                .scenarios
                .iter()
                .filter(|(id, _)| known.contains(*id))
                .map(|(id, e)| (id.clone(), e.clone()))
                .collect(),
        };
        for r in records {
            out.scenarios.remove(&r.id);
            if ok(r.safety) && ok(r.exactness) {
                continue;
            }
            let reason = self
                .scenarios
                .get(&r.id)
                .map(|e| e.reason.clone())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| first_reason(r));
            out.scenarios.insert(
                r.id.clone(),
                Expected {
                    safety: r.safety,
                    exactness: r.exactness,
                    reason,
                },
            );
        }
        out
    }

    /// Compares the run's `records` with `self`; `known`: every scenario id of the
    /// suite (not only those selected), `suite`: the run's suite hash; `file`: the
    /// file's name as given.
    pub fn compare(
        &self,
        file: &str,
        suite: &str,
        records: &[ScenarioRecord],
        known: &BTreeSet<String>,
    ) -> Comparison {
        let mut c = Comparison {
            file: file.to_string(),
            suite: SuiteCheck {
                expected: self.suite.clone(),
                actual: suite.to_string(),
            },
            as_expected: 0,
            known_failures: 0,
            regressions: Vec::new(),
            unexpected_passes: Vec::new(),
            gone: self
                .scenarios
                .keys()
                .filter(|id| !known.contains(*id))
                .map(|id| {
                    format!("gone {id}: the file expects verdicts for a scenario the suite does not have (renamed or removed? update the file)")
                })
                .collect(),
        };
        let pass = Expected {
            safety: Outcome::Passed,
            exactness: Outcome::Passed,
            reason: String::new(),
        };
        for r in records {
            let named = self.scenarios.get(&r.id);
            let e = named.unwrap_or(&pass);
            let same = |want: Outcome, got: Outcome| norm(want) == norm(got);
            if same(e.safety, r.safety) && same(e.exactness, r.exactness) {
                c.as_expected += 1;
                if named.is_some() && !(ok(r.safety) && ok(r.exactness)) {
                    c.known_failures += 1;
                }
                continue;
            }
            let better =
                |want: Outcome, got: Outcome| same(want, got) || norm(got) == Outcome::Passed;
            let line = |kind: &str| {
                let reason = if e.reason.is_empty() {
                    String::new()
                } else {
                    format!(" [known: {}]", e.reason)
                };
                format!(
                    "{kind} {}: safety {} (expected {}), exactness {} (expected {}){reason}",
                    r.id,
                    r.safety.as_str(),
                    e.safety.as_str(),
                    r.exactness.as_str(),
                    e.exactness.as_str()
                )
            };
            if better(e.safety, r.safety) && better(e.exactness, r.exactness) {
                c.unexpected_passes.push(line("unexpected pass"));
            } else {
                // The new failure itself, not only the reason the file knew (which may be
                // another failure of the same scenario): the run's first difference.
                let now = r
                    .reason
                    .as_deref()
                    .map_or_else(String::new, |why| format!("; now: {why}"));
                c.regressions.push(format!("{}{now}", line("regression")));
            }
        }
        c
    }
}

/// `passed` and `skipped` are both "not failing" to the comparison.
fn norm(o: Outcome) -> Outcome {
    match o {
        Outcome::Skipped => Outcome::Passed,
        other => other,
    }
}

fn ok(o: Outcome) -> bool {
    norm(o) == Outcome::Passed
}

/// The first safety difference of a record, else its reason, on one line.
fn first_reason(r: &ScenarioRecord) -> String {
    let safety = r
        .steps
        .iter()
        .flat_map(|s| &s.differences)
        .find(|d| d.level == crate::verdict::Level::Safety)
        .map(|d| d.message.clone());
    let line = safety
        .or_else(|| r.reason.clone())
        .unwrap_or_default()
        .replace('\n', " ");
    if line.chars().count() > 200 {
        format!("{}...", line.chars().take(200).collect::<String>())
    } else {
        line
    }
}

enum Problem {
    Toml(String),
    Format(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: &str, safety: Outcome, exactness: Outcome) -> ScenarioRecord {
        ScenarioRecord {
            id: id.into(),
            path: String::new(),
            title: String::new(),
            requirements: Vec::new(),
            tier: crate::scenario::Tier::Decision,
            outcome: exactness,
            safety,
            exactness,
            reason: Some("why".into()),
            error_kind: None,
            stderr: Vec::new(),
            duration_ms: 0,
            steps: Vec::new(),
        }
    }

    #[test]
    fn a_written_file_reads_back_and_passes_the_same_run() {
        use Outcome::*;
        let run = vec![
            rec("gate/a", Passed, Failed),
            rec("gate/b", Passed, Passed),
            rec("gate/c", Failed, Failed),
            rec("gate/d", Skipped, Skipped),
        ];
        let known: BTreeSet<String> = ["gate/a", "gate/b", "gate/c", "gate/d", "gate/e"]
            .map(String::from)
            .into();
        let old = Expectations {
            suite: None,
            scenarios: [
                (
                    "gate/a".to_string(),
                    Expected {
                        safety: Passed,
                        exactness: Failed,
                        reason: "kept".into(),
                    },
                ),
                (
                    "gate/e".to_string(),
                    Expected {
                        safety: Failed,
                        exactness: Failed,
                        reason: "not run".into(),
                    },
                ),
                (
                    "gate/gone".to_string(),
                    Expected {
                        safety: Failed,
                        exactness: Failed,
                        reason: "x".into(),
                    },
                ),
            ]
            .into(),
        };
        let new = old.updated("sha256:ab", &run, &known);
        let text = new.render();
        let back = Expectations::parse(&text).ok().unwrap();
        assert_eq!(back, new);
        assert_eq!(
            back.scenarios.keys().collect::<Vec<_>>(),
            ["gate/a", "gate/c", "gate/e"]
        );
        assert_eq!(back.scenarios["gate/a"].reason, "kept");
        assert_eq!(back.scenarios["gate/c"].reason, "why");
        let c = back.compare("x.toml", "sha256:ab", &run, &known);
        assert!(c.success(), "{c:?}");
        assert_eq!((c.as_expected, c.known_failures), (4, 2));
        assert_eq!(c.suite.warning("x.toml"), None);

        let changed = vec![rec("gate/a", Failed, Failed), rec("gate/c", Passed, Passed)];
        let c = back.compare("x.toml", "sha256:cd", &changed, &known);
        assert_eq!(
            c.regressions,
            ["regression gate/a: safety failed (expected passed), exactness failed (expected failed) [known: kept]; now: why"]
        );
        assert_eq!(
            c.unexpected_passes,
            ["unexpected pass gate/c: safety passed (expected failed), exactness passed (expected failed) [known: why]"]
        );
        assert!(c.suite.warning("x.toml").unwrap().contains("sha256:ab"));

        let short: BTreeSet<String> = ["gate/a".to_string()].into();
        let c = back.compare("x.toml", "sha256:ab", &[], &short);
        assert_eq!(c.gone.len(), 2, "{c:?}");
        assert!(!c.success());
    }

    #[test]
    fn a_bad_file_is_refused_naming_the_key() {
        for (text, needle) in [
            (
                "[\"gate/a\"]\nsafety = \"fine\"\nexactness = \"passed\"\n",
                "`safety` = \"fine\"",
            ),
            ("[\"gate/a\"]\nsafety = \"passed\"\n", "`exactness` must be"),
            ("suite = 3\n", "suite"),
            (
                "[\"gate/a\"]\nsafety = \"passed\"\nexactness = \"passed\"\nwhy = \"x\"\n",
                "unknown key `why`",
            ),
        ] {
            match Expectations::parse(text) {
                Err(Problem::Format(m)) => assert!(m.contains(needle), "{m}"),
                _ => panic!("{text} was accepted"),
            }
        }
    }
}
