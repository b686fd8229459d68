//! The canonical run record: what the JSON report serializes and every other view is
//! derived from (environment header, one record per scenario and step, counts, summary).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::protocol::Hello;
use crate::scenario::Tier;
use crate::verdict::{Difference, Level};

/// The outcome of a scenario, or of one case of a table scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every expectation held.
    Passed,
    /// Platform mismatch, missing capability or an `unsupported` answer.
    Skipped,
    /// An expectation did not hold.
    Failed,
    /// An `error` answer, a crash, a timeout or garbage.
    Errored,
    /// Safety only: the scenario was skipped because the implementation answered a field
    /// or a step it needs `unsupported`, so nothing shows it safe (PROTO-OBSERVE-6). Not a
    /// pass: it fails the run unless an expectations file names it.
    NotShown,
}

impl Outcome {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Skipped => "skipped",
            Outcome::Failed => "failed",
            Outcome::Errored => "errored",
            Outcome::NotShown => "not_shown",
        }
    }
}

/// How many scenarios ended each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Skipped.
    pub skipped: usize,
    /// Errored.
    pub errored: usize,
    /// Not shown safe (safety counts only): skipped on an `unsupported` answer; left
    /// out of a report where it is 0, as in reports older than it.
    #[serde(skip_serializing_if = "is_zero")]
    pub not_shown: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Counts {
    /// Counts one more `outcome`.
    pub fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Passed => self.passed += 1,
            Outcome::Failed => self.failed += 1,
            Outcome::Skipped => self.skipped += 1,
            Outcome::Errored => self.errored += 1,
            Outcome::NotShown => self.not_shown += 1,
        }
    }
}

/// One request sent and what came back.
#[derive(Debug, Clone, Serialize)]
pub struct StepRecord {
    /// 1-based index of the step or case in its file.
    pub index: usize,
    /// 1-based line of its `[[case]]` or `[[step]]` header.
    pub line: usize,
    /// Its name, if any.
    pub name: Option<String>,
    /// The request as sent (without its id).
    pub request: Value,
    /// The answer object, or `null` when none came.
    pub answer: Value,
    /// What did not hold (the messages of `differences`, in order).
    pub mismatches: Vec<String>,
    /// What did not hold, each with its level and field (`spec/verdicts.md`).
    pub differences: Vec<Difference>,
    /// For a case of a table scenario: how that case ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// For a case of a table scenario: its safety verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub safety: Option<Outcome>,
    /// For a case: the requirements it adds to the file's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requirements: Vec<String>,
    /// The action as messages name it (`decide "git status"`).
    pub action: String,
    /// What the entry says it pins (`pins`), when it says.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pins: Vec<String>,
    /// Why it expects what it does (the entry's `why`), when written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl StepRecord {
    /// The record of `step` sending `request`, before its answer.
    pub fn new(step: &crate::scenario::Step, request: Value) -> Self {
        StepRecord {
            index: step.index,
            line: step.line,
            name: step.name.clone(),
            request,
            answer: Value::Null,
            mismatches: Vec::new(),
            differences: Vec::new(),
            outcome: None,
            safety: None,
            requirements: Vec::new(),
            action: step.action.label(),
            pins: step.pins.clone(),
            why: step.why.clone(),
        }
    }

    /// Adds `more` to the differences and their messages to the mismatches.
    pub fn add(&mut self, more: Vec<Difference>) {
        self.mismatches
            .extend(more.iter().map(|d| d.message.clone()));
        self.differences.extend(more);
    }
}

/// One scenario's result.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioRecord {
    /// `gate/read-list`.
    pub id: String,
    /// The scenario file, as displayed (`scenarios/gate/read-list.toml`).
    pub path: String,
    /// Its title.
    pub title: String,
    /// The file-level requirement IDs.
    pub requirements: Vec<String>,
    /// The tier.
    pub tier: Tier,
    /// How it ended, judged on every field: the exactness verdict (kept under this name
    /// for the readers of earlier reports).
    pub outcome: Outcome,
    /// The safety verdict: only the safety differences fail it (`spec/verdicts.md`).
    pub safety: Outcome,
    /// The exactness verdict: every difference fails it; always equal to `outcome`.
    pub exactness: Outcome,
    /// Why it was skipped or errored (`crashed: ...`), or its first mismatch.
    pub reason: Option<String>,
    /// For errored: `error`, `crashed`, `timeout`, `garbage`, `start` or `fixture`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    /// The implementation's last stderr lines, when it errored.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stderr: Vec<String>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Every request sent.
    pub steps: Vec<StepRecord>,
}

