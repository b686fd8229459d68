//! `run`: the scenarios against an implementation. It starts the implementation (its
//! bait, keyring and subreaper first), walks the selected scenarios, assembles the record,
//! compares it with an expectations file, and writes every report asked for. The options
//! are plain data: the binary's command line only fills them in.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{dirs, load_scenarios, load_spec, print_errors, Dirs};
use crate::error::Error;
use crate::events::{Event, Reporter};
use crate::expectations::Expectations;
use crate::observe::bait::Bait;
use crate::protocol::client::{Client, ImplCommand};
use crate::protocol::PROTOCOL_VERSION;
use crate::record::{InvalidFile, RunnerInfo};
use crate::report::{self, Format, Progress};
use crate::scenario::Tier;
use crate::verdict::Level;
use crate::{exit, filter, locate, runner};

/// The options of `run`, one per flag of the binary's `run` (`gatehouse-conform run
/// --help` says each in full).
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// `--impl`: the adapter command; `None`: the reference `gatehouse adapter`.
    pub implementation: Option<String>,
    /// `--filter`: the scenarios to run (any pattern selects).
    pub filter: Vec<String>,
    /// `--exclude`: the scenarios left out.
    pub exclude: Vec<String>,
    /// `--tier`: only the scenarios of this tier.
    pub tier: Option<Tier>,
    /// `--format`: the report written to stdout or `out`.
    pub format: Format,
    /// `--out`: the report there instead of stdout.
    pub out: Option<PathBuf>,
    /// `--json-out`: the canonical JSON report there too.
    pub json_out: Option<PathBuf>,
    /// `--junit-out`: the JUnit report there too.
    pub junit_out: Option<PathBuf>,
    /// `--step-timeout`: seconds to wait for each answer.
    pub step_timeout: f64,
    /// `--quiet`: no progress lines.
    pub quiet: bool,
    /// `--verbose`: the human report lists the implementation and every requirement.
    pub verbose: bool,
    /// `--record-wire`: every protocol line appended there.
    pub record_wire: Option<PathBuf>,
    /// `--expect-landlock-abi`: the Landlock ABI the implementation must declare.
    pub expect_landlock_abi: Option<i64>,
    /// `--expect-fence-backend`: the fence backend it must declare (`none`: null).
    pub expect_fence_backend: Option<String>,
    /// `--level`: the level the run passes or fails on.
    pub level: Level,
    /// `--expectations`: the known failures to compare with.
    pub expectations: Option<PathBuf>,
    /// `--update-expectations`: the expectations file to write from this run.
    pub update_expectations: Option<PathBuf>,
    /// `--scenarios` and `--spec`.
    pub dirs: Dirs,
    /// The runner's version, as the report states it.
    pub version: &'static str,
    /// The words of the command that reruns this run ([`crate::record::rerun_invocation`]),
    /// as the report states them.
    pub invocation: Vec<String>,
}

