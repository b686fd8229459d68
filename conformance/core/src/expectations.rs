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
//!
//! An entry may also (PROTO-VERDICT-16) give a level `any` (every verdict but an error
//! or `not_shown`), pin the safety verdict of named steps (`steps = { connect = "failed"
//! }`: the step has a safety difference, or has none), and hold only for runs as root or
//! unprivileged (`when = "root"`): that is what a prediction about a third party's
//! known weaknesses needs, and what CI's files under `conformance/expectations/` use.

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

/// The verdict a level must get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// This verdict (`skipped` and `passed` the same).
    Is(Outcome),
    /// Any verdict but `errored` or `not_shown` (an error, or a skip that could hide a
    /// hole, is never expected unless written as such).
    Any,
}

impl Want {
    fn as_str(self) -> &'static str {
        match self {
            Want::Is(o) => o.as_str(),
            Want::Any => "any",
        }
    }

    /// Whether `got` meets it.
    fn met_by(self, got: Outcome) -> bool {
        match self {
            Want::Is(want) => norm(want) == norm(got),
            Want::Any => !matches!(got, Outcome::Errored | Outcome::NotShown),
        }
    }

    /// Whether `got` is better than it (or as good): passed where it wanted worse.
    fn no_worse(self, got: Outcome) -> bool {
        self.met_by(got) || norm(got) == Outcome::Passed
    }
}

/// For which runs an entry holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum When {
    /// Every run.
    #[default]
    Always,
    /// Runs whose effective uid is 0.
    Root,
    /// Runs whose effective uid is not 0.
    Unprivileged,
}

impl When {
    fn holds(self, root: bool) -> bool {
        match self {
            When::Always => true,
            When::Root => root,
            When::Unprivileged => !root,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            When::Always => "always",
            When::Root => "root",
            When::Unprivileged => "unprivileged",
        }
    }
}

/// One scenario's expected verdicts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The safety verdict.
    pub safety: Want,
    /// The exactness verdict.
    pub exactness: Want,
    /// One line saying why.
    pub reason: String,
    /// Named steps and the safety verdict each must get (`passed` or `failed`).
    pub steps: BTreeMap<String, Outcome>,
    /// For which runs the entry holds; for the others it is `any` at both levels.
    pub when: When,
}

impl Expected {
    /// Both levels passed, nothing else: what an unnamed scenario must get.
    fn pass() -> Self {
        Expected {
            safety: Want::Is(Outcome::Passed),
            exactness: Want::Is(Outcome::Passed),
            reason: String::new(),
            steps: BTreeMap::new(),
            when: When::Always,
        }
    }