/// A scenario file that could not be loaded.
#[derive(Debug, Clone, Serialize)]
pub struct InvalidFile {
    /// The problem, `file:line:col: message`.
    pub message: String,
}

/// Who ran.
#[derive(Debug, Clone, Serialize)]
pub struct RunnerInfo {
    /// `gatehouse-conform`.
    pub name: String,
    /// The runner's version.
    pub version: String,
    /// The protocol version it speaks.
    pub protocol: String,
    /// The implementation command.
    pub implementation: String,
    /// `--impl` as given (`None`: the reference was located by the runner).
    pub impl_arg: Option<String>,
    /// The command line this run was started with, as its words, without what selects
    /// scenarios or places the report (`--filter`, `--exclude`, `--tier`, `--format`,
    /// `--out`, `--json-out`, `--record-wire`, `--quiet`); the program is the runner's
    /// own path. Empty when unknown (then the rerun line names `gatehouse-conform`).
    #[serde(skip)]
    pub invocation: Vec<String>,
    /// Which suite judged: the spec version and a hash of the scenarios and the spec.
    pub suite: crate::identity::SuiteId,
    /// The runner's host os.
    pub host_os: String,
    /// Wall time of the run in milliseconds.
    pub duration_ms: u64,
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub struct RunRecord {
    /// The run's verdict, first: what a reader looks at before anything else (filled by
    /// `report::assemble` and again when the expectations are compared).
    pub verdict: Headline,
    /// Who ran.
    pub runner: RunnerInfo,
    /// The implementation's hello answer.
    pub environment: Hello,
    /// The verdicts over scenarios, at each level.
    pub verdicts: Verdicts,
    /// The level the run passes or fails on (`--level`).
    pub level: Level,
    /// The comparison with `--expectations`, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expectations: Option<Comparison>,
    /// How the run selected and judged its scenarios (PROTO-CERT-3): set by `run`; absent
    /// from reports older than it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<RunMode>,
    /// Every safety difference, first: the scenario, the step, its input and what
    /// happened.
    pub safety_failures: Vec<SafetyFailure>,
    /// The same safety differences grouped by what failed: per requirement, each
    /// distinct input once with the scenarios it broke (`report::groups`).
    pub safety_groups: Vec<SafetyGroup>,
    /// The exactness differences (those not of level safety), counted per field.
    pub exactness_fields: BTreeMap<String, FieldCount>,
    /// Every scenario run, in order.
    pub scenarios: Vec<ScenarioRecord>,
    /// Scenario files that could not be loaded.
    pub invalid: Vec<InvalidFile>,
    /// Outcomes per requirement ID.
    pub requirements: BTreeMap<String, Counts>,
    /// Outcomes over scenarios (the exactness verdicts, as before there were two).
    pub summary: Counts,
}

/// How a run selected and judged its scenarios (`spec/verdicts.md`, PROTO-CERT-3): what a
/// certified run must leave empty, recorded so that a report says whether it can certify.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunMode {
    /// Whether the run is the fixed mode of a certified result: the whole suite (no
    /// filter, exclusion or tier), its verdicts not judged against a file it wrote.
    pub fixed: bool,
    /// `--filter` patterns given.
    pub filter: Vec<String>,
    /// `--exclude` patterns given.
    pub exclude: Vec<String>,
    /// `--tier`, when given.
    pub tier: Option<Tier>,
    /// `--level`.
    pub level: Level,
    /// `--expectations`, as given.
    pub expectations: Option<String>,
    /// How many entries it holds.
    pub expectation_entries: usize,
    /// Whether `--update-expectations` wrote the file the run was compared with.
    pub update_expectations: bool,
}

impl RunMode {
    /// The mode of a run with these selections; `fixed` follows from them.
    pub fn new(
        filter: Vec<String>,
        exclude: Vec<String>,
        tier: Option<Tier>,
        level: Level,
        expectations: Option<(String, usize)>,
        update_expectations: bool,
    ) -> Self {
        let fixed =
            filter.is_empty() && exclude.is_empty() && tier.is_none() && !update_expectations;
        let (file, entries) = match expectations {
            Some((f, n)) => (Some(f), n),
            None => (None, 0),
        };
        RunMode {
            fixed,
            filter,
            exclude,
            tier,
            level,
            expectations: file,
            expectation_entries: entries,
            update_expectations,
        }
    }
}

