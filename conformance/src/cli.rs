//! The command line (`clap`): `run`, `trace`, `lint` and `docs`, each parsed, turned into a
//! configuration, and executed; every path returns one of the codes in [`exit`].

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};

use gatehouse_conform_core::error::Error;
use gatehouse_conform_core::events::{Event, Reporter};
use gatehouse_conform_core::expectations::Expectations;
use gatehouse_conform_core::observe::bait::{self, Bait};
use gatehouse_conform_core::observe::{keyring, reap};
use gatehouse_conform_core::protocol::client::{Client, ImplCommand};
use gatehouse_conform_core::protocol::PROTOCOL_VERSION;
use gatehouse_conform_core::record::{self, InvalidFile, RunnerInfo};
use gatehouse_conform_core::report::{self, Format, Progress};
use gatehouse_conform_core::scenario::{self, ScenarioError};
use gatehouse_conform_core::verdict::Level;
use gatehouse_conform_core::{exit, filter, identity, locate, runner, spec, trace, untestable};
use gatehouse_conform_docs::DocsError;
use gatehouse_conform_vm::VmArgs;

/// The Gatehouse conformance runner.
#[derive(Debug, Parser)]
#[command(name = "gatehouse-conform", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the scenarios against an implementation.
    Run(RunArgs),
    /// Check the map between requirements and scenarios.
    Trace(TraceArgs),
    /// Load and validate every scenario file.
    Lint(Dirs),
    /// Render the spec, its cases and the reports as a static site (and Markdown).
    Docs(DocsArgs),
    /// Run the suite inside QEMU guests on the kernels of vm-images/kernels.toml.
    Vm(VmArgs),
}

#[derive(Debug, clap::Args)]
struct Dirs {
    /// The scenarios directory [default: ./scenarios, else the workspace's].
    #[arg(long)]
    scenarios: Option<PathBuf>,
    /// The spec directory [default: ./spec, else the workspace's].
    #[arg(long)]
    spec: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The implementation's adapter command [default: the reference `gatehouse adapter`].
    #[arg(long = "impl", value_name = "CMD")]
    implementation: Option<String>,
    /// Run only scenarios whose id contains PATTERN, or matches it as a glob (`*`, `?`);
    /// an exact id selects that scenario alone. Repeatable: a scenario runs when any
    /// filter selects it. A pattern that selects nothing is an error (exit 2).
    #[arg(long, value_name = "PATTERN")]
    filter: Vec<String>,
    /// Leave out the scenarios PATTERN selects (same syntax as --filter); repeatable. A
    /// pattern that selects nothing is an error (exit 2).
    #[arg(long, value_name = "PATTERN")]
    exclude: Vec<String>,
    /// Run only the scenarios of this tier: `decision` (pure policy, nothing runs in a
    /// fence) or `enforcement` (commands really run in the fence). With --filter, both
    /// must hold.
    #[arg(long, value_enum, value_name = "TIER")]
    tier: Option<TierArg>,
    /// The report format written to stdout or --out.
    #[arg(long, value_enum, default_value = "human")]
    format: FormatArg,
    /// Write the report there instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Also write the canonical JSON report there.
    #[arg(long, value_name = "FILE")]
    json_out: Option<PathBuf>,
    /// Also write the JUnit report there (with --format markdown, say, for a CI job's
    /// summary and its test results from one run).
    #[arg(long, value_name = "FILE")]
    junit_out: Option<PathBuf>,
    /// Seconds to wait for each answer (extended by the card window for `silence`).
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    step_timeout: f64,
    /// No progress lines on stderr (on a terminal outside CI `[n/total]` lines; else one
    /// plain line per finished scenario, as nextest prints in CI).
    #[arg(long)]
    quiet: bool,
    /// The human report also lists the implementation and every requirement's counts.
    #[arg(long, short)]
    verbose: bool,
    /// Append every protocol line sent (`> `) and received (`< `) to FILE.
    #[arg(long, value_name = "FILE")]
    record_wire: Option<PathBuf>,
    /// Fail the run unless the implementation declares this Landlock ABI (`0`: none), so
    /// that a kernel-dependent scenario is never skipped silently on the wrong host.
    #[arg(long, value_name = "N")]
    expect_landlock_abi: Option<i64>,
    /// Fail the run unless the implementation declares this fence backend (`none`: null).
    #[arg(long, value_name = "NAME")]
    expect_fence_backend: Option<String>,
    /// The level the run passes or fails on (`spec/verdicts.md`): `exactness` (every
    /// field; the default) or `safety` (only what a person relies on). Both verdicts are
    /// reported either way.
    #[arg(long, value_enum, value_name = "LEVEL", default_value = "exactness")]
    level: LevelArg,
    /// Compare the verdicts with FILE (known failures, `spec/verdicts.md`): the run
    /// passes when every scenario's two verdicts are as FILE says (a scenario it does not
    /// name: passed or skipped) and fails on a regression, an unexpected pass, or an id
    /// the suite no longer has. Replaces --level for the exit status.
    #[arg(long, value_name = "FILE")]
    expectations: Option<PathBuf>,
    /// Write FILE from this run: every scenario whose verdicts are not both passed or
    /// skipped, keeping the reasons FILE (or --expectations) already gives, and the
    /// entries of scenarios not run.
    #[arg(long, value_name = "FILE")]
    update_expectations: Option<PathBuf>,
    #[command(flatten)]
    dirs: Dirs,
}

