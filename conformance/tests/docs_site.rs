//! `gatehouse-conform docs` on this repository: the generated HTML, read back, has an
//! anchor for every requirement ID of `spec/` with at least one case under it, or its
//! written reason from `untestable.toml` (or, for a requirement withdrawn or stating no
//! MUST or SHOULD, a line saying so); every part has its anchor; every column of the
//! implementations table has a page, and a report given shows its failing case. The
//! IDs are read from the Markdown here, independently of the runner's own parser. And on
//! a tiny suite with an uncovered requirement, the command fails and names it.
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn docs(args: &[&str], cwd: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gatehouse-conform"))
        .arg("docs")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("gatehouse-conform runs")
}

/// Every `**[ID]**` of a chapter with its text up to the next requirement or blank line,
/// and the parts `**(x)**` in it; fenced code left out.
fn requirements(md: &str) -> Vec<(String, String, Vec<String>)> {
    let mut out: Vec<(String, String, Vec<String>)> = Vec::new();
    let mut fence = false;
    let mut open = false;
    for line in md.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            fence = !fence;
            open = false;
            continue;
        }
        if fence || t.is_empty() || t.starts_with('#') {
            open = false;
            continue;
        }
        let body = t.trim_start_matches("- ").trim_start_matches("~~");
        if let Some(rest) = body.strip_prefix("**[") {
            if let Some(end) = rest.find("]**") {
                out.push((rest[..end].to_string(), t.to_string(), Vec::new()));
                open = true;
                continue;
            }
        }
        if open {
            if let Some(last) = out.last_mut() {
                last.1.push('\n');
                last.1.push_str(t);
            }
        }
    }
    for (_, text, parts) in &mut out {
        for piece in text.split("**(").skip(1) {
            if let Some((p, _)) = piece.split_once(")**") {
                if !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase()) {
                    parts.push(p.to_string());
                }
            }
        }
    }
    out
}

const REPORT: &str = r#"{
  "runner": {"implementation": "test-impl", "suite": {"spec_version": "0.10", "hash": "sha256:00"}},
  "environment": {"name": "test", "version": "1"},
  "verdicts": {"safety": {"passed": 0, "failed": 1, "skipped": 0, "errored": 0},
               "exactness": {"passed": 0, "failed": 1, "skipped": 0, "errored": 0}},
  "scenarios": [{"id": "hooks/hook-input-argv", "safety": "failed", "exactness": "failed",
                 "reason": "x", "steps": [{"index": 3, "differences": [
                   {"level": "safety", "field": "lines", "message": "step 3: lines: a marker 7f3e"}]}]}]
}"#;

