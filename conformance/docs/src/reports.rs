//! The canonical JSON reports the site shows (`spec/verdicts.md`): the part of their
//! format the pages read, each under its implementation's label. A label is a column of
//! the implementations table (`docs/implementations.md`), read from that table so that
//! every column gets a page even when no report was given for it.
//!
//! A column's report comes, first found wins, from `--report`, from a fresh run's
//! directory (`reports/peers/`, `reports/agents/`: a CI or `just peers-table` run, not
//! committed), or from the reports the project keeps (`docs/reports/`, listed with how
//! each was made in the table of `docs/reports/README.md`), so that a fresh clone shows
//! every column; [`Origin`] says which, and the page says it too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::error::DocsError;

/// One canonical JSON report, the fields the pages show.
#[derive(Debug, Clone, Deserialize)]
pub struct Report {
    /// The runner and the suite it ran.
    pub runner: Runner,
    /// The implementation's `hello` (name, version, capabilities, environment).
    #[serde(default)]
    pub environment: serde_json::Value,
    /// The two verdicts' counts.
    pub verdicts: Verdicts,
    /// Every scenario's result.
    pub scenarios: Vec<ScenarioResult>,
}

/// `runner`: who ran what.
#[derive(Debug, Clone, Deserialize)]
pub struct Runner {
    /// The implementation command.
    pub implementation: String,
    /// The suite's identity.
    pub suite: Suite,
}

/// `runner.suite`.
#[derive(Debug, Clone, Deserialize)]
pub struct Suite {
    /// The spec's version.
    pub spec_version: String,
    /// The hash over scenarios and spec.
    pub hash: String,
}

/// `verdicts`: safety and exactness.
#[derive(Debug, Clone, Deserialize)]
pub struct Verdicts {
    /// Only what a person relies on.
    pub safety: Counts,
    /// Every field.
    pub exactness: Counts,
}

/// Scenario counts of one verdict.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct Counts {
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Skipped (with the reason in the scenario).
    pub skipped: usize,
    /// The implementation broke down.
    pub errored: usize,
    /// Safety only: skipped on an `unsupported` answer, so not shown safe
    /// (PROTO-OBSERVE-6); absent from reports older than it.
    #[serde(default)]
    pub not_shown: usize,
}

/// One scenario of a report.
#[derive(Debug, Clone, Deserialize)]
pub struct ScenarioResult {
    /// The scenario id.
    pub id: String,
    /// The requirements the scenario names (absent from the smallest reports).
    #[serde(default)]
    pub requirements: Vec<String>,
    /// The safety verdict.
    pub safety: String,
    /// The exactness verdict.
    pub exactness: String,
    /// Why it failed, was skipped or errored.
    #[serde(default)]
    pub reason: Option<String>,
    /// The steps run.
    #[serde(default)]
    pub steps: Vec<StepResult>,
}

/// One step of a scenario's result.
#[derive(Debug, Clone, Deserialize)]
pub struct StepResult {
    /// 1-based index.
    pub index: usize,
    /// The request sent (`session` aside, the input the step broke with).
    #[serde(default)]
    pub request: serde_json::Value,
    /// Every difference with its level.
    #[serde(default)]
    pub differences: Vec<Difference>,
}

/// A difference between the answer and the expectation.
#[derive(Debug, Clone, Deserialize)]
pub struct Difference {
    /// `safety` or `exactness`.
    pub level: String,
    /// The field.
    pub field: String,
    /// The runner's line.
    pub message: String,
}

impl Report {
    /// The result of scenario `id`, if it ran in this report.
    pub fn scenario(&self, id: &str) -> Option<&ScenarioResult> {
        self.scenarios.iter().find(|s| s.id == id)
    }
}

/// The implementations: every column of the table, with its report where one was given.
#[derive(Debug, Default)]
pub struct Implementations {
    /// Label, in the table's order, then the labels given only with `--report`.
    pub columns: Vec<Column>,
}

/// One implementation.
#[derive(Debug)]
pub struct Column {
    /// The label (`reference`, `bwrap`).
    pub label: String,
    /// What the table says runs (empty for a label given only with `--report`).
    pub what: String,
    /// The report and the file it came from.
    pub report: Option<(Report, PathBuf)>,
    /// Where the report came from (meaningful when `report` is set).
    pub origin: Origin,
    /// What `just agents` published for an agent column (its row and its section of the
    /// agents table), the page's source when its report is not kept.
    pub published: Option<Published>,
}