/// `--format`: the report formats ([`Format`]) by their names on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FormatArg {
    /// Failures in detail, per-requirement summary, totals.
    Human,
    /// The canonical JSON document.
    Json,
    /// JUnit XML: one testsuite per scenario folder, one testcase per scenario.
    Junit,
    /// A Markdown table.
    Markdown,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Human => Format::Human,
            FormatArg::Json => Format::Json,
            FormatArg::Junit => Format::Junit,
            FormatArg::Markdown => Format::Markdown,
        }
    }
}

/// Why `docs` stopped: the runner's own errors (directories, the suite) or the site's.
#[derive(Debug, thiserror::Error)]
enum DocsCmdError {
    /// A directory or the suite could not be read, or the site could not be written.
    #[error(transparent)]
    Runner(#[from] Error),
    /// The site could not be made or is incomplete.
    #[error(transparent)]
    Docs(#[from] DocsError),
}

/// `--level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LevelArg {
    Safety,
    Exactness,
}

/// `--tier`: the scenario tiers by their names in the scenario files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TierArg {
    Decision,
    Enforcement,
}

impl From<TierArg> for scenario::Tier {
    fn from(t: TierArg) -> Self {
        match t {
            TierArg::Decision => scenario::Tier::Decision,
            TierArg::Enforcement => scenario::Tier::Enforcement,
        }
    }
}

#[derive(Debug, clap::Args)]
struct DocsArgs {
    /// The directory the site is written to (made if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// A canonical JSON report to show under LABEL (a column of
    /// docs/implementations.md, or a new one); repeatable; replaces the peers
    /// directory's report of that label.
    #[arg(long, value_name = "LABEL=FILE")]
    report: Vec<String>,
    /// The SHA-256 a `--report` must have (as the run that wrote it printed beside its
    /// summary): the site is not built from a report that changed since; repeatable.
    #[arg(long, value_name = "LABEL=HEX")]
    report_sha256: Vec<String>,
    /// The reports of the implementations table, one `LABEL.json` per column
    /// [default: reports/peers of the workspace, where it exists].
    #[arg(long, value_name = "DIR")]
    peers: Option<PathBuf>,
    /// The reports of the agents table (its section of docs/implementations.md), one
    /// `LABEL.json` per agent column; an agent column without one gets its page from
    /// the committed table [default: reports/agents of the workspace, where it exists].
    #[arg(long, value_name = "DIR")]
    agents: Option<PathBuf>,
    /// Link source files under this URL prefix (a line anchor `#L12` is added), instead
    /// of relative paths into this checkout.
    #[arg(long, value_name = "URL")]
    source_url: Option<String>,
    #[command(flatten)]
    dirs: Dirs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TraceFormat {
    Human,
    Json,
}

#[derive(Debug, clap::Args)]
struct TraceArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: TraceFormat,
    #[command(flatten)]
    dirs: Dirs,
}

/// Parses the arguments, runs the command, returns the exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    // The `vm` command's errors are its own (`VmError`), kept apart so that `error`
    // does not import `vm`, which imports it.
    let result: Result<i32, Box<dyn std::error::Error>> = match cli.command {
        Command::Run(args) => run(args).map_err(Into::into),
        Command::Trace(args) => trace_cmd(args).map_err(Into::into),
        Command::Lint(dirs) => lint(dirs).map_err(Into::into),
        Command::Docs(args) => docs_cmd(args).map_err(Into::into),
        Command::Vm(args) => gatehouse_conform_vm::main(args, check_run_args).map_err(Into::into),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("gatehouse-conform: {message}");
            exit::USAGE
        }
    }
}

/// Checks options meant for a `run` elsewhere (inside a `vm` guest) with `run`'s parser.
fn check_run_args(args: &[String]) -> Result<(), clap::Error> {
    let argv = ["gatehouse-conform", "run"]
        .into_iter()
        .map(String::from)
        .chain(args.iter().cloned());
    Cli::try_parse_from(argv).map(|_| ())
}

fn dirs(d: &Dirs) -> Result<(PathBuf, PathBuf), Error> {
    let scenarios = locate::dir(d.scenarios.as_deref(), "scenarios", "--scenarios")?;
    let spec = locate::dir(d.spec.as_deref(), "spec", "--spec")?;
    Ok((scenarios, spec))
}

fn load_spec(dir: &Path) -> Result<spec::SpecIndex, Error> {
    spec::load_dir(dir).map_err(|source| Error::ReadDir {
        what: "spec",
        dir: dir.to_path_buf(),
        source,
    })
}

