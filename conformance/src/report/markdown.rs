//! The Markdown view: a header line implementation x environment and one table row per
//! scenario (scenario | outcome | detail).

use std::fmt::Write;

use serde_json::Value;

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
    let _ = writeln!(s, "| scenario | outcome | detail |\n|---|---|---|");
    for sc in &r.scenarios {
        let detail = match sc.outcome {
            Outcome::Passed => String::new(),
            _ => sc.reason.clone().unwrap_or_default(),
        };
        let _ = writeln!(
            s,
            "| `{}` | {} | {} |",
            sc.id,
            sc.outcome.as_str(),
            cell(&detail)
        );
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
