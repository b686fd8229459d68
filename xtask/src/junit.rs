//! The count `cargo xtask test` ends with, read from the JUnit file cargo-nextest writes
//! (`.config/nextest.toml` keeps every test's output in it): each test is passed, failed
//! or skipped, and a test whose output holds a skip's line ([`crate::skip::MARKER`]) is
//! skipped, with its reasons, never passed.
//!
//! The reader knows the shape nextest writes (quick-junit's: `testsuite` elements holding
//! `testcase` elements, each with an optional `failure`, `error` or `skipped` child and its
//! `system-out` and `system-err`, text escaped, no CDATA); it reads the file once, front to
//! back, so its time is linear in the file's size. It has no dependencies (the crate must
//! build in a second).

use crate::skip::MARKER;

/// What became of one test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    Failed,
    /// Skipped, with the reasons its skip lines gave (empty when JUnit itself said so).
    Skipped(Vec<String>),
}

/// One test of the file: its binary (`suite`), its name and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    pub suite: String,
    pub name: String,
    pub outcome: Outcome,
}

/// Why the file could not be read as nextest's JUnit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub String);

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not a JUnit file as nextest writes it: {}", self.0)
    }
}

/// Every test case of `xml`, in the file's order.
pub fn parse(xml: &str) -> Result<Vec<Case>, Malformed> {
    let mut cases = Vec::new();
    let mut suite = String::new();
    // The test case whose body is being read: its name, whether it failed, whether JUnit
    // marked it skipped, and the skip lines of its output.
    let mut open: Option<(String, bool, bool, Vec<String>)> = None;
    let mut rest = xml;
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt + 1..];
        let end = rest
            .find('>')
            .ok_or_else(|| Malformed("a tag is not closed".into()))?;
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let (name, attrs) = tag.split_once(char::is_whitespace).unwrap_or((tag, ""));
        match name {
            "testsuite" => suite = attr(attrs, "name")?.unwrap_or_default(),
            "testcase" => {
                let case = attr(attrs, "name")?
                    .ok_or_else(|| Malformed("a testcase without a name".into()))?;
                if self_closing {
                    cases.push(Case {
                        suite: suite.clone(),
                        name: case,
                        outcome: Outcome::Passed,
                    });
                } else {
                    open = Some((case, false, false, Vec::new()));
                }
            }
            "failure" | "error" => {
                if let Some(o) = open.as_mut() {
                    o.1 = true;
                }
            }
            "skipped" => {
                if let Some(o) = open.as_mut() {
                    o.2 = true;
                }
            }
            "system-out" | "system-err" if !self_closing => {
                let close = format!("</{name}>");
                let stop = rest
                    .find(&close)
                    .ok_or_else(|| Malformed(format!("<{name}> is not closed")))?;
                let text = unescape(&rest[..stop])?;
                rest = &rest[stop + close.len()..];
                if let Some(o) = open.as_mut() {
                    o.3.extend(
                        text.lines()
                            .filter_map(|l| l.trim_start().strip_prefix(MARKER))
                            .map(str::to_string),
                    );
                }
            }
            "/testcase" => {
                let (case, failed, skipped, skips) = open
                    .take()
                    .ok_or_else(|| Malformed("</testcase> without its <testcase>".into()))?;
                let outcome = if failed {
                    Outcome::Failed
                } else if skipped || !skips.is_empty() {
                    Outcome::Skipped(skips)
                } else {
                    Outcome::Passed
                };
                cases.push(Case {
                    suite: suite.clone(),
                    name: case,
                    outcome,
                });
            }
            _ => {}
        }
    }
    match open {
        Some((case, ..)) => Err(Malformed(format!(
            "<testcase name=\"{case}\"> is not closed"
        ))),
        None => Ok(cases),
    }
}

/// The value of attribute `key` in a tag's attribute text (`a="1" b="2"`), unescaped.
fn attr(attrs: &str, key: &str) -> Result<Option<String>, Malformed> {
    let mut rest = attrs;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Ok(None);
        }
        let (k, after) = rest
            .split_once('=')
            .ok_or_else(|| Malformed(format!("an attribute without a value in <{attrs}>")))?;
        let after = after.trim_start();
        let quote = after
            .chars()
            .next()
            .filter(|c| *c == '"' || *c == '\'')
            .ok_or_else(|| Malformed(format!("an unquoted attribute in <{attrs}>")))?;
        let value_end = after[1..]
            .find(quote)
            .ok_or_else(|| Malformed(format!("an attribute is not closed in <{attrs}>")))?;
        if k.trim() == key {
            return unescape(&after[1..1 + value_end]).map(Some);
        }
        rest = &after[value_end + 2..];
    }
}

