//! The fake implementations prove the runner catches what it claims to catch: wrong
//! decisions fail, protocol violations error, and the run goes on after each.

mod common;

use common::{Suite, GRANTS_ONLY, READ_LIST};

#[test]
fn allow_all_fails_a_scenario_expecting_ask() {
    let suite = Suite::new();
    suite.scenario("gate/read-list", READ_LIST);
    let run = suite.run("allow_all", &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let s = run.scenario("gate/read-list");
    assert_eq!(s["outcome"], "failed");
    let steps = s["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["outcome"], "passed");
    assert_eq!(steps[1]["outcome"], "failed");
    let mismatches: Vec<&str> = steps[1]["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let input = steps[1]["request"]["input"].as_str().unwrap();
    assert_eq!(
        mismatches,
        vec![
            format!(
                "case 2 (decide {:?}): decision: expected ask, got allow",
                "ls @OUTSIDE@/secret.txt"
            ),
            format!(
                "case 2 (decide {:?}): route: expected card, got auto_safe",
                "ls @OUTSIDE@/secret.txt"
            ),
        ]
    );
    // Placeholders are replaced by the canonical absolute path before anything is sent.
    assert!(
        input.starts_with("ls /") && input.ends_with("/outside/secret.txt"),
        "{input}"
    );
    assert!(!input.contains('@'));
    assert_eq!(run.json()["requirements"]["GATE-T-1"]["failed"], 1);
}

#[test]
fn deny_all_fails_a_scenario_expecting_allow() {
    let suite = Suite::new();
    suite.scenario("gate/read-list", READ_LIST);
    let run = suite.run("deny_all", &[]);
    assert_eq!(run.code, 1);
    let s = run.scenario("gate/read-list");
    assert_eq!(s["outcome"], "failed");
    assert_eq!(
        s["reason"],
        "case 1 (decide \"ls\"): decision: expected allow, got deny"
    );
}

#[test]
fn liar_fails_on_paths_metacharacters_grants_and_silence() {
    let suite = Suite::new();
    suite.scenario("gate/read-list", READ_LIST).scenario(
        "gate/metachar",
        r#"
title = "A read-only command chained to a write asks"
requirements = ["GATE-T-1"]
tier = "decision"
[[case]]
decide = "cat notes.txt"
expect = { decision = "allow" }
[[case]]
decide = "cat notes.txt; rm -rf ."
expect = { decision = "ask" }
"#,
    );
    suite.scenario(
        "gate/family-grant",
        r#"
title = "A family grant is listed after it is saved"
requirements = ["GATE-T-2"]
tier = "decision"
[[step]]
decide = "npm test"
expect = { decision = "ask" }
[[step]]
answer = "family"
expect = { outcome = "approved", saved = { kind = "family", key = "npm" } }
[[step]]
grants = true
expect = { grants = [{ kind = "family", key = "npm" }] }
[[step]]
decide = "npm test"
expect = { decision = "allow", route = "grant_family" }
"#,
    );
    suite.scenario(
        "gate/silence",
        r#"
title = "Silence expires the card only when its window has run out"
requirements = ["GATE-T-3"]
tier = "decision"
[setup]
card_window_ms = 400
[[step]]
decide = "make deploy"
expect = { decision = "ask" }
[[step]]
answer = "silence"
expect = { outcome = "expired", saved = false }
[[step]]
decide = "ls"
expect = { decision = "allow" }
"#,
    );
    let run = suite.run("liar", &[]);
    assert_eq!(run.code, 1);
    let json = run.json();
    assert_eq!(json["summary"]["failed"], 4, "{json:#}");
    let grant = run.scenario("gate/family-grant");
    assert_eq!(
        grant["reason"],
        "step 3 (grants): grants: expected [family \"npm\"], got []"
    );
    let silence = run.scenario("gate/silence");
    let m = silence["steps"][1]["mismatches"][0].as_str().unwrap();
    assert!(
        m.contains("before the card window of 400 ms ran out (PROTO-GATE-2)"),
        "{m}"
    );
}

#[test]
fn garbage_is_errored_and_the_run_goes_on() {
    let suite = Suite::new();
    suite
        .scenario("gate/a-read-list", READ_LIST)
        .scenario("gate/b-grants", GRANTS_ONLY);
    let run = suite.run("garbage", &[]);
    assert_eq!(run.code, 1);
    let s = run.scenario("gate/a-read-list");
    assert_eq!(s["outcome"], "errored");
    assert_eq!(s["error_kind"], "garbage");
    assert_eq!(s["reason"], "garbage: not a JSON object: this is not json");
    assert_eq!(run.scenario("gate/b-grants")["outcome"], "passed");
}

#[test]
fn hang_is_a_timeout_and_the_next_scenario_runs() {
    let suite = Suite::new();
    suite
        .scenario("gate/a-read-list", READ_LIST)
        .scenario("gate/b-grants", GRANTS_ONLY);
    let started = std::time::Instant::now();
    // 3 s: the handshake has the same bound, and a Python fake's start on a loaded
    // machine took more than 1 s (the runner then rightly exits 2, "did not start").
    let run = suite.run("hang", &["--step-timeout", "3"]);
    assert!(
        started.elapsed().as_secs() < 30,
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(run.code, 1);
    let s = run.scenario("gate/a-read-list");
    assert_eq!(s["outcome"], "errored");
    assert_eq!(s["error_kind"], "timeout");
    assert_eq!(s["reason"], "timeout: no answer to `decide` within 3.0 s");
    assert_eq!(run.scenario("gate/b-grants")["outcome"], "passed");
}

#[test]
fn crash_reports_its_status_and_the_next_scenario_runs() {
    let suite = Suite::new();
    suite
        .scenario("gate/a-read-list", READ_LIST)
        .scenario("gate/b-grants", GRANTS_ONLY);
    let run = suite.run("crash", &[]);
    assert_eq!(run.code, 1);
    let s = run.scenario("gate/a-read-list");
    assert_eq!(s["outcome"], "errored");
    assert_eq!(s["error_kind"], "crashed");
    assert_eq!(
        s["reason"],
        "crashed: the implementation exited with status 3 during `decide`"
    );
    assert!(
        s["stderr"][0]
            .as_str()
            .unwrap()
            .contains("crash.py: giving up on 'ls'"),
        "{s:#}"
    );
    assert_eq!(run.scenario("gate/b-grants")["outcome"], "passed");
}

#[test]
fn the_json_report_has_the_summary_counts() {
    let suite = Suite::new();
    suite
        .scenario("gate/a-read-list", READ_LIST)
        .scenario("gate/b-grants", GRANTS_ONLY)
        .scenario(
            "gate/c-linux-only",
            "title = \"t\"\nrequirements = [\"GATE-T-1\"]\ntier = \"decision\"\n[platform]\nos = [\"plan9\"]\n[[step]]\ngrants = true\n",
        )
        .scenario(
            "gate/d-fence",
            "title = \"t\"\nrequirements = [\"GATE-T-1\"]\ntier = \"enforcement\"\ncapabilities = [\"fence\"]\n[[step]]\ngrants = true\n",
        );
    let run = suite.run("allow_all", &[]);
    let json = run.json();
    assert_eq!(
        json["summary"],
        serde_json::json!({"passed": 1, "failed": 1, "skipped": 2, "errored": 0})
    );
    assert_eq!(
        run.scenario("gate/c-linux-only")["reason"],
        format!(
            "platform: runs on plan9; this host is {}",
            std::env::consts::OS
        )
    );
    assert_eq!(
        run.scenario("gate/d-fence")["reason"],
        "missing capability `fence`"
    );
    assert_eq!(json["environment"]["name"], "allow-all");
    assert_eq!(
        json["environment"]["capabilities"],
        serde_json::json!(["gate"])
    );
    assert_eq!(json["runner"]["protocol"], "1.6");
}

#[test]
fn all_passed_and_skipped_exits_zero_and_filters_apply() {
    let suite = Suite::new();
    suite
        .scenario("gate/a-read-list", READ_LIST)
        .scenario("gate/b-grants", GRANTS_ONLY);
    let run = suite.run("allow_all", &["--filter", "gate/b-*"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["summary"]["passed"], 1);
    assert_eq!(run.json()["scenarios"].as_array().unwrap().len(), 1);
    let run = suite.run("allow_all", &["--filter", "grants"]);
    assert_eq!(run.code, 0);
}
