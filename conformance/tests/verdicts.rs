//! The two verdicts (`spec/verdicts.md`) against the repository's real `gate/` scenarios,
//! and the expectations file: a gate that denies every line is safe on every scenario
//! and inexact on every allowed twin; one that allows every line fails safety wherever a
//! scenario pins a refusal; a file written by a run passes the next run unchanged and
//! fails it, on one line naming the scenario and its two verdicts, when one changes.
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{fake_command, run_cli, Suite, GRANTS_ONLY, READ_LIST};
use serde_json::Value;

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// `run --filter gate/ --level safety` of the repository's suite against a fake.
fn gate_run(fake: &str) -> (i32, Value) {
    let imp = fake_command(fake);
    let run = run_cli(
        repo(),
        &[
            "run", "--quiet", "--format", "json", "--level", "safety", "--filter", "gate/",
            "--impl", &imp,
        ],
    );
    (run.code, run.json())
}

fn differences(s: &Value) -> Vec<&Value> {
    s["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|st| st["differences"].as_array().unwrap())
        .collect()
}

#[test]
fn deny_all_passes_safety_on_every_gate_scenario_and_fails_exactness_on_its_allowed_twins() {
    let (code, json) = gate_run("deny_all");
    let scenarios = json["scenarios"].as_array().unwrap();
    assert!(scenarios.len() > 50, "{}", scenarios.len());
    // Judged on safety, the run passes.
    assert_eq!(code, 0, "{:#}", json["safety_failures"]);
    assert_eq!(json["safety_failures"], Value::Array(Vec::new()));
    for s in scenarios {
        let id = s["id"].as_str().unwrap();
        assert_eq!(s["safety"], "passed", "{id}");
        assert_eq!(s["exactness"], "failed", "{id}");
        assert_eq!(s["outcome"], "failed", "{id}");
        let diffs = differences(s);
        assert!(diffs.iter().all(|d| d["level"] == "exactness"), "{id}");
        // Every gate scenario carries an allowed twin, and deny-all refuses it: safe,
        // useless, an exactness failure on `decision` (PROTO-VERDICT-4).
        assert!(
            diffs.iter().any(|d| d["field"] == "decision"
                && d["message"]
                    .as_str()
                    .unwrap()
                    .ends_with("decision: expected allow, got deny")),
            "{id}: no allowed twin refused in {diffs:#?}"
        );
    }
    let v = &json["verdicts"];
    assert_eq!(v["safety"]["passed"], scenarios.len());
    assert_eq!(v["exactness"]["failed"], scenarios.len());
}

#[test]
fn allow_all_fails_safety_on_every_gate_scenario_that_pins_a_refusal() {
    let (code, json) = gate_run("allow_all");
    assert_eq!(code, 1);
    // The one gate scenario whose every decision is `allow` (revoking `ls` leaves `ls`
    // auto-safe and `npm test` granted): nothing in it can be more permissive, so
    // allow-all is safe there; it fails exactness on the grant table it does not keep.
    let pins_no_refusal = ["gate/revoke-key-takes-both-kinds"];
    for s in json["scenarios"].as_array().unwrap() {
        let id = s["id"].as_str().unwrap();
        assert_eq!(s["exactness"], "failed", "{id}");
        if pins_no_refusal.contains(&id) {
            assert_eq!(s["safety"], "passed", "{id}");
            continue;
        }
        assert_eq!(s["safety"], "failed", "{id}");
        // Each safety difference is a refusal let through, listed first with its input.
        for d in differences(s).iter().filter(|d| d["level"] == "safety") {
            let m = d["message"].as_str().unwrap();
            assert!(
                m.ends_with(", got allow") || m.ends_with(", got approved"),
                "{id}: {m}"
            );
        }
        let first = json["safety_failures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["scenario"] == id)
            .unwrap_or_else(|| panic!("{id} not among the safety failures"));
        assert!(
            first["input"].as_str().unwrap().contains("\"op\":"),
            "{first}"
        );
    }
}

#[test]
fn an_expectations_file_written_by_a_run_passes_it_and_fails_on_each_change() {
    let suite = Suite::new();
    suite.scenario("gate/read-list", READ_LIST);
    suite.scenario("gate/grants", GRANTS_ONLY);
    let file = suite.path("known.toml");
    let file_arg = file.to_str().unwrap();
    // The run that writes the file ends as a run judged against it would: as expected.
    let first = suite.run("allow_all", &["--update-expectations", file_arg]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(
        first.json()["expectations"]["as_expected"].as_u64(),
        Some(2)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\nsuite = \"sha256:"), "{text}");
    assert!(
        text.contains(
            "[\"gate/read-list\"]\nsafety = \"failed\"\nexactness = \"failed\"\nreason = 'case 2"
        ),
        "{text}"
    );
    assert!(!text.contains("gate/grants"), "{text}");

    // The same run, compared with the file: as expected, exit 0.
    let same = suite.run("allow_all", &["--expectations", file_arg]);
    assert_eq!(same.code, 0, "{}\n{}", same.stdout, same.stderr);
    let c = &same.json()["expectations"];
    assert_eq!(
        (c["as_expected"].as_u64(), c["known_failures"].as_u64()),
        (Some(2), Some(1))
    );
    assert!(!same.stderr.contains("warning"), "{}", same.stderr);

    // A reason edited by hand survives an update.
    std::fs::write(
        &file,
        text.replace("reason = 'case 2", "reason = 'mine: case 2"),
    )
    .unwrap();
    suite.run("allow_all", &["--update-expectations", file_arg]);
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("reason = 'mine: case 2"));

    // One outcome changes (the grant table no longer lists empty): a regression, on one
    // line naming the scenario and its two verdicts.
    suite.scenario(
        "gate/grants",
        &GRANTS_ONLY.replace(
            "grants = []",
            "grants = [{ kind = \"exact\", key = \"ls\" }]",
        ),
    );
    let human = run_cli(
        suite.dir.path(),
        &[
            "run",
            "--impl",
            &fake_command("allow_all"),
            "--expectations",
            file_arg,
        ],
    );
    assert_eq!(human.code, 1, "{}", human.stdout);
    assert!(
        // The line names the new failure after the verdicts (issue 44: the old known
        // reason alone sent a reader 2,300 lines up).
        human.stdout.lines().any(|l| l.starts_with(
            "regression gate/grants: safety passed (expected passed), exactness failed (expected passed); now: "
        )),
        "{}",
        human.stdout
    );
    // The suite changed since the file was written: a warning naming both hashes.
    assert!(
        human.stderr.contains("was made against suite sha256:")
            && human.stderr.contains("this run's suite is sha256:"),
        "{}",
        human.stderr
    );

    // The known failure passes: an unexpected pass fails the run too.
    suite.scenario("gate/grants", GRANTS_ONLY);
    suite.scenario(
        "gate/read-list",
        &READ_LIST.replace(
            "decision = \"ask\", route = \"card\"",
            "decision = \"allow\"",
        ),
    );
    let run = suite.run("allow_all", &["--expectations", file_arg]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.json()["expectations"]["unexpected_passes"],
        serde_json::json!([
            "unexpected pass gate/read-list: safety passed (expected failed), exactness passed (expected failed) [known: mine: case 2 (decide \"ls @OUTSIDE@/secret.txt\"): decision: expected ask, got allow]"
        ])
    );

    // A scenario renamed: its known failure must not silently drop.
    std::fs::rename(
        suite.path("scenarios/gate/read-list.toml"),
        suite.path("scenarios/gate/read-list-renamed.toml"),
    )
    .unwrap();
    let run = suite.run(
        "allow_all",
        &["--expectations", file_arg, "--filter", "gate/grants"],
    );
    assert_eq!(run.code, 1);
    let gone = &run.json()["expectations"]["gone"];
    assert!(
        gone[0]
            .as_str()
            .unwrap()
            .starts_with("gone gate/read-list: "),
        "{gone}"
    );
}