/// An agent column as the agents section of `implementations.md` states it: its row of
/// the agents table and its own section. Agent runs take minutes to hours per chapter, so
/// their JSON reports are not kept; the committed table is what a reviewer can read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Published {
    /// The table's heading (`The agents table (2026-12-05)`).
    pub heading: String,
    /// Where and by what the table was made (its `Made by` line).
    pub made_by: String,
    /// The agent's version.
    pub version: String,
    /// Each chapter with its cell (both verdicts' counts, or `-`).
    pub chapters: Vec<(String, String)>,
    /// The `Declared:` line of its section.
    pub declared: String,
    /// Each scenario that failed (or errored) the safety verdict.
    pub failures: Vec<Failure>,
    /// Each scenario that passed safety and failed exactness.
    pub exactness_only: Vec<Failure>,
    /// The `Skipped, by reason:` line.
    pub skipped: String,
}

/// Where a column's report came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Origin {
    /// No report.
    #[default]
    None,
    /// A report the project keeps (`docs/reports/`).
    Kept(Kept),
    /// A fresh run's report (`reports/peers/`, `reports/agents/`), written on `modified`
    /// (UTC), set before the kept one if there is one.
    Fresh {
        /// The file's modification time, `YYYY-MM-DD HH:MM UTC`.
        modified: String,
        /// The kept report it takes precedence over.
        over: Option<Kept>,
    },
    /// A report given with `--report`.
    Given {
        /// The file's modification time, `YYYY-MM-DD HH:MM UTC`.
        modified: String,
        /// The kept report it takes precedence over.
        over: Option<Kept>,
    },
}

/// A kept report: a row of the table in `docs/reports/README.md`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Kept {
    /// The column it is shown under.
    pub label: String,
    /// The file, relative to the repository's root (`docs/reports/...json`).
    pub file: String,
    /// The revision of this repository it ran (a commit, as the table writes it).
    pub revision: String,
    /// The day it ran (`YYYY-MM-DD`).
    pub date: String,
    /// What runs, for a label that is not a column of the implementations table.
    pub what: String,
    /// The column's older kept reports, merged under this one per scenario (files,
    /// oldest first).
    pub older: Vec<String>,
}

