//! `gatehouse-conform docs` as the binary calls it: its options as plain data, the
//! suite loaded (through the runner's library), the reports gathered and checked against
//! the hashes given, the site built, written and checked.

use std::path::{Path, PathBuf};

use gatehouse_conform_core::commands::{
    dirs, load_scenarios, load_spec, print_errors, trace_of, Dirs,
};
use gatehouse_conform_core::error::Error;
use gatehouse_conform_core::exit;

use crate::reports;
use crate::DocsError;

/// The options of `docs`, one per flag of the binary's `docs` (`gatehouse-conform docs
/// --help` says each in full).
#[derive(Debug, Clone)]
pub struct DocsOptions {
    /// `--out`: the directory the site is written to (made if missing).
    pub out: PathBuf,
    /// `--report LABEL=FILE`: a canonical JSON report shown under LABEL; repeatable.
    pub report: Vec<String>,
    /// `--report-sha256 LABEL=HEX`: the SHA-256 a `--report` must have; repeatable.
    pub report_sha256: Vec<String>,
    /// `--peers`: the reports of the implementations table, one `LABEL.json` per column.
    pub peers: Option<PathBuf>,
    /// `--agents`: the reports of the agents table, one `LABEL.json` per agent column.
    pub agents: Option<PathBuf>,
    /// `--source-url`: source files linked under this URL prefix.
    pub source_url: Option<String>,
    /// `--scenarios` and `--spec`.
    pub dirs: Dirs,
}

/// `docs`: the site built into `args.out` from the spec, the scenarios and the reports,
/// checked, and one summary line printed; [`exit::FAILURE`] when a scenario file is
/// invalid.
pub fn docs(args: &DocsOptions) -> Result<i32, DocsError> {
    let (scenario_dir, spec_dir) = dirs(&args.dirs)?;
    let spec = load_spec(&spec_dir)?;
    let loaded = load_scenarios(&scenario_dir, Some(&spec.citable()))?;
    print_errors(&loaded.errors);
    let t = trace_of(&spec_dir, &spec, &loaded);
    let root = scenario_dir
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let published =
        std::fs::read_to_string(root.join("docs/implementations.md")).unwrap_or_default();
    let table = reports::table_columns(&published);
    let agent_columns = reports::agent_columns(&published);
    let given = args
        .report
        .iter()
        .map(|a| reports::parse_arg(a))
        .collect::<Result<Vec<_>, _>>()?;
    for arg in &args.report_sha256 {
        let bad = || DocsError::HashArg(arg.clone());
        let (label, want) = arg.split_once('=').ok_or_else(bad)?;
        let want = want.trim_start_matches("sha256:").to_ascii_lowercase();
        if want.len() != 64 || !want.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let (_, path) = given.iter().find(|(l, _)| l == label).ok_or_else(bad)?;
        let bytes = std::fs::read(path).map_err(|source| DocsError::Read {
            path: path.clone(),
            source,
        })?;
        let got = gatehouse_conform_core::identity::sha256_hex(&bytes);
        if got != want {
            return Err(DocsError::HashMismatch {
                label: label.to_string(),
                path: path.clone(),
                want,
                got,
            });
        }
    }
    let peers = args.peers.clone().or_else(|| {
        let d = root.join("reports/peers");
        d.is_dir().then_some(d)
    });
    let agents = args.agents.clone().or_else(|| {
        let d = root.join("reports/agents");
        d.is_dir().then_some(d)
    });
    let kept = std::fs::read_to_string(root.join("docs/reports/README.md")).unwrap_or_default();
    let impls = reports::gather(
        &root,
        &table,
        peers.as_deref(),
        &agent_columns,
        agents.as_deref(),
        &reports::kept_table(&kept),
        &given,
    )?;
    std::fs::create_dir_all(&args.out).map_err(|source| Error::Write {
        path: args.out.clone(),
        source,
    })?;
    let site = crate::build(
        &crate::Inputs {
            root: &root,
            spec_dir: &spec_dir,
            spec: &spec,
            scenarios: &loaded.scenarios,
            scenario_dir: &scenario_dir,
            trace: &t,
            impls: &impls,
            source_url: args.source_url.as_deref(),
        },
        &args.out,
    )?;
    site.write(&args.out)?;
    crate::check(&args.out, &spec, &impls)?;
    crate::check_lists(&args.out, &spec_dir, &spec, &loaded.scenarios)?;
    let reported = impls.reported().count();
    println!(
        "docs: {} file(s), {:.1} MB, in {}: {} chapter(s), {} scenario(s), {} implementation(s) ({} with a report)",
        site.files.len(),
        site.bytes() as f64 / 1e6,
        args.out.display(),
        spec.chapters.len(),
        loaded.scenarios.len(),
        impls.columns.len(),
        reported
    );
    Ok(if loaded.errors.is_empty() {
        exit::SUCCESS
    } else {
        exit::FAILURE
    })
}
