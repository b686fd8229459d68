//! Judging answers: mismatch messages read well, `false` stands for null, each control's
//! keys are compared as the README says.

use super::{load_file, Body, Step};
use serde_json::{json, Map, Value};

fn judge(what: &str, step: &Step, answer: &Map<String, Value>) -> Vec<String> {
    step.judge(
        what,
        answer,
        &|s: &str| s.to_string(),
        crate::verdict::Ctx::default(),
    )
    .into_iter()
    .map(|d| d.message)
    .collect()
}

fn steps(body: &str) -> Vec<Step> {
    let src = format!("title = \"t\"\nrequirements = [\"GATE-T-1\"]\ntier = \"decision\"\n{body}");
    let s = load_file(&src, "t.toml", "gate/t", None).expect("valid");
    match s.body {
        Body::Sequence(steps) => steps,
        Body::Table(cases) => cases.into_iter().map(|c| c.step).collect(),
    }
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

#[test]
fn decision_mismatch_reads_well() {
    let s = steps("[[step]]\ndecide = \"ls /etc\"\nexpect = { decision = \"allow\" }\n[[step]]\ndecide = \"ls /etc\"\nexpect = { decision = \"ask\", route = \"card\" }\n");
    let answer = obj(json!({"id": 3, "ok": true, "decision": "allow", "route": "auto_safe"}));
    assert!(judge("step", &s[0], &answer).is_empty());
    assert_eq!(
        judge("step", &s[1], &answer),
        vec![
            "step 2 (decide \"ls /etc\"): decision: expected ask, got allow",
            "step 2 (decide \"ls /etc\"): route: expected card, got auto_safe",
        ]
    );
}

#[test]
fn false_stands_for_null() {
    let s = steps("[[case]]\ndecide = \"x\"\nexpect = { decision = \"allow\", offers = { family = false, exact = true }, card = false }\n");
    let ok = obj(
        json!({"id": 1, "ok": true, "decision": "allow", "offers": {"family": null, "exact": true}}),
    );
    assert!(judge("case", &s[0], &ok).is_empty());
    let bad = obj(
        json!({"id": 1, "ok": true, "decision": "allow", "offers": {"family": "git", "exact": true},
                             "card": {"channel": "terminal"}}),
    );
    let m = judge("case", &s[0], &bad);
    assert_eq!(m.len(), 2, "{m:?}");
    assert!(
        m[0].ends_with("offers.family: expected null, got git"),
        "{m:?}"
    );
    assert!(m[1].contains("card: expected null"), "{m:?}");
}

#[test]
fn saved_grants_and_outcomes() {
    let s = steps(
            "[[step]]\ndecide = \"git status\"\nexpect = { decision = \"allow\" }\n\
             [[step]]\nanswer = \"family\"\nexpect = { outcome = \"approved\", saved = { kind = \"family\", key = \"git\" } }\n\
             [[step]]\nanswer = \"once\"\nexpect = { saved = false }\n\
             [[step]]\ngrants = true\nexpect = { grants = [{ kind = \"family\", key = \"git\" }] }\n\
             [[step]]\naudit = true\nexpect = { outcomes = [\"approved\"] }\n",
        );
    let saved = obj(
        json!({"id": 1, "ok": true, "outcome": "approved", "saved": {"kind": "family", "key": "git"}}),
    );
    assert!(judge("step", &s[1], &saved).is_empty());
    assert_eq!(
            judge("step", &s[2], &saved),
            vec!["step 3 (answer \"once\"): saved: expected null, got {\"key\":\"git\",\"kind\":\"family\"}"]
        );
    let empty = obj(json!({"id": 1, "ok": true, "grants": []}));
    assert_eq!(
        judge("step", &s[3], &empty),
        vec!["step 4 (grants): grants: expected [family \"git\"], got []"]
    );
    let audit = obj(json!({"id": 1, "ok": true, "records": [{"outcome": "expired"}]}));
    assert_eq!(
        judge("step", &s[4], &audit),
        vec!["step 5 (audit): outcomes: expected [\"approved\"], got [\"expired\"]"]
    );
}

#[test]
fn control_answers_are_judged() {
    let s = steps(
            "[[step]]\nread = \"f\"\nexpect = { result = \"quarantined\", prompted = false, preview = false }\n\
             [[step]]\nlist = \".\"\nexpect = { result = \"listed\", entries = [{ name = \"a\", kind = \"file\" }, { name = \"l\", kind = \"symlink\" }] }\n\
             [[step]]\nstatus = true\nexpect = { rules = [{ namespace = \"relative\", key = \"\", trust = \"trusted\", origin = \"startup\" }] }\n\
             [[step]]\nrun = \"x\"\nexpect = { exit = \"nonzero\", held_by = \"native\", posture = { state = \"fence\", not_covered_has = [\"truncate\"] } }\n\
             [[step]]\nrun = \"y\"\nexpect = { exit = 0 }\ncheck = { exists = [\"y\"] }\n",
        );
    let read = obj(json!({"result": "quarantined", "prompted": false, "preview": null}));
    assert!(judge("step", &s[0], &read).is_empty());
    let list = obj(
        json!({"result": "listed", "entries": [{"name": "l", "kind": "symlink"}, {"name": "a", "kind": "file"}]}),
    );
    assert!(judge("step", &s[1], &list).is_empty());
    let list = obj(json!({"result": "listed", "entries": [{"name": "a", "kind": "file"}]}));
    assert_eq!(
            judge("step", &s[1], &list),
            vec!["step 2 (list \".\"): entries: expected {\"a (file)\", \"l (symlink)\"}, got {\"a (file)\"}"]
        );
    let status = obj(
        json!({"rules": [{"namespace": "relative", "key": "", "trust": "trusted", "origin": "startup"}], "roots": []}),
    );
    assert!(judge("step", &s[2], &status).is_empty());
    let status = obj(json!({"rules": []}));
    assert_eq!(judge("step", &s[2], &status).len(), 1);
    let run = obj(
        json!({"exit": 0, "held_by": "native", "posture": {"state": "fence", "not_covered": []}}),
    );
    assert_eq!(
        judge("step", &s[3], &run),
        vec![
            "step 4 (run \"x\"): exit: expected nonzero, got 0",
            "step 4 (run \"x\"): posture.not_covered: expected a list holding truncate, got []",
        ]
    );
}
