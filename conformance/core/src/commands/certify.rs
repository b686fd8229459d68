//! `checklist`, `certify`, `verify` and `diff` (`spec/verdicts.md`, PROTO-CERT-1 to 7):
//! the checklist of the current release written or checked, a fixed run packaged as a
//! submission folder and verified, a folder verified, two reports compared. The options
//! are plain data; the binary's command line only fills them in.

use std::path::{Path, PathBuf};

use super::run::{run, RunOptions};
use super::{dirs, load_scenarios, load_spec, trace_of, Dirs};
use crate::checklist::{self, Checklist};
use crate::diff::{diff, RunView};
use crate::error::Error;
use crate::report::Format;
use crate::submission::{self, Product};
use crate::verdict::Level;
use crate::{exit, spec, trace};

/// The checklist's disagreements with the suite as it stands, for `trace` (PROTO-CERT-1);
/// none where the spec directory has no `checklists/` (a suite of a test, not a release).
pub fn checklist_lines(
    scenario_dir: &Path,
    spec_dir: &Path,
    spec: &spec::SpecIndex,
    t: &trace::Trace,
) -> Result<Vec<String>, Error> {
    if !spec_dir.join(checklist::DIR).is_dir() {
        return Ok(Vec::new());
    }
    let suite = crate::identity::of(scenario_dir, spec_dir)?;
    let derived = Checklist::derive(spec, t, &suite);
    Ok(checklist::check(spec_dir, &derived))
}

/// `checklist`: with `write`, the current version's checklist written; else checked
/// against the suite, each disagreement on a line ([`exit::FAILURE`] when there is one).
pub fn checklist_cmd(given: &Dirs, write: bool) -> Result<i32, Error> {
    let (scenario_dir, spec_dir) = dirs(given)?;
    let spec = load_spec(&spec_dir)?;
    let loaded = load_scenarios(&scenario_dir, None)?;
    let t = trace_of(&spec_dir, &spec, &loaded);
    let suite = crate::identity::of(&scenario_dir, &spec_dir)?;
    let derived = Checklist::derive(&spec, &t, &suite);
    let file = checklist::path(&spec_dir, &derived.spec_version);
    let counts = format!(
        "{} requirement(s): {} MUST, {} SHOULD, {} MAY; suite {}",
        derived.items.len(),
        derived.must,
        derived.should,
        derived.may,
        derived.suite_hash
    );
    if write {
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|source| Error::Write {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        super::run::write(&file, &derived.render())?;
        println!("wrote {}: {counts}", file.display());
        return Ok(exit::SUCCESS);
    }
    let lines = checklist::check(&spec_dir, &derived);
    for l in &lines {
        println!("{l}");
    }
    println!("{}: {counts}", file.display());
    Ok(if lines.is_empty() {
        exit::SUCCESS
    } else {
        exit::FAILURE
    })
}

/// The options of `certify`.
#[derive(Debug, Clone)]
pub struct CertifyOptions {
    /// `--impl`: the adapter command (`None`: the reference).
    pub implementation: Option<String>,
    /// `--product`: the product file.
    pub product: PathBuf,
    /// `--out`: the submission folder.
    pub out: PathBuf,
    /// `--expectations`: the known failures, each with its reason.
    pub expectations: Option<PathBuf>,
    /// `--from-report`: package this report of a fixed run instead of running.
    pub from_report: Option<PathBuf>,
    /// `--from-log`: with `--from-report`, the run's log as it was written.
    pub from_log: Option<PathBuf>,
    /// `--expect-landlock-abi`, as `run` takes it.
    pub expect_landlock_abi: Option<i64>,
    /// `--expect-fence-backend`, as `run` takes it.
    pub expect_fence_backend: Option<String>,
    /// `--step-timeout`, as `run` takes it.
    pub step_timeout: f64,
    /// `--scenarios` and `--spec`.
    pub dirs: Dirs,
    /// The runner's version.
    pub version: &'static str,
    /// The rerun words, as `run` records them.
    pub invocation: Vec<String>,
}

fn read(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path)
        .map_err(|e| Error::Certify(format!("{}: cannot read: {e}", path.display())))
}

