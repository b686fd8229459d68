//! Reading scenario files from disk: walking `scenarios/`, parsing TOML strictly and
//! turning every problem into one line `file:line:col: message`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::error::ScenarioError;
use super::model::{Scenario, ScenarioFile};
use super::validate;

/// Every scenario of a directory, and every problem found on the way.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// Valid scenarios, sorted by id.
    pub scenarios: Vec<Scenario>,
    /// One entry per problem; a file with problems is left out of `scenarios`.
    pub errors: Vec<ScenarioError>,
}

/// Loads every `*.toml` under `dir` (recursively, sorted). With `spec_ids`, each cited
/// requirement must be one of them.
pub fn load_dir(dir: &Path, spec_ids: Option<&BTreeSet<String>>) -> std::io::Result<LoadReport> {
    let mut files = Vec::new();
    collect_toml(dir, &mut files)?;
    files.sort();
    let mut report = LoadReport::default();
    for path in files {
        let rel = path.strip_prefix(dir).unwrap_or(&path);
        let id = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        let display = path.display().to_string();
        match std::fs::read_to_string(&path) {
            Ok(source) => match load_file(&source, &display, &id, spec_ids) {
                Ok(s) => report.scenarios.push(s),
                Err(errs) => report.errors.extend(errs),
            },
            Err(e) => report.errors.push(ScenarioError {
                file: display,
                position: None,
                message: format!("cannot read: {e}"),
            }),
        }
    }
    Ok(report)
}

fn collect_toml(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_toml(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "toml") {
            out.push(path);
        }
    }
    Ok(())
}

/// Parses and validates one scenario from its source text.
pub fn load_file(
    source: &str,
    display: &str,
    id: &str,
    spec_ids: Option<&BTreeSet<String>>,
) -> Result<Scenario, Vec<ScenarioError>> {
    let file: ScenarioFile =
        toml::from_str(source).map_err(|e| vec![ScenarioError::toml(display, source, &e)])?;
    validate::validate(file, source, display, id, spec_ids)
}
