//! Badges, history and diffs (`spec/verdicts.md`, PROTO-CERT-6; after wpt.fyi and
//! test262.fyi): for each implementation with a report, a shields.io endpoint JSON
//! (`badges/LABEL.json`); and one page (`history.html`, `md/history.md`) with each
//! implementation's runs per version and per suite release, read from every report kept
//! in `docs/reports/` and the columns' current reports, its trend as a small inline SVG
//! (no script), what changed between its two latest runs (`gatehouse-conform diff`), and
//! the submission folders of `docs/submissions/` holding its runs, each with what
//! `verify` says of it (certified with its MUST tally, or results and why not).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use gatehouse_conform_core::diff::{diff, RunView};

use crate::page::esc;
use crate::reports::{Counts, Implementations, Origin};

/// One run of an implementation: where its report is and what it says.
#[derive(Debug, Clone)]
pub struct Run {
    /// The report, as displayed (relative to the repository's root where it is under it).
    pub file: String,
    /// What it says.
    pub view: RunView,
}

/// The shields.io endpoint JSON of a run (`{"schemaVersion":1,...}`): green when safety
/// passed everything judged, red otherwise.
pub fn badge(view: &RunView) -> String {
    let color = if view.safety.0 == view.safety.1 {
        if view.exactness.0 == view.exactness.1 {
            "brightgreen"
        } else {
            "green"
        }
    } else {
        "red"
    };
    let v = serde_json::json!({
        "schemaVersion": 1,
        "label": format!("Gatehouse {}", view.spec_version),
        "message": view.score_line(),
        "color": color,
    });
    format!("{v}\n")
}

/// Every JSON report in `dir` (the kept ones), by implementation name, each list in the
/// order of (spec version, file name); a file that does not read is left out.
pub fn kept_runs(root: &Path, dir: &Path) -> BTreeMap<String, Vec<Run>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut out: BTreeMap<String, Vec<Run>> = BTreeMap::new();
    for path in files {
        if let Ok(view) = RunView::load(&path) {
            let file = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .display()
                .to_string();
            out.entry(view.who()).or_default().push(Run { file, view });
        }
    }
    for runs in out.values_mut() {
        runs.sort_by(|a, b| {
            version_key(&a.view.spec_version)
                .cmp(&version_key(&b.view.spec_version))
                .then(a.file.cmp(&b.file))
        });
    }
    out
}

/// `0.15` as numbers, so that 0.9 sorts before 0.15.
fn version_key(v: &str) -> Vec<u64> {
    v.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

/// The trend of a list of runs: safety and exactness as a share of what was judged, one
/// point per run, as an inline SVG.
pub fn trend(runs: &[Run]) -> String {
    let (w, h, pad) = (240.0_f64, 60.0_f64, 4.0_f64);
    let n = runs.len();
    let x = |i: usize| {
        if n <= 1 {
            w / 2.0
        } else {
            pad + (w - 2.0 * pad) * i as f64 / (n - 1) as f64
        }
    };
    let y = |(p, t): (usize, usize)| {
        let share = if t == 0 { 0.0 } else { p as f64 / t as f64 };
        h - pad - (h - 2.0 * pad) * share
    };
    let line = |pick: &dyn Fn(&RunView) -> (usize, usize), color: &str| {
        let pts: Vec<String> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| format!("{:.1},{:.1}", x(i), y(pick(&r.view))))
            .collect();
        let dots: String = runs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                format!(
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{color}\"><title>{}</title></circle>",
                    x(i),
                    y(pick(&r.view)),
                    esc(&format!("{}: {}", r.file, r.view.score_line()))
                )
            })
            .collect();
        format!(
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\" points=\"{}\"/>{dots}",
            pts.join(" ")
        )
    };
    format!(
        "<svg class=\"trend\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"trend: safety (red) and exactness (blue) passed over judged, per run\"><rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#f6f8fa\"/>{}{}</svg>",
        line(&|v: &RunView| v.safety, "#cf222e"),
        line(&|v: &RunView| v.exactness, "#0550ae"),
    )
}