/// `certify`: the whole suite run in the fixed mode (or a fixed run's report taken),
/// written as a submission folder, and the folder verified; the exit status is
/// `verify`'s.
pub fn certify(o: CertifyOptions) -> Result<i32, Error> {
    let shown = o.product.display().to_string();
    let product = read(&o.product)?;
    let scope = match Product::parse(&product, &shown) {
        Ok(p) => p.scope,
        Err(problems) => return Err(Error::Certify(problems.join("\n"))),
    };
    let expectations = match &o.expectations {
        Some(path) => {
            let e = crate::expectations::Expectations::load(path)?;
            let unexplained: Vec<String> = e
                .scenarios
                .iter()
                .filter(|(_, x)| x.reason.trim().is_empty())
                .map(|(id, _)| {
                    format!(
                        "{}: `{id}` is an expected failure without a reason",
                        path.display()
                    )
                })
                .collect();
            if !unexplained.is_empty() {
                return Err(Error::Certify(unexplained.join("\n")));
            }
            Some(read(path)?)
        }
        None => None,
    };
    std::fs::create_dir_all(&o.out).map_err(|source| Error::Write {
        path: o.out.clone(),
        source,
    })?;
    let (report, log) = match &o.from_report {
        Some(path) => {
            let text = read(path)?;
            let v: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| Error::Certify(format!("{}: not JSON: {e}", path.display())))?;
            match v.get("mode") {
                Some(m) if submission::mode_problems(m, &scope, "").is_empty() => {}
                Some(_) => {
                    return Err(Error::Certify(format!(
                        "{}: not a run of the whole suite{} in the fixed mode (its `mode`): run `certify` to run it",
                        path.display(),
                        if scope.is_empty() {
                            String::new()
                        } else {
                            format!(" or of the chapters {} whole", scope.join(" "))
                        }
                    )))
                }
                None => {
                    return Err(Error::Certify(format!(
                        "{}: records no run mode (a runner older than PROTO-CERT-3): run `certify` to run it",
                        path.display()
                    )))
                }
            }
            let log = match &o.from_log {
                Some(l) => read(l)?,
                None => submission::log_from_report(&v),
            };
            (text, log)
        }
        None => {
            let report = o.out.join(submission::REPORT);
            let log = o.out.join(submission::LOG);
            // The exit status of the run is not the certification's: verify decides.
            // A scoped product (PROTO-CERT-7) runs its chapters whole, nothing else.
            run(RunOptions {
                implementation: o.implementation.clone(),
                filter: scope.iter().map(|c| format!("{c}/")).collect(),
                exclude: Vec::new(),
                tier: None,
                format: Format::Human,
                out: Some(log.clone()),
                json_out: Some(report.clone()),
                junit_out: None,
                step_timeout: o.step_timeout,
                quiet: false,
                verbose: true,
                record_wire: None,
                expect_landlock_abi: o.expect_landlock_abi,
                expect_fence_backend: o.expect_fence_backend.clone(),
                level: Level::Safety,
                expectations: o.expectations.clone(),
                update_expectations: None,
                dirs: o.dirs.clone(),
                version: o.version,
                invocation: o.invocation.clone(),
            })?;
            (read(&report)?, read(&log)?)
        }
    };
    submission::package(&o.out, &product, &report, &log, expectations.as_deref())?;
    verify_cmd(&o.out, &o.dirs, false)
}

/// `verify`: the submission folder `dir` checked (PROTO-CERT-5): each problem on a line,
/// the SHOULD failures listed, one closing line; [`exit::FAILURE`] on a problem. With
/// `results` (PROTO-CERT-7), a folder kept as results, not certified: it must be well
/// formed and refused, its refusals printed as the reasons it is not certified.
pub fn verify_cmd(dir: &Path, given: &Dirs, results: bool) -> Result<i32, Error> {
    let spec_dir = crate::locate::dir(given.spec.as_deref(), "spec", "--spec")?;
    if !dir.is_dir() {
        return Err(Error::Certify(format!(
            "{}: no such submission folder",
            dir.display()
        )));
    }
    let v = submission::verify(dir, &spec_dir);
    if results {
        return Ok(results_verdict(dir, &v));
    }
    for p in &v.problems {
        println!("{p}");
    }
    for l in &v.listed {
        println!("listed: {l}");
    }
    let what = v.summary.clone().unwrap_or_default();
    if v.problems.is_empty() {
        println!("{}: verified: {what}", dir.display());
        Ok(exit::SUCCESS)
    } else {
        println!(
            "{}: refused, {} problem(s){}",
            dir.display(),
            v.problems.len(),
            if what.is_empty() {
                String::new()
            } else {
                format!(": {what}")
            }
        );
        Ok(exit::FAILURE)
    }
}

/// The lines and exit status of `verify --results`.
fn results_verdict(dir: &Path, v: &submission::Verified) -> i32 {
    let what = v.summary.clone().unwrap_or_default();
    if !v.malformed.is_empty() {
        for p in &v.malformed {
            println!("{p}");
        }
        println!(
            "{}: not well-formed results, {} problem(s)",
            dir.display(),
            v.malformed.len()
        );
        return exit::FAILURE;
    }
    if v.problems.is_empty() {
        println!(
            "{}: verifies as a submission ({what}): keep it under its version's folder, not as results",
            dir.display()
        );
        return exit::FAILURE;
    }
    for p in &v.problems {
        println!("not certified: {p}");
    }
    println!(
        "{}: results, not certified ({} reason(s)): {what}",
        dir.display(),
        v.problems.len()
    );
    exit::SUCCESS
}

/// `diff`: what changed from report `a` to report `b` (PROTO-CERT-6); [`exit::FAILURE`]
/// when `b` has a new failure.
pub fn diff_cmd(a: &Path, b: &Path) -> Result<i32, Error> {
    let (ra, rb) = (
        RunView::load(a).map_err(Error::Certify)?,
        RunView::load(b).map_err(Error::Certify)?,
    );
    for (tag, path, r) in [("A", a, &ra), ("B", b, &rb)] {
        let short = r.suite_hash.trim_start_matches("sha256:");
        println!(
            "{tag}: {} {} {}, Gatehouse {} (suite {}): {}",
            path.display(),
            r.name,
            r.version,
            r.spec_version,
            &short[..short.len().min(12)],
            r.score_line()
        );
    }
    let d = diff(&ra, &rb);
    for l in d.lines() {
        println!("{l}");
    }
    println!("{}", d.summary());
    Ok(if d.has_new_failures() {
        exit::FAILURE
    } else {
        exit::SUCCESS
    })
}
