//! The Markdown view (the GitHub job summary), verdict first (`spec/verdicts.md`): the
//! verdict lines; a header line implementation x environment and the suite; the lines
//! that fail the comparison with the expectations; the safety failures grouped by
//! requirement (its chapter and statement), each distinct input once with what happened,
//! why and the scenarios it broke; the exactness differences counted per field with a few
//! cases each; one table row per scenario that did not pass. Every list is capped ("and N
//! more") and points at the JSON report for the rest, so that even an implementation that
//! fails everything stays far below GitHub's job-summary limit (1 MiB).

use std::fmt::Write;

use serde_json::Value;

use super::{comparison_lines, fields_by_count, happened, headline};
use crate::record::{Outcome, RunRecord};
use crate::verdict::Level;

/// The most failing inputs listed under the safety failures.
const INPUTS: usize = 60;
/// The most scenario ids named per input.
const IDS_PER_INPUT: usize = 8;
/// The most cases shown per exactness field.
const CASES_PER_FIELD: usize = 3;
/// The most rows of the table of scenarios that did not pass.
const ROWS: usize = 150;
/// The most lines of the comparison with the expectations.
const COMPARISON: usize = 40;
/// The most characters of one table cell.
const CELL: usize = 200;

const REST: &str = "the JSON report (`--json-out`) holds every one";

/// The Markdown report.
pub fn render(r: &RunRecord) -> String {
    let env = &r.environment;
    let e = |k: &str| match env.environment.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "-".to_string(),
        Some(v) => v.to_string(),
    };
    let mut s = String::new();
    for line in headline(r).lines {
        let (level, rest) = line.split_once(':').unwrap_or(("", line.as_str()));
        let _ = writeln!(s, "**{level}:** {}  ", cell(rest.trim()));
    }
    s.push('\n');
    let _ = writeln!(
        s,
        "**{} {}** x {} {} (kernel {}, Landlock ABI {}, fence {})\n",
        env.name,
        env.version,
        e("os"),
        e("arch"),
        e("kernel"),
        e("landlock_abi"),
        e("fence_backend")
    );
    let _ = writeln!(
        s,
        "Suite: spec {}, scenarios and spec `{}` ({} files), gatehouse-conform {}.\n",
        r.runner.suite.spec_version, r.runner.suite.hash, r.runner.suite.files, r.runner.version
    );
    let comparison = comparison_lines(r);
    if !comparison.is_empty() {
        for line in comparison.iter().take(COMPARISON) {
            let _ = writeln!(s, "- {}", cell(line));
        }
        if comparison.len() > COMPARISON {
            let _ = writeln!(s, "- and {} more", comparison.len() - COMPARISON);
        }
        s.push('\n');
    }
    safety(&mut s, r);
    exactness(&mut s, r);
    table(&mut s, r);
    let c = &r.summary;
    let _ = writeln!(
        s,
        "{} passed, {} failed, {} skipped, {} errored",
        c.passed, c.failed, c.skipped, c.errored
    );
    s
}

fn safety(s: &mut String, r: &RunRecord) {
    if r.safety_groups.is_empty() {
        return;
    }
    let _ = writeln!(s, "### Safety failures, by requirement\n");
    let total: usize = r.safety_groups.iter().map(|g| g.inputs.len()).sum();
    let mut shown = 0;
    for g in &r.safety_groups {
        if shown >= INPUTS {
            break;
        }
        let chapter = g
            .chapter
            .as_deref()
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        let statement = g
            .statement
            .as_deref()
            .map(|t| format!(": {}", cell(t)))
            .unwrap_or_default();
        let _ = writeln!(s, "**`{}`**{chapter}{statement}\n", g.requirement);
        for i in g.inputs.iter().take(INPUTS - shown) {
            shown += 1;
            let mut ids: Vec<String> = i
                .scenarios
                .iter()
                .take(IDS_PER_INPUT)
                .map(|id| format!("`{id}`"))
                .collect();
            if i.scenarios.len() > IDS_PER_INPUT {
                ids.push(format!("and {} more", i.scenarios.len() - IDS_PER_INPUT));
            }
            let _ = writeln!(
                s,
                "- `{}`: {} — in {}",
                code(&i.input),
                cell(&i.happened),
                ids.join(", ")
            );
            if let Some(why) = &i.why {
                let _ = writeln!(s, "  - why: {}", cell(why));
            }
        }
        s.push('\n');
    }
    if total > shown {
        let _ = writeln!(s, "and {} more failing input(s): {REST}.\n", total - shown);
    }
}

fn exactness(s: &mut String, r: &RunRecord) {
    if r.exactness_fields.is_empty() {
        return;
    }
    let _ = writeln!(s, "### Exactness differences, by field\n");
    for (field, c) in fields_by_count(r) {
        let _ = writeln!(
            s,
            "- `{field}`: {} difference(s) in {} scenario(s)",
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
        for (sc, st, d) in cases.take(CASES_PER_FIELD) {
            let _ = writeln!(
                s,
                "  - `{}` `{}`: {}",
                sc.id,
                code(&st.action),
                cell(happened(st, &d.message))
            );
        }
        if c.differences > CASES_PER_FIELD {
            let _ = writeln!(s, "  - and {} more", c.differences - CASES_PER_FIELD);
        }
    }
    s.push('\n');
}

fn table(s: &mut String, r: &RunRecord) {
    let not_passed: Vec<_> = r
        .scenarios
        .iter()
        .filter(|sc| sc.outcome != Outcome::Passed || sc.safety != Outcome::Passed)
        .collect();
    let passed = r.scenarios.len() - not_passed.len();
    if not_passed.is_empty() {
        let _ = writeln!(s, "All {passed} scenario(s) passed.\n");
        return;
    }
    let _ = writeln!(
        s,
        "### Scenarios that did not pass ({} of {})\n\n| scenario | safety | exactness | detail |\n|---|---|---|---|",
        not_passed.len(),
        r.scenarios.len()
    );
    for sc in not_passed.iter().take(ROWS) {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} |",
            sc.id,
            sc.safety.as_str(),
            sc.exactness.as_str(),
            cell(sc.reason.as_deref().unwrap_or_default())
        );
    }
    if not_passed.len() > ROWS {
        let _ = writeln!(s, "\nand {} more: {REST}.", not_passed.len() - ROWS);
    }
    let _ = writeln!(s, "\n{passed} other scenario(s) passed.\n");
}

/// `text` for a table cell or a list item: pipes escaped, one line, at most [`CELL`]
/// characters.
fn cell(text: &str) -> String {
    let one = text.replace('|', "\\|").replace('\n', " ");
    if one.chars().count() <= CELL {
        return one;
    }
    let cut: String = one.chars().take(CELL).collect();
    format!("{cut}...")
}

/// `text` inside backticks: no backtick of its own.
fn code(text: &str) -> String {
    cell(text).replace('`', "'")
}