/// `run`: the scenarios against an implementation, the reports written; returns
/// [`exit::SUCCESS`] or [`exit::FAILURE`] by the run's verdict (or the expectations').
pub fn run(args: RunOptions) -> Result<i32, Error> {
    if !(args.step_timeout.is_finite() && args.step_timeout > 0.0) {
        return Err(Error::StepTimeout(args.step_timeout));
    }
    let (scenario_dir, spec_dir) = dirs(&args.dirs)?;
    let spec = load_spec(&spec_dir)?;
    let loaded = load_scenarios(&scenario_dir, Some(&spec.citable()))?;
    let suite = crate::identity::of(&scenario_dir, &spec_dir)?;
    print_errors(&loaded.errors);
    let known: std::collections::BTreeSet<String> =
        loaded.scenarios.iter().map(|s| s.id.clone()).collect();
    let expectations = args
        .expectations
        .as_deref()
        .map(Expectations::load)
        .transpose()?;
    let mut selected =
        filter::select_all(&args.filter, &args.exclude, loaded.scenarios, |s| &s.id)?;
    if let Some(tier) = args.tier {
        selected.retain(|s| s.tier == tier);
        if selected.is_empty() {
            // The name as the flag takes it: the tier's in the scenario files.
            let name = match tier {
                Tier::Decision => "decision",
                Tier::Enforcement => "enforcement",
            };
            return Err(Error::EmptyTier(name.to_string()));
        }
    }
    let command = match &args.implementation {
        Some(cmd) => ImplCommand::parse(cmd),
        None => locate::reference()?,
    };
    // The run's time is the suite's: it starts once the reference is built.
    let started = Instant::now();
    let mut bait = Bait::generate();
    bait.keyring = crate::observe::keyring::Keyring::new(&crate::observe::bait::token());
    let wire_log = match &args.record_wire {
        Some(path) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|source| Error::Write {
                    path: path.clone(),
                    source,
                })?,
        ),
        None => None,
    };
    let mut env = bait.env.clone();
    env.extend(
        crate::observe::bait::ORDINARY_ENV
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    // Started in a session keyring holding the keyring bait, where one can be planted.
    let spawned = bait
        .keyring
        .as_ref()
        .map_or_else(|| command.clone(), |k| k.wrap(&command));
    // Whatever the implementation starts stays the runner's to end (PROTO-OBSERVE-5).
    let adopted = crate::observe::reap::adopt_orphans();
    let started_client = Client::start(
        spawned,
        Duration::from_secs_f64(args.step_timeout),
        env,
        wire_log,
    );
    if started_client.is_err() {
        if let Some(k) = &bait.keyring {
            k.remove();
        }
    }
    let mut client = started_client.map_err(|source| Error::Start {
        command: command.display(),
        source,
    })?;
    // `Client::start` returns a client only once it has said hello (`ensure_running`).
    #[allow(clippy::expect_used)]
    let hello = client
        .hello()
        .cloned()
        .expect("started clients have said hello");
    if let Some(m) = environment_differs(&args, &hello.environment) {
        client.shutdown();
        eprintln!("gatehouse-conform: {m}");
        return Ok(exit::FAILURE);
    }
    let style = report::progress_style(
        std::io::stderr().is_terminal(),
        std::env::var_os("CI").as_deref(),
        args.quiet,
    );
    let mut progress = Progress::new(std::io::stderr(), style);
    let reporter: &mut dyn Reporter = &mut progress;
    reporter.event(&Event::RunStarted {
        environment: &hello,
        total: selected.len(),
    });
    let records = runner::run(
        &mut client,
        &selected,
        std::env::consts::OS,
        &bait,
        &mut [&mut *reporter],
    );
    client.shutdown();
    if let Some(k) = &bait.keyring {
        k.remove();
    }
    // Nothing the implementation started outlives its run, so nothing can touch a report.
    let killed = crate::observe::reap::kill_descendants();
    if killed > 0 {
        eprintln!("gatehouse-conform: killed {killed} process(es) the implementation left running");
    }
    if !adopted {
        eprintln!(
            "gatehouse-conform: this host offers no child subreaper; a process the implementation detaches may outlive the run"
        );
    }
    let info = RunnerInfo {
        name: "gatehouse-conform".into(),
        version: args.version.into(),
        protocol: PROTOCOL_VERSION.into(),
        implementation: command.display(),
        impl_arg: args.implementation.clone(),
        invocation: args.invocation.clone(),
        suite,
        host_os: std::env::consts::OS.into(),
        duration_ms: started.elapsed().as_millis() as u64,
    };
    let invalid = loaded
        .errors
        .iter()
        .map(|e| InvalidFile {
            message: e.to_string(),
        })
        .collect();
    let suite_hash = info.suite.hash.clone();
    let mut record = report::assemble(info, hello, records, invalid);
    report::describe(&mut record, &spec);
    record.level = args.level;
    record.mode = Some(crate::record::RunMode::new(
        args.filter.clone(),
        args.exclude.clone(),
        args.tier,
        args.level,
        args.expectations
            .as_ref()
            .zip(expectations.as_ref())
            .map(|(p, e)| (p.display().to_string(), e.scenarios.len())),
        args.update_expectations.is_some(),
    ));
    // For an expectations entry's `when`.
    let root = rustix::process::geteuid().is_root();
    if let (Some(e), Some(path)) = (&expectations, &args.expectations) {
        let shown = path.display().to_string();
        let c = e.compare(&shown, &suite_hash, &record.scenarios, &known, root);
        if let Some(w) = c.suite.warning(&shown) {
            eprintln!("gatehouse-conform: {w}");
        }
        record.expectations = Some(c);
    }
    if let Some(path) = &args.update_expectations {
        let base = match (path.exists(), &expectations) {
            (true, _) => Expectations::load(path)?,
            (false, Some(e)) => e.clone(),
            (false, None) => Expectations::default(),
        };
        let new = base.updated(&suite_hash, &record.scenarios, &known, root);
        write(path, &new.render())?;
        // The run ends as it would with the file it wrote: judged against it.
        let shown = path.display().to_string();
        record.expectations =
            Some(new.compare(&shown, &suite_hash, &record.scenarios, &known, root));
    }
    reporter.event(&Event::RunFinished { record: &record });
    let mut written = Vec::new();
    if let Some(path) = &args.json_out {
        let text = report::render(&record, Format::Json, args.verbose);
        write(path, &text)?;
        written.push((path.clone(), text));
    }
    if let Some(path) = &args.junit_out {
        let text = report::render(&record, Format::Junit, args.verbose);
        write(path, &text)?;
        written.push((path.clone(), text));
    }
    let text = report::render(&record, args.format, args.verbose);
    match &args.out {
        Some(path) => {
            write(path, &text)?;
            written.push((path.clone(), text));
        }
        None => print!("{text}"),
    }
    // Each report's hash beside the summary: a CI log pins what was published.
    for (path, text) in &written {
        eprintln!(
            "gatehouse-conform: report {} sha256:{}",
            path.display(),
            crate::identity::sha256_hex(text.as_bytes())
        );
    }
    Ok(if record.success() {
        exit::SUCCESS
    } else {
        exit::FAILURE
    })
}

/// The `--expect-*` flags against the environment of the `hello` answer.
fn environment_differs(args: &RunOptions, env: &serde_json::Value) -> Option<String> {
    if let Some(want) = args.expect_landlock_abi {
        let got = env.get("landlock_abi").and_then(serde_json::Value::as_i64);
        if got.unwrap_or(0) != want {
            return Some(format!(
                "--expect-landlock-abi {want}: the implementation declares landlock_abi {}; refusing to run (scenarios would be skipped or judged on another kernel than expected)",
                got.map_or_else(|| "null".to_string(), |g| g.to_string())
            ));
        }
    }
    if let Some(want) = &args.expect_fence_backend {
        let got = env
            .get("fence_backend")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("none");
        if got != want {
            return Some(format!(
                "--expect-fence-backend {want}: the implementation declares fence_backend {got}; refusing to run"
            ));
        }
    }
    None
}

/// Writes `text` to `path` atomically: a file beside it, renamed over it, so that no
/// reader ever sees half a report.
pub(crate) fn write(path: &Path, text: &str) -> Result<(), Error> {
    let err = |source| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".report-")
        .tempfile_in(&dir)
        .map_err(err)?;
    std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(err)?;
    // A report is for reading: not the private mode a temporary file is made with.
    std::fs::set_permissions(
        tmp.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}
