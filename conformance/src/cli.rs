//! The command line (`clap`): `run`, `trace`, `lint`, `checklist`, `certify`, `verify`,
//! `diff`, `docs` and `vm`, each parsed and
//! turned into the options of its command in the library
//! (`gatehouse_conform_core::commands`) or its crate (`gatehouse-conform-docs`,
//! `gatehouse-conform-vm`), which does the work; every path returns one of the codes in
//! [`exit`]. It decides nothing.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use gatehouse_conform_core::commands::certify::{self, CertifyOptions};
use gatehouse_conform_core::commands::{self, run::RunOptions};
use gatehouse_conform_core::report::Format;
use gatehouse_conform_core::verdict::Level;
use gatehouse_conform_core::{exit, record, scenario};
use gatehouse_conform_docs::command::DocsOptions;
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
    /// Check the checklist of the current spec version, or write it (--write).
    Checklist(ChecklistArgs),
    /// Run the whole suite in the fixed mode and write a submission folder.
    Certify(CertifyArgs),
    /// Check a submission folder: one line per problem, nonzero exit on any.
    Verify(VerifyArgs),
    /// What changed between two runs' JSON reports: new failures first, safety first.
    Diff(DiffArgs),
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

#[derive(Debug, clap::Args)]
struct ChecklistArgs {
    /// Write spec/checklists/VERSION.toml for the current spec version (a release
    /// freezes it; the lead runs this after a version bump or a suite change).
    #[arg(long)]
    write: bool,
    #[command(flatten)]
    dirs: Dirs,
}

#[derive(Debug, clap::Args)]
struct CertifyArgs {
    /// The implementation's adapter command [default: the reference `gatehouse adapter`].
    #[arg(long = "impl", value_name = "CMD")]
    implementation: Option<String>,
    /// The product file: name, vendor, version, repository, reproduce.
    #[arg(long, value_name = "FILE")]
    product: PathBuf,
    /// The submission folder to write (made if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Known failures (spec/verdicts.md), each entry with its reason; copied into the folder.
    #[arg(long, value_name = "FILE")]
    expectations: Option<PathBuf>,
    /// Package this JSON report of a run of the whole suite in the fixed mode instead of
    /// running (its `mode` must say so).
    #[arg(long, value_name = "FILE")]
    from_report: Option<PathBuf>,
    /// With --from-report: the run's human report, as the run wrote it [default: made
    /// from the JSON report].
    #[arg(long, value_name = "FILE", requires = "from_report")]
    from_log: Option<PathBuf>,
    /// As `run`: fail unless the implementation declares this Landlock ABI.
    #[arg(long, value_name = "N")]
    expect_landlock_abi: Option<i64>,
    /// As `run`: fail unless the implementation declares this fence backend.
    #[arg(long, value_name = "NAME")]
    expect_fence_backend: Option<String>,
    /// Seconds to wait for each answer.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    step_timeout: f64,
    #[command(flatten)]
    dirs: Dirs,
}

#[derive(Debug, clap::Args)]
struct VerifyArgs {
    /// The submission folder.
    #[arg(value_name = "DIR")]
    folder: PathBuf,
    /// The folder is kept as results, not certified (PROTO-CERT-7): succeed when it is
    /// well formed and refused, printing each refusal as a reason.
    #[arg(long)]
    results: bool,
    #[command(flatten)]
    dirs: Dirs,
}