/// The verdict at `level` of something that ended with `end` (its outcome over every
/// field: passed, failed, skipped or errored) and the given differences: at exactness
/// it is `end`; at safety only the safety differences fail it, and a scenario that
/// errored with a safety difference has failed safety.
pub fn verdict(level: Level, end: Outcome, differences: &[&Difference]) -> Outcome {
    let failed = differences
        .iter()
        .any(|d| level == Level::Exactness || d.level == Level::Safety);
    match end {
        // As `outcome` has it: an error is an error first, unless safety failed.
        Outcome::Errored if level == Level::Exactness => Outcome::Errored,
        _ if failed => Outcome::Failed,
        Outcome::Failed => Outcome::Passed,
        other => other,
    }
}

/// The suite hashes of the file and of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SuiteCheck {
    /// The file's `suite`, if it has one.
    pub expected: Option<String>,
    /// The run's.
    pub actual: String,
}

impl SuiteCheck {
    /// The warning when the file was made against another suite (or names none).
    pub fn warning(&self, file: &str) -> Option<String> {
        match &self.expected {
            Some(e) if *e == self.actual => None,
            Some(e) => Some(format!(
                "warning: {file} was made against suite {e}; this run's suite is {}: the verdicts are compared all the same (a scenario the suite no longer has fails the run)",
                self.actual
            )),
            None => Some(format!(
                "warning: {file} names no suite; this run's suite is {}",
                self.actual
            )),
        }
    }
}

/// A run compared with an expectations file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// The file, as given.
    pub file: String,
    /// The suite hashes.
    pub suite: SuiteCheck,
    /// Scenarios whose verdicts were as expected.
    pub as_expected: usize,
    /// Of those, the ones that failed or errored as the file says.
    pub known_failures: usize,
    /// A verdict worse than expected, one line each.
    pub regressions: Vec<String>,
    /// A verdict better than expected and none worse, one line each.
    pub unexpected_passes: Vec<String>,
    /// Scenario ids of the file the suite does not have, one line each.
    pub gone: Vec<String>,
}

impl Comparison {
    /// Whether the run is as expected.
    pub fn success(&self) -> bool {
        self.regressions.is_empty() && self.unexpected_passes.is_empty() && self.gone.is_empty()
    }

    /// Every line that fails the run: regressions, unexpected passes, scenarios gone.
    pub fn lines(&self) -> impl Iterator<Item = &String> {
        self.regressions
            .iter()
            .chain(&self.unexpected_passes)
            .chain(&self.gone)
    }
}

/// One safety difference, with what the person needs to see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SafetyFailure {
    /// The scenario id.
    pub scenario: String,
    /// `path:line` of its step or case.
    pub at: String,
    /// The request as sent (without its id and session), one line of JSON.
    pub input: String,
    /// The field.
    pub field: String,
    /// What happened: the mismatch.
    pub message: String,
}

/// The run's verdict in a few words, at each level.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Headline {
    /// `passed` or `failed` (not shown safe and errored count as failed).
    pub safety: String,
    /// `passed` or `failed`.
    pub exactness: String,
    /// With `--expectations`: `met` or `not_met`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expectations: Option<String>,
    /// The verdict lines every report begins with.
    pub lines: Vec<String>,
}

/// Safety failures that share a requirement: each distinct input once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SafetyGroup {
    /// The requirement ID the failures pin (`GATE-READ-3`), or the file's requirements
    /// joined when the step says nothing more precise.
    pub requirement: String,
    /// Its chapter (`approval-gate`), when the spec was at hand.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chapter: Option<String>,
    /// Its first sentence, when the spec was at hand.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statement: Option<String>,
    /// The distinct failing inputs, most scenarios first.
    pub inputs: Vec<InputFailure>,
}

/// One input that failed safety, with every scenario it failed in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputFailure {
    /// The action as messages name it (`decide "git status"`).
    pub input: String,
    /// What happened, without the step's label (`decision: expected ask, got allow`).
    pub happened: String,
    /// Why the scenario expects what it does, where one says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The scenarios it failed in, in run order, each once.
    pub scenarios: Vec<String>,
    /// `path:line` of each failure, in the order of `scenarios`.
    pub at: Vec<String>,
    /// Other requirements the same failures pin.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
}

