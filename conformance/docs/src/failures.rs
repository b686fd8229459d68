//! A report's failures as an implementation's page leads with them, safety first: the
//! safety failures grouped by the requirement that failed (its ID and chapter), each
//! distinct failing input once with the scenarios it broke; then the exactness
//! differences counted per field. And the few words a scenario's pill says: which
//! verdict failed and on which check (`safety: no_bait`).
//!
//! The runner's own reports (`conformance/core/src/report/`) group the same way; this is the
//! site's reading of a canonical JSON report, kept apart so that the site reads reports
//! of older runners too.

use std::collections::BTreeMap;

use super::cases::View;
pub use super::pill::pill;
use super::reports::Report;

/// One distinct input that failed safety, with the scenarios it broke.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    /// The action as the scenario writes it (`run "cat ~/.ssh/id_rsa"`), or the request
    /// sent when the scenario is not in this suite.
    pub input: String,
    /// Each scenario it broke, with the step (0: the scenario errored before a step).
    pub scenarios: Vec<(String, usize)>,
    /// The distinct fields that differed, in order of appearance.
    pub fields: Vec<String>,
    /// The first difference, as the runner said it.
    pub first: String,
}

/// The safety failures of one requirement.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The requirement ID (the step's first `pins`, else the scenario's first).
    pub requirement: String,
    /// Its chapter (empty when the spec does not know the ID).
    pub chapter: String,
    /// Each distinct input, the one that broke most scenarios first.
    pub inputs: Vec<Input>,
}

/// The exactness differences of one field.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldCount {
    /// The field (`decision`, `check stdout_has`).
    pub field: String,
    /// How many differences.
    pub differences: usize,
    /// The scenarios they are in.
    pub scenarios: Vec<String>,
}

/// A report's failures, grouped.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Grouped {
    /// Safety, by requirement: the requirement with most broken scenarios first.
    pub safety: Vec<Group>,
    /// Exactness, by field: the field with most differences first.
    pub exactness: Vec<FieldCount>,
}

/// A runner's line without the step's label the input already shows:
/// `step 2 (run "x"): exit: expected nonzero, got 0` is `exit: expected nonzero, got 0`.
/// The label ends at the first `"): ` or `}): ` not escaped; a line without one is kept.
pub fn after_label(message: &str) -> &str {
    let b = message.as_bytes();
    (2..b.len().saturating_sub(2))
        .find(|&i| {
            b[i] == b')'
                && b[i + 1] == b':'
                && b[i + 2] == b' '
                && (b[i - 1] == b'"' || b[i - 1] == b'}')
                && b[i - 2] != b'\\'
        })
        .map_or(message, |i| &message[i + 3..])
}

/// Groups `report`'s failures; `views` give each step its written action and pins,
/// `chapters` each requirement ID its chapter.
pub fn group(
    report: &Report,
    views: &BTreeMap<String, View<'_>>,
    chapters: &BTreeMap<String, String>,
) -> Grouped {
    // requirement -> input -> its row; in first-seen order, sorted at the end.
    let mut safety: Vec<(String, Vec<Input>)> = Vec::new();
    let mut exact: BTreeMap<String, FieldCount> = BTreeMap::new();
    for r in &report.scenarios {
        let view = views.get(&r.id);
        let file_req = view
            .and_then(|v| v.scenario.requirements.first().cloned())
            .or_else(|| r.requirements.first().cloned())
            .unwrap_or_default();
        let mut add = |req: String, input: String, step: usize, field: &str, msg: &str| {
            let at = match safety.iter().position(|(q, _)| *q == req) {
                Some(i) => i,
                None => {
                    safety.push((req, Vec::new()));
                    safety.len() - 1
                }
            };
            let inputs = &mut safety[at].1;
            let i = match inputs.iter().position(|x| x.input == input) {
                Some(i) => i,
                None => {
                    inputs.push(Input {
                        input,
                        scenarios: Vec::new(),
                        fields: Vec::new(),
                        first: msg.to_string(),
                    });
                    inputs.len() - 1
                }
            };
            let row = &mut inputs[i];
            if !row.scenarios.iter().any(|(id, _)| *id == r.id) {
                row.scenarios.push((r.id.clone(), step));
            }
            if !field.is_empty() && !row.fields.iter().any(|f| f == field) {
                row.fields.push(field.to_string());
            }
        };
        let safety_failed = r.safety == "failed" || r.safety == "errored";
        let mut any = false;
        for st in &r.steps {
            let step = view.and_then(|v| {
                v.scenario
                    .body
                    .steps()
                    .into_iter()
                    .find(|s| s.index == st.index)
            });
            for d in &st.differences {
                if d.level == "exactness" {
                    let e = exact.entry(d.field.clone()).or_insert_with(|| FieldCount {
                        field: d.field.clone(),
                        differences: 0,
                        scenarios: Vec::new(),
                    });
                    e.differences += 1;
                    if !e.scenarios.contains(&r.id) {
                        e.scenarios.push(r.id.clone());
                    }
                    continue;
                }
                if !safety_failed || d.level != "safety" {
                    continue;
                }
                any = true;
                let req = step
                    .and_then(|s| s.pins.first())
                    .map(|p| p.split('.').next().unwrap_or(p).to_string())
                    .unwrap_or_else(|| file_req.clone());
                let input = match (view, step) {
                    (Some(v), Some(s)) => {
                        let (verb, what, _) = v.reading(s).action;
                        format!("{verb} {what}")
                    }
                    _ => {
                        let mut req = st.request.clone();
                        if let Some(m) = req.as_object_mut() {
                            m.remove("session");
                        }
                        req.to_string()
                    }
                };
                add(req, input, st.index, &d.field, &d.message);
            }
        }
        if safety_failed && !any {
            let why = r.reason.clone().unwrap_or_else(|| r.safety.clone());
            add(
                file_req.clone(),
                format!("(the scenario {})", r.safety),
                0,
                "",
                &why,
            );
        }
    }
    let mut groups: Vec<Group> = safety
        .into_iter()
        .map(|(requirement, mut inputs)| {
            inputs.sort_by_key(|i| std::cmp::Reverse(i.scenarios.len()));
            Group {
                chapter: chapters.get(&requirement).cloned().unwrap_or_default(),
                requirement,
                inputs,
            }
        })
        .collect();
    groups.sort_by(|a, b| {
        scenarios_of(b)
            .cmp(&scenarios_of(a))
            .then_with(|| a.requirement.cmp(&b.requirement))
    });
    let mut exactness: Vec<FieldCount> = exact.into_values().collect();
    exactness.sort_by_key(|f| std::cmp::Reverse(f.differences));
    Grouped {
        safety: groups,
        exactness,
    }
}

