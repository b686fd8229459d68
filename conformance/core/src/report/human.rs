//! The human view, verdict first (`spec/verdicts.md`): the verdict lines (safety,
//! exactness, the expectations); the safety failures grouped by the requirement they pin,
//! with its chapter and its statement, each distinct input once with what happened, why
//! the scenario expects what it does (where it says), the scenarios it broke and the
//! command that reruns the first; the scenarios that errored, those skipped counted per
//! reason; the exactness differences counted per field, a few cases each (every case with
//! `verbose`, which also adds the implementation line and the per-requirement table); the
//! comparison with the expectations; and the verdict lines again with one summary line
//! last, so that a terminal's last screen shows them. A green run keeps its one summary
//! line.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::{comparison_lines, fields_by_count, happened};
use crate::record::{Outcome, RunRecord};
use crate::verdict::Level;

/// The most cases shown per exactness field without `verbose`.
const CASES_PER_FIELD: usize = 5;
/// The most requirements with safety failures shown without `verbose`.
const GROUPS: usize = 25;
/// The most failing inputs shown per requirement without `verbose`.
const INPUTS_PER_GROUP: usize = 4;
/// The most scenario ids named per failing input without `verbose`.
const IDS_PER_INPUT: usize = 6;
/// The most scenario ids named per skip reason.
const IDS_PER_SKIP: usize = 4;

