//! The human view: failures in detail, skips with reasons, the per-requirement summary and
//! the totals.

use std::fmt::Write;

use crate::record::{Outcome, RunRecord};

/// The human report.
pub fn render(r: &RunRecord) -> String {
    let mut s = String::new();
    let env = &r.environment;
    let _ = writeln!(
        s,
        "implementation: {} {} (protocol {}) via `{}`",
        env.name, env.version, env.protocol, r.runner.implementation
    );
    for sc in r
        .scenarios
        .iter()
        .filter(|sc| sc.outcome != Outcome::Passed)
    {
        let _ = writeln!(
            s,
            "\n{} {}: {}",
            sc.outcome.as_str().to_uppercase(),
            sc.id,
            sc.title
        );
        match sc.outcome {
            Outcome::Failed => {
                for m in sc.steps.iter().flat_map(|st| &st.mismatches) {
                    let _ = writeln!(s, "  {m}");
                }
            }
            _ => {
                let _ = writeln!(s, "  {}", sc.reason.as_deref().unwrap_or(""));
                for line in &sc.stderr {
                    let _ = writeln!(s, "  stderr| {line}");
                }
            }
        }
    }
    if !r.invalid.is_empty() {
        let _ = writeln!(s, "\ninvalid scenario files:");
        for i in &r.invalid {
            let _ = writeln!(s, "  {}", i.message);
        }
    }
    if !r.requirements.is_empty() {
        let _ = writeln!(s, "\nrequirements:");
        for (id, c) in &r.requirements {
            let _ = writeln!(
                s,
                "  {id:<24} passed {:>3}  failed {:>3}  skipped {:>3}  errored {:>3}",
                c.passed, c.failed, c.skipped, c.errored
            );
        }
    }
    let c = &r.summary;
    let _ = writeln!(
        s,
        "\n{} scenario(s): {} passed, {} failed, {} skipped, {} errored{}",
        r.scenarios.len(),
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