#[derive(Debug, clap::Args)]
struct DiffArgs {
    /// The earlier run's canonical JSON report.
    #[arg(value_name = "A.json")]
    a: PathBuf,
    /// The later run's.
    #[arg(value_name = "B.json")]
    b: PathBuf,
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
    // Each command's errors are its crate's (`Error`, `DocsError`, `VmError`): the
    // library's `Error` knows neither tool, which are built on it.
    let result: Result<i32, Box<dyn std::error::Error>> = match cli.command {
        Command::Run(args) => commands::run::run(args.into()).map_err(Into::into),
        Command::Trace(args) => {
            commands::trace_cmd(&args.dirs.into(), args.format == TraceFormat::Json)
                .map_err(Into::into)
        }
        Command::Lint(dirs) => commands::lint(&dirs.into()).map_err(Into::into),
        Command::Checklist(args) => {
            certify::checklist_cmd(&args.dirs.into(), args.write).map_err(Into::into)
        }
        Command::Certify(args) => certify::certify(args.into()).map_err(Into::into),
        Command::Verify(args) => {
            certify::verify_cmd(&args.folder, &args.dirs.into(), args.results).map_err(Into::into)
        }
        Command::Diff(args) => certify::diff_cmd(&args.a, &args.b).map_err(Into::into),
        Command::Docs(args) => {
            gatehouse_conform_docs::command::docs(&args.into()).map_err(Into::into)
        }
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

impl From<Dirs> for commands::Dirs {
    fn from(d: Dirs) -> Self {
        commands::Dirs {
            scenarios: d.scenarios,
            spec: d.spec,
        }
    }
}

impl From<LevelArg> for Level {
    fn from(l: LevelArg) -> Self {
        match l {
            LevelArg::Safety => Level::Safety,
            LevelArg::Exactness => Level::Exactness,
        }
    }
}

impl From<RunArgs> for RunOptions {
    fn from(a: RunArgs) -> Self {
        RunOptions {
            implementation: a.implementation,
            filter: a.filter,
            exclude: a.exclude,
            tier: a.tier.map(Into::into),
            format: a.format.into(),
            out: a.out,
            json_out: a.json_out,
            junit_out: a.junit_out,
            step_timeout: a.step_timeout,
            quiet: a.quiet,
            verbose: a.verbose,
            record_wire: a.record_wire,
            expect_landlock_abi: a.expect_landlock_abi,
            expect_fence_backend: a.expect_fence_backend,
            level: a.level.into(),
            expectations: a.expectations,
            update_expectations: a.update_expectations,
            dirs: a.dirs.into(),
            version: env!("CARGO_PKG_VERSION"),
            invocation: record::rerun_invocation(
                std::env::current_exe()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_else(|_| "gatehouse-conform".into()),
                std::env::args().skip(1),
            ),
        }
    }
}

/// The runner's own path, as the rerun line names it.
fn program() -> String {
    std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "gatehouse-conform".into())
}

impl From<CertifyArgs> for CertifyOptions {
    fn from(a: CertifyArgs) -> Self {
        // The rerun line of a failing scenario is a `run` of the same implementation.
        let mut invocation = vec![program(), "run".to_string()];
        if let Some(i) = &a.implementation {
            invocation.extend(["--impl".to_string(), i.clone()]);
        }
        if let Some(n) = a.expect_landlock_abi {
            invocation.extend(["--expect-landlock-abi".to_string(), n.to_string()]);
        }
        if let Some(b) = &a.expect_fence_backend {
            invocation.extend(["--expect-fence-backend".to_string(), b.clone()]);
        }
        CertifyOptions {
            implementation: a.implementation,
            product: a.product,
            out: a.out,
            expectations: a.expectations,
            from_report: a.from_report,
            from_log: a.from_log,
            expect_landlock_abi: a.expect_landlock_abi,
            expect_fence_backend: a.expect_fence_backend,
            step_timeout: a.step_timeout,
            dirs: a.dirs.into(),
            version: env!("CARGO_PKG_VERSION"),
            invocation,
        }
    }
}

impl From<DocsArgs> for DocsOptions {
    fn from(a: DocsArgs) -> Self {
        DocsOptions {
            out: a.out,
            report: a.report,
            report_sha256: a.report_sha256,
            peers: a.peers,
            agents: a.agents,
            source_url: a.source_url,
            dirs: a.dirs.into(),
        }
    }
}