/// The human report.
pub fn render(r: &RunRecord, verbose: bool) -> String {
    let mut s = String::new();
    let env = &r.environment;
    let green = r.verdicts.exactness.failed + r.verdicts.exactness.errored == 0
        && r.verdicts.safety.not_shown == 0;
    let verdicts = !green || r.expectations.is_some() || r.level == Level::Safety;
    let head = super::headline(r).lines;
    if verdicts {
        for line in &head {
            let _ = writeln!(s, "{line}");
        }
    }
    if verbose {
        let _ = writeln!(
            s,
            "implementation: {} {} (protocol {}) via `{}`",
            env.name, env.version, env.protocol, r.runner.implementation
        );
    }
    if verdicts || verbose {
        s.push('\n');
    }
    safety(&mut s, r, verbose);
    errored_and_skipped(&mut s, r);
    exactness(&mut s, r, verbose);
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
    if verdicts {
        for line in comparison_lines(r) {
            let _ = writeln!(s, "{line}");
        }
        for line in &head {
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

/// The safety failures by requirement, each input once on one line with the scenarios
/// it broke (and why, where the scenario says); without `verbose`, the first
/// [`GROUPS`] requirements with their first [`INPUTS_PER_GROUP`] inputs, the rest named.
fn safety(s: &mut String, r: &RunRecord, verbose: bool) {
    if r.safety_groups.is_empty() {
        return;
    }
    let (groups, inputs, ids) = if verbose {
        (usize::MAX, usize::MAX, usize::MAX)
    } else {
        (GROUPS, INPUTS_PER_GROUP, IDS_PER_INPUT)
    };
    let _ = writeln!(s, "SAFETY FAILURES, by requirement:\n");
    for g in r.safety_groups.iter().take(groups) {
        let chapter = g
            .chapter
            .as_deref()
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        let statement = g
            .statement
            .as_deref()
            .map(|t| format!(": {t}"))
            .unwrap_or_default();
        let _ = writeln!(s, "{}{chapter}{statement}", g.requirement);
        for i in g.inputs.iter().take(inputs) {
            let mut names = i.scenarios[..i.scenarios.len().min(ids)].join(", ");
            if i.scenarios.len() > ids {
                let _ = write!(names, " and {} more", i.scenarios.len() - ids);
            }
            let at = match i.scenarios.as_slice() {
                [_] => format!("in {names} ({})", i.at[0]),
                many => format!("in {} scenarios: {names}", many.len()),
            };
            let _ = writeln!(s, "  {}: {}  [{at}]", i.input, i.happened);
            if let Some(why) = &i.why {
                let _ = writeln!(s, "    why: {why}");
            }
        }
        if g.inputs.len() > inputs {
            let _ = writeln!(
                s,
                "  and {} more input(s) (--verbose or the JSON report lists every one)",
                g.inputs.len() - inputs
            );
        }
        s.push('\n');
    }
    if r.safety_groups.len() > groups {
        let rest: Vec<&str> = r.safety_groups[groups..]
            .iter()
            .map(|g| g.requirement.as_str())
            .collect();
        let _ = writeln!(
            s,
            "and {} more requirement(s) with safety failures: {} (--verbose or the JSON report)",
            rest.len(),
            rest.join(", ")
        );
    }
    let first = &r.safety_groups[0].inputs[0].scenarios[0];
    let _ = writeln!(s, "rerun one scenario: {}", r.rerun(first));
    s.push('\n');
}

/// Errored scenarios one by one; skipped ones counted per reason.
fn errored_and_skipped(s: &mut String, r: &RunRecord) {
    for sc in r.scenarios.iter().filter(|sc| {
        sc.outcome == Outcome::Errored
            || (sc.safety == Outcome::NotShown && sc.outcome == Outcome::Skipped)
    }) {
        let what = if sc.outcome == Outcome::Errored {
            "ERRORED"
        } else {
            "NOT SHOWN SAFE"
        };
        let _ = writeln!(s, "{what} {}: {}", sc.id, sc.title);
        let _ = writeln!(s, "  {}: {}", sc.path, sc.reason.as_deref().unwrap_or(""));
        for line in &sc.stderr {
            let _ = writeln!(s, "  stderr| {line}");
        }
        if sc.outcome == Outcome::Errored {
            let _ = writeln!(s, "  rerun: {}", r.rerun(&sc.id));
        }
        s.push('\n');
    }
    let mut skipped: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for sc in r
        .scenarios
        .iter()
        .filter(|sc| sc.outcome == Outcome::Skipped && sc.safety != Outcome::NotShown)
    {
        skipped
            .entry(sc.reason.as_deref().unwrap_or(""))
            .or_default()
            .push(&sc.id);
    }
    if skipped.is_empty() {
        return;
    }
    let _ = writeln!(s, "skipped:");
    for (reason, ids) in skipped {
        let more = ids.len().saturating_sub(IDS_PER_SKIP);
        let mut shown = ids[..ids.len().min(IDS_PER_SKIP)].join(", ");
        if more > 0 {
            let _ = write!(shown, " and {more} more");
        }
        let _ = writeln!(s, "  {} scenario(s): {reason} ({shown})", ids.len());
    }
    s.push('\n');
}

/// The exactness differences counted per field, a few cases each.
fn exactness(s: &mut String, r: &RunRecord, verbose: bool) {
    if r.exactness_fields.is_empty() {
        return;
    }
    let _ = writeln!(s, "exactness differences, by field:");
    let cap = if verbose { usize::MAX } else { CASES_PER_FIELD };
    for (field, c) in fields_by_count(r) {
        let _ = writeln!(
            s,
            "  {field}: {} difference(s) in {} scenario(s)",
            c.differences, c.scenarios
        );
        let cases = r.scenarios.iter().flat_map(|sc| {
            sc.steps.iter().flat_map(move |st| {
                st.differences
                    .iter()
                    .filter(|d| d.level == Level::Exactness && d.field == *field)
                    .map(move |d| (sc, st, d))
            })
        });
        for (sc, st, d) in cases.take(cap) {
            let why = st
                .why
                .as_deref()
                .map(|w| format!(" (why: {w})"))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "    {}:{}: {}: {}{why}",
                sc.path,
                st.line,
                st.action,
                happened(st, &d.message)
            );
        }
        if c.differences > cap {
            let _ = writeln!(
                s,
                "    and {} more (--verbose or the JSON report shows every one)",
                c.differences - cap
            );
        }
    }
    s.push('\n');
}