/// The number of distinct scenarios a group's inputs broke.
pub fn scenarios_of(g: &Group) -> usize {
    let mut ids: Vec<&str> = g
        .inputs
        .iter()
        .flat_map(|i| i.scenarios.iter().map(|(id, _)| id.as_str()))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(json: &str) -> Report {
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}"))
    }

    const R: &str = r#"{
      "runner": {"implementation": "x", "suite": {"spec_version": "0", "hash": "h"}},
      "verdicts": {"safety": {"passed": 0, "failed": 3, "skipped": 0, "errored": 0},
                   "exactness": {"passed": 0, "failed": 3, "skipped": 0, "errored": 0}},
      "scenarios": [
        {"id": "a/exact-only", "requirements": ["A-X-1"], "safety": "passed", "exactness": "failed",
         "steps": [{"index": 1, "request": {"op": "decide", "input": "ls"}, "differences": [
           {"level": "exactness", "field": "route", "message": "route: expected a"}]}]},
        {"id": "a/first", "requirements": ["A-S-2"], "safety": "failed", "exactness": "failed",
         "steps": [{"index": 2, "request": {"op": "run", "input": "cat key", "session": "s1"}, "differences": [
           {"level": "safety", "field": "check no_bait", "message": "bait seen"},
           {"level": "exactness", "field": "route", "message": "route: expected b"}]}]},
        {"id": "a/second", "requirements": ["A-S-2"], "safety": "failed", "exactness": "failed",
         "steps": [{"index": 1, "request": {"op": "run", "input": "cat key", "session": "s9"}, "differences": [
           {"level": "safety", "field": "exit", "message": "exit: expected nonzero"},
           {"level": "safety", "field": "check unchanged", "message": "changed"}]}]},
        {"id": "a/third", "requirements": ["A-T-1"], "safety": "errored", "exactness": "errored",
         "reason": "the adapter crashed", "steps": []}
      ]
    }"#;

    #[test]
    fn safety_comes_grouped_by_requirement_each_input_once_then_exactness_per_field() {
        let g = group(&report(R), &BTreeMap::new(), &BTreeMap::new());
        let reqs: Vec<&str> = g.safety.iter().map(|x| x.requirement.as_str()).collect();
        // A-S-2 broke two scenarios, A-T-1 one; the exactness-only scenario is not here.
        assert_eq!(reqs, ["A-S-2", "A-T-1"]);
        let s2 = &g.safety[0];
        assert_eq!(s2.inputs.len(), 1, "one input, two scenarios: {s2:?}");
        assert_eq!(
            s2.inputs[0].scenarios,
            vec![("a/first".to_string(), 2), ("a/second".to_string(), 1)]
        );
        assert_eq!(
            s2.inputs[0].fields,
            ["check no_bait", "exit", "check unchanged"]
        );
        assert_eq!(g.safety[1].inputs[0].first, "the adapter crashed");
        assert_eq!(
            after_label(r#"name: step 2 (run "a\"): b"): exit: expected 1"#),
            "exit: expected 1"
        );
        assert_eq!(
            after_label("case 1 (call read { path = \"x\" }): decision: d"),
            "decision: d"
        );
        assert_eq!(after_label("no label: here"), "no label: here");
        assert_eq!(
            g.exactness,
            vec![FieldCount {
                field: "route".into(),
                differences: 2,
                scenarios: vec!["a/exact-only".into(), "a/first".into()],
            }]
        );
    }

    #[test]
    fn a_pill_names_the_verdict_and_the_check() {
        let r = report(R);
        let words: Vec<String> = r.scenarios.iter().map(pill).collect();
        assert_eq!(
            words,
            [
                "exactness: route",
                "safety: no_bait",
                "safety: unchanged +1",
                "safety: errored"
            ]
        );
    }
}
