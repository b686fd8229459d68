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
    Counts, FieldCount, Headline, InputFailure, InvalidFile, Outcome, RunRecord, RunnerInfo,
    SafetyFailure, SafetyGroup, ScenarioRecord, StepRecord, Verdicts,
};
use crate::verdict::Level;

/// The formats a run can be rendered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    let safety_groups = groups(&scenarios);
    let mut record = RunRecord {
        verdict: Headline::default(),
        runner,
        environment,
        verdicts,
        level: Level::Exactness,
        expectations: None,
        mode: None,
        safety_failures,
        safety_groups,
        exactness_fields,
        scenarios,
        invalid,
        requirements,
        summary,
    };
    record.verdict = headline(&record);
    record
}

/// Fills the chapter and the one-line statement of each group's requirement from the
/// spec (a requirement the spec does not define keeps neither).
pub fn describe(record: &mut RunRecord, spec: &crate::spec::SpecIndex) {
    for g in &mut record.safety_groups {
        let id = crate::spec::split_part(&g.requirement).0;
        if let Some(req) = spec.requirements.get(id) {
            g.chapter = Some(req.chapter.clone());
            g.statement = Some(req.statement(160)).filter(|s| !s.is_empty());
        }
    }
}

/// What a step pins, for grouping: its `pins`, else a case's own requirements, else the
/// file's.
fn pinned_by(sc: &ScenarioRecord, st: &StepRecord) -> Vec<String> {
    let ids = if !st.pins.is_empty() {
        &st.pins
    } else if !st.requirements.is_empty() {
        &st.requirements
    } else {
        &sc.requirements
    };
    let mut out: Vec<String> = Vec::new();
    for id in ids {
        let id = crate::spec::split_part(id).0.to_string();
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// A difference's message without the step's label (`case 2 (decide "ls"): `).
pub fn happened<'a>(st: &StepRecord, message: &'a str) -> &'a str {
    ["case", "step"]
        .iter()
        .find_map(|what| message.strip_prefix(&format!("{what} {} ({}): ", st.index, st.action)))
        .unwrap_or(message)
}

/// What the first pin of a step that says `why` weighs against the 60 shared by the pins
/// of any other step: more than every other step of a large suite together.
const WHY_WEIGHT: usize = 60 * 1000;

