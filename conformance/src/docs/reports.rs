//! The canonical JSON reports the site shows (`spec/verdicts.md`): the part of their
//! format the pages read, each under its implementation's label. A label is a column of
//! the implementations table (`docs/implementations.md`), read from that table so that
//! every column gets a page even when no report was given for it.

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
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Counts {
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Skipped (with the reason in the scenario).
    pub skipped: usize,
    /// The implementation broke down.
    pub errored: usize,
}

/// One scenario of a report.
#[derive(Debug, Clone, Deserialize)]
pub struct ScenarioResult {
    /// The scenario id.
    pub id: String,
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

/// The implementations: the table's columns (`table`), each with `peers_dir/LABEL.json`
/// when it exists, then the reports given (`given`, replacing a column's or adding one).
pub fn gather(
    table: &[(String, String)],
    peers_dir: Option<&Path>,
    given: &[(String, PathBuf)],
) -> Result<Implementations, DocsError> {
    let mut columns: Vec<Column> = table
        .iter()
        .map(|(label, what)| Column {
            label: label.clone(),
            what: what.clone(),
            report: None,
        })
        .collect();
    if let Some(dir) = peers_dir {
        for c in &mut columns {
            let path = dir.join(format!("{}.json", c.label));
            if path.is_file() {
                c.report = Some((load(&path)?, path));
            }
        }
    }
    let mut seen = BTreeMap::new();
    for (label, path) in given {
        if seen.insert(label.clone(), ()).is_some() {
            return Err(DocsError::DuplicateLabel(label.clone()));
        }
        let report = (load(path)?, path.clone());
        match columns.iter_mut().find(|c| &c.label == label) {
            Some(c) => c.report = Some(report),
            None => columns.push(Column {
                label: label.clone(),
                what: String::new(),
                report: Some(report),
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
}