/// How often a field differed at the exactness level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FieldCount {
    /// Differences.
    pub differences: usize,
    /// Scenarios with at least one.
    pub scenarios: usize,
}

/// The verdicts over scenarios, at each level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Verdicts {
    /// Safety verdicts.
    pub safety: Counts,
    /// Exactness verdicts (the same as `summary`).
    pub exactness: Counts,
}

impl RunRecord {
    /// The command that reruns just scenario `id` against the same implementation: the
    /// command as it was invoked, so that it pastes into a shell as it is.
    pub fn rerun(&self, id: &str) -> String {
        if !self.runner.invocation.is_empty() {
            let mut words: Vec<String> = self
                .runner
                .invocation
                .iter()
                .map(|w| shell_quote(w))
                .collect();
            words.extend(["--filter".to_string(), shell_quote(id)]);
            return words.join(" ");
        }
        let mut cmd = format!("{} run --filter {}", self.runner.name, shell_quote(id));
        if let Some(imp) = &self.runner.impl_arg {
            cmd.push_str(&format!(" --impl {}", shell_quote(imp)));
        }
        cmd
    }

    /// Whether the run succeeded: no file was invalid and, with `--expectations`, every
    /// verdict was as expected and no expected scenario is gone; without, nothing failed
    /// or errored at the run's level.
    pub fn success(&self) -> bool {
        if !self.invalid.is_empty() {
            return false;
        }
        if let Some(c) = &self.expectations {
            return c.success();
        }
        let counts = match self.level {
            Level::Safety => self.verdicts.safety,
            Level::Exactness => self.verdicts.exactness,
        };
        // A skip that could hide a hole is not a pass, whatever the level.
        counts.failed == 0 && counts.errored == 0 && self.verdicts.safety.not_shown == 0
    }
}

/// The flags of `run` that select scenarios or place the report, each with whether it
/// takes a value: left out of the rerun command, which selects one scenario itself.
const NOT_RERUN: &[(&str, bool)] = &[
    ("--filter", true),
    ("--exclude", true),
    ("--tier", true),
    ("--format", true),
    ("--out", true),
    ("--json-out", true),
    ("--junit-out", true),
    ("--record-wire", true),
    ("--quiet", false),
    ("--expectations", true),
    ("--update-expectations", true),
];

/// The words of the rerun command from the runner's path and its arguments (without the
/// program name): every argument kept but those of [`NOT_RERUN`].
pub fn rerun_invocation(program: String, args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut words = vec![program];
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let flag = arg.split_once('=').map_or(arg.as_str(), |(f, _)| f);
        match NOT_RERUN.iter().find(|(f, _)| *f == flag) {
            Some((_, takes_value)) => {
                if *takes_value && !arg.contains('=') {
                    args.next();
                }
            }
            None => words.push(arg),
        }
    }
    words
}

/// `s` as one shell word: bare when it is plain, else in single quotes.
fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=:,@+%".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_safety_difference_fails_both_an_exactness_one_only_exactness() {
        let d = |level| Difference {
            level,
            field: "decision".into(),
            message: String::new(),
        };
        let (s, x) = (d(Level::Safety), d(Level::Exactness));
        assert_eq!(
            verdict(Level::Safety, Outcome::Failed, &[&s]),
            Outcome::Failed
        );
        assert_eq!(
            verdict(Level::Exactness, Outcome::Failed, &[&s]),
            Outcome::Failed
        );
        assert_eq!(
            verdict(Level::Safety, Outcome::Failed, &[&x]),
            Outcome::Passed
        );
        assert_eq!(
            verdict(Level::Exactness, Outcome::Failed, &[&x]),
            Outcome::Failed
        );
        assert_eq!(
            verdict(Level::Safety, Outcome::Errored, &[&x]),
            Outcome::Errored
        );
        assert_eq!(
            verdict(Level::Safety, Outcome::Errored, &[&s]),
            Outcome::Failed
        );
        assert_eq!(
            verdict(Level::Exactness, Outcome::Errored, &[&s]),
            Outcome::Errored
        );
        assert_eq!(
            verdict(Level::Safety, Outcome::Skipped, &[]),
            Outcome::Skipped
        );
    }
}
