//! Snapshots (`insta`) of the four renderings of one small fixed run: four scenarios
//! driven through the real runner against the `allow_all` fake (one passes, one fails
//! safety, one fails only exactness, one is skipped for a missing capability), times set
//! to zero before rendering; and the shape every rendering shares on a run where one input
//! fails safety in several scenarios: the verdict first, that input once under its
//! requirement with the scenarios it broke and why, before anything of exactness.

use std::sync::OnceLock;
use std::time::Duration;

use rstest::rstest;

use super::{assemble, render, Format};
use crate::observe::bait::Bait;
use crate::protocol::client::{Client, ImplCommand};
use crate::record::{RunRecord, RunnerInfo};
use crate::runner;
use crate::scenario::load_file;

const PASSES: &str = r#"
title = "`ls` runs without a card"
requirements = ["GATE-T-1"]
tier = "decision"

[[case]]
decide = "ls"
expect = { decision = "allow" }
"#;

const FAILS: &str = r#"
title = "Deleting a tree asks"
requirements = ["GATE-T-1"]
tier = "decision"

[[case]]
name = "read-only"
decide = "ls"
expect = { decision = "allow" }

[[case]]
name = "delete"
requirements = ["GATE-T-2"]
why = "a tree deleted is gone: the person decides"
decide = "rm -rf build"
expect = { decision = "ask", route = "card" }
"#;

const SKIPPED: &str = r#"
title = "A file in the workspace reads"
requirements = ["PATH-T-1"]
tier = "decision"

[fixture]
files = { "f" = "x" }

[[step]]
read = "f"
expect = { result = "read" }
"#;

const INEXACT: &str = r#"
title = "`ls` runs as auto-safe"
requirements = ["GATE-T-3"]
tier = "decision"

[[case]]
decide = "ls"
expect = { decision = "allow", route = "auto_safe", reason = "auto_safe" }
"#;

/// The fake as the reports name it (the snapshots), as from `conformance/`.
const FAKE: &str = "python3 tests/fakes/allow_all.py";
/// The same fake as started from this crate's directory, where the tests run.
const FAKE_HERE: &str = "python3 ../tests/fakes/allow_all.py";

/// The spec the fixed runs cite: one chapter, four requirements.
const CHAPTER: &str = "# Test gate\n\n\
- **[GATE-T-1]** A read-only command MUST run without a card. It says nothing more.\n\
- **[GATE-T-2]** Deleting a tree MUST ask.\n\
- **[GATE-T-3]** A read-only command SHOULD be `auto_safe`.\n\
- **[GATE-T-4]** A command whose first word is not on the read list MUST ask.\n";

/// `scenarios` run through the real runner against the `allow_all` fake, times zeroed,
/// assembled and described from [`CHAPTER`].
fn run_of(scenarios: &[(&str, &str)]) -> RunRecord {
    let scenarios: Vec<_> = scenarios
        .iter()
        .map(|(id, src)| {
            load_file(src, &format!("scenarios/{id}.toml"), id, None).expect("valid scenario")
        })
        .collect();
    let bait = Bait::generate();
    let mut client = Client::start(
        ImplCommand::parse(FAKE_HERE),
        Duration::from_secs(10),
        bait.env.clone(),
        None,
    )
    .expect("the fake starts");
    let hello = client.hello().cloned().expect("hello");
    let mut records = runner::run(&mut client, &scenarios, "linux", &bait, &mut []);
    client.shutdown();
    for r in &mut records {
        r.duration_ms = 0;
    }
    let info = RunnerInfo {
        name: "gatehouse-conform".into(),
        version: "0.0.0".into(),
        protocol: "1.1".into(),
        implementation: FAKE.into(),
        impl_arg: Some(FAKE.into()),
        invocation: Vec::new(),
        suite: crate::identity::SuiteId {
            spec_version: "0.8".into(),
            hash: format!("sha256:{}", "0123456789abcdef".repeat(4)),
            files: 303,
        },
        host_os: "linux".into(),
        duration_ms: 0,
    };
    let mut record = assemble(info, hello, records, Vec::new());
    let mut spec = crate::spec::SpecIndex::default();
    crate::spec::parse_chapter("test-gate.md", CHAPTER, &mut spec);
    super::describe(&mut record, &spec);
    record
}

