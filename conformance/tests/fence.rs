//! The enforcement tier against fakes that run commands unfenced: one says so, one
//! claims a fence it does not have. The runner must fail both on what it checks itself
//! (files, planted secrets, its socket, its process), whatever they report.
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Suite;

const WRITE_OUTSIDE: &str = r#"
title = "A write outside the workspace is refused; a write inside works"
requirements = ["GATE-T-1"]
tier = "enforcement"

[fixture.outside]
files = { "victim" = "keep me safe" }

[[step]]
name = "inside"
run = "printf hi > inside.txt"
expect = { exit = 0 }
check = { content = { "inside.txt" = "hi" } }

[[step]]
name = "outside"
run = "printf pwned > @OUTSIDE@/victim"
expect = { exit = "nonzero" }
check = { unchanged = ["@OUTSIDE@/victim"] }
"#;

const INSIDE_ONLY: &str = r#"
title = "A write inside the workspace works"
requirements = ["GATE-T-1"]
tier = "enforcement"

[[step]]
run = "printf hi > inside.txt && cat inside.txt"
expect = { exit = 0 }
check = { content = { "inside.txt" = "hi" }, stdout_has = ["hi"] }
"#;

const BAIT: &str = r#"
title = "No planted secret reaches a jailed command"
requirements = ["GATE-T-1"]
tier = "enforcement"

[[step]]
run = "{ env; cat @HOME@/.ssh/id_gatehouse_bait; } | tee @SINK@"
check = { no_bait = true }
"#;

const SOCKET_AND_PROCESS: &str = r#"
title = "Jailed code reaches neither the runner's socket nor its process"
requirements = ["GATE-T-1"]
tier = "enforcement"

[fixture.socket]
kind = "abstract"

[[step]]
run = "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"\\0@SOCKET@\")'"
check = { socket_untouched = true }

[[step]]
run = "kill -STOP @RUNNER_PID@"
check = { process_alive = true }
"#;

fn suite() -> Suite {
    let suite = Suite::new();
    suite
        .scenario("fence/write-outside", WRITE_OUTSIDE)
        .scenario("fence/inside-only", INSIDE_ONLY)
        .scenario("fence/bait", BAIT)
        .scenario("fence/socket-process", SOCKET_AND_PROCESS);
    suite
}

fn mismatches(s: &serde_json::Value, step: usize) -> Vec<String> {
    s["steps"][step]["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn an_unfenced_implementation_fails_every_attack() {
    let suite = suite();
    let run = suite.run("unfenced", &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.scenario("fence/inside-only")["outcome"], "passed");
    let s = run.scenario("fence/write-outside");
    assert_eq!(s["outcome"], "failed");
    let m = mismatches(&s, 1);
    assert_eq!(
        m[0],
        "step 2 (run \"printf pwned > @OUTSIDE@/victim\"): exit: expected nonzero, got 0"
    );
    assert!(
        m.iter().any(|x| x.starts_with(
            "step 2 (run \"printf pwned > @OUTSIDE@/victim\"): check unchanged @OUTSIDE@/victim: size 12 -> 5, content changed"
        )),
        "{m:#?}"
    );
    assert!(
        m.iter().any(|x| x.contains("check guard @OUTSIDE@/victim")),
        "{m:#?}"
    );
    let bait = run.scenario("fence/bait");
    assert_eq!(bait["outcome"], "failed");
    let m = mismatches(&bait, 0);
    // Observed first (what the command handed the runner's sink), then the answer.
    assert!(
        m[0].contains(
            "check no_bait: the command handed the runner's sink the planted GATEHOUSE_BAIT_TOKEN, OPENAI_API_KEY"
        ),
        "{m:#?}"
    );
    assert!(m[0].contains(".ssh/id_gatehouse_bait"), "{m:#?}");
    assert!(
        m.iter()
            .any(|x| x.contains("check no_bait: the answer shows the planted")),
        "{m:#?}"
    );
    let sp = run.scenario("fence/socket-process");
    assert_eq!(sp["outcome"], "failed");
    assert!(mismatches(&sp, 0)[0].contains(
        "check socket_untouched: a connection reached the runner's socket gatehouse-bait-"
    ));
    let m = mismatches(&sp, 1);
    assert!(
        m.iter()
            .any(|x| x.contains("check process_alive: the runner's process was")),
        "{m:#?}"
    );
}

#[test]
fn a_fence_claimed_but_not_held_fails_on_the_runners_own_checks() {
    let suite = suite();
    let run = suite.run("fence_liar", &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let s = run.scenario("fence/write-outside");
    assert_eq!(s["outcome"], "failed");
    // The exit status and the posture look right; the file says otherwise.
    assert_eq!(s["steps"][1]["answer"]["exit"], 1);
    assert_eq!(s["steps"][1]["answer"]["held_by"], "native");
    let m = mismatches(&s, 1);
    assert!(!m.iter().any(|x| x.contains("exit:")), "{m:#?}");
    assert!(
        m.iter()
            .any(|x| x.contains("check unchanged @OUTSIDE@/victim: size 12 -> 5")),
        "{m:#?}"
    );
    assert_eq!(run.scenario("fence/bait")["outcome"], "failed");
}

#[test]
fn kernel_ranges_skip_with_a_reason_and_expect_flags_refuse_a_different_host() {
    let suite = Suite::new();
    suite.scenario(
        "fence/abi",
        "title = \"t\"\nrequirements = [\"GATE-T-1\"]\ntier = \"enforcement\"\n[platform]\nlandlock_abi = { min = 3 }\n[[step]]\nposture = true\nexpect = { posture = { state = \"fence\" } }\n",
    );
    let run = suite.run("unfenced", &[]);
    assert_eq!(
        run.scenario("fence/abi")["reason"],
        "platform: needs landlock_abi >= 3; the implementation declares null"
    );
    let run = suite.run("fence_liar", &[]);
    assert_eq!(run.scenario("fence/abi")["outcome"], "passed");
    let run = suite.run("unfenced", &["--expect-landlock-abi", "7"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("--expect-landlock-abi 7: the implementation declares landlock_abi null"),
        "{}",
        run.stderr
    );
    let run = suite.run(
        "fence_liar",
        &[
            "--expect-landlock-abi",
            "7",
            "--expect-fence-backend",
            "native",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
}
