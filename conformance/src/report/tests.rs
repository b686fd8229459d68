//! Snapshots (`insta`) of the four renderings of one small fixed run: four scenarios
//! driven through the real runner against the `allow_all` fake (one passes, one fails
//! safety, one fails only exactness, one is skipped for a missing capability), times set
//! to zero before rendering.

use std::sync::OnceLock;
use std::time::Duration;

use rstest::rstest;

use super::{assemble, render, Format};
use crate::bait::Bait;
use crate::client::{Client, ImplCommand};
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

const FAKE: &str = "python3 tests/fakes/allow_all.py";

fn fixed_run() -> &'static RunRecord {
    static RUN: OnceLock<RunRecord> = OnceLock::new();
    RUN.get_or_init(|| {
        let scenarios = [
            ("gate/passes", PASSES),
            ("gate/fails", FAILS),
            ("gate/inexact", INEXACT),
            ("paths/skipped", SKIPPED),
        ]
        .map(|(id, src)| {
            load_file(src, &format!("scenarios/{id}.toml"), id, None).expect("valid scenario")
        });
        let bait = Bait::generate();
        let mut client = Client::start(
            ImplCommand::parse(FAKE),
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
        assemble(info, hello, records, Vec::new())
    })
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
fn progress_only_on_a_terminal_outside_ci() {
    use super::progress_wanted;
    let ci = Some(std::ffi::OsStr::new("true"));
    assert!(progress_wanted(true, None, false));
    assert!(!progress_wanted(false, None, false));
    assert!(!progress_wanted(true, ci, false));
    assert!(!progress_wanted(true, None, true));
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
    assert!(
        human.contains("\nexpectations: 3 scenario(s) as expected (1 known failure(s)), 1 regression(s), 0 unexpected pass(es), 0 gone\nregression gate/inexact: "),
        "{human}"
    );
}