impl Origin {
    /// One sentence for the page: which report it shows and of when.
    pub fn sentence(&self, path: &Path) -> String {
        let over = |k: &Option<Kept>| match k {
            Some(k) => format!(
                "; it takes precedence over the kept report `{}` (revision `{}`, {})",
                k.file, k.revision, k.date
            ),
            None => String::new(),
        };
        match self {
            Origin::None => String::new(),
            Origin::Kept(k) => format!(
                "Kept report `{}`, of revision `{}` on {}{} (`docs/reports/README.md` says how it was made); a fresh run's report (`reports/peers/`, `reports/agents/` or `--report`) takes precedence.",
                k.file,
                k.revision,
                k.date,
                if k.older.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", merged per scenario over the column's older kept reports {} (the newest report that ran a scenario gives its result)",
                        k.older
                            .iter()
                            .map(|f| format!("`{f}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            ),
            Origin::Fresh { modified, over: o } => format!(
                "Fresh report `{}`, a run in this checkout, written {modified}{}.",
                path.display(),
                over(o)
            ),
            Origin::Given { modified, over: o } => format!(
                "Report given with `--report`: `{}`, written {modified}{}.",
                path.display(),
                over(o)
            ),
        }
    }

    /// A few words for the index: `kept, a928515, 2026-12-07`.
    pub fn short(&self) -> String {
        match self {
            Origin::None => "no report".into(),
            Origin::Kept(k) => format!("kept, {}, {}", k.revision, k.date),
            Origin::Fresh { modified, .. } => format!("fresh run, {modified}"),
            Origin::Given { modified, .. } => format!("given, {modified}"),
        }
    }
}

impl Implementations {
    /// The columns with a report.
    pub fn reported(&self) -> impl Iterator<Item = (&str, &Report)> {
        self.columns
            .iter()
            .filter_map(|c| c.report.as_ref().map(|(r, _)| (c.label.as_str(), r)))
    }
}

/// Parses `LABEL=FILE`.
pub fn parse_arg(arg: &str) -> Result<(String, PathBuf), DocsError> {
    let (label, file) = arg
        .split_once('=')
        .ok_or_else(|| DocsError::ReportArg(arg.to_string()))?;
    let fit = !label.is_empty()
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        && !label.starts_with('.');
    if !fit || file.is_empty() {
        return Err(DocsError::ReportArg(arg.to_string()));
    }
    Ok((label.to_string(), PathBuf::from(file)))
}

/// The columns of the first table of `implementations.md`: its rows' first cells, each a
/// backticked label, with the second cell.
pub fn table_columns(markdown: &str) -> Vec<(String, String)> {
    markdown
        .lines()
        .skip_while(|l| !l.starts_with("| column"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let label = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((label.to_string(), cells.get(2).unwrap_or(&"").to_string()))
        })
        .collect()
}

/// One failed scenario of an agent column, as its section lists it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Failure {
    /// The scenario id.
    pub id: String,
    /// What follows the id in its cell (`(errored)`), else empty.
    pub state: String,
    /// The requirements it names.
    pub requirements: String,
    /// The first safety difference, as the runner said it.
    pub first: String,
}

/// The cells of a Markdown table row, `\\|` kept as a `|` inside its cell.
fn cells(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.trim().trim_start_matches('|').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '|' => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// The label in a cell or heading that ends with ``(`label`)``.
fn trailing_label(text: &str) -> Option<String> {
    let inner = text.trim().strip_suffix("`)")?;
    let start = inner.rfind("(`")?;
    let label = &inner[start + 2..];
    (!label.is_empty() && !label.contains('`')).then(|| label.to_string())
}

/// The agent columns of the agents section of `implementations.md` (between its `agents
/// table: begin` and `end` markers, then its `agents published: begin` and `end`), in
/// order, each with what it published (a label's last row and the sections after it).
pub fn agent_columns(markdown: &str) -> Vec<(String, Published)> {
    let mut out: Vec<(String, Published)> = Vec::new();
    let (mut heading, mut made_by) = (String::new(), String::new());
    let mut header: Vec<String> = Vec::new();
    let mut section: Option<usize> = None;
    // Which list of the current section the table rows go to.
    #[derive(PartialEq)]
    enum Rows {
        Summary,
        Safety,
        Exactness,
    }
    let mut rows = Rows::Summary;
    // The generated table (`agents table`), then what was published before the columns'
    // reports were kept (`agents published`): a label's later row replaces its earlier.
    let mut inside = false;
    let lines = markdown.lines().filter(|l| {
        if l.starts_with("<!-- agents table: begin")
            || l.starts_with("<!-- agents published: begin")
        {
            inside = true;
            return false;
        }
        if l.starts_with("<!-- agents table: end") || l.starts_with("<!-- agents published: end") {
            inside = false;
        }
        inside
    });
    for line in lines {
        if let Some(h) = line
            .strip_prefix("### ")
            .or_else(|| line.strip_prefix("#### "))
        {
            rows = Rows::Summary;
            section = trailing_label(h).and_then(|l| out.iter().position(|(x, _)| *x == l));
            if section.is_none() && trailing_label(h).is_none() {
                heading = h.trim().to_string();
            }
        } else if let Some(m) = line.strip_prefix("Made by ") {
            made_by = format!("Made by {}", m.trim());
        } else if line.starts_with("| implementation |") {
            header = cells(line);
        } else if line.starts_with("| failed safety |") {
            rows = Rows::Safety;
        } else if line.starts_with("| failed only exactness |") {
            rows = Rows::Exactness;
        } else if line.starts_with("|---") {
        } else if line.starts_with('|') {
            let row = cells(line);
            if rows != Rows::Summary {
                if let (Some(i), [cell, reqs, first, ..]) = (section, row.as_slice()) {
                    let (id, state) = match cell.strip_prefix('`').and_then(|c| c.split_once('`')) {
                        Some((id, state)) => (id.to_string(), state.trim().to_string()),
                        None => (cell.clone(), String::new()),
                    };
                    let f = Failure {
                        id,
                        state,
                        requirements: reqs.clone(),
                        first: first.clone(),
                    };
                    match rows {
                        Rows::Safety => out[i].1.failures.push(f),
                        _ => out[i].1.exactness_only.push(f),
                    }
                }
            } else if let Some(label) = row.first().and_then(|c| trailing_label(c)) {
                let chapters = header
                    .iter()
                    .skip(2)
                    .zip(row.iter().skip(2))
                    .map(|(h, c)| (h.trim_matches('`').to_string(), c.clone()))
                    .collect();
                let p = Published {
                    heading: heading.clone(),
                    made_by: made_by.clone(),
                    version: row.get(1).cloned().unwrap_or_default(),
                    chapters,
                    ..Published::default()
                };
                match out.iter_mut().find(|(l, _)| *l == label) {
                    Some(slot) => slot.1 = p,
                    None => out.push((label, p)),
                }
            }
        } else if let Some(i) = section {
            if let Some(d) = line.strip_prefix("Declared: ") {
                out[i].1.declared = d.trim().to_string();
            } else if let Some(r) = line.strip_prefix("Skipped, by reason: ") {
                out[i].1.skipped = r.trim().to_string();
            }
            if !line.trim().is_empty() {
                rows = Rows::Summary;
            }
        }
    }
    out
}

/// One column from its reports, oldest first: the newest report that ran a scenario gives
/// its result, a scenario no newer report ran keeps its older one (a narrowed run never
/// removes a scenario), and the verdicts are counted again; the runner and environment
/// are the newest's.
pub fn merge(reports: Vec<Report>) -> Report {
    let mut reports = reports.into_iter();
    let Some(mut merged) = reports.next() else {
        return Report {
            runner: Runner {
                implementation: String::new(),
                suite: Suite {
                    spec_version: String::new(),
                    hash: String::new(),
                },
            },
            environment: serde_json::Value::Null,
            verdicts: Verdicts {
                safety: Counts::default(),
                exactness: Counts::default(),
            },
            scenarios: Vec::new(),
        };
    };
    let mut newer = false;
    for r in reports {
        newer = true;
        for s in &r.scenarios {
            match merged.scenarios.iter_mut().find(|m| m.id == s.id) {
                Some(m) => *m = s.clone(),
                None => merged.scenarios.push(s.clone()),
            }
        }
        merged.runner = r.runner;
        merged.environment = r.environment;
    }
    if newer {
        merged.scenarios.sort_by(|a, b| a.id.cmp(&b.id));
        let count = |pick: fn(&ScenarioResult) -> &str| {
            let mut c = Counts::default();
            for s in &merged.scenarios {
                match pick(s) {
                    "passed" => c.passed += 1,
                    "failed" => c.failed += 1,
                    "errored" => c.errored += 1,
                    "not_shown" => c.not_shown += 1,
                    _ => c.skipped += 1,
                }
            }
            c
        };
        merged.verdicts = Verdicts {
            safety: count(|s| &s.safety),
            exactness: count(|s| &s.exactness),
        };
    }
    merged
}

/// Reads one report.
pub fn load(path: &Path) -> Result<Report, DocsError> {
    let text = std::fs::read_to_string(path).map_err(|source| DocsError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| DocsError::Report {
        path: path.to_path_buf(),
        source,
    })
}

/// The kept reports: the rows of the table in `docs/reports/README.md` whose header is
/// `| column | report | revision | date | what runs | made by |`, the report cell a link
/// or a backticked file name under `docs/reports/`.
pub fn kept_table(markdown: &str) -> Vec<Kept> {
    markdown
        .lines()
        .skip_while(|l| !l.starts_with("| column | report |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            let c = cells(l);
            let label = c.first()?.strip_prefix('`')?.strip_suffix('`')?.to_string();
            // `[name](name)` or `` `name` ``: the file name, under docs/reports/.
            let cell = c.get(1)?;
            let name = cell
                .rsplit_once("](")
                .map_or(cell.as_str(), |(_, t)| t.trim_end_matches(')'))
                .trim_matches('`');
            if name.is_empty() || name.contains('/') || name.starts_with('.') {
                return None;
            }
            let cell = |i: usize| c.get(i).map_or("", |x| x.trim_matches('`')).to_string();
            Some(Kept {
                label,
                file: format!("docs/reports/{name}"),
                revision: cell(2),
                date: cell(3),
                what: c.get(4).cloned().unwrap_or_default(),
                older: Vec::new(),
            })
        })
        .collect()
}

/// `YYYY-MM-DD HH:MM UTC` of a file's modification time (empty if unknown).
fn modified(path: &Path) -> String {
    let Ok(secs) = std::fs::metadata(path).and_then(|m| m.modified()).map(|t| {
        t.duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs()
    }) else {
        return String::new();
    };
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60
    )
}

/// The implementations: the table's columns (`table`), then the agent columns
/// (`agents`), then the kept reports' labels that are neither (`kept`, read from under
/// `root`). Each column's report is, first found wins: the one given (`given`,
/// replacing a column's or adding one), `peers_dir/LABEL.json` or `agents_dir/LABEL.json`
/// (a fresh run), the kept one.
pub fn gather(
    root: &Path,
    table: &[(String, String)],
    peers_dir: Option<&Path>,
    agents: &[(String, Published)],
    agents_dir: Option<&Path>,
    kept: &[Kept],
    given: &[(String, PathBuf)],
) -> Result<Implementations, DocsError> {
    let mut columns: Vec<Column> = table
        .iter()
        .map(|(label, what)| Column {
            label: label.clone(),
            what: what.clone(),
            report: None,
            origin: Origin::None,
            published: None,
        })
        .collect();
    for (label, p) in agents {
        if columns.iter().any(|c| &c.label == label) {
            return Err(DocsError::DuplicateLabel(label.clone()));
        }
        columns.push(Column {
            label: label.clone(),
            what: format!(
                "An agent end to end (version {}), each step a headless run driven by a scripted model on 127.0.0.1; its mapping and findings are in `conformance/adapters/agents/`.",
                p.version
            ),
            report: None,
            origin: Origin::None,
            published: Some(p.clone()),
        });
    }
    // A label's kept reports, newest last (by day, then as listed), merged per scenario.
    let mut by_label: Vec<(String, Vec<&Kept>)> = Vec::new();
    for k in kept {
        match by_label.iter_mut().find(|(l, _)| *l == k.label) {
            Some((_, list)) => list.push(k),
            None => by_label.push((k.label.clone(), vec![k])),
        }
    }
    for (_, list) in &mut by_label {
        list.sort_by(|a, b| a.date.cmp(&b.date));
    }
    for (_, list) in by_label {
        let Some(newest) = list.last() else {
            continue;
        };
        let k = Kept {
            older: list[..list.len() - 1]
                .iter()
                .map(|o| o.file.clone())
                .collect(),
            ..(*newest).clone()
        };
        let reports = list
            .iter()
            .map(|o| load(&root.join(&o.file)))
            .collect::<Result<Vec<_>, _>>()?;
        if columns.iter().all(|c| c.label != k.label) {
            columns.push(Column {
                label: k.label.clone(),
                what: k.what.clone(),
                report: None,
                origin: Origin::None,
                published: None,
            });
        }
        let Some(c) = columns.iter_mut().find(|c| c.label == k.label) else {
            continue;
        };
        if c.report.is_some() {
            return Err(DocsError::DuplicateLabel(k.label.clone()));
        }
        let path = PathBuf::from(&k.file);
        c.report = Some((merge(reports), path));
        c.origin = Origin::Kept(k.clone());
    }
    let kept_of = |c: &Column| match &c.origin {
        Origin::Kept(k) => Some(k.clone()),
        Origin::Fresh { over, .. } | Origin::Given { over, .. } => over.clone(),
        Origin::None => None,
    };
    for c in &mut columns {
        let dir = if c.published.is_some() {
            agents_dir
        } else {
            peers_dir
        };
        let Some(path) = dir.map(|d| d.join(format!("{}.json", c.label))) else {
            continue;
        };
        if path.is_file() {
            c.origin = Origin::Fresh {
                modified: modified(&path),
                over: kept_of(c),
            };
            c.report = Some((load(&path)?, path));
        }
    }
    let mut seen = BTreeMap::new();
    for (label, path) in given {
        if seen.insert(label.clone(), ()).is_some() {
            return Err(DocsError::DuplicateLabel(label.clone()));
        }
        let report = (load(path)?, path.clone());
        let origin = |over| Origin::Given {
            modified: modified(path),
            over,
        };
        match columns.iter_mut().find(|c| &c.label == label) {
            Some(c) => {
                c.origin = origin(kept_of(c));
                c.report = Some(report);
            }
            None => columns.push(Column {
                label: label.clone(),
                what: String::new(),
                report: Some(report),
                origin: origin(None),
                published: None,
            }),
        }
    }
    Ok(Implementations { columns })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_the_table() {
        assert_eq!(
            parse_arg("bwrap=r/b.json").unwrap(),
            ("bwrap".into(), PathBuf::from("r/b.json"))
        );
        for bad in ["bwrap", "=x", "a/b=x", "../x=y", "a="] {
            assert!(parse_arg(bad).is_err(), "{bad}");
        }
        let md = "x\n\n| column | what runs | adapter |\n|---|---|---|\n| `reference` | it | |\n| `bwrap` | bw | [a](b) |\n\nafter\n";
        assert_eq!(
            table_columns(md),
            vec![
                ("reference".into(), "it".into()),
                ("bwrap".into(), "bw".into())
            ]
        );
    }

    #[test]
    fn the_kept_reports_table() {
        let md = "# Kept\n\n| column | report | revision | date | what runs | made by |\n|---|---|---|---|---|---|\n\
| `reference` | [`reference-native-abc1234-2026-12-06.json`](reference-native-abc1234-2026-12-06.json) | `abc1234` | 2026-12-06 | it | `cmd \\| x` |\n\
| `srt` | `srt-bwrap-abc1234-2026-12-06.json` | `abc1234` | 2026-12-06 | srt | c |\n\
| `bad` | [x](../elsewhere.json) | r | d | w | c |\n\nafter\n| `late` | `l.json` | r | d | w | c |\n";
        let kept = kept_table(md);
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert_eq!(
            kept[0],
            Kept {
                label: "reference".into(),
                file: "docs/reports/reference-native-abc1234-2026-12-06.json".into(),
                revision: "abc1234".into(),
                date: "2026-12-06".into(),
                what: "it".into(),
                older: Vec::new(),
            }
        );
        assert_eq!(
            kept[1].file,
            "docs/reports/srt-bwrap-abc1234-2026-12-06.json"
        );
    }

    fn report(version: &str, results: &[(&str, &str)]) -> serde_json::Value {
        serde_json::json!({
            "runner": {"implementation": "python3 conformance/adapters/agents/x/adapter.py",
                       "suite": {"spec_version": "0.16", "hash": "h"}},
            "environment": {"name": "x", "version": version},
            "verdicts": {"safety": {"passed": 0, "failed": 0, "skipped": 0, "errored": 0},
                         "exactness": {"passed": 0, "failed": 0, "skipped": 0, "errored": 0}},
            "scenarios": results.iter().map(|(id, v)| serde_json::json!(
                {"id": id, "safety": v, "exactness": v})).collect::<Vec<_>>(),
        })
    }

    #[test]
    fn a_column_s_kept_reports_merge_and_a_narrowed_one_removes_no_scenario() {
        let root = std::env::temp_dir().join(format!("gh-docs-merge-{}", std::process::id()));
        let reports = root.join("docs/reports");
        std::fs::create_dir_all(&reports).unwrap();
        let write = |name: &str, v: serde_json::Value| {
            std::fs::write(reports.join(name), v.to_string()).unwrap();
        };
        write(
            "x-gate-aaaaaaa-2026-12-06.json",
            report(
                "1",
                &[
                    ("fence/a", "failed"),
                    ("gate/b", "failed"),
                    ("hooks/c", "passed"),
                ],
            ),
        );
        write(
            "x-gate-bbbbbbb-2026-12-07.json",
            report("2", &[("gate/b", "passed"), ("gate/new", "not_shown")]),
        );
        let kept = |file: &str, date: &str| Kept {
            label: "x".into(),
            file: format!("docs/reports/{file}"),
            revision: "r".into(),
            date: date.into(),
            what: String::new(),
            older: Vec::new(),
        };
        // Listed newest first: the day decides which is newer.
        let rows = [
            kept("x-gate-bbbbbbb-2026-12-07.json", "2026-12-07"),
            kept("x-gate-aaaaaaa-2026-12-06.json", "2026-12-06"),
        ];
        let impls = gather(&root, &[], None, &[], None, &rows, &[]).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(impls.columns.len(), 1);
        let c = &impls.columns[0];
        let (r, path) = c.report.as_ref().unwrap();
        let got: Vec<(&str, &str)> = r
            .scenarios
            .iter()
            .map(|s| (s.id.as_str(), s.safety.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("fence/a", "failed"),
                ("gate/b", "passed"),
                ("gate/new", "not_shown"),
                ("hooks/c", "passed")
            ]
        );
        let v = &r.verdicts.safety;
        assert_eq!((v.passed, v.failed, v.not_shown), (2, 1, 1));
        assert_eq!(r.environment["version"], "2");
        assert_eq!(
            path,
            &PathBuf::from("docs/reports/x-gate-bbbbbbb-2026-12-07.json")
        );
        let Origin::Kept(k) = &c.origin else {
            panic!("{:?}", c.origin)
        };
        assert_eq!(
            k.older,
            vec!["docs/reports/x-gate-aaaaaaa-2026-12-06.json".to_string()]
        );
        assert!(c.origin.sentence(path).contains("merged per scenario"));
    }

    #[test]
    fn the_agents_section_gives_each_agent_column_its_row_and_its_failures() {
        let md = "| column | what runs | adapter |\n|---|---|---|\n| `reference` | it | |\n\n\
<!-- agents table: begin (written by `just agents`) -->\n\n### The agents table (2026-12-05)\n\n\
Made by `just agents` on this machine.\n\n\
| implementation | version | `fence/` | `hooks/` |\n|---|---|---|---|\n\
| claude-code (`claude-code`) | 2.1 | safety 1 passed / 2 failed | - |\n\n\
### claude-code (`claude-code`)\n\nDeclared: capabilities `gate`.\n\n\
| failed safety | requirements | first safety difference |\n|---|---|---|\n\
| `fence/a` | FENCE-JAIL-6 | step 1 (run \"a \\| b\"): exit |\n\
| `fence/b` (errored) | FENCE-JAIL-8 | error |\n\n\
| failed only exactness | requirements | first mismatch |\n|---|---|---|\n\
| `fence/c` | FENCE-ENV-8 | output |\n\n\
Skipped, by reason: platform (2).\n\n<!-- agents table: end -->\n| `x` | not an agent |\n\
<!-- agents published: begin -->\n### Earlier (2026-12-01)\n\n\
| implementation | version | `gate/` |\n|---|---|---|\n\
| old agent (`old-agent`) | 0.9 | safety 3 passed / 1 failed |\n\n\
### old agent (`old-agent`)\n\n\
| failed safety | requirements | first safety difference |\n|---|---|---|\n\
| `gate/z` | GATE-READ-1 | decision |\n\n<!-- agents published: end -->\n";
        let cols = agent_columns(md);
        assert_eq!(cols.len(), 2, "{cols:?}");
        assert_eq!(cols[1].0, "old-agent");
        assert_eq!(cols[1].1.heading, "Earlier (2026-12-01)");
        assert_eq!(cols[1].1.failures.len(), 1);
        let (label, p) = &cols[0];
        assert_eq!(label, "claude-code");
        assert_eq!(p.version, "2.1");
        assert_eq!(p.heading, "The agents table (2026-12-05)");
        assert_eq!(
            p.chapters,
            vec![
                ("fence/".into(), "safety 1 passed / 2 failed".into()),
                ("hooks/".into(), "-".into())
            ]
        );
        assert_eq!(p.declared, "capabilities `gate`.");
        assert_eq!(p.failures.len(), 2);
        assert_eq!(p.failures[0].first, "step 1 (run \"a | b\"): exit");
        assert_eq!(p.failures[0].requirements, "FENCE-JAIL-6");
        assert_eq!(
            (p.failures[1].id.as_str(), p.failures[1].state.as_str()),
            ("fence/b", "(errored)")
        );
        assert_eq!(p.exactness_only.len(), 1);
        assert_eq!(p.exactness_only[0].id, "fence/c");
        assert_eq!(p.skipped, "platform (2).");
        assert_eq!(table_columns(md), vec![("reference".into(), "it".into())]);
    }
}
