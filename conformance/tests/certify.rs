//! `checklist`, `certify`, `verify` and `diff` on a tiny suite (`spec/verdicts.md`,
//! PROTO-CERT-1 to 7): the checklist written and checked by `trace`, a submission folder
//! certified against a fake and verified, and each kind of bad submission refused with
//! exactly one line.
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{fake_command, run_cli, Run, Suite, GRANTS_ONLY, READ_LIST};

const PRODUCT: &str = "name = \"fake\"\nvendor = \"tests\"\nversion = \"1.0.0\"\n\
repository = \"conformance/tests/fakes\"\nreproduce = \"cargo test --test certify\"\n";

/// A suite of version 0.9 with `scenarios`, its checklist written.
fn released(scenarios: &[(&str, &str)]) -> Suite {
    let suite = Suite::new();
    std::fs::write(
        suite.path("spec/README.md"),
        "Specification version: **0.9** (tests)\n",
    )
    .unwrap();
    for (id, text) in scenarios {
        suite.scenario(id, text);
    }
    std::fs::write(suite.path("product.toml"), PRODUCT).unwrap();
    let run = run_cli(suite.dir.path(), &["checklist", "--write"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    suite
}

fn certify(suite: &Suite, fake: &str, out: &str) -> Run {
    let imp = fake_command(fake);
    run_cli(
        suite.dir.path(),
        &[
            "certify",
            "--impl",
            &imp,
            "--product",
            "product.toml",
            "--out",
            out,
        ],
    )
}

/// The problem lines of a `verify` (neither `listed:` nor the closing line).
fn problems(run: &Run) -> Vec<String> {
    run.stdout
        .lines()
        .filter(|l| {
            !l.starts_with("listed: ") && !l.contains(": refused, ") && !l.contains(": verified: ")
        })
        .map(String::from)
        .collect()
}

fn edit_report(dir: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join("report.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn the_checklist_is_written_and_trace_fails_while_it_disagrees() {
    let suite = released(&[("gate/b-grants", GRANTS_ONLY)]);
    let text = std::fs::read_to_string(suite.path("spec/checklists/0.9.toml")).unwrap();
    assert!(text.contains("must = 2\nshould = 1\nmay = 0\n"), "{text}");
    assert!(
        text.contains("id = \"GATE-T-2\"\nlevel = \"MUST\"\nscenarios = [\"gate/b-grants\"]"),
        "{text}"
    );
    std::fs::write(
        suite.path("spec/untestable.toml"),
        "[[untestable]]\nid = \"GATE-T-1\"\nreason = \"r\"\n\n[[untestable]]\nid = \"GATE-T-3\"\nreason = \"r\"\n",
    )
    .unwrap();
    // untestable.toml is part of the suite: the checklist is now stale.
    let run = run_cli(suite.dir.path(), &["trace"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout
            .contains("spec/checklists/0.9.toml: frozen with suite sha256:"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("`GATE-T-1`: its evidence differs"),
        "{}",
        run.stdout
    );
    assert_eq!(run_cli(suite.dir.path(), &["checklist", "--write"]).code, 0);
    let run = run_cli(suite.dir.path(), &["trace"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
}

#[test]
fn verify_accepts_a_good_folder_and_refuses_each_bad_one_with_one_line() {
    let suite = released(&[("gate/b-grants", GRANTS_ONLY)]);
    let run = certify(&suite, "allow_all", "subs/0.9/fake");
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "subs/0.9/fake: verified: fake 1.0.0 (tests), Gatehouse 0.9: safety 1/1, exactness 1/1"
        ),
        "{}",
        run.stdout
    );
    let good = suite.path("subs/0.9/fake");
    for f in ["PRODUCT.toml", "report.json", "run.log", "SUITE"] {
        assert!(good.join(f).is_file(), "{f}");
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(good.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["mode"]["fixed"], true);
    assert_eq!(report["mode"]["filter"], serde_json::json!([]));

    let copy = |name: &str| {
        let dir = suite.path(&format!("subs/0.9/{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["PRODUCT.toml", "report.json", "run.log", "SUITE"] {
            std::fs::copy(good.join(f), dir.join(f)).unwrap();
        }
        dir
    };
    let verify = |dir: &Path| run_cli(suite.dir.path(), &["verify", dir.to_str().unwrap()]);

    // A wrong suite hash (the report and SUITE agree, the release does not).
    let hash = copy("hash");
    let wrong = format!("sha256:{}", "0".repeat(64));
    edit_report(&hash, |v| {
        v["runner"]["suite"]["hash"] = wrong.clone().into()
    });
    std::fs::write(hash.join("SUITE"), format!("{wrong}\n")).unwrap();
    let run = verify(&hash);
    assert_eq!(run.code, 1);
    let p = problems(&run);
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].contains("report.json: suite hash sha256:0000"),
        "{}",
        p[0]
    );
    assert!(
        p[0].contains("is not the suite of the 0.9 release"),
        "{}",
        p[0]
    );

    // An expected failure without a reason.
    let unexplained = copy("unexplained");
    edit_report(&unexplained, |v| {
        v["mode"]["expectations"] = "known.toml".into();
        v["mode"]["expectation_entries"] = 1.into();
    });
    std::fs::write(
        unexplained.join("expectations.toml"),
        "[\"gate/b-grants\"]\nsafety = \"passed\"\nexactness = \"failed\"\nreason = \"\"\n",
    )
    .unwrap();
    let run = verify(&unexplained);
    assert_eq!(run.code, 1);
    let p = problems(&run);
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].ends_with(
            "expectations.toml: `gate/b-grants` is an expected failure without a reason"
        ),
        "{}",
        p[0]
    );

    // A filtered run.
    let filtered = copy("filtered");
    edit_report(&filtered, |v| {
        v["mode"]["filter"] = serde_json::json!(["gate/"])
    });
    let p = problems(&verify(&filtered));
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].contains("the run was filtered (--filter gate/)"),
        "{}",
        p[0]
    );

    // A version that is not pinned, under another version's folder.
    let moved = suite.path("subs/0.8/fake");
    std::fs::create_dir_all(&moved).unwrap();
    for f in ["report.json", "run.log", "SUITE"] {
        std::fs::copy(good.join(f), moved.join(f)).unwrap();
    }
    std::fs::write(
        moved.join("PRODUCT.toml"),
        PRODUCT.replace("1.0.0", "latest"),
    )
    .unwrap();
    let p = problems(&verify(&moved));
    assert_eq!(p.len(), 2, "{p:#?}");
    assert!(
        p[0].contains("`version` \"latest\" is not pinned"),
        "{}",
        p[0]
    );
    assert!(
        p[1].contains("the folder is under version 0.8, the report ran spec version 0.9"),
        "{}",
        p[1]
    );

    // A missing file.
    let missing = copy("missing");
    std::fs::remove_file(missing.join("run.log")).unwrap();
    let p = problems(&verify(&missing));
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(p[0].ends_with("run.log: missing"), "{}", p[0]);
}

#[test]
fn a_failing_must_is_refused_and_diff_shows_it_first() {
    let suite = released(&[
        ("gate/a-read-list", READ_LIST),
        ("gate/b-grants", GRANTS_ONLY),
    ]);
    let run = certify(&suite, "allow_all", "subs/0.9/lax");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let p = problems(&run);
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].ends_with("report.json: `gate/a-read-list` fails safety (failed) on MUST GATE-T-1"),
        "{}",
        p[0]
    );
    assert!(
        run.stdout.contains(
            "subs/0.9/lax: refused, 1 problem(s): fake 1.0.0 (tests), Gatehouse 0.9: safety 1/2"
        ),
        "{}",
        run.stdout
    );

    // The same run against a fake that denies everything: a diff from it to the lax one.
    let strict = certify(&suite, "deny_all", "subs/0.9/strict");
    let (a, b) = ("subs/0.9/strict/report.json", "subs/0.9/lax/report.json");
    let d = run_cli(suite.dir.path(), &["diff", a, b]);
    let lines: Vec<&str> = d.stdout.lines().collect();
    assert!(
        lines[0].starts_with("A: subs/0.9/strict/report.json"),
        "{}",
        d.stdout
    );
    let strict_safe = strict.stdout.contains("verified");
    if strict_safe {
        assert_eq!(d.code, 1, "{}", d.stdout);
        assert!(
            lines[2].starts_with("new failure safety     gate/a-read-list"),
            "{}",
            d.stdout
        );
    }
    let back = run_cli(suite.dir.path(), &["diff", b, a]);
    assert!(
        back.stdout.lines().any(|l| l.starts_with("fixed")) || !strict_safe,
        "{}",
        back.stdout
    );
}

