//! The protocol's JSON Schema (`spec/protocol.schema.json`) against the runner's side of
//! the wire: every request the runner builds from every scenario of the repository, the
//! session operations, and every example line of `spec/adapter-protocol.md` validate;
//! the runner's own parsers read the example answers. The other side, the reference
//! adapter's real answers, is checked by `tests/schema.rs`.

use std::path::Path;

use serde_json::{json, Map, Value};

use crate::protocol::{Hello, Reply, Request, RequestBody, SessionDirs, SessionOp};
use crate::scenario::{self, Body};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// A validator for one definition of the schema (`request`, `answer_read`, ...).
pub fn validator(def: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("spec/protocol.schema.json"))
        .expect("spec/protocol.schema.json");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    let wrapper = json!({
        "$schema": schema["$schema"],
        "$ref": format!("#/$defs/{def}"),
        "$defs": schema["$defs"],
    });
    jsonschema::validator_for(&wrapper).expect("the schema compiles")
}

/// The ops the schema defines (`$defs/request_<op>`).
pub fn schema_ops() -> std::collections::BTreeSet<String> {
    let text = std::fs::read_to_string(root().join("spec/protocol.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    schema["$defs"]
        .as_object()
        .unwrap()
        .keys()
        .filter_map(|k| k.strip_prefix("request_").map(str::to_string))
        .collect()
}

fn problems(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect()
}

fn line(id: u64, body: RequestBody) -> Value {
    serde_json::to_value(Request { id, body }).expect("requests serialize")
}

#[test]
fn the_schema_is_a_valid_draft_2020_12_schema() {
    let text = std::fs::read_to_string(root().join("spec/protocol.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    jsonschema::validator_for(&schema).expect("compiles");
    assert!(jsonschema::meta::is_valid(&schema));
}

#[test]
fn every_request_the_runner_builds_validates() {
    let v = validator("request");
    let loaded = scenario::load_dir(&root().join("scenarios"), None).expect("scenarios");
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    assert!(loaded.scenarios.len() > 100, "the repository's scenarios");
    let dirs = |sibling| SessionDirs {
        workspace: "/r/workspace".into(),
        home: "/r/home".into(),
        log_dir: "/r/log".into(),
        sibling,
    };
    let mut ops = std::collections::BTreeSet::new();
    let mut bad = Vec::new();
    let mut check = |what: String, value: Value, ops: &mut std::collections::BTreeSet<String>| {
        ops.insert(value["op"].as_str().unwrap_or("?").to_string());
        for p in problems(&v, &value) {
            bad.push(format!("{what}: {p}: {value}"));
        }
    };
    for s in &loaded.scenarios {
        let setups: Vec<_> = match &s.body {
            Body::Table(cases) => cases.iter().map(|c| (c.setup.resolve(), &c.step)).collect(),
            Body::Sequence(steps) => steps.iter().map(|st| (s.setup.resolve(), st)).collect(),
        };
        for (setup, step) in setups {
            for sibling in [false, true] {
                let open = RequestBody::Session(SessionOp::Open {
                    session: "s1".into(),
                    setup: setup.wire(&s.capabilities, &dirs(sibling), &|x| x.to_string()),
                });
                check(format!("{} open", s.id), line(1, open), &mut ops);
            }
            if let Some(body) = step.action.request("s1", &setup, &|x| x.to_string()) {
                check(
                    format!("{} {}", s.id, step.label("step")),
                    line(2, RequestBody::Step(body)),
                    &mut ops,
                );
            }
            let env = crate::controls::RunnerEnv {
                session: "s1",
                sub: &|x| x.to_string(),
                locate: &|x: &str| std::path::PathBuf::from(x),
                has_bait: &|_| false,
            };
            if let Some(crate::controls::ByRunner::Crash { arm, .. }) = step.action.by_runner(&env)
            {
                check(
                    format!("{} crash_at", s.id),
                    line(2, RequestBody::Step(arm)),
                    &mut ops,
                );
            }
        }
    }
    for (id, op) in [
        (
            0,
            SessionOp::Hello {
                protocol: "1.1".into(),
            },
        ),
        (
            7,
            SessionOp::Close {
                session: "s1".into(),
            },
        ),
        (8, SessionOp::Bye),
    ] {
        check(
            format!("{op:?}"),
            line(id, RequestBody::Session(op)),
            &mut ops,
        );
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // Every op the schema defines is built by some scenario, and no other.
    assert_eq!(ops, schema_ops());
}

#[test]
fn a_request_the_schema_does_not_know_is_rejected() {
    let v = validator("request");
    let unknown_field = json!({"id": 1, "op": "list", "session": "s1", "path": ".", "why": "x"});
    let unknown_op = json!({"id": 1, "op": "explode", "session": "s1"});
    let wrong_type =
        json!({"id": 1, "op": "toggle", "session": "s1", "to": "off", "confirmed": "yes"});
    for bad in [unknown_field, unknown_op, wrong_type] {
        assert!(!v.is_valid(&bad), "{bad}");
    }
}

/// The JSON lines of the spec's examples that are complete (no `...`).
fn spec_examples() -> Vec<Map<String, Value>> {
    let text = std::fs::read_to_string(root().join("spec/adapter-protocol.md")).unwrap();
    let mut out = Vec::new();
    let mut block = None::<String>;
    for l in text.lines() {
        match (&mut block, l.trim()) {
            (None, "```json") => block = Some(String::new()),
            (Some(b), "```") => {
                // A block is one object spread over lines, or one object per line.
                let whole = serde_json::from_str::<Value>(b).ok();
                let objects: Vec<Value> = match whole {
                    Some(v) => vec![v],
                    None => b
                        .lines()
                        .filter_map(|l| serde_json::from_str(l).ok())
                        .collect(),
                };
                out.extend(objects.into_iter().filter_map(|v| v.as_object().cloned()));
                block = None;
            }
            (Some(b), _) => {
                b.push_str(l);
                b.push('\n');
            }
            _ => {}
        }
    }
    out
}

#[test]
fn the_examples_of_the_protocol_chapter_validate_and_parse() {
    let examples = spec_examples();
    assert!(examples.len() > 20, "{} examples", examples.len());
    let requests = validator("request");
    let answers = validator("answer");
    let mut bad = Vec::new();
    let mut parsed_hello = false;
    for e in examples {
        let value = Value::Object(e.clone());
        let v = if e.contains_key("op") {
            &requests
        } else {
            &answers
        };
        for p in problems(v, &value) {
            bad.push(format!("{p}: {value}"));
        }
        if e.contains_key("ok") {
            // The runner's parsers take every example answer.
            let reply = Reply::classify(e.clone());
            if e.contains_key("capabilities") {
                let Reply::Ok(obj) = reply else {
                    panic!("hello example is not ok")
                };
                serde_json::from_value::<Hello>(Value::Object(obj)).expect("hello parses");
                parsed_hello = true;
            }
        }
    }
    assert!(parsed_hello);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