    /// What a person wrote besides the verdicts (steps, `when`, `any`), which an update
    /// keeps.
    fn is_prediction(&self) -> bool {
        !self.steps.is_empty()
            || self.when != When::Always
            || self.safety == Want::Any
            || self.exactness == Want::Any
    }
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
            const VERDICTS: &str =
                "\"passed\", \"failed\", \"skipped\", \"errored\", \"not_shown\", \"any\"";
            let verdict = |k: &str| -> Result<Want, Problem> {
                let word = t.get(k).and_then(toml::Value::as_str).ok_or_else(|| {
                    Problem::Format(format!("{key:?}: `{k}` must be one of {VERDICTS}"))
                })?;
                if word == "any" {
                    return Ok(Want::Any);
                }
                outcome(word).map(Want::Is).ok_or_else(|| {
                    Problem::Format(format!(
                        "{key:?}: `{k}` = {word:?}: must be one of {VERDICTS}"
                    ))
                })
            };
            const KEYS: [&str; 5] = ["safety", "exactness", "reason", "steps", "when"];
            if let Some(extra) = t.keys().find(|k| !KEYS.contains(&k.as_str())) {
                return Err(Problem::Format(format!(
                    "{key:?}: unknown key `{extra}` (expected `safety`, `exactness`, `reason`, `steps`, `when`)"
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
            let when = match t.get("when").map(|v| (v, v.as_str())) {
                None => When::Always,
                Some((_, Some("root"))) => When::Root,
                Some((_, Some("unprivileged"))) => When::Unprivileged,
                Some((v, _)) => {
                    return Err(Problem::Format(format!(
                        "{key:?}: `when` = {v}: must be \"root\" or \"unprivileged\""
                    )))
                }
            };
            let mut steps = BTreeMap::new();
            match t.get("steps") {
                None => {}
                Some(toml::Value::Table(named)) => {
                    for (name, v) in named {
                        let o = match v.as_str() {
                            Some("passed") => Outcome::Passed,
                            Some("failed") => Outcome::Failed,
                            _ => {
                                return Err(Problem::Format(format!(
                                    "{key:?}: steps.{name} = {v}: a step's safety verdict is \"passed\" or \"failed\""
                                )))
                            }
                        };
                        steps.insert(name.clone(), o);
                    }
                }
                Some(other) => {
                    return Err(Problem::Format(format!(
                        "{key:?}: `steps` = {other}: expected a table of step names, e.g. steps = {{ connect = \"failed\" }}"
                    )))
                }
            }
            out.scenarios.insert(
                key.clone(),
                Expected {
                    safety: verdict("safety")?,
                    exactness: verdict("exactness")?,
                    reason,
                    steps,
                    when,
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
                "\n[{}]\nsafety = {}\nexactness = {}\n",
                q(id),
                q(e.safety.as_str()),
                q(e.exactness.as_str()),
            ));
            if !e.steps.is_empty() {
                let named: Vec<String> = e
                    .steps
                    .iter()
                    .map(|(n, o)| format!("{} = {}", step_key(n), q(o.as_str())))
                    .collect();
                out.push_str(&format!("steps = {{ {} }}\n", named.join(", ")));
            }
            if e.when != When::Always {
                out.push_str(&format!("when = {}\n", q(e.when.as_str())));
            }
            out.push_str(&format!("reason = {}\n", q(&e.reason)));
        }
        out
    }

    /// The expectations this run gives: every scenario run whose verdicts are not both
    /// passed or skipped, with the reason `self` has for it or else the run's first
    /// (safety first) difference; scenarios `self` names that were not run but that the
    /// suite still has (`known`) are kept as they are. What a person predicted (named
    /// steps, `when`, a level `any`) is kept as written: an entry that does not hold for
    /// this run (`root`: whether it runs as root) is kept unchanged, and a level `any`
    /// stays `any`.
    pub fn updated(
        &self,
        suite: &str,
        records: &[ScenarioRecord],
        known: &BTreeSet<String>,
        root: bool,
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
            let old = self.scenarios.get(&r.id);
            if old.is_some_and(|e| !e.when.holds(root)) {
                continue;
            }
            out.scenarios.remove(&r.id);
            let keep = |want: Option<Want>, got: Outcome| match want {
                Some(Want::Any) if Want::Any.met_by(got) => Want::Any,
                _ => Want::Is(got),
            };
            let e = Expected {
                safety: keep(old.map(|e| e.safety), r.safety),
                exactness: keep(old.map(|e| e.exactness), r.exactness),
                reason: old
                    .map(|e| e.reason.clone())
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| first_reason(r)),
                steps: old.map(|e| e.steps.clone()).unwrap_or_default(),
                when: old.map_or(When::Always, |e| e.when),
            };
            if ok(r.safety) && ok(r.exactness) && !e.is_prediction() {
                continue;
            }
            out.scenarios.insert(r.id.clone(), e);
        }
        out
    }