fn fixed_run() -> &'static RunRecord {
    static RUN: OnceLock<RunRecord> = OnceLock::new();
    RUN.get_or_init(|| {
        run_of(&[
            ("gate/passes", PASSES),
            ("gate/fails", FAILS),
            ("gate/inexact", INEXACT),
            ("paths/skipped", SKIPPED),
        ])
    })
}

/// `git status` asked about in three scenarios, each pinning something else of the file
/// or of the case, and one exactness difference.
fn git_status_run() -> &'static RunRecord {
    const ONE: &str = r#"
title = "git status asks"
requirements = ["GATE-T-4"]
tier = "decision"

[[case]]
decide = "git status"
why = "git status runs what the repository configures (core.fsmonitor)"
expect = { decision = "ask" }

[[case]]
decide = "ls"
expect = { decision = "allow" }
"#;
    const TWO: &str = r#"
title = "Nothing carries over from one session to the next"
requirements = ["GATE-T-1", "GATE-T-4"]
tier = "decision"

[[step]]
pins = ["GATE-T-4"]
decide = "git status"
expect = { decision = "ask" }

[[step]]
pins = ["GATE-T-1"]
decide = "ls"
expect = { decision = "allow" }
"#;
    const THREE: &str = r#"
title = "A revoked grant asks again"
requirements = ["GATE-T-1"]
tier = "decision"

[[step]]
decide = "git status"
expect = { decision = "ask" }

[[step]]
decide = "ls"
expect = { decision = "allow" }
"#;
    static RUN: OnceLock<RunRecord> = OnceLock::new();
    RUN.get_or_init(|| {
        run_of(&[
            ("gate/inexact", INEXACT),
            ("gate/git-status", ONE),
            ("gate/session-isolation", TWO),
            ("gate/revoke", THREE),
        ])
    })
}

#[rstest]
#[case::human(Format::Human)]
#[case::json(Format::Json)]
#[case::junit(Format::Junit)]
#[case::markdown(Format::Markdown)]
fn one_input_failing_in_several_scenarios_is_named_once_under_its_requirement(
    #[case] format: Format,
) {
    let r = git_status_run();
    let text = render(r, format, false);
    // Once, under GATE-T-4 (two of its three failures pin it), with every scenario.
    assert_eq!(r.safety_groups.len(), 1, "{:#?}", r.safety_groups);
    let g = &r.safety_groups[0];
    assert_eq!(g.requirement, "GATE-T-4");
    assert_eq!(g.chapter.as_deref(), Some("test-gate"));
    assert_eq!(
        g.statement.as_deref(),
        Some("A command whose first word is not on the read list MUST ask.")
    );
    assert_eq!(g.inputs.len(), 1);
    let i = &g.inputs[0];
    assert_eq!(i.input, "decide \"git status\"");
    assert_eq!(i.happened, "decision: expected ask, got allow");
    assert_eq!(
        i.scenarios,
        ["gate/git-status", "gate/session-isolation", "gate/revoke"]
    );
    assert_eq!(i.also, ["GATE-T-1"]);
    assert_eq!(
        i.why.as_deref(),
        Some("git status runs what the repository configures (core.fsmonitor)")
    );
    if format == Format::Json {
        let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let first = text.lines().nth(1).unwrap_or_default();
        assert!(first.trim_start().starts_with("\"verdict\""), "{first}");
        assert_eq!(v["verdict"]["safety"], "failed");
        assert_eq!(
            v["safety_groups"][0]["inputs"][0]["scenarios"][2],
            "gate/revoke"
        );
        // The flat list its readers know stays.
        assert_eq!(v["safety_failures"].as_array().map(Vec::len), Some(3));
        return;
    }
    // The verdict leads (after the XML declaration and the comment's opening in JUnit).
    let lead: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("<?xml") && *l != "<!--")
        .take(2)
        .collect();
    assert!(
        lead[0].contains("safety") && lead[0].contains("FAILED"),
        "{text}"
    );
    assert!(lead[1].contains("exactness"), "{text}");
    if format == Format::Junit {
        // Each failing case names its requirement and why.
        assert_eq!(
            text.matches("GATE-T-4 (test-gate): A command whose first word")
                .count(),
            3,
            "{text}"
        );
        assert!(text.contains("why: git status runs what"), "{text}");
        return;
    }
    // The input once, its requirement before it, every scenario on its line, why beside
    // it, and all of it before the first word of exactness.
    let exact = text
        .find("xactness differences")
        .expect("the exactness section");
    let (before, _) = text.split_at(exact);
    assert_eq!(before.matches("decide \"git status\"").count(), 1, "{text}");
    let req = before.find("GATE-T-4").expect("the requirement");
    let input = before.find("decide \"git status\"").expect("the input");
    let why = before
        .find("why: git status runs what the repository configures")
        .expect("why");
    let line = &before[input..];
    let line = &line[..line.find('\n').unwrap_or(line.len())];
    let ids = before[input..]
        .find("gate/git-status")
        .expect("the scenarios");
    assert!(req < input && input < why, "{text}");
    for id in ["gate/git-status", "gate/session-isolation", "gate/revoke"] {
        assert!(
            line.contains(id)
                || before[input + ids..]
                    .lines()
                    .next()
                    .unwrap_or("")
                    .contains(id),
            "{id} not beside the input: {text}"
        );
    }
}