/// The safety differences grouped by what failed: each distinct input (the action and
/// what happened) once, with every scenario it failed in and the first `why` of its
/// steps, under the requirement its failures pin most (a step's pins share its weight,
/// and the first pin of a step that says `why` outweighs the rest; the others are listed
/// as `also`); groups with the most scenarios first.
pub fn groups(scenarios: &[ScenarioRecord]) -> Vec<SafetyGroup> {
    struct Acc {
        input: InputFailure,
        pins: Vec<(String, usize)>,
    }
    let mut inputs: Vec<Acc> = Vec::new();
    for sc in scenarios {
        for st in &sc.steps {
            for d in st.differences.iter().filter(|d| d.level == Level::Safety) {
                let what = happened(st, &d.message);
                let at = format!("{}:{}", sc.path, st.line);
                let i = match inputs
                    .iter()
                    .position(|a| a.input.input == st.action && a.input.happened == what)
                {
                    Some(i) => i,
                    None => {
                        inputs.push(Acc {
                            input: InputFailure {
                                input: st.action.clone(),
                                happened: what.to_string(),
                                why: None,
                                scenarios: Vec::new(),
                                at: Vec::new(),
                                also: Vec::new(),
                            },
                            pins: Vec::new(),
                        });
                        inputs.len() - 1
                    }
                };
                let acc = &mut inputs[i];
                if acc.input.why.is_none() {
                    acc.input.why = st.why.clone();
                }
                if acc.input.scenarios.contains(&sc.id) {
                    continue;
                }
                acc.input.scenarios.push(sc.id.clone());
                acc.input.at.push(at);
                // A step that pins one requirement says more than one that pins five; the
                // first pin of a step that says why is the requirement that explains it.
                let pins = pinned_by(sc, st);
                let weight = 60 / pins.len().clamp(1, 60);
                for (n, id) in pins.into_iter().enumerate() {
                    let w = if n == 0 && st.why.is_some() {
                        WHY_WEIGHT
                    } else {
                        weight
                    };
                    match acc.pins.iter_mut().find(|(p, _)| *p == id) {
                        Some((_, total)) => *total += w,
                        None => acc.pins.push((id, w)),
                    }
                }
            }
        }
    }
    let mut groups: Vec<SafetyGroup> = Vec::new();
    for mut acc in inputs {
        // The requirement most of its failures pin; the first named on a tie.
        let best = acc
            .pins
            .iter()
            .enumerate()
            .max_by(|(i, a), (j, b)| a.1.cmp(&b.1).then(j.cmp(i)))
            .map(|(_, (id, _))| id.clone())
            .unwrap_or_else(|| "(no requirement)".to_string());
        acc.input.also = acc
            .pins
            .iter()
            .map(|(id, _)| id.clone())
            .filter(|id| *id != best)
            .collect();
        match groups.iter_mut().find(|g| g.requirement == best) {
            Some(g) => g.inputs.push(acc.input),
            None => groups.push(SafetyGroup {
                requirement: best,
                chapter: None,
                statement: None,
                inputs: vec![acc.input],
            }),
        }
    }
    let reach = |g: &SafetyGroup| {
        let mut ids: Vec<&String> = g.inputs.iter().flat_map(|i| &i.scenarios).collect();
        ids.sort();
        ids.dedup();
        ids.len()
    };
    for g in &mut groups {
        // Stable: equal inputs keep the run's order.
        g.inputs
            .sort_by_key(|i| std::cmp::Reverse(i.scenarios.len()));
    }
    groups.sort_by_cached_key(|g| std::cmp::Reverse(reach(g)));
    groups
}

/// The verdict lines every report begins with: safety, exactness and, with
/// `--expectations`, the comparison; each starts with its level and says passed or failed.
pub fn headline(r: &RunRecord) -> Headline {
    let failed = |c: &Counts| c.failed + c.errored + c.not_shown > 0;
    let counts = |c: &Counts| {
        let mut parts = vec![
            format!("{} failed", c.failed),
            format!("{} errored", c.errored),
        ];
        if c.not_shown > 0 {
            parts.push(format!("{} not shown safe", c.not_shown));
        }
        parts.push(format!("{} passed", c.passed));
        parts.push(format!("{} skipped", c.skipped));
        parts.join(", ")
    };
    let word = |f: bool| if f { "FAILED" } else { "passed" };
    let (s, x) = (&r.verdicts.safety, &r.verdicts.exactness);
    let inputs: usize = r.safety_groups.iter().map(|g| g.inputs.len()).sum();
    let holes = if inputs > 0 {
        format!(
            "; {inputs} failing input(s) under {} requirement(s)",
            r.safety_groups.len()
        )
    } else {
        String::new()
    };
    let judged = match (&r.expectations, r.level) {
        (Some(_), _) => "",
        (None, Level::Safety) => " (not judged: --level safety)",
        (None, Level::Exactness) => "",
    };
    let mut lines = vec![
        format!("safety:       {}  {}{holes}", word(failed(s)), counts(s)),
        format!("exactness:    {}  {}{judged}", word(failed(x)), counts(x)),
    ];
    let mut met = None;
    if let Some(e) = &r.expectations {
        let ok = e.success();
        met = Some(if ok { "met" } else { "not_met" }.to_string());
        lines.push(format!(
            "expectations: {}  {} regression(s), {} newly passing, {} gone; {} as expected ({} known failure(s)) in {}",
            if ok { "met" } else { "NOT MET" },
            e.regressions.len(),
            e.unexpected_passes.len(),
            e.gone.len(),
            e.as_expected,
            e.known_failures,
            e.file
        ));
    }
    Headline {
        safety: if failed(s) { "failed" } else { "passed" }.to_string(),
        exactness: if failed(x) { "failed" } else { "passed" }.to_string(),
        expectations: met,
        lines,
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

/// With `--expectations`: the warning when the file was made against another suite, then
/// every line that fails the comparison (regressions, newly passing, gone), in order.
pub fn comparison_lines(r: &RunRecord) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(e) = &r.expectations {
        out.extend(e.suite.warning(&e.file));
        out.extend(e.lines().cloned());
    }
    out
}

/// How progress is printed on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressStyle {
    /// On a terminal outside CI: `[n/total] TAG id (ms)`, as it always was.
    Terminal,
    /// Without a terminal or under CI (`CI` set): one plain line per finished scenario,
    /// as nextest prints in CI (`PASS  gate/foo  (0.4 s)`, `FAIL  safety  fence/bar  (1.2
    /// s): <first safety difference>`), so that a CI log shows the run going.
    Lines,
    /// `--quiet`: nothing.
    Off,
}

