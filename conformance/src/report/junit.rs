//! The JUnit XML view, built once at the end with `quick-junit`: one testsuite per
//! scenario folder, one testcase per scenario.

use std::collections::BTreeMap;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::record::{Outcome, RunRecord};

/// The JUnit document.
pub fn render(r: &RunRecord) -> String {
    let mut suites: BTreeMap<String, TestSuite> = BTreeMap::new();
    for sc in &r.scenarios {
        let (folder, name) = sc
            .id
            .rsplit_once('/')
            .unwrap_or(("scenarios", sc.id.as_str()));
        let status = match sc.outcome {
            Outcome::Passed => TestCaseStatus::success(),
            Outcome::Skipped => {
                let mut st = TestCaseStatus::skipped();
                st.set_message(sc.reason.clone().unwrap_or_default());
                st
            }
            Outcome::Failed => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(sc.reason.clone().unwrap_or_default());
                let all: Vec<&str> = sc
                    .steps
                    .iter()
                    .flat_map(|s| &s.mismatches)
                    .map(String::as_str)
                    .collect();
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
        if !sc.stderr.is_empty() {
            case.set_system_err(sc.stderr.join("\n"));
        }
        suites
            .entry(folder.to_string())
            .or_insert_with(|| TestSuite::new(folder))
            .add_test_case(case);
    }
    let mut report = Report::new(format!("gatehouse-conform: {}", r.environment.name));
    report.set_time(Duration::from_millis(r.runner.duration_ms));
    report.add_test_suites(suites.into_values());
    report.to_string().expect("junit serializes")
}
