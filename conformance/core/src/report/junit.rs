//! The JUnit XML view, built once at the end with `quick-junit`: one testsuite per
//! scenario folder, one testcase per scenario with its time, its file, its two verdicts
//! and every requirement ID it covers as properties. A failure is of type `safety` (its
//! message the first safety difference, with its input) or `exactness`; the run's
//! judging decides which scenarios fail (`spec/verdicts.md`): at `--level safety` a
//! scenario that failed only on exactness is a success, and with `--expectations` a
//! scenario as expected that did not pass is skipped (`known failure: ...`) and one that
//! is not is a failure whose message is its line of the comparison. A safety failure's
//! description begins with the requirement it pins (chapter and statement) and why the
//! scenario expects what it does, where it says. The document begins, in a comment after
//! the XML declaration, with the verdict lines.

use std::collections::BTreeMap;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use crate::record::{Outcome, RunRecord};
use crate::verdict::Level;

/// The JUnit document.
pub fn render(r: &RunRecord) -> String {
    let mut suites: BTreeMap<String, (TestSuite, Duration)> = BTreeMap::new();
    for sc in &r.scenarios {
        let (folder, name) = sc
            .id
            .rsplit_once('/')
            .unwrap_or(("scenarios", sc.id.as_str()));
        let compared = r.expectations.as_ref().map(|e| {
            let mine = |l: &&String| {
                l.split_once(' ')
                    .map(|(_, rest)| rest.trim_start_matches("pass "))
                    .is_some_and(|rest| rest.starts_with(&format!("{}:", sc.id)))
            };
            e.regressions
                .iter()
                .chain(&e.unexpected_passes)
                .find(mine)
                .cloned()
        });
        let safety_failed = sc.safety == Outcome::Failed;
        let judged = match (&compared, r.level) {
            (Some(Some(_)), _) => Outcome::Failed,
            (Some(None), _) if sc.outcome == Outcome::Passed => Outcome::Passed,
            (Some(None), _) => Outcome::Skipped,
            (None, Level::Safety) => sc.safety,
            (None, Level::Exactness) if sc.safety == Outcome::NotShown => Outcome::NotShown,
            (None, Level::Exactness) => sc.outcome,
        };
        let status = match judged {
            Outcome::Failed if compared.is_some() => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(compared.flatten().unwrap_or_default());
                st.set_type("expectations");
                st
            }
            Outcome::Skipped if compared.is_some() => {
                let mut st = TestCaseStatus::skipped();
                st.set_message(format!(
                    "known failure: safety {}, exactness {}",
                    sc.safety.as_str(),
                    sc.exactness.as_str()
                ));
                st
            }
            Outcome::Passed => TestCaseStatus::success(),
            Outcome::Skipped => {
                let mut st = TestCaseStatus::skipped();
                st.set_message(sc.reason.clone().unwrap_or_default());
                st
            }
            Outcome::NotShown => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(format!(
                    "not shown safe: {}",
                    sc.reason.clone().unwrap_or_default()
                ));
                st.set_type("safety");
                st
            }
            Outcome::Failed => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                let first_safety = r
                    .safety_failures
                    .iter()
                    .find(|f| f.scenario == sc.id)
                    .map(|f| format!("{} (input: {})", f.message, f.input));
                match first_safety.filter(|_| safety_failed) {
                    Some(m) => {
                        st.set_message(m);
                        st.set_type("safety");
                    }
                    None => {
                        st.set_message(sc.reason.clone().unwrap_or_default());
                        st.set_type("exactness");
                    }
                }
                let mut all: Vec<String> = Vec::new();
                if safety_failed {
                    for g in &r.safety_groups {
                        for i in g.inputs.iter().filter(|i| i.scenarios.contains(&sc.id)) {
                            let about = match (&g.chapter, &g.statement) {
                                (Some(c), Some(t)) => format!(" ({c}): {t}"),
                                (Some(c), None) => format!(" ({c})"),
                                _ => String::new(),
                            };
                            all.push(format!(
                                "{}{about}: {}: {}",
                                g.requirement, i.input, i.happened
                            ));
                            if let Some(why) = &i.why {
                                all.push(format!("  why: {why}"));
                            }
                        }
                    }
                }
                all.extend(sc.steps.iter().flat_map(|st| {
                    st.mismatches
                        .iter()
                        .map(move |m| format!("{}:{}: {m}", sc.path, st.line))
                }));
                st.set_description(all.join("\n"));
                st
            }
            Outcome::Errored => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
                st.set_message(sc.reason.clone().unwrap_or_default());
                st.set_type(sc.error_kind.clone().unwrap_or_default());
                st
            }
        };
        let mut case = TestCase::new(name, status);
        case.set_classname(folder);
        case.set_time(Duration::from_millis(sc.duration_ms));
        case.add_property(Property::new("file", sc.path.as_str()));
        case.add_property(Property::new("safety", sc.safety.as_str()));
        case.add_property(Property::new("exactness", sc.exactness.as_str()));
        let mut ids = sc.requirements.clone();
        for st in &sc.steps {
            ids.extend(
                st.requirements
                    .iter()
                    .filter(|id| !ids.contains(id))
                    .cloned()
                    .collect::<Vec<_>>(),
            );
        }
        for id in ids {
            case.add_property(Property::new("requirement", id));
        }
        if matches!(sc.outcome, Outcome::Failed | Outcome::Errored) {
            case.add_property(Property::new("rerun", r.rerun(&sc.id)));
        }
        if !sc.stderr.is_empty() {
            case.set_system_err(sc.stderr.join("\n"));
        }
        let suite = suites
            .entry(folder.to_string())
            .or_insert_with(|| (TestSuite::new(folder), Duration::ZERO));
        suite.0.add_test_case(case);
        suite.1 += Duration::from_millis(sc.duration_ms);
    }
    let suites = suites.into_values().map(|(mut suite, time)| {
        suite.set_time(time);
        suite.add_property(Property::new(
            "suite_spec_version",
            r.runner.suite.spec_version.as_str(),
        ));
        suite.add_property(Property::new("suite_hash", r.runner.suite.hash.as_str()));
        suite
    });
    let mut report = Report::new(format!("gatehouse-conform: {}", r.environment.name));
    report.set_time(Duration::from_millis(r.runner.duration_ms));
    report.add_test_suites(suites);
    // quick-junit writes into a `Vec<u8>`, which never fails, from Rust strings, which
    // are valid UTF-8: its `SerializeError` cannot arise here.
    #[allow(clippy::expect_used)]
    let xml = report.to_string().expect("junit serializes");
    // The verdict first, where a person opening the file looks; XML readers skip it.
    let head: String = super::headline(r)
        .lines
        .iter()
        .map(|l| format!("  {}\n", l.replace("--", "- -")))
        .collect();
    match xml.split_once("?>\n") {
        Some((decl, rest)) => format!("{decl}?>\n<!--\n{head}-->\n{rest}"),
        None => format!("<!--\n{head}-->\n{xml}"),
    }
}
