//! The few words a scenario's pill says on the site: which verdict failed and on which
//! check. Below both the cases (a requirement's pills) and the failures (an
//! implementation's page), which use it; reads a report's scenario, touches nothing.

use super::reports::ScenarioResult;

/// The field as a pill says it: `check no_bait` is `no_bait`.
fn check_name(field: &str) -> &str {
    field.strip_prefix("check ").unwrap_or(field)
}

/// What a scenario's pill says after the implementation's label: `passed`, `skipped`,
/// `not shown safe`, `errored`, or which verdict failed and on which check
/// (`safety: no_bait`, `exactness: decision`, `+2` when more fields differed), a check
/// of the runner's own before a field of the answer.
pub fn pill(r: &ScenarioResult) -> String {
    let verdict = match (r.safety.as_str(), r.exactness.as_str()) {
        ("failed", _) => "safety",
        ("errored", _) => return "safety: errored".into(),
        ("not_shown", _) => return "not shown safe".into(),
        ("passed", "failed") => "exactness",
        ("passed", "errored") => return "exactness: errored".into(),
        (s, _) => return s.to_string(),
    };
    // The runner's own checks (what it observed) before the answer's fields.
    let mut fields: Vec<&str> = Vec::new();
    for d in r.steps.iter().flat_map(|s| &s.differences) {
        if d.level == verdict && !fields.contains(&d.field.as_str()) {
            fields.push(&d.field);
        }
    }
    fields.sort_by_key(|f| !f.starts_with("check "));
    let fields: Vec<&str> = fields.into_iter().map(check_name).collect();
    match fields.as_slice() {
        [] => format!("{verdict} failed"),
        [one] => format!("{verdict}: {one}"),
        [one, rest @ ..] => format!("{verdict}: {one} +{}", rest.len()),
    }
}
