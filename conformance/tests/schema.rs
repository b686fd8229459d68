//! The reference adapter (`gatehouse adapter`, built by the runner as `run` without
//! `--impl` does) against the protocol's JSON Schema: a representative set of scenarios
//! runs with `--record-wire`, and every line of the conversation is validated both ways,
//! each request against the definition of its op and each answer against the answer
//! definition of the request it answers. The schema and the two copies of the wire types
//! (runner and reference) cannot drift apart without this failing.
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn validator(schema: &Value, def: &str) -> jsonschema::Validator {
    let wrapper = json!({
        "$schema": schema["$schema"],
        "$ref": format!("#/$defs/{def}"),
        "$defs": schema["$defs"],
    });
    jsonschema::validator_for(&wrapper).expect("the schema compiles")
}

/// Scenario filters that together send every op the schema defines.
const FILTERS: &[&str] = &[
    "trust/",
    "paths/",
    "fence/degraded",
    "fence/toggle",
    "fence/write-outside",
    "gate/revoke",
    "gate/card-answer",
    "gate/no-asker-audit",
    "decision/records-crash",
    "decision/records-restart",
    "hooks/concurrent-calls",
    "hooks/post-tool-use",
    "decision/redirect-run",
    "permissions/load-errors",
];

#[test]
fn every_line_between_runner_and_reference_matches_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    // The filters run side by side, as many at a time as there are cores, each recording
    // its own conversation; one after another they took most of the README's test
    // command. The lines are validated together afterwards.
    let width = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut text = String::new();
    for chunk in FILTERS.chunks(width) {
        let logs: Vec<String> = std::thread::scope(|scope| {
            let runs: Vec<_> = chunk
                .iter()
                .map(|filter| {
                    let log = dir.path().join(filter.replace('/', "_") + ".wire.log");
                    scope.spawn(move || record(filter, &log))
                })
                .collect();
            runs.into_iter()
                .map(|run| run.join().expect("a recording thread panicked"))
                .collect()
        });
        for log in logs {
            text.push_str(&log);
        }
    }
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("spec/protocol.schema.json")).unwrap(),
    )
    .unwrap();
    let mut validators = BTreeMap::new();
    let mut get = |def: String| -> &'static jsonschema::Validator {
        validators
            .entry(def.clone())
            .or_insert_with(|| &*Box::leak(Box::new(validator(&schema, &def))))
    };
    let mut pending: Option<String> = None;
    let mut bad = Vec::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let (dir, json) = line.split_at(2);
        let value: Value = serde_json::from_str(json)
            .unwrap_or_else(|e| panic!("wire line {}: not JSON ({e}): {line}", n + 1));
        let def = match dir {
            "> " => {
                let op = value["op"]
                    .as_str()
                    .expect("a request has an op")
                    .to_string();
                *counts.entry(op.clone()).or_default() += 1;
                pending = Some(op.clone());
                format!("request_{op}")
            }
            "< " => {
                let op = pending.take().expect("an answer follows a request");
                format!("answer_{op}")
            }
            _ => panic!("wire line {}: neither > nor <: {line}", n + 1),
        };
        let v = get(def.clone());
        for e in v.iter_errors(&value) {
            bad.push(format!(
                "wire line {} {def}: {e} at {}: {json}",
                n + 1,
                e.instance_path
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} problem(s):\n{}",
        bad.len(),
        bad.join("\n")
    );
    let defined: Vec<&str> = schema["$defs"]
        .as_object()
        .unwrap()
        .keys()
        .filter_map(|k| k.strip_prefix("request_"))
        .collect();
    let sent: Vec<&str> = counts.keys().map(String::as_str).collect();
    assert_eq!(sent, defined, "every op of protocol 1.2 crossed the wire");
}

/// Runs the scenarios `filter` selects against the reference, recording the wire in
/// `log`, and returns what was recorded.
fn record(filter: &str, log: &Path) -> String {
    let log_arg = log.to_string_lossy().into_owned();
    let run = common::run_cli(
        repo(),
        &[
            "run",
            "--quiet",
            "--format",
            "json",
            "--filter",
            filter,
            "--record-wire",
            &log_arg,
        ],
    );
    assert_eq!(
        run.code, 0,
        "{filter}: the reference must pass\n{}",
        run.stderr
    );
    assert!(
        run.json()["summary"]["passed"].as_u64().unwrap() > 0,
        "{filter} selects nothing"
    );
    std::fs::read_to_string(log).expect("the wire was recorded")
}
