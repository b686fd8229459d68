//! The human view, safety first (`spec/verdicts.md`): every safety failure with the
//! `path:line` of its case or step, the input sent and what happened, and the command
//! that reruns just that scenario; then the scenarios that errored or were skipped; then
//! the exactness differences counted per field, and each scenario that failed only on
//! exactness with its first difference (every difference with `verbose`, which also adds
//! the implementation line and the per-requirement table); the verdicts, the comparison
//! with the expectations, and one summary line last.

use std::fmt::Write;

use super::{fields_by_count, verdict_lines};
use crate::record::{Outcome, RunRecord};
use crate::verdict::Level;

/// The human report.
pub fn render(r: &RunRecord, verbose: bool) -> String {
    let mut s = String::new();
    let env = &r.environment;
    if verbose {
        let _ = writeln!(
            s,
            "implementation: {} {} (protocol {}) via `{}`",
            env.name, env.version, env.protocol, r.runner.implementation
        );
    }
    for sc in r.scenarios.iter().filter(|sc| sc.safety == Outcome::Failed) {
        let _ = writeln!(s, "SAFETY FAILED {}: {}", sc.id, sc.title);
        for f in r.safety_failures.iter().filter(|f| f.scenario == sc.id) {
            let _ = writeln!(s, "  {}: {}", f.at, f.message);
            let _ = writeln!(s, "    input: {}", f.input);
        }
        let _ = writeln!(s, "  rerun: {}", r.rerun(&sc.id));
        s.push('\n');
    }
    for sc in r
        .scenarios
        .iter()
        .filter(|sc| matches!(sc.outcome, Outcome::Errored | Outcome::Skipped))
    {
        let _ = writeln!(
            s,
            "{} {}: {}",
            sc.outcome.as_str().to_uppercase(),
            sc.id,
            sc.title
        );
        let _ = writeln!(s, "  {}: {}", sc.path, sc.reason.as_deref().unwrap_or(""));
        for line in &sc.stderr {
            let _ = writeln!(s, "  stderr| {line}");
        }
        if sc.outcome == Outcome::Errored {
            let _ = writeln!(s, "  rerun: {}", r.rerun(&sc.id));
        }
        s.push('\n');
    }
    if !r.exactness_fields.is_empty() {
        let _ = writeln!(s, "exactness differences, by field:");
        for (field, c) in fields_by_count(r) {
            let _ = writeln!(
                s,
                "  {field:<32} {:>5} in {} scenario(s)",
                c.differences, c.scenarios
            );
        }
        s.push('\n');
    }
    for sc in r
        .scenarios
        .iter()
        .filter(|sc| sc.outcome == Outcome::Failed && sc.safety != Outcome::Failed)
    {
        let _ = writeln!(s, "FAILED {} (exactness): {}", sc.id, sc.title);
        let all = sc
            .steps
            .iter()
            .flat_map(|st| st.mismatches.iter().map(move |m| (st.line, m)));
        for (line, m) in all.take(if verbose { usize::MAX } else { 1 }) {
            let _ = writeln!(s, "  {}:{line}: {m}", sc.path);
        }
        if verbose {
            let _ = writeln!(s, "  rerun: {}", r.rerun(&sc.id));
        }
    }
    if r.scenarios
        .iter()
        .any(|sc| sc.outcome == Outcome::Failed && sc.safety != Outcome::Failed)
    {
        s.push('\n');
    }
    if !r.invalid.is_empty() {
        let _ = writeln!(s, "invalid scenario files:");
        for i in &r.invalid {
            let _ = writeln!(s, "  {}", i.message);
        }
        s.push('\n');
    }
    if verbose && !r.requirements.is_empty() {
        let _ = writeln!(s, "requirements:");
        for (id, c) in &r.requirements {
            let _ = writeln!(
                s,
                "  {id:<24} passed {:>3}  failed {:>3}  skipped {:>3}  errored {:>3}",
                c.passed, c.failed, c.skipped, c.errored
            );
        }
        s.push('\n');
    }
    // A green run keeps its one summary line.
    let green = r.verdicts.exactness.failed + r.verdicts.exactness.errored == 0;
    if !green || r.expectations.is_some() || r.level == Level::Safety {
        for line in verdict_lines(r) {
            let _ = writeln!(s, "{line}");
        }
    }
    let c = &r.summary;
    let _ = writeln!(
        s,
        "{} scenario(s) of suite {} ({}) against {} {} in {:.1} s: {} passed, {} failed, {} skipped, {} errored{}",
        r.scenarios.len(),
        r.runner.suite.spec_version,
        r.runner.suite.short(),
        env.name,
        env.version,
        r.runner.duration_ms as f64 / 1000.0,
        c.passed,
        c.failed,
        c.skipped,
        c.errored,
        if r.invalid.is_empty() {
            String::new()
        } else {
            format!("; {} invalid file problem(s)", r.invalid.len())
        }
    );
    s
}