    /// Compares the run's `records` with `self`; `known`: every scenario id of the
    /// suite (not only those selected), `suite`: the run's suite hash; `file`: the
    /// file's name as given; `root`: whether the run is as root (for `when`).
    pub fn compare(
        &self,
        file: &str,
        suite: &str,
        records: &[ScenarioRecord],
        known: &BTreeSet<String>,
        root: bool,
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
        let pass = Expected::pass();
        let anything = Expected {
            safety: Want::Any,
            exactness: Want::Any,
            ..Expected::pass()
        };
        for r in records {
            let named = self.scenarios.get(&r.id);
            let e = match named {
                Some(e) if !e.when.holds(root) => &anything,
                Some(e) => e,
                None => &pass,
            };
            let reason = if e.reason.is_empty() {
                String::new()
            } else {
                format!(" [known: {}]", e.reason)
            };
            // The named steps first: each is its own line.
            let mut step_worse = false;
            for (name, want) in &e.steps {
                let got = r
                    .steps
                    .iter()
                    .find(|s| s.name.as_deref() == Some(name.as_str()))
                    .map(|s| {
                        if s.differences
                            .iter()
                            .any(|d| d.level == crate::verdict::Level::Safety)
                        {
                            Outcome::Failed
                        } else {
                            Outcome::Passed
                        }
                    });
                match (want, got) {
                    (_, None) => {
                        step_worse = true;
                        c.regressions.push(format!(
                            "regression {}#{name}: the step did not run (expected its safety {}){reason}; now: {}",
                            r.id,
                            want.as_str(),
                            r.reason.as_deref().unwrap_or("no such step")
                        ));
                    }
                    (w, Some(g)) if *w == g => {}
                    (Outcome::Failed, Some(_)) => c.unexpected_passes.push(format!(
                        "unexpected pass {}#{name}: safety passed (expected failed: a predicted weakness held){reason}",
                        r.id
                    )),
                    (_, Some(_)) => {
                        step_worse = true;
                        c.regressions.push(format!(
                            "regression {}#{name}: safety failed (expected passed){reason}",
                            r.id
                        ));
                    }
                }
            }
            if e.safety.met_by(r.safety) && e.exactness.met_by(r.exactness) {
                if !step_worse {
                    c.as_expected += 1;
                    if named.is_some() && !(ok(r.safety) && ok(r.exactness)) {
                        c.known_failures += 1;
                    }
                }
                continue;
            }
            let line = |kind: &str| {
                format!(
                    "{kind} {}: safety {} (expected {}), exactness {} (expected {}){reason}",
                    r.id,
                    r.safety.as_str(),
                    e.safety.as_str(),
                    r.exactness.as_str(),
                    e.exactness.as_str()
                )
            };
            if e.safety.no_worse(r.safety) && e.exactness.no_worse(r.exactness) {
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

/// A step name as a TOML key: bare when it can be.
fn step_key(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        name.to_string()
    } else {
        toml::Value::String(name.to_string()).to_string()
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
                        safety: Want::Is(Passed),
                        exactness: Want::Is(Failed),
                        reason: "kept".into(),
                        ..Expected::pass()
                    },
                ),
                (
                    "gate/e".to_string(),
                    Expected {
                        safety: Want::Is(Failed),
                        exactness: Want::Is(Failed),
                        reason: "not run".into(),
                        ..Expected::pass()
                    },
                ),
                (
                    "gate/gone".to_string(),
                    Expected {
                        safety: Want::Is(Failed),
                        exactness: Want::Is(Failed),
                        reason: "x".into(),
                        ..Expected::pass()
                    },
                ),
            ]
            .into(),
        };
        let new = old.updated("sha256:ab", &run, &known, true);
        let text = new.render();
        let back = Expectations::parse(&text).ok().unwrap();
        assert_eq!(back, new);
        assert_eq!(
            back.scenarios.keys().collect::<Vec<_>>(),
            ["gate/a", "gate/c", "gate/e"]
        );
        assert_eq!(back.scenarios["gate/a"].reason, "kept");
        assert_eq!(back.scenarios["gate/c"].reason, "why");
        let c = back.compare("x.toml", "sha256:ab", &run, &known, true);
        assert!(c.success(), "{c:?}");
        assert_eq!((c.as_expected, c.known_failures), (4, 2));
        assert_eq!(c.suite.warning("x.toml"), None);