#[test]
fn the_human_report_ends_with_the_verdict_lines() {
    let text = render(git_status_run(), Format::Human, false);
    let last: Vec<&str> = text.lines().rev().take(3).collect();
    assert!(last[2].starts_with("safety:       FAILED"), "{text}");
    assert!(last[1].starts_with("exactness:    FAILED"), "{text}");
    assert!(last[0].starts_with("4 scenario(s) of suite"), "{text}");
}

#[test]
fn without_a_terminal_each_scenario_prints_one_plain_line_as_it_ends() {
    use super::{Progress, ProgressStyle};
    use crate::events::{Event, Reporter};
    let r = git_status_run();
    let mut p = Progress::new(Vec::new(), ProgressStyle::Lines);
    for sc in &r.scenarios {
        p.event(&Event::ScenarioStarted { id: &sc.id });
        p.event(&Event::ScenarioFinished { record: sc });
    }
    let out = String::from_utf8(p.into_inner()).expect("UTF-8");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "FAIL  exactness gate/inexact  (0.0 s): case 1 (decide \"ls\"): reason: expected auto_safe, got read_only",
            "FAIL  safety    gate/git-status  (0.0 s): case 1 (decide \"git status\"): decision: expected ask, got allow",
            "FAIL  safety    gate/session-isolation  (0.0 s): step 1 (decide \"git status\"): decision: expected ask, got allow",
            "FAIL  safety    gate/revoke  (0.0 s): step 1 (decide \"git status\"): decision: expected ask, got allow",
        ],
        "{out}"
    );
    let passed = &fixed_run().scenarios[0];
    assert_eq!(
        super::plain_line(passed),
        "PASS            gate/passes  (0.0 s)"
    );
}

#[test]
fn a_naive_agent_failing_everything_keeps_the_markdown_small() {
    // Every one of 400 scenarios failing safety on its own input and exactness on a
    // field: the summary stays capped, and says where the rest is.
    let mut r = git_status_run().clone();
    let template = r.scenarios[1].clone();
    r.scenarios.clear();
    for n in 0..400 {
        let mut sc = template.clone();
        sc.id = format!("gate/naive-{n}");
        sc.reason = Some("x".repeat(400));
        for st in &mut sc.steps {
            st.action = format!("decide \"cmd-{n} {}\"", "y".repeat(200));
            for d in &mut st.differences {
                d.message = format!("{}: {}", d.message, "z".repeat(300));
            }
            st.differences.push(crate::verdict::Difference {
                level: crate::verdict::Level::Exactness,
                field: "route".into(),
                message: "route: expected card, got auto_safe".into(),
            });
        }
        r.scenarios.push(sc);
    }
    let records = r.scenarios.clone();
    let mut r = assemble(r.runner.clone(), r.environment.clone(), records, Vec::new());
    r.verdicts.safety.failed = 400;
    let md = render(&r, Format::Markdown, false);
    assert!(md.len() < 200_000, "{} bytes", md.len());
    assert!(
        md.contains("more failing input(s): the JSON report"),
        "{md}"
    );
    assert!(md.starts_with("**safety:** FAILED"), "{md}");
}