/// The submission folders under `docs/submissions/` (`VERSION/PRODUCT/` and
/// `results/NAME/`), by implementation: each folder and what `verify` says of it
/// (PROTO-CERT-5 and 7), in one line.
pub fn submissions(root: &Path) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let subdirs = |d: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .map(|d| {
                d.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    for group in subdirs(&root.join("docs/submissions")) {
        let results = group.file_name().is_some_and(|n| n == "results");
        for dir in subdirs(&group) {
            let Ok(view) = RunView::load(&dir.join("report.json")) else {
                continue;
            };
            let v = gatehouse_conform_core::submission::verify(&dir, &root.join("spec"));
            let tally = v.musts.as_ref().map(|t| format!("; {}", t.line()));
            let status = match (results, v.problems.len()) {
                (false, 0) => format!("certified{}", tally.unwrap_or_default()),
                (false, n) => format!("refused by verify, {n} problem(s)"),
                (true, 0) => "results that would verify".to_string(),
                (true, n) => format!(
                    "results, not certified: {n} reason(s) (`verify --results` prints them){}",
                    tally.unwrap_or_default()
                ),
            };
            let folder = dir.strip_prefix(root).unwrap_or(&dir).display().to_string();
            out.entry(view.who()).or_default().push((folder, status));
        }
    }
    out
}

/// The badges and the history page: files under the site's root, HTML and Markdown.
pub fn render(root: &Path, impls: &Implementations) -> BTreeMap<PathBuf, String> {
    let mut files = BTreeMap::new();
    let mut runs = kept_runs(root, &root.join("docs/reports"));
    // The submissions' reports (`docs/submissions/VERSION/PRODUCT/report.json`) too; not
    // `docs/submissions/results/`, whose reports are byte copies of kept ones.
    let versions = std::fs::read_dir(root.join("docs/submissions"))
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let is_version = |p: &Path| {
        p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
            n.split('.')
                .all(|x| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    for v in versions.iter().filter(|p| p.is_dir() && is_version(p)) {
        let mut products: Vec<PathBuf> = std::fs::read_dir(v)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        products.sort();
        for p in products {
            let path = p.join("report.json");
            if let Ok(view) = RunView::load(&path) {
                // A release keeps its run in `docs/reports/` too, as a byte copy: one run.
                // Lengths first: a report is read whole only to confirm a same-size copy.
                let len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).ok();
                let kept_copy = runs.get(&view.who()).is_some_and(|rs| {
                    rs.iter().any(|r| {
                        let kept = root.join(&r.file);
                        len(&kept).is_some()
                            && len(&kept) == len(&path)
                            && std::fs::read(&kept).ok() == std::fs::read(&path).ok()
                    })
                });
                if kept_copy {
                    continue;
                }
                let file = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .display()
                    .to_string();
                runs.entry(view.who()).or_default().push(Run { file, view });
            }
        }
    }
    // The columns' current reports (fresh or given) join their implementation's runs.
    let mut labels: BTreeMap<String, String> = BTreeMap::new();
    let mut columns: Vec<(String, RunView)> = Vec::new();
    for col in &impls.columns {
        let Some((report, path)) = &col.report else {
            continue;
        };
        let Ok(view) = RunView::load(path) else {
            continue;
        };
        labels.entry(view.who()).or_insert(col.label.clone());
        // A column merged from several kept reports (an agent's narrowed runs): its badge
        // is the merged column's, not its newest file's alone.
        let mut shown = view.clone();
        if matches!(&col.origin, Origin::Kept(k) if !k.older.is_empty()) {
            shown.scenarios = report
                .scenarios
                .iter()
                .map(|s| (s.id.clone(), (s.safety.clone(), s.exactness.clone())))
                .collect();
            let score = |c: &Counts| (c.passed, c.passed + c.failed + c.errored + c.not_shown);
            shown.safety = score(&report.verdicts.safety);
            shown.exactness = score(&report.verdicts.exactness);
        }
        columns.push((col.label.clone(), shown));
        let file = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        let list = runs.entry(view.who()).or_default();
        if !list.iter().any(|r| r.file == file) {
            list.push(Run { file, view });
        }
    }
    for list in runs.values_mut() {
        list.sort_by(|a, b| {
            version_key(&a.view.spec_version)
                .cmp(&version_key(&b.view.spec_version))
                .then(a.file.cmp(&b.file))
        });
    }
    // Each column's badge is its implementation's latest run of at least as many
    // scenarios as the column's report (a run of one chapter does not stand for the
    // whole); an implementation with no column gets its badge by its name.
    for (label, view) in &columns {
        let latest = runs
            .get(&view.who())
            .and_then(|l| {
                l.iter()
                    .rev()
                    .find(|r| r.view.scenarios.len() >= view.scenarios.len())
            })
            .map_or(view, |r| &r.view);
        files.insert(PathBuf::from(format!("badges/{label}.json")), badge(latest));
    }
    for (who, list) in &runs {
        if !labels.contains_key(who) {
            if let Some(last) = list.last() {
                files.insert(
                    PathBuf::from(format!("badges/{}.json", anchor(who))),
                    badge(&last.view),
                );
            }
        }
    }
    let mut html = String::from(
        "<h1>History</h1>\n<p>Each implementation's runs, per version and per suite release, from the reports kept in <code>docs/reports/</code> and the columns' current reports; the trend of safety (red) and exactness (blue), each as passed over judged (skipped left out); and what changed between its two latest runs, as <code>gatehouse-conform diff A.json B.json</code> prints it (new failures first, safety before exactness, then the fixed). Each column's badge is a shields.io endpoint at <code>badges/LABEL.json</code> (<code>docs/implementing.md</code> says how to show it).</p>\n",
    );
    let mut md = String::from("# History\n\nEach implementation's runs per version and per suite release, and what changed between its two latest runs (`gatehouse-conform diff`).\n");
    let subs = submissions(root);
    for (name, list) in &runs {
        let label = labels.get(name);
        let _ = writeln!(html, "<h2 id=\"{}\">{}</h2>", esc(&anchor(name)), esc(name));
        let _ = write!(md, "\n## {name}\n\n");
        match label {
            Some(l) => {
                let _ = writeln!(
                    html,
                    "<p>Column <a href=\"implementations/{l}.html\">{l}</a>; badge <a href=\"badges/{l}.json\"><code>badges/{l}.json</code></a>.</p>",
                    l = esc(l)
                );
            }
            None => {
                let _ = writeln!(
                    html,
                    "<p>Badge <a href=\"badges/{a}.json\"><code>badges/{a}.json</code></a>.</p>",
                    a = esc(&anchor(name))
                );
            }
        }
        for (folder, status) in subs.get(name).into_iter().flatten() {
            let _ = writeln!(
                html,
                "<p>Submission <code>{}/</code>: {}.</p>",
                esc(folder),
                esc(status)
            );
            let _ = writeln!(md, "Submission `{folder}/`: {status}.\n");
        }
        html.push_str(&trend(list));
        html.push_str("\n<table><tr><th>report</th><th>version</th><th>spec</th><th>suite</th><th>safety</th><th>exactness</th></tr>\n");
        md.push_str(
            "| report | version | spec | suite | safety | exactness |\n|---|---|---|---|---|---|\n",
        );
        for r in list {
            let v = &r.view;
            let short = v.suite_hash.trim_start_matches("sha256:");
            let short = &short[..short.len().min(12)];
            let _ = writeln!(
                html,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}/{}</td><td>{}/{}</td></tr>",
                esc(&r.file),
                esc(&v.version),
                esc(&v.spec_version),
                esc(short),
                v.safety.0,
                v.safety.1,
                v.exactness.0,
                v.exactness.1
            );
            let _ = writeln!(
                md,
                "| `{}` | {} | {} | `{short}` | {}/{} | {}/{} |",
                r.file,
                v.version.replace('|', "\\|"),
                v.spec_version,
                v.safety.0,
                v.safety.1,
                v.exactness.0,
                v.exactness.1
            );
        }
        html.push_str("</table>\n");
        if let [.., a, b] = list.as_slice() {
            let d = diff(&a.view, &b.view);
            let _ = writeln!(
                html,
                "<p>From <code>{}</code> to <code>{}</code>: {}.</p>",
                esc(&a.file),
                esc(&b.file),
                esc(&d.summary())
            );
            let _ = writeln!(
                md,
                "\nFrom `{}` to `{}`: {}.\n",
                a.file,
                b.file,
                d.summary()
            );
            let lines = d.lines();
            if !lines.is_empty() {
                html.push_str("<pre>");
                md.push_str("```text\n");
                for l in &lines {
                    html.push_str(&esc(l));
                    html.push('\n');
                    md.push_str(l);
                    md.push('\n');
                }
                html.push_str("</pre>\n");
                md.push_str("```\n");
            }
        }
    }
    files.insert(
        PathBuf::from("history.html"),
        crate::page::page("History", 0, &html),
    );
    files.insert(PathBuf::from("md/history.md"), md);
    files
}

/// An HTML id from an implementation's name.
fn anchor(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    s.split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(safety: (usize, usize), exactness: (usize, usize)) -> RunView {
        RunView {
            name: "n".into(),
            version: "1".into(),
            backend: "none".into(),
            spec_version: "0.15".into(),
            suite_hash: "sha256:ab".into(),
            safety,
            exactness,
            scenarios: BTreeMap::new(),
        }
    }

    /// An agent column of two kept reports (the newer narrowed to one scenario): its
    /// badge counts the merged column, not the newer file alone.
    #[test]
    fn a_merged_column_s_badge_is_the_merged_column_s() {
        let root = std::env::temp_dir().join(format!("gh-docs-badge-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        let report = |results: &[(&str, &str)]| {
            serde_json::json!({
                "runner": {"implementation": "agent", "suite": {"spec_version": "0.16", "hash": "h"}},
                "environment": {"name": "x", "version": "1"},
                "verdicts": {"safety": {"passed": 0, "failed": 0, "skipped": 0, "errored": 0},
                             "exactness": {"passed": 0, "failed": 0, "skipped": 0, "errored": 0}},
                "scenarios": results.iter().map(|(id, v)| serde_json::json!(
                    {"id": id, "safety": v, "exactness": v})).collect::<Vec<_>>(),
            })
            .to_string()
        };
        let (old, new) = (root.join("old.json"), root.join("new.json"));
        std::fs::write(&old, report(&[("fence/a", "failed"), ("gate/b", "failed")])).unwrap();
        std::fs::write(&new, report(&[("gate/b", "passed")])).unwrap();
        let kept = |path: &Path, date: &str| crate::reports::Kept {
            label: "x".into(),
            file: path.display().to_string(),
            revision: "r".into(),
            date: date.into(),
            what: String::new(),
            older: Vec::new(),
        };
        let rows = [kept(&old, "2026-12-06"), kept(&new, "2026-12-07")];
        let impls = crate::reports::gather(&root, &[], None, &[], None, &rows, &[]).unwrap();
        let files = render(&root, &impls);
        std::fs::remove_dir_all(&root).unwrap();
        let b = &files[&PathBuf::from("badges/x.json")];
        assert!(b.contains("safety 1/2"), "{b}");
    }

    #[test]
    fn a_badge_is_a_shields_endpoint_red_when_safety_fails() {
        let b: serde_json::Value =
            serde_json::from_str(&badge(&view((212, 212), (198, 212)))).unwrap();
        assert_eq!(
            b,
            serde_json::json!({"schemaVersion": 1, "label": "Gatehouse 0.15",
                "message": "safety 212/212, exactness 198/212", "color": "green"})
        );
        assert!(badge(&view((1, 2), (1, 2))).contains("\"red\""));
    }

    #[test]
    fn the_trend_has_a_point_per_run_and_no_script() {
        let runs: Vec<Run> = [(1, 2), (2, 2)]
            .into_iter()
            .map(|s| Run {
                file: "f".into(),
                view: view(s, s),
            })
            .collect();
        let svg = trend(&runs);
        assert_eq!(svg.matches("<circle").count(), 4);
        assert!(!svg.contains("<script"));
    }
}
