//! The report views, all derived from the canonical [`RunRecord`]: human, JSON, JUnit and
//! Markdown; plus the progress reporter that prints a line per finished scenario, on a
//! terminal only.

mod human;
mod json;
mod junit;
mod markdown;

use std::collections::BTreeMap;
use std::io::Write;

use crate::events::{Event, Reporter};
use crate::protocol::Hello;
use crate::record::{
    Counts, FieldCount, InvalidFile, Outcome, RunRecord, RunnerInfo, SafetyFailure, ScenarioRecord,
    Verdicts,
};
use crate::verdict::Level;

/// The formats a run can be rendered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Failures in detail, per-requirement summary, totals.
    Human,
    /// The canonical JSON document.
    Json,
    /// JUnit XML: one testsuite per scenario folder, one testcase per scenario.
    Junit,
    /// A Markdown table.
    Markdown,
}

/// Renders `record` in `format`; `verbose` adds the per-requirement table to the human
/// view (the other views always carry everything).
pub fn render(record: &RunRecord, format: Format, verbose: bool) -> String {
    match format {
        Format::Human => human::render(record, verbose),
        Format::Json => json::render(record),
        Format::Junit => junit::render(record),
        Format::Markdown => markdown::render(record),
    }
}

/// Assembles the canonical record: per-requirement counts and the summary.
pub fn assemble(
    runner: RunnerInfo,
    environment: Hello,
    scenarios: Vec<ScenarioRecord>,
    invalid: Vec<InvalidFile>,
) -> RunRecord {
    let mut summary = Counts::default();
    let mut verdicts = Verdicts::default();
    let mut requirements: BTreeMap<String, Counts> = BTreeMap::new();
    for s in &scenarios {
        summary.add(s.outcome);
        verdicts.safety.add(s.safety);
        verdicts.exactness.add(s.exactness);
        for id in &s.requirements {
            requirements.entry(id.clone()).or_default().add(s.outcome);
        }
        for step in &s.steps {
            if let Some(outcome) = step.outcome {
                for id in step
                    .requirements
                    .iter()
                    .filter(|id| !s.requirements.contains(id))
                {
                    requirements.entry(id.clone()).or_default().add(outcome);
                }
            }
        }
    }
    let mut safety_failures = Vec::new();
    let mut exactness_fields: BTreeMap<String, FieldCount> = BTreeMap::new();
    for s in &scenarios {
        let mut fields = std::collections::BTreeSet::new();
        for st in &s.steps {
            for d in &st.differences {
                match d.level {
                    Level::Safety => safety_failures.push(SafetyFailure {
                        scenario: s.id.clone(),
                        at: format!("{}:{}", s.path, st.line),
                        input: input(&st.request),
                        field: d.field.clone(),
                        message: d.message.clone(),
                    }),
                    Level::Exactness => {
                        let f = exactness_fields.entry(d.field.clone()).or_default();
                        f.differences += 1;
                        if fields.insert(d.field.clone()) {
                            f.scenarios += 1;
                        }
                    }
                }
            }
        }
    }
    RunRecord {
        runner,
        environment,
        verdicts,
        level: Level::Exactness,
        expectations: None,
        safety_failures,
        exactness_fields,
        scenarios,
        invalid,
        requirements,
        summary,
    }
}

/// A request as one line of JSON, without its id and session.
fn input(request: &serde_json::Value) -> String {
    let mut r = request.clone();
    if let Some(o) = r.as_object_mut() {
        o.remove("id");
        o.remove("session");
    }
    r.to_string()
}

/// The exactness fields, most frequent first.
pub fn fields_by_count(r: &RunRecord) -> Vec<(&String, &FieldCount)> {
    let mut v: Vec<_> = r.exactness_fields.iter().collect();
    v.sort_by(|a, b| b.1.differences.cmp(&a.1.differences).then(a.0.cmp(b.0)));
    v
}

/// The lines that end a report: the verdicts at each level and what the run is judged
/// on; then, with `--expectations`, the comparison's warning and failing lines.
pub fn verdict_lines(r: &RunRecord) -> Vec<String> {
    let c = |c: &Counts| {
        let unshown = if c.not_shown > 0 {
            format!(", {} not shown safe", c.not_shown)
        } else {
            String::new()
        };
        format!(
            "{} passed, {} failed, {} skipped, {} errored{unshown}",
            c.passed, c.failed, c.skipped, c.errored
        )
    };
    let judged = match (&r.expectations, r.level) {
        (Some(e), _) => format!("judged against the expectations in {}", e.file),
        (None, Level::Safety) => "judged on safety (--level safety)".to_string(),
        (None, Level::Exactness) => "judged on exactness".to_string(),
    };
    let mut out = vec![format!(
        "verdicts: safety {}; exactness {}; {judged}",
        c(&r.verdicts.safety),
        c(&r.verdicts.exactness)
    )];
    if let Some(e) = &r.expectations {
        out.extend(e.suite.warning(&e.file));
        out.push(format!(
            "expectations: {} scenario(s) as expected ({} known failure(s)), {} regression(s), {} unexpected pass(es), {} gone",
            e.as_expected,
            e.known_failures,
            e.regressions.len(),
            e.unexpected_passes.len(),
            e.gone.len()
        ));
        out.extend(e.lines().cloned());
    }
    out
}

/// Whether progress lines are wanted: only on a terminal, never under CI (`CI` set), never
/// with `--quiet`. The caller passes what it observed, so that tests decide.
pub fn progress_wanted(
    stderr_is_terminal: bool,
    ci: Option<&std::ffi::OsStr>,
    quiet: bool,
) -> bool {
    stderr_is_terminal && ci.is_none() && !quiet
}

/// Prints one line per finished scenario to a writer (stderr in the binary).
pub struct Progress<W: Write> {
    out: W,
    total: usize,
    done: usize,
    current: String,
}

impl<W: Write> Progress<W> {
    /// A progress reporter writing to `out`.
    pub fn new(out: W) -> Self {
        Progress {
            out,
            total: 0,
            done: 0,
            current: String::new(),
        }
    }
}

impl<W: Write> Reporter for Progress<W> {
    fn event(&mut self, event: &Event<'_>) {
        let _ = match event {
            Event::RunStarted { environment, total } => {
                self.total = *total;
                writeln!(
                    self.out,
                    "running {total} scenario(s) against {} {} (protocol {})",
                    environment.name, environment.version, environment.protocol
                )
            }
            Event::ScenarioStarted { id } => {
                self.done += 1;
                self.current = id.to_string();
                Ok(())
            }
            Event::ScenarioFinished { record } => {
                let tag = match record.outcome {
                    _ if record.safety == Outcome::Failed => "FAIL!",
                    _ if record.safety == Outcome::NotShown => "UNSHOWN",
                    Outcome::Passed => "PASS ",
                    Outcome::Failed => "FAIL ",
                    Outcome::Skipped => "SKIP ",
                    Outcome::Errored | Outcome::NotShown => "ERROR",
                };
                let why = record
                    .reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default();
                let why = if record.outcome == Outcome::Passed {
                    String::new()
                } else {
                    why
                };
                let (n, total, id) = (self.done, self.total, &self.current);
                writeln!(
                    self.out,
                    "[{n}/{total}] {tag} {id} ({} ms){why}",
                    record.duration_ms
                )
            }
            Event::RunFinished { record } => {
                let c = record.summary;
                writeln!(
                    self.out,
                    "done: {} passed, {} failed, {} skipped, {} errored",
                    c.passed, c.failed, c.skipped, c.errored
                )
            }
        };
    }
}

#[cfg(test)]
mod tests;
