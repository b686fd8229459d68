//! The Markdown view, safety first (`spec/verdicts.md`): a header line implementation x
//! environment and the suite; the safety failures, each with its input and what
//! happened; the exactness differences counted per field; one table row per scenario
//! (scenario | safety | exactness | detail); the verdicts and the comparison with the
//! expectations.

use std::fmt::Write;

use serde_json::Value;

use super::{fields_by_count, verdict_lines};
use crate::record::{Outcome, RunRecord};

/// The Markdown report.
pub fn render(r: &RunRecord) -> String {
    let env = &r.environment;
    let e = |k: &str| match env.environment.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "-".to_string(),
        Some(v) => v.to_string(),
    };
    let mut s = String::new();
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
    if !r.safety_failures.is_empty() {
        let _ = writeln!(
            s,
            "### Safety failures\n\n| scenario | at | input | what happened |\n|---|---|---|---|"
        );
        for f in &r.safety_failures {
            let _ = writeln!(
                s,
                "| `{}` | {} | `{}` | {} |",
                f.scenario,
                cell(&f.at),
                cell(&f.input).replace('`', "'"),
                cell(&f.message)
            );
        }
        s.push('\n');
    }
    if !r.exactness_fields.is_empty() {
        let _ = writeln!(
            s,
            "### Exactness differences by field\n\n| field | differences | scenarios |\n|---|---|---|"
        );
        for (field, c) in fields_by_count(r) {
            let _ = writeln!(s, "| `{field}` | {} | {} |", c.differences, c.scenarios);
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "| scenario | safety | exactness | detail |\n|---|---|---|---|"
    );
    for sc in &r.scenarios {
        let detail = match sc.outcome {
            Outcome::Passed => String::new(),
            _ => sc.reason.clone().unwrap_or_default(),
        };
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} |",
            sc.id,
            sc.safety.as_str(),
            sc.exactness.as_str(),
            cell(&detail)
        );
    }
    s.push('\n');
    for line in verdict_lines(r) {
        let _ = writeln!(s, "{}  ", cell(&line));
    }
    let c = &r.summary;
    let _ = writeln!(
        s,
        "\n{} passed, {} failed, {} skipped, {} errored",
        c.passed, c.failed, c.skipped, c.errored
    );
    s
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