fn load_scenarios(
    dir: &Path,
    ids: Option<&std::collections::BTreeSet<String>>,
) -> Result<scenario::LoadReport, Error> {
    scenario::load_dir(dir, ids).map_err(|source| Error::ReadDir {
        what: "scenarios",
        dir: dir.to_path_buf(),
        source,
    })
}

fn print_errors(errors: &[ScenarioError]) {
    for e in errors {
        eprintln!("{e}");
    }
}

fn run(args: RunArgs) -> Result<i32, Error> {
    if !(args.step_timeout.is_finite() && args.step_timeout > 0.0) {
        return Err(Error::StepTimeout(args.step_timeout));
    }
    let (scenario_dir, spec_dir) = dirs(&args.dirs)?;
    let spec = load_spec(&spec_dir)?;
    let loaded = load_scenarios(&scenario_dir, Some(&spec.citable()))?;
    let suite = identity::of(&scenario_dir, &spec_dir)?;
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
        selected.retain(|s| s.tier == scenario::Tier::from(tier));
        if selected.is_empty() {
            // The name as the flag took it.
            let name = tier.to_possible_value().map(|v| v.get_name().to_string());
            return Err(Error::EmptyTier(name.unwrap_or_default()));
        }
    }
    let command = match &args.implementation {
        Some(cmd) => ImplCommand::parse(cmd),
        None => locate::reference()?,
    };
    // The run's time is the suite's: it starts once the reference is built.
    let started = Instant::now();
    let mut bait = Bait::generate();
    bait.keyring = keyring::Keyring::new(&bait::token());
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
        bait::ORDINARY_ENV
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    // Started in a session keyring holding the keyring bait, where one can be planted.
    let spawned = bait
        .keyring
        .as_ref()
        .map_or_else(|| command.clone(), |k| k.wrap(&command));
    // Whatever the implementation starts stays the runner's to end (PROTO-OBSERVE-5).
    let adopted = reap::adopt_orphans();
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
    let killed = reap::kill_descendants();
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
        version: env!("CARGO_PKG_VERSION").into(),
        protocol: PROTOCOL_VERSION.into(),
        implementation: command.display(),
        impl_arg: args.implementation.clone(),
        invocation: record::rerun_invocation(
            std::env::current_exe()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| "gatehouse-conform".into()),
            std::env::args().skip(1),
        ),
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
    record.level = match args.level {
        LevelArg::Safety => Level::Safety,
        LevelArg::Exactness => Level::Exactness,
    };
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
    let text = report::render(&record, args.format.into(), args.verbose);
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
            identity::sha256_hex(text.as_bytes())
        );
    }
    Ok(if record.success() {
        exit::SUCCESS
    } else {
        exit::FAILURE
    })
}

/// The `--expect-*` flags against the environment of the `hello` answer.
fn environment_differs(args: &RunArgs, env: &serde_json::Value) -> Option<String> {
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
fn write(path: &Path, text: &str) -> Result<(), Error> {
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

fn trace_of(
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

fn docs_cmd(args: DocsArgs) -> Result<i32, DocsCmdError> {
    use gatehouse_conform_docs::{self as docs, reports};
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
            return Err(bad().into());
        }
        let (_, path) = given.iter().find(|(l, _)| l == label).ok_or_else(bad)?;
        let bytes = std::fs::read(path).map_err(|source| DocsError::Read {
            path: path.clone(),
            source,
        })?;
        let got = identity::sha256_hex(&bytes);
        if got != want {
            return Err(DocsError::HashMismatch {
                label: label.to_string(),
                path: path.clone(),
                want,
                got,
            }
            .into());
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
    let site = docs::build(
        &docs::Inputs {
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
    docs::check(&args.out, &spec, &impls)?;
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

fn trace_cmd(args: TraceArgs) -> Result<i32, Error> {
    let (scenario_dir, spec_dir) = dirs(&args.dirs)?;
    let spec = load_spec(&spec_dir)?;
    let loaded = load_scenarios(&scenario_dir, None)?;
    let t = trace_of(&spec_dir, &spec, &loaded);
    match args.format {
        TraceFormat::Human => print!("{}", trace::render_human(&t)),
        TraceFormat::Json => {
            // serde_json fails only on a map key that is not a string or a hand-written
            // `Serialize` that errs: the trace's derived fields have neither.
            #[allow(clippy::expect_used)]
            let json = serde_json::to_string_pretty(&t).expect("the trace serializes");
            println!("{json}");
        }
    }
    Ok(if t.violations.is_empty() {
        exit::SUCCESS
    } else {
        exit::FAILURE
    })
}

fn lint(d: Dirs) -> Result<i32, Error> {
    let (scenario_dir, spec_dir) = dirs(&d)?;
    let spec = load_spec(&spec_dir)?;
    let loaded = load_scenarios(&scenario_dir, Some(&spec.citable()))?;
    for e in &loaded.errors {
        println!("{e}");
    }
    println!(
        "{} scenario file(s) valid, {} problem(s)",
        loaded.scenarios.len(),
        loaded.errors.len()
    );
    Ok(if loaded.errors.is_empty() {
        exit::SUCCESS
    } else {
        exit::FAILURE
    })
}
