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
    // The agents table's columns: each row of its section (the generated table, then the
    // tables published before the reports were kept) whose first cell ends with the label
    // in backticks and parentheses.
    let mut inside = false;
    let agents: Vec<&str> = table
        .lines()
        .filter(|l| {
            if l.starts_with("<!-- agents table: begin")
                || l.starts_with("<!-- agents published: begin")
            {
                inside = true;
            } else if l.starts_with("<!-- agents table: end")
                || l.starts_with("<!-- agents published: end")
            {
                inside = false;
            }
            inside
        })
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

/// The implementations table of the generated `md/index.md`: each row's label and cells.
fn index_rows(site: &Path) -> Vec<(String, String)> {
    let md = std::fs::read_to_string(site.join("md/index.md")).unwrap();
    md.lines()
        .skip_while(|l| !l.starts_with("## Implementations"))
        .filter(|l| l.starts_with("| ["))
        .map(|l| {
            let label = l[3..l.find(']').unwrap()].to_string();
            (label, l.to_string())
        })
        .collect()
}

/// A fresh clone has no `reports/` (a CI run's) and no `target/`: pointed at empty
/// directories for the fresh runs and given no `--report`, the site still shows every
/// column of the implementations table from the reports kept in `docs/reports/`, each
/// page saying which report it shows and of which revision and day.
#[test]
fn a_fresh_clone_shows_every_column_from_the_kept_reports() {
    let out = tempfile::tempdir().unwrap();
    let site = out.path().join("site");
    let empty = out.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = empty.to_str().unwrap();
    let o = docs(
        &["--out", site.to_str().unwrap(), "--peers", e, "--agents", e],
        &root(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = index_rows(&site);
    let reference = rows.iter().find(|(l, _)| l == "reference").unwrap();
    assert!(!reference.1.contains("no report"), "{}", reference.1);
    assert!(reference.1.contains("kept, "), "{}", reference.1);
    for (label, row) in &rows {
        assert!(!row.contains("no report"), "{label}: {row}");
    }
    assert!(rows.len() >= 7, "{rows:?}");
    let page = std::fs::read_to_string(site.join("implementations/reference.html")).unwrap();
    assert!(
        page.contains("Kept report <code>docs/reports/reference-"),
        "the page says which report it shows"
    );
    // Issue 48's bar: the reference and at least two agents each with a badge, a trend
    // over two runs or more and a diff, from the kept reports alone; and the submission
    // folders with what verify says of them.
    let history = std::fs::read_to_string(site.join("md/history.md")).unwrap();
    for (who, badge) in [
        ("gatehouse (native)", "reference"),
        ("claude-code+gatehouse (native)", "claude-code-guarded"),
        ("codex-cli+gatehouse (native)", "codex-cli-guarded"),
        ("gemini-cli+gatehouse (native)", "gemini-cli-guarded"),
    ] {
        let section = history
            .split(&format!("\n## {who}\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("{who}: no section in\n{history}"));
        let section = section.split("\n## ").next().unwrap();
        let runs = section.lines().filter(|l| l.starts_with("| `")).count();
        assert!(runs >= 2, "{who}: {runs} run(s)\n{section}");
        assert!(section.contains("\nFrom `"), "{who}: no diff\n{section}");
        assert!(
            site.join(format!("badges/{badge}.json")).is_file(),
            "{badge}"
        );
    }
    let html = std::fs::read_to_string(site.join("history.html")).unwrap();
    assert!(html.matches("<svg class=\"trend\"").count() >= 4);
    assert!(
        history.contains("Submission `docs/submissions/0.15/gatehouse/`: certified; MUST: "),
        "{history}"
    );
    assert!(
        history.contains(
            "Submission `docs/submissions/results/copilot-cli-2026-12-07/`: results, not certified: "
        ),
        "{history}"
    );
}

/// A fresh run's report takes precedence over the kept one, and the page says so.
#[test]
fn a_fresh_report_takes_precedence_over_the_kept_one() {
    let out = tempfile::tempdir().unwrap();
    let site = out.path().join("site");
    let peers = out.path().join("peers");
    std::fs::create_dir_all(&peers).unwrap();
    std::fs::write(peers.join("reference.json"), REPORT).unwrap();
    let o = docs(
        &[
            "--out",
            site.to_str().unwrap(),
            "--peers",
            peers.to_str().unwrap(),
        ],
        &root(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(site.join("implementations/reference.html")).unwrap();
    assert!(page.contains("Fresh report <code>"), "which report");
    assert!(
        page.contains("it takes precedence over the kept report <code>docs/reports/reference-"),
        "and the kept one it set aside"
    );
    assert!(page.contains("a marker 7f3e"));
}

/// Two failing scenarios, the exactness-only one first in the alphabet: the page leads
/// with the safety failure, grouped under its requirement, then the exactness fields;
/// and the requirement's pill says which verdict failed on which check.
const TWO: &str = r#"{
  "runner": {"implementation": "test-impl", "suite": {"spec_version": "0.10", "hash": "sha256:00"}},
  "verdicts": {"safety": {"passed": 1, "failed": 1, "skipped": 0, "errored": 0},
               "exactness": {"passed": 0, "failed": 2, "skipped": 0, "errored": 0}},
  "scenarios": [
    {"id": "gate/allow-list", "safety": "passed", "exactness": "failed",
     "steps": [{"index": 1, "differences": [
       {"level": "exactness", "field": "route", "message": "case 1: route: expected x 5d1c"}]}]},
    {"id": "hooks/hook-input-argv", "safety": "failed", "exactness": "failed",
     "steps": [{"index": 3, "differences": [
       {"level": "safety", "field": "check no_bait", "message": "step 3: a marker 7f3e"}]}]}]
}"#;

/// The site built with `TWO` as the reference's report, in a temporary directory.
fn site_of_two() -> (tempfile::TempDir, PathBuf) {
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("two.json");
    std::fs::write(&report, TWO).unwrap();
    let site = out.path().join("site");
    let o = docs(
        &[
            "--out",
            site.to_str().unwrap(),
            "--report",
            &format!("reference={}", report.display()),
        ],
        &root(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (out, site)
}

#[test]
fn an_implementations_page_leads_with_safety_grouped_by_requirement() {
    let (_dir, site) = site_of_two();
    let page = std::fs::read_to_string(site.join("implementations/reference.html")).unwrap();
    let at = |needle: &str| {
        page.find(needle)
            .unwrap_or_else(|| panic!("no {needle:?} on the page"))
    };
    // The safety failure (its marker) comes before the exactness-only case (its
    // marker) everywhere on the page, and is grouped under its scenario's requirement.
    assert!(at("a marker 7f3e") < at("5d1c"), "safety first");
    assert!(at("Safety failures, by requirement") < at("Exactness differences, by field"));
    assert!(
        page.contains("id=\"req-HOOK-IN-2\""),
        "grouped by requirement"
    );
}

#[test]
fn a_pill_says_which_verdict_failed_on_which_check() {
    let (_dir, site) = site_of_two();
    let hooks = std::fs::read_to_string(site.join("spec/hooks.html")).unwrap();
    assert!(hooks.contains(">reference safety: no_bait</a>"), "the pill");
    let gate = std::fs::read_to_string(site.join("scenarios/gate/allow-list.html")).unwrap();
    assert!(gate.contains(">reference exactness: route</a>"), "the pill");
}

/// Every `.toml` under `dir`, recursively.
fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            toml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

/// The known-attacks page and the ASI map, read back against `spec/public-record.toml`,
/// `spec/asi.toml` and the scenarios' `sources`, each read here with the `toml` crate:
/// every class has its section, shows every source (an issue as a link to it) and links
/// every scenario that cites one of them; every risk has its section, with the verdicts
/// table or its reason; both pages have their Markdown twins and are linked from every
/// page's navigation.
#[test]
fn the_known_attacks_page_and_the_asi_map_show_every_class_and_risk() {
    let out = tempfile::tempdir().unwrap();
    let site = out.path().join("site");
    let empty = out.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = empty.to_str().unwrap();
    let o = docs(
        &["--out", site.to_str().unwrap(), "--peers", e, "--agents", e],
        &root(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let record: toml::Table =
        toml::from_str(&std::fs::read_to_string(root().join("spec/public-record.toml")).unwrap())
            .unwrap();
    let mut files = Vec::new();
    toml_files(&root().join("scenarios"), &mut files);
    let cited: Vec<(String, Vec<String>)> = files
        .iter()
        .filter_map(|p| {
            let t: toml::Table = toml::from_str(&std::fs::read_to_string(p).unwrap()).ok()?;
            let sources = t.get("sources")?.as_array()?;
            let id = p
                .strip_prefix(root().join("scenarios"))
                .unwrap()
                .with_extension("")
                .to_string_lossy()
                .to_string();
            Some((
                id,
                sources
                    .iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect(),
            ))
        })
        .collect();
    assert!(cited.len() >= 8, "{cited:?}");
    let page = std::fs::read_to_string(site.join("known-attacks.html")).unwrap();
    let classes = record["class"].as_array().unwrap();
    assert_eq!(classes.len(), 14);
    for class in classes {
        let id = class["id"].as_str().unwrap();
        let start = page
            .find(&format!("<h2 id=\"{id}\">"))
            .unwrap_or_else(|| panic!("no section for {id}"));
        let section = &page[start + 4..];
        let section = &section[..section.find("<h2 ").unwrap_or(section.len())];
        let sources: Vec<&str> = class["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        for s in &sources {
            if let Some((repo, n)) = s.split_once('#') {
                let href = format!("href=\"https://github.com/{repo}/issues/{n}\"");
                assert!(section.contains(&href), "{id}: {href}");
            } else if s.starts_with("CVE-") {
                let href = format!("href=\"https://www.cve.org/CVERecord?id={s}\"");
                assert!(section.contains(&href), "{id}: {href}");
            }
        }
        for (scenario, srcs) in &cited {
            if srcs.iter().any(|s| sources.contains(&s.as_str())) {
                assert!(
                    section.contains(&format!("href=\"scenarios/{scenario}.html\"")),
                    "{id}: {scenario}"
                );
            }
        }
    }
    // The reference passes what its kept report ran of class 1.
    let git = &page[page.find("<h2 id=\"git-config-runs\">").unwrap()..];
    assert!(git.contains("<span class=\"badge passed\">passed</span>"));
    let asi: toml::Table =
        toml::from_str(&std::fs::read_to_string(root().join("spec/asi.toml")).unwrap()).unwrap();
    let risks = asi["risk"].as_array().unwrap();
    let ids: Vec<&str> = risks.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "ASI01", "ASI02", "ASI03", "ASI04", "ASI05", "ASI06", "ASI07", "ASI08", "ASI09",
            "ASI10"
        ]
    );
    let map = std::fs::read_to_string(site.join("asi.html")).unwrap();
    for r in risks {
        let id = r["id"].as_str().unwrap();
        let start = map
            .find(&format!("<h2 id=\"{id}\">"))
            .unwrap_or_else(|| panic!("no section for {id}"));
        let section = &map[start + 4..];
        let section = &section[..section.find("<h2 ").unwrap_or(section.len())];
        if r.get("none").is_some() {
            assert!(section.contains("No requirement addresses it: "), "{id}");
        } else {
            assert!(
                section.contains("href=\"implementations/reference.html\""),
                "{id}"
            );
            assert!(section.contains("href=\"scenarios/"), "{id}: no scenario");
        }
    }
    assert!(site.join("md/known-attacks.md").is_file() && site.join("md/asi.md").is_file());
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(index.contains("href=\"known-attacks.html\"") && index.contains("href=\"asi.html\""));
}

/// The line of a page (or of one requirement's block) naming its lists.
fn lists_line(html: &str) -> &str {
    html.lines()
        .find(|l| l.starts_with("<p class=\"lists\">"))
        .unwrap_or("")
}

/// Every scenario page names the public classes it belongs to (it cites one of their
/// sources), and every requirement a class breaks, or an entry of `spec/asi.toml` names
/// by its ID, names that class or risk in its block on its chapter's page, each a link to
/// its section; the lists are read here with the `toml` crate, the pages read back.
#[test]
fn scenario_and_requirement_pages_name_their_class_and_risk() {
    let out = tempfile::tempdir().unwrap();
    let site = out.path().join("site");
    let empty = out.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = empty.to_str().unwrap();
    let o = docs(
        &["--out", site.to_str().unwrap(), "--peers", e, "--agents", e],
        &root(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let record: toml::Table =
        toml::from_str(&std::fs::read_to_string(root().join("spec/public-record.toml")).unwrap())
            .unwrap();
    let mut files = Vec::new();
    toml_files(&root().join("scenarios"), &mut files);
    // The chapter that defines an ID: the chapter page (one per chapter of spec/) whose
    // Markdown source holds `**[ID]**`.
    let chapter_of = |id: &str| -> String {
        for e in std::fs::read_dir(site.join("spec")).unwrap() {
            let stem = e
                .unwrap()
                .path()
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .to_string();
            let md = root().join(format!("spec/{stem}.md"));
            if std::fs::read_to_string(&md).is_ok_and(|t| t.contains(&format!("**[{id}]**"))) {
                return stem;
            }
        }
        panic!("{id}: no chapter defines it")
    };
    let block = |id: &str| -> String {
        let page =
            std::fs::read_to_string(site.join(format!("spec/{}.html", chapter_of(id)))).unwrap();
        let start = page
            .find(&format!("<div class=\"cases\" data-req=\"{id}\">"))
            .unwrap_or_else(|| panic!("{id}: no cases block"));
        let rest = &page[start..];
        rest[..rest.find("</div><!--/cases-->").unwrap()].to_string()
    };
    let mut checked = 0;
    for class in record["class"].as_array().unwrap() {
        let cid = class["id"].as_str().unwrap();
        let href = format!("known-attacks.html#{cid}\"");
        let sources: Vec<&str> = class["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        for p in &files {
            let t: toml::Table = toml::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
            let cites = t
                .get("sources")
                .and_then(|s| s.as_array())
                .is_some_and(|s| {
                    s.iter()
                        .any(|x| sources.contains(&x.as_str().unwrap_or_default()))
                });
            if !cites {
                continue;
            }
            let id = p
                .strip_prefix(root().join("scenarios"))
                .unwrap()
                .with_extension("");
            let page =
                std::fs::read_to_string(site.join(format!("scenarios/{}.html", id.display())))
                    .unwrap();
            assert!(
                lists_line(&page).contains(&href),
                "{}: {href}",
                id.display()
            );
            checked += 1;
        }
        for r in class["requirements"].as_array().unwrap() {
            let r = r.as_str().unwrap();
            assert!(lists_line(&block(r)).contains(&href), "{r}: {href}");
        }
    }
    assert!(checked >= 14, "{checked}");
    let asi: toml::Table =
        toml::from_str(&std::fs::read_to_string(root().join("spec/asi.toml")).unwrap()).unwrap();
    for risk in asi["risk"].as_array().unwrap() {
        let rid = risk["id"].as_str().unwrap();
        let Some(reqs) = risk.get("requirements").and_then(|r| r.as_array()) else {
            continue;
        };
        for r in reqs.iter().filter_map(|r| r.as_str()) {
            if r.ends_with('-') {
                continue;
            }
            let href = format!("asi.html#{rid}\"");
            assert!(lists_line(&block(r)).contains(&href), "{r}: {href}");
        }
    }
    let md = std::fs::read_to_string(site.join("md/spec/execution-plane.md")).unwrap();
    assert!(
        md.contains("known attack: [#"),
        "the Markdown twin names them too"
    );
}