        let changed = vec![rec("gate/a", Failed, Failed), rec("gate/c", Passed, Passed)];
        let c = back.compare("x.toml", "sha256:cd", &changed, &known, true);
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
        let c = back.compare("x.toml", "sha256:ab", &[], &short, true);
        assert_eq!(c.gone.len(), 2, "{c:?}");
        assert!(!c.success());
    }

    fn step(name: &str, unsafe_: bool) -> crate::record::StepRecord {
        use crate::verdict::{Difference, Level};
        let mut st = crate::record::StepRecord {
            index: 1,
            line: 1,
            name: Some(name.into()),
            request: serde_json::Value::Null,
            answer: serde_json::Value::Null,
            mismatches: Vec::new(),
            differences: Vec::new(),
            outcome: None,
            safety: None,
            requirements: Vec::new(),
            action: format!("run {name:?}"),
            pins: Vec::new(),
            why: None,
        };
        st.add(vec![Difference {
            level: if unsafe_ {
                Level::Safety
            } else {
                Level::Exactness
            },
            field: "decision".into(),
            message: format!("{name} differed"),
        }]);
        st
    }

    /// PROTO-VERDICT-16: `any`, named steps and `when`, as CI's predictions about a third
    /// party's weaknesses use them.
    #[test]
    fn predictions_pin_steps_allow_any_and_hold_for_a_uid() {
        use Outcome::*;
        let file = Expectations::parse(
            r#"
["fence/a"]
safety = "failed"
exactness = "any"
steps = { connect = "failed", "odd name" = "passed" }
reason = "socket open"

["fence/b"]
safety = "failed"
exactness = "failed"
when = "root"
reason = "remount as root"
"#,
        )
        .ok()
        .unwrap();
        let known: BTreeSet<String> = ["fence/a", "fence/b"].map(String::from).into();
        let mut a = rec("fence/a", Failed, Failed);
        a.steps = vec![step("connect", true), step("odd name", false)];
        let b = rec("fence/b", Failed, Failed);
        let c = file.compare("p.toml", "s", &[a.clone(), b.clone()], &known, true);
        assert!(c.success(), "{c:?}");
        assert_eq!((c.as_expected, c.known_failures), (2, 2));

        // The weakness held: the step passes safety, so does the scenario.
        let mut fixed = rec("fence/a", Passed, Failed);
        fixed.steps = vec![step("connect", false), step("odd name", false)];
        let c = file.compare("p.toml", "s", &[fixed], &known, true);
        assert_eq!(c.unexpected_passes.len(), 2, "{c:?}");
        assert!(c.unexpected_passes[0].contains("fence/a#connect"), "{c:?}");
        assert!(c.regressions.is_empty(), "{c:?}");

        // A step named that did not run, and one that must pass and failed.
        let mut other = rec("fence/a", Failed, Passed);
        other.steps = vec![step("odd name", true)];
        let c = file.compare("p.toml", "s", &[other], &known, true);
        assert_eq!(c.regressions.len(), 2, "{c:?}");
        assert!(c.regressions[0].contains("did not run"), "{c:?}");
        assert!(
            c.regressions[1].contains("odd name: safety failed"),
            "{c:?}"
        );

        // `any` is not an error, nor a skip that could hide a hole.
        let mut errored = rec("fence/a", Failed, Errored);
        errored.steps = a.steps.clone();
        let c = file.compare("p.toml", "s", &[errored], &known, true);
        assert_eq!(c.regressions.len(), 1, "{c:?}");

        // `when = "root"` holds only as root; unprivileged, anything but an error goes.
        let c = file.compare(
            "p.toml",
            "s",
            &[rec("fence/b", Passed, Passed)],
            &known,
            true,
        );
        assert_eq!(c.unexpected_passes.len(), 1, "{c:?}");
        let c = file.compare(
            "p.toml",
            "s",
            &[rec("fence/b", Passed, Passed)],
            &known,
            false,
        );
        assert!(c.success(), "{c:?}");
        let c = file.compare(
            "p.toml",
            "s",
            &[rec("fence/b", Errored, Errored)],
            &known,
            false,
        );
        assert!(!c.success(), "{c:?}");

        // An update keeps what a person predicted, and writes what reads back.
        let new = file.updated("sha256:s", &[a, b], &known, true);
        assert_eq!(new.scenarios["fence/a"].exactness, Want::Any);
        assert_eq!(new.scenarios["fence/a"].steps.len(), 2);
        assert_eq!(new.scenarios["fence/b"].when, When::Root);
        let back = Expectations::parse(&new.render()).ok().unwrap();
        assert_eq!(back, new);
        // Passing at both levels, a prediction stays (its steps still say something).
        let mut passing = rec("fence/a", Passed, Passed);
        passing.steps = vec![step("connect", false)];
        let kept = file.updated("sha256:s", &[passing], &known, true);
        assert!(kept.scenarios.contains_key("fence/a"));
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
            (
                "[\"gate/a\"]\nsafety = \"any\"\nexactness = \"any\"\nwhen = \"always\"\n",
                "`when` = \"always\"",
            ),
            (
                "[\"gate/a\"]\nsafety = \"any\"\nexactness = \"any\"\nsteps = { x = \"skipped\" }\n",
                "steps.x",
            ),
            (
                "[\"gate/a\"]\nsafety = \"any\"\nexactness = \"any\"\nsteps = [\"x\"]\n",
                "a table of step names",
            ),
        ] {
            match Expectations::parse(text) {
                Err(Problem::Format(m)) => assert!(m.contains(needle), "{m}"),
                _ => panic!("{text} was accepted"),
            }
        }
    }
}