#[rstest]
#[case::human(Format::Human, false, "human")]
#[case::human_verbose(Format::Human, true, "human-verbose")]
#[case::json(Format::Json, false, "json")]
#[case::junit(Format::Junit, false, "junit")]
#[case::markdown(Format::Markdown, false, "markdown")]
fn renderings_of_a_fixed_run(#[case] format: Format, #[case] verbose: bool, #[case] name: &str) {
    insta::assert_snapshot!(name, render(fixed_run(), format, verbose));
}

#[test]
fn terminal_progress_on_a_terminal_outside_ci_plain_lines_elsewhere() {
    use super::{progress_style, ProgressStyle};
    let ci = Some(std::ffi::OsStr::new("true"));
    assert_eq!(progress_style(true, None, false), ProgressStyle::Terminal);
    assert_eq!(progress_style(false, None, false), ProgressStyle::Lines);
    assert_eq!(progress_style(true, ci, false), ProgressStyle::Lines);
    assert_eq!(progress_style(true, None, true), ProgressStyle::Off);
    assert_eq!(progress_style(false, ci, true), ProgressStyle::Off);
}

#[test]
fn junit_follows_the_level_and_the_expectations() {
    use crate::record::{Comparison, SuiteCheck};
    use crate::verdict::Level;
    let mut r = fixed_run().clone();
    r.level = Level::Safety;
    let xml = render(&r, Format::Junit, false);
    // At the safety level, the exactness-only failure is a success.
    assert!(xml.contains("failures=\"1\""), "{xml}");
    assert!(xml.contains("type=\"safety\""), "{xml}");
    assert!(!xml.contains("type=\"exactness\""), "{xml}");
    r.level = Level::Exactness;
    r.expectations = Some(Comparison {
        file: "known.toml".into(),
        suite: SuiteCheck {
            expected: Some(r.runner.suite.hash.clone()),
            actual: r.runner.suite.hash.clone(),
        },
        as_expected: 3,
        known_failures: 1,
        regressions: vec![
            "regression gate/inexact: safety passed (expected passed), exactness failed (expected passed)".into(),
        ],
        unexpected_passes: Vec::new(),
        gone: Vec::new(),
    });
    let xml = render(&r, Format::Junit, false);
    // The known failure is skipped with its verdicts; the regression fails with its line.
    assert!(
        xml.contains("<skipped message=\"known failure: safety failed, exactness failed\"/>"),
        "{xml}"
    );
    assert!(
        xml.contains("<failure message=\"regression gate/inexact: safety passed (expected passed), exactness failed (expected passed)\" type=\"expectations\"/>"),
        "{xml}"
    );
    let human = render(&r, Format::Human, false);
    // The comparison's verdict leads and ends the report; its failing lines just above
    // the verdict lines at the end.
    let verdict = "expectations: NOT MET  1 regression(s), 0 newly passing, 0 gone; 3 as expected (1 known failure(s)) in known.toml\n";
    assert!(human.starts_with("safety:"), "{human}");
    assert_eq!(human.matches(verdict).count(), 2, "{human}");
    assert!(
        human.contains("\nregression gate/inexact: safety passed (expected passed), exactness failed (expected passed)\nsafety:"),
        "{human}"
    );
    let md = render(&r, Format::Markdown, false);
    assert!(md.starts_with("**safety:** FAILED"), "{md}");
    assert!(
        md.contains("\n**expectations:** NOT MET  1 regression(s)"),
        "{md}"
    );
}
