//! The human view: every scenario that did not pass, each failure at the `path:line` of
//! its case or step with the command that reruns just that scenario; with `verbose` the
//! implementation line and the per-requirement table; always one summary line last.

use std::fmt::Write;

use crate::record::{Outcome, RunRecord};

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
    for sc in r
        .scenarios
        .iter()
        .filter(|sc| sc.outcome != Outcome::Passed)
    {
        let _ = writeln!(
            s,
            "{} {}: {}",
            sc.outcome.as_str().to_uppercase(),
            sc.id,
            sc.title
        );
        match sc.outcome {
            Outcome::Failed => {
                for st in &sc.steps {
                    for m in &st.mismatches {
                        let _ = writeln!(s, "  {}:{}: {m}", sc.path, st.line);
                    }
                }
            }
            _ => {
                let _ = writeln!(s, "  {}: {}", sc.path, sc.reason.as_deref().unwrap_or(""));
                for line in &sc.stderr {
                    let _ = writeln!(s, "  stderr| {line}");
                }
            }
        }
        if matches!(sc.outcome, Outcome::Failed | Outcome::Errored) {
            let _ = writeln!(s, "  rerun: {}", r.rerun(&sc.id));
        }
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