#[test]
fn from_report_packages_only_a_run_of_the_whole_suite() {
    let suite = released(&[("gate/b-grants", GRANTS_ONLY)]);
    let imp = fake_command("allow_all");
    let run = run_cli(
        suite.dir.path(),
        &[
            "run", "--impl", &imp, "--quiet", "--format", "json", "--out", "r.json", "--filter",
            "gate/b",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = run_cli(
        suite.dir.path(),
        &[
            "certify",
            "--from-report",
            "r.json",
            "--product",
            "product.toml",
            "--out",
            "s",
        ],
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("r.json: not a run of the whole suite in the fixed mode"),
        "{}",
        run.stderr
    );
    let run = run_cli(
        suite.dir.path(),
        &[
            "run", "--impl", &imp, "--quiet", "--format", "json", "--out", "r.json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = run_cli(
        suite.dir.path(),
        &[
            "certify",
            "--from-report",
            "r.json",
            "--product",
            "product.toml",
            "--out",
            "s/0.9/fake",
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let log = std::fs::read_to_string(suite.path("s/0.9/fake/run.log")).unwrap();
    assert!(log.contains("passed     passed     gate/b-grants"), "{log}");
}

#[test]
fn a_scoped_submission_tallies_every_must_and_results_are_kept_only_while_refused() {
    let suite = released(&[
        ("gate/a-read-list", READ_LIST),
        ("decision/b-grants", GRANTS_ONLY),
    ]);
    let scoped = |chapters: &str| format!("{PRODUCT}scope = [{chapters}]\n");
    std::fs::write(suite.path("product.toml"), scoped("\"decision\"")).unwrap();
    // The lax fake within its scope: the MUST it runs passes, the other is not tested.
    let run = certify(&suite, "allow_all", "subs/0.9/decision");
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "verified: fake 1.0.0 (tests), Gatehouse 0.9, scope decision: safety 1/1, exactness 1/1; MUST: 1 passed, 0 failed, 1 not tested, 0 by document"
        ),
        "{}",
        run.stdout
    );
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(suite.path("subs/0.9/decision/report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["mode"]["filter"], serde_json::json!(["decision/"]));
    let verify = |dir: &str, results: bool| {
        let mut args = vec!["verify", dir];
        if results {
            args.push("--results");
        }
        run_cli(suite.dir.path(), &args)
    };

    // A run the project already made of exactly its scope packages as well; another
    // filter does not.
    let imp = fake_command("allow_all");
    for (filter, code) in [("decision/", 0), ("decision/b", 2)] {
        let run = run_cli(
            suite.dir.path(),
            &[
                "run", "--impl", &imp, "--quiet", "--format", "json", "--out", "r.json",
                "--filter", filter,
            ],
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        let run = run_cli(
            suite.dir.path(),
            &[
                "certify",
                "--from-report",
                "r.json",
                "--product",
                "product.toml",
                "--out",
                "subs/0.9/from-report",
            ],
        );
        assert_eq!(run.code, code, "{filter}: {}{}", run.stdout, run.stderr);
        if code == 2 {
            assert!(
                run.stderr
                    .contains("not a run of the whole suite or of the chapters decision whole"),
                "{}",
                run.stderr
            );
        }
    }

    // The same report claimed for the whole suite: the filter no longer matches the scope.
    let dir = suite.path("subs/0.9/claimed");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["report.json", "run.log", "SUITE"] {
        std::fs::copy(suite.path("subs/0.9/decision").join(f), dir.join(f)).unwrap();
    }
    std::fs::write(dir.join("PRODUCT.toml"), scoped("\"decision\", \"gate\"")).unwrap();
    let p = problems(&verify("subs/0.9/claimed", false));
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].contains(
            "the run's filters (decision/) are not the product's scope (decision/ gate/)"
        ),
        "{}",
        p[0]
    );
    std::fs::write(dir.join("PRODUCT.toml"), scoped("\"decision\", \"nope\"")).unwrap();
    let p = problems(&verify("subs/0.9/claimed", false));
    assert_eq!(p.len(), 2, "{p:#?}");
    assert!(
        p[0].ends_with("PRODUCT.toml: `scope` names \"nope\", not a chapter of the 0.9 checklist"),
        "{}",
        p[0]
    );

    // In a scope that holds its failing MUST, it is refused, one line for it.
    std::fs::write(suite.path("product.toml"), scoped("\"gate\"")).unwrap();
    let run = certify(&suite, "allow_all", "subs/0.9/gate");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let p = problems(&run);
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].ends_with("report.json: `gate/a-read-list` fails safety (failed) on MUST GATE-T-1"),
        "{}",
        p[0]
    );
    assert!(
        run.stdout
            .contains("MUST: 0 passed, 1 failed, 1 not tested, 0 by document"),
        "{}",
        run.stdout
    );

    // Kept as results: accepted while refused, each refusal a reason.
    let run = verify("subs/0.9/gate", true);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stdout.starts_with("not certified: ")
            && run
                .stdout
                .contains("`gate/a-read-list` fails safety (failed) on MUST GATE-T-1"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("subs/0.9/gate: results, not certified (1 reason(s)): fake 1.0.0"),
        "{}",
        run.stdout
    );
    // A folder that verifies is no results folder; neither is a malformed one.
    let run = verify("subs/0.9/decision", true);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains("verifies as a submission"),
        "{}",
        run.stdout
    );
    std::fs::remove_file(suite.path("subs/0.9/gate/run.log")).unwrap();
    let run = verify("subs/0.9/gate", true);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        run.stdout
            .lines()
            .filter(|l| l.ends_with("run.log: missing"))
            .count(),
        1,
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("not well-formed results, 1 problem(s)"),
        "{}",
        run.stdout
    );
}