/// XML text with its entities (`&lt;`, `&#10;`...) replaced by what they stand for.
fn unescape(s: &str) -> Result<String, Malformed> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp + 1..];
        let semi = rest
            .find(';')
            .filter(|&i| i <= 10)
            .ok_or_else(|| Malformed("an entity without its `;`".into()))?;
        let entity = &rest[..semi];
        let c = match entity {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .map(|h| u32::from_str_radix(h, 16))
                .or_else(|| entity.strip_prefix('#').map(str::parse))
                .and_then(Result::ok)
                .and_then(char::from_u32),
        };
        out.push(c.ok_or_else(|| Malformed(format!("unknown entity &{entity};")))?);
        rest = &rest[semi + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The number of tests nextest skipped, from its summary line (`Summary [ 12.3s] 10 tests
/// run: 10 passed, 2 skipped`): tests it did not run, `#[ignore]`d or left out by a
/// filter, which its JUnit file does not hold. `None` for any other line.
pub fn nextest_skipped(line: &str) -> Option<usize> {
    // Colours, if any, are escape sequences around the words: take them out first.
    let mut plain = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ ... final byte in @..~
            for d in chars.by_ref() {
                if ('@'..='~').contains(&d) && d != '[' {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    let rest = plain.trim_start().strip_prefix("Summary [")?;
    let (_, counts) = rest.split_once(" tests run: ")?;
    let words = counts.split([',', ' ']).filter(|w| !w.is_empty());
    let mut last: Option<usize> = None;
    for w in words {
        if let Ok(n) = w.parse::<usize>() {
            last = Some(n);
        } else if w == "skipped" {
            return last;
        } else {
            last = None;
        }
    }
    Some(0)
}

/// The summary's lines: the count, then one line per skipped test with its reasons, and
/// one for the `not_run` tests nextest skipped without running them.
pub fn summary(cases: &[Case], not_run: usize) -> Vec<String> {
    let count = |f: fn(&Outcome) -> bool| cases.iter().filter(|c| f(&c.outcome)).count();
    let passed = count(|o| *o == Outcome::Passed);
    let failed = count(|o| *o == Outcome::Failed);
    let skipped: Vec<&Case> = cases
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Skipped(_)))
        .collect();
    let mut lines = vec![format!(
        "{passed} passed, {} skipped, {failed} failed ({} tests)",
        skipped.len() + not_run,
        cases.len() + not_run
    )];
    if not_run > 0 {
        lines.push(format!(
            "  SKIPPED {not_run} test(s) nextest did not run (#[ignore]d, or left out by a filter; `cargo nextest list --run-ignored only` names the ignored ones)"
        ));
    }
    for c in skipped {
        let Outcome::Skipped(why) = &c.outcome else {
            continue;
        };
        let why = if why.is_empty() {
            "marked skipped in the JUnit file".to_string()
        } else {
            why.join("; ")
        };
        lines.push(format!("  SKIPPED {} {}: {why}", c.suite, c.name));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape nextest 0.9 writes with `store-success-output`: a passing test without
    /// output, a passing test whose output holds a skip line (escaped), a failing test
    /// that also printed one, and a test JUnit itself marks skipped.
    const NEXTEST: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run" tests="4" skipped="0" failures="1" errors="0">
    <testsuite name="gatehouse" tests="2" skipped="0" errors="0" failures="0">
        <testcase name="a::passes" classname="gatehouse" timestamp="t" time="0.008"/>
        <testcase name="b::skips" classname="gatehouse" time="0.1">
            <system-out>
running 1 test
test b::skips ... ok
</system-out>
            <system-err>GATEHOUSE-SKIP: the bwrap backend: /usr/bin/bwrap is not installed (&quot;GATEHOUSE_TEST_BWRAP=1&quot; &amp; more)
GATEHOUSE-SKIP: the outside-stream attacks: no &lt;python3&gt;&#10;</system-err>
        </testcase>
    </testsuite>
    <testsuite name="gatehouse::cli" tests="2" skipped="0" errors="0" failures="1">
        <testcase name="c::fails" classname="gatehouse::cli" time="1">
            <failure type="test failure">thread panicked</failure>
            <system-out></system-out>
            <system-err>GATEHOUSE-SKIP: x: y
assertion failed</system-err>
        </testcase>
        <testcase name="d::ignored" classname="gatehouse::cli"><skipped/></testcase>
    </testsuite>
</testsuites>
"#;

    #[test]
    fn skip_lines_make_a_passing_test_skipped_and_a_failure_stays_failed() {
        let cases = parse(NEXTEST).unwrap();
        let got: Vec<(&str, &str, &Outcome)> = cases
            .iter()
            .map(|c| (c.suite.as_str(), c.name.as_str(), &c.outcome))
            .collect();
        assert_eq!(
            got,
            vec![
                ("gatehouse", "a::passes", &Outcome::Passed),
                (
                    "gatehouse",
                    "b::skips",
                    &Outcome::Skipped(vec![
                        "the bwrap backend: /usr/bin/bwrap is not installed (\"GATEHOUSE_TEST_BWRAP=1\" & more)".into(),
                        "the outside-stream attacks: no <python3>".into(),
                    ])
                ),
                ("gatehouse::cli", "c::fails", &Outcome::Failed),
                ("gatehouse::cli", "d::ignored", &Outcome::Skipped(vec![])),
            ]
        );
        let lines = summary(&cases, 0);
        assert_eq!(lines[0], "1 passed, 2 skipped, 1 failed (4 tests)");
        assert_eq!(lines.len(), 3);
        assert!(lines[1].starts_with("  SKIPPED gatehouse b::skips: the bwrap backend: "));
        assert!(lines[1].ends_with("; the outside-stream attacks: no <python3>"));
        assert_eq!(
            lines[2],
            "  SKIPPED gatehouse::cli d::ignored: marked skipped in the JUnit file"
        );
    }

    /// The line the shared helper prints is the one the reader finds, whatever the reason
    /// holds (a newline, a tab).
    #[test]
    fn the_helpers_line_round_trips() {
        let line = crate::skip::line("the bwrap\nbackend", "no\tbwrap\n here");
        assert_eq!(line, "GATEHOUSE-SKIP: the bwrap backend: no bwrap here");
        let xml = format!(
            "<testsuite name=\"s\"><testcase name=\"t\"><system-err>{line}\n</system-err></testcase></testsuite>"
        );
        let cases = parse(&xml).unwrap();
        assert_eq!(
            cases[0].outcome,
            Outcome::Skipped(vec!["the bwrap backend: no bwrap here".into()])
        );
    }

    /// A line that only mentions the marker inside other text is not a skip; `classname`
    /// is not taken for `name`.
    #[test]
    fn only_a_line_that_begins_with_the_marker_counts() {
        let xml = "<testsuite name='s'><testcase classname=\"k\" name=\"t\"><system-out>says GATEHOUSE-SKIP: no</system-out></testcase></testsuite>";
        let cases = parse(xml).unwrap();
        assert_eq!(cases[0].name, "t");
        assert_eq!(cases[0].outcome, Outcome::Passed);
    }

    #[test]
    fn a_truncated_file_is_an_error_not_a_count() {
        assert!(parse("<testsuite name=\"s\"><testcase name=\"t\"><system-out>x").is_err());
        assert!(parse("<testsuite name=\"s\"><testcase name=\"t\">").is_err());
        assert!(parse("<testcase name=\"t\"><system-out>&bogus;</system-out></testcase>").is_err());
        assert!(parse("<testcase name=\"t").is_err());
    }

    #[test]
    fn nextests_summary_gives_the_tests_it_did_not_run() {
        let plain = "     Summary [ 142.538s] 1740 tests run: 1740 passed, 2 skipped";
        assert_eq!(nextest_skipped(plain), Some(2));
        let slow = "     Summary [  10.0s] 5 tests run: 4 passed (1 slow), 1 failed, 3 skipped";
        assert_eq!(nextest_skipped(slow), Some(3));
        let none = "     Summary [   1.0s] 5 tests run: 5 passed";
        assert_eq!(nextest_skipped(none), Some(0));
        let coloured =
            "\u{1b}[32;1m     Summary\u{1b}[0m [   1.0s] 5 tests run: 5 passed, \u{1b}[33;1m7\u{1b}[0m skipped";
        assert_eq!(nextest_skipped(coloured), Some(7));
        assert_eq!(nextest_skipped("   Compiling xtask v0.1.0"), None);
        assert_eq!(nextest_skipped("        PASS [   0.1s] a 2 skipped"), None);
    }

    #[test]
    fn tests_nextest_did_not_run_count_as_skipped() {
        let cases = vec![Case {
            suite: "s".into(),
            name: "t".into(),
            outcome: Outcome::Passed,
        }];
        let lines = summary(&cases, 2);
        assert_eq!(lines[0], "1 passed, 2 skipped, 0 failed (3 tests)");
        assert!(lines[1].starts_with("  SKIPPED 2 test(s) nextest did not run"));
    }
}
