//! The runner's commands as the binary calls them: `run` ([`run::run`]), `checklist`,
//! `certify`, `verify` and `diff` ([`certify`]), `trace` and `lint` here, with what they share (the scenarios and spec directories, loaded and
//! checked, and the trace of the two). Each takes its options as plain data and returns an
//! exit code of [`crate::exit`]; printing its results is part of the command. The
//! binary's `clap` parser translates its flags into these options and nothing more.

pub mod certify;
pub mod run;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::scenario::{self, ScenarioError};
use crate::{asi, exit, locate, public_record, spec, trace, untestable};

/// `--scenarios` and `--spec`: `None` is `./scenarios` (`./spec`), else the workspace's.
#[derive(Debug, Clone, Default)]
pub struct Dirs {
    /// The scenarios directory.
    pub scenarios: Option<PathBuf>,
    /// The spec directory.
    pub spec: Option<PathBuf>,
}

/// The scenarios and spec directories: as given, else found (`locate::dir`).
pub fn dirs(d: &Dirs) -> Result<(PathBuf, PathBuf), Error> {
    let scenarios = locate::dir(d.scenarios.as_deref(), "scenarios", "--scenarios")?;
    let spec = locate::dir(d.spec.as_deref(), "spec", "--spec")?;
    Ok((scenarios, spec))
}

/// Every requirement of the spec chapters in `dir`.
pub fn load_spec(dir: &Path) -> Result<spec::SpecIndex, Error> {
    spec::load_dir(dir).map_err(|source| Error::ReadDir {
        what: "spec",
        dir: dir.to_path_buf(),
        source,
    })
}

/// Every scenario file in `dir`, validated (`ids`: the requirements they may cite).
pub fn load_scenarios(
    dir: &Path,
    ids: Option<&BTreeSet<String>>,
) -> Result<scenario::LoadReport, Error> {
    scenario::load_dir(dir, ids).map_err(|source| Error::ReadDir {
        what: "scenarios",
        dir: dir.to_path_buf(),
        source,
    })
}

/// Each problem of a scenario file on a line of stderr.
pub fn print_errors(errors: &[ScenarioError]) {
    for e in errors {
        eprintln!("{e}");
    }
}

/// The trace of the spec in `spec_dir` and the scenarios loaded, with
/// `spec/untestable.toml`: every rule of `spec/README.md` checked.
pub fn trace_of(
    spec_dir: &Path,
    spec: &spec::SpecIndex,
    loaded: &scenario::LoadReport,
) -> trace::Trace {
    let (untestable, untestable_errors) = match untestable::load(&spec_dir.join("untestable.toml"))
    {
        Ok(u) => (u, Vec::new()),
        Err(e) => (Vec::new(), e),
    };
    let spec_display = spec_dir.display().to_string();
    trace::trace(&trace::Inputs {
        spec,
        spec_dir: &spec_display,
        scenarios: &loaded.scenarios,
        scenario_errors: &loaded.errors,
        untestable: &untestable,
        untestable_errors: &untestable_errors,
    })
}

/// `trace`: the map between requirements and scenarios printed, as text or (`json`) as
/// JSON; [`exit::FAILURE`] when a rule is broken.
pub fn trace_cmd(given: &Dirs, json: bool) -> Result<i32, Error> {
    let (scenario_dir, spec_dir) = dirs(given)?;
    let spec = load_spec(&spec_dir)?;
    let loaded = load_scenarios(&scenario_dir, None)?;
    let mut t = trace_of(&spec_dir, &spec, &loaded);
    t.violations.extend(certify::checklist_lines(
        &scenario_dir,
        &spec_dir,
        &spec,
        &t,
    )?);
    if json {
        // serde_json fails only on a map key that is not a string or a hand-written
        // `Serialize` that errs: the trace's derived fields have neither.
        #[allow(clippy::expect_used)]
        let json = serde_json::to_string_pretty(&t).expect("the trace serializes");
        println!("{json}");
    } else {
        print!("{}", trace::render_human(&t));
    }
    Ok(if t.violations.is_empty() {
        exit::SUCCESS
    } else {
        exit::FAILURE
    })
}

/// The spec's two lists checked against the spec and the scenarios:
/// `public-record.toml` (every class cited by a scenario, every cited source listed) and
/// `asi.toml` (every ID and prefix defined).
pub fn check_lists(
    spec_dir: &Path,
    spec: &spec::SpecIndex,
    scenarios: &[scenario::Scenario],
) -> public_record::Checked {
    let ids = spec.ids();
    let mut out = public_record::Checked::default();
    let path = spec_dir.join("public-record.toml");
    match public_record::load(&path) {
        Ok(classes) => {
            let c = public_record::check(&classes, &path.display().to_string(), &ids, scenarios);
            out.errors.extend(c.errors);
        }
        Err(e) => out.errors.extend(e.iter().map(ToString::to_string)),
    }
    let path = spec_dir.join("asi.toml");
    match asi::load(&path) {
        Ok(a) => out
            .errors
            .extend(asi::check(&a, &path.display().to_string(), &ids)),
        Err(e) => out.errors.extend(e.iter().map(ToString::to_string)),
    }
    out
}

/// `lint`: every scenario file loaded and validated, and the spec's lists of public
/// bypasses and of agentic risks checked against them ([`check_lists`]), each problem
/// printed; [`exit::FAILURE`] when there is one.
pub fn lint(d: &Dirs) -> Result<i32, Error> {
    let (scenario_dir, spec_dir) = dirs(d)?;
    let spec = load_spec(&spec_dir)?;
    let loaded = load_scenarios(&scenario_dir, Some(&spec.citable()))?;
    for e in &loaded.errors {
        println!("{e}");
    }
    let lists = check_lists(&spec_dir, &spec, &loaded.scenarios);
    for e in &lists.errors {
        println!("{e}");
    }
    println!(
        "{} scenario file(s) valid, {} problem(s)",
        loaded.scenarios.len(),
        loaded.errors.len() + lists.errors.len()
    );
    Ok(if loaded.errors.is_empty() && lists.errors.is_empty() {
        exit::SUCCESS
    } else {
        exit::FAILURE
    })
}