/// The progress wanted: terminal lines on a terminal outside CI, plain lines without a
/// terminal or under CI, none with `--quiet`. The caller passes what it observed, so
/// that tests decide.
pub fn progress_style(
    stderr_is_terminal: bool,
    ci: Option<&std::ffi::OsStr>,
    quiet: bool,
) -> ProgressStyle {
    match () {
        _ if quiet => ProgressStyle::Off,
        _ if stderr_is_terminal && ci.is_none() => ProgressStyle::Terminal,
        _ => ProgressStyle::Lines,
    }
}

/// Prints one line per finished scenario to a writer (stderr in the binary).
pub struct Progress<W: Write> {
    out: W,
    style: ProgressStyle,
    total: usize,
    done: usize,
    current: String,
}

impl<W: Write> Progress<W> {
    /// A progress reporter writing to `out` in `style`.
    pub fn new(out: W, style: ProgressStyle) -> Self {
        Progress {
            out,
            style,
            total: 0,
            done: 0,
            current: String::new(),
        }
    }

    /// The writer, back (for tests).
    #[cfg(test)]
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// The plain line of a finished scenario: `PASS  gate/foo  (0.4 s)`, `FAIL  safety
/// fence/bar  (1.2 s): <first safety difference>`, `FAIL  exactness ...: <first
/// difference>`, `SKIP`, `ERROR`, `UNSHOWN` with their reason.
pub fn plain_line(record: &ScenarioRecord) -> String {
    let secs = format!("({:.1} s)", record.duration_ms as f64 / 1000.0);
    let first_safety = record
        .steps
        .iter()
        .flat_map(|st| &st.differences)
        .find(|d| d.level == Level::Safety)
        .map(|d| d.message.clone());
    let (tag, why) = match record.outcome {
        _ if record.safety == Outcome::Failed => (
            "FAIL  safety   ",
            first_safety.or_else(|| record.reason.clone()),
        ),
        _ if record.safety == Outcome::NotShown => ("UNSHOWN        ", record.reason.clone()),
        Outcome::Passed => ("PASS           ", None),
        Outcome::Failed => ("FAIL  exactness", record.reason.clone()),
        Outcome::Skipped => ("SKIP           ", record.reason.clone()),
        Outcome::Errored | Outcome::NotShown => ("ERROR          ", record.reason.clone()),
    };
    let why = why.map(|w| format!(": {w}")).unwrap_or_default();
    format!("{tag} {}  {secs}{why}", record.id)
}

impl<W: Write> Reporter for Progress<W> {
    fn event(&mut self, event: &Event<'_>) {
        if self.style == ProgressStyle::Off {
            return;
        }
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
            Event::ScenarioFinished { record } if self.style == ProgressStyle::Lines => {
                writeln!(self.out, "{}", plain_line(record))
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
        if self.style == ProgressStyle::Lines {
            // A pipe is block-buffered by nobody here, but say it: each line as it ends.
            let _ = self.out.flush();
        }
    }
}

#[cfg(test)]
mod tests;