#[test]
fn every_requirement_has_its_anchor_and_a_case_or_its_reason() {
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("report.json");
    std::fs::write(&report, REPORT).unwrap();
    let site = out.path().join("site");
    let empty = out.path().join("no-peers");
    std::fs::create_dir_all(&empty).unwrap();
    let o = docs(
        &[
            "--out",
            site.to_str().unwrap(),
            "--peers",
            empty.to_str().unwrap(),
            "--report",
            &format!("reference={}", report.display()),
        ],
        &root(),
    );
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let untestable = std::fs::read_to_string(root().join("spec/untestable.toml")).unwrap();
    let mut checked = 0;
    for entry in std::fs::read_dir(root().join("spec")).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.extension().is_none_or(|e| e != "md") || stem == "README" {
            continue;
        }
        let md = std::fs::read_to_string(&path).unwrap();
        let html = std::fs::read_to_string(site.join(format!("spec/{stem}.html")))
            .unwrap_or_else(|e| panic!("spec/{stem}.html: {e}"));
        for (id, text, parts) in requirements(&md) {
            checked += 1;
            assert!(
                html.contains(&format!("id=\"{id}\"")),
                "{stem}: no anchor for {id}"
            );
            for p in parts {
                assert!(
                    html.contains(&format!("id=\"{id}.{p}\"")),
                    "{stem}: no anchor for {id}.{p}"
                );
            }
            let start = html
                .find(&format!("data-req=\"{id}\""))
                .unwrap_or_else(|| panic!("{stem}: nothing under {id}"));
            let under = &html[start..];
            let under = &under[..under.find("<!--/cases-->").expect("the end of the cases")];
            let listed = untestable.contains(&format!("id = \"{id}\""));
            let normative = ["MUST", "SHOULD", "SHALL", "REQUIRED"]
                .iter()
                .any(|w| text.contains(w))
                && !text.trim_start_matches("- ").starts_with("~~");
            // `case` alone or with its kind (`case refusal`); `cases` is the container.
            if under.contains("<div class=\"case ") || under.contains("<div class=\"case\"") {
                continue;
            }
            if listed {
                assert!(
                    under.contains("class=\"untestable\">No scenario can check this: "),
                    "{stem}: {id} shows no reason"
                );
            } else {
                assert!(!normative, "{stem}: {id} is normative and shows no case");
                assert!(
                    under.contains("class=\"none\""),
                    "{stem}: {id} does not say why it has no case"
                );
            }
        }
    }
    assert!(checked > 400, "only {checked} requirements found");
    let table = std::fs::read_to_string(root().join("docs/implementations.md")).unwrap();
    let labels: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with("| column"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.split('`').nth(1))
        .collect();
    assert!(
        labels.contains(&"reference") && labels.len() >= 7,
        "{labels:?}"
    );
    // The agents table's columns: each row of its section whose first cell ends with
    // the label in backticks and parentheses.
    let agents: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with("<!-- agents table: begin"))
        .take_while(|l| !l.starts_with("<!-- agents table: end"))
        .filter_map(|l| {
            l.strip_prefix('|')?
                .split('|')
                .next()?
                .trim()
                .strip_suffix("`)")
        })
        .filter_map(|c| c.rsplit("(`").next())
        .collect();
    assert!(agents.contains(&"claude-code"), "{agents:?}");
    for label in labels.into_iter().chain(agents) {
        assert!(
            site.join(format!("implementations/{label}.html")).is_file(),
            "{label}"
        );
    }
    let agent = std::fs::read_to_string(site.join("implementations/claude-code.html")).unwrap();
    assert!(
        agent.contains("href=\"../scenarios/fence/descriptors.html\""),
        "an agent column's page lists its failed scenarios"
    );
    let reference = std::fs::read_to_string(site.join("implementations/reference.html")).unwrap();
    assert!(
        reference.contains("a marker 7f3e"),
        "the failing case is shown"
    );
    assert!(reference.contains("href=\"../scenarios/hooks/hook-input-argv.html#step-3\""));
    let scenario =
        std::fs::read_to_string(site.join("scenarios/hooks/hook-input-argv.html")).unwrap();
    assert!(scenario.contains("id=\"step-3\"") && scenario.contains("id=\"hook-read\""));
    assert!(std::fs::read_to_string(site.join("md/spec/hooks.md"))
        .unwrap()
        .contains("hooks/hook-input-argv"));
    assert!(std::fs::read_to_string(site.join("assets/search-index.js"))
        .unwrap()
        .contains("\"HOOK-IN-2\""));
}

#[test]
fn a_requirement_with_neither_case_nor_reason_fails_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("spec")).unwrap();
    std::fs::create_dir_all(d.join("scenarios/gate")).unwrap();
    std::fs::write(
        d.join("spec/gate.md"),
        "# Gate\n\n- **[GATE-T-1]** MUST ask.\n- **[GATE-T-2]** MUST save.\n",
    )
    .unwrap();
    std::fs::write(
        d.join("scenarios/gate/ask.toml"),
        "title = \"t\"\nrequirements = [\"GATE-T-1\"]\ntier = \"decision\"\n[[case]]\ndecide = \"ls\"\nexpect = { decision = \"allow\" }\n",
    )
    .unwrap();
    let o = docs(&["--out", "site"], d);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("gate.html: GATE-T-2 shows neither a case nor its reason"),
        "{err}"
    );
    let html = std::fs::read_to_string(d.join("site/spec/gate.html")).unwrap();
    assert!(html.contains("id=\"GATE-T-1\"") && html.contains("<div class=\"case allowed\""));
}
