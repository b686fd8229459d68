//! The `gatehouse` command: the protocol adapter (`gatehouse adapter`), a one-shot gate
//! check (`gatehouse gate check -- 'LINE'`), the fence's posture (`gatehouse info`) and one
//! command run in the fence (`gatehouse exec -- CMD ARGS...`).
//!
//! The edge of the program: parses arguments, reads the current directory and standard
//! streams, and turns every failure into one line on standard error and an exit code.
//! [`adapter`] is the binary's own: it translates the protocol to the library's sessions
//! and decides nothing.

mod adapter;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use gatehouse::gate::{Asker, Gate, GateConfig, Grant, GrantTable, Host, Tool};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit codes, documented for scripts.
mod exit {
    /// Success (for `gate check`: whatever the decision).
    pub const OK: u8 = 0;
    /// A failure while running (the adapter's streams broke, ...).
    pub const FAILURE: u8 = 1;
    /// Bad arguments: a workspace that does not exist, a line holding a NUL byte, ...
    pub const USAGE: u8 = 2;
}

/// Gatehouse: guardrails between an agent and the machine it works on.
#[derive(Debug, Parser)]
#[command(name = "gatehouse", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the conformance protocol (JSON lines) on standard input and output.
    Adapter,
    /// The approval gate.
    Gate {
        #[command(subcommand)]
        command: GateCommand,
    },
    /// Print the fence's posture: which backend holds commands and what each layer covers.
    Info(InfoArgs),
    /// Run one command in the fence, print its output and exit with its status.
    Exec(ExecArgs),
}

/// How the kernel is made to look poorer than it is, so the behaviour of older or locked
/// down hosts can be exercised here. Shared by `info` and `exec`.
#[derive(Debug, Args)]
struct EmulateArgs {
    /// Behave as if user namespaces were unavailable.
    #[arg(long)]
    emulate_no_userns: bool,
    /// Behave as if the kernel's Landlock ABI were at most N (0: no Landlock).
    #[arg(long, value_name = "N")]
    landlock_max_abi: Option<u8>,
}

impl EmulateArgs {
    /// Hands the emulation to the fence through the environment it reads
    /// (`FenceOptions::from_env`), before any thread exists.
    fn apply(&self) {
        if self.emulate_no_userns {
            std::env::set_var("GATEHOUSE_EMULATE_NO_USERNS", "1");
        }
        if let Some(abi) = self.landlock_max_abi {
            std::env::set_var("GATEHOUSE_LANDLOCK_MAX_ABI", abi.to_string());
        }
    }
}

#[derive(Debug, Args)]
struct InfoArgs {
    /// Print the posture as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    emulate: EmulateArgs,
}

#[derive(Debug, Args)]
struct ExecArgs {
    /// A workspace root, writable inside the fence (repeatable; default: the current
    /// directory).
    #[arg(long = "workspace", value_name = "DIR")]
    workspaces: Vec<PathBuf>,
    /// Run even where a required protection is missing; the posture says what is not
    /// covered.
    #[arg(long)]
    allow_degraded: bool,
    #[command(flatten)]
    emulate: EmulateArgs,
    /// The command and its arguments, after `--`.
    #[arg(
        value_name = "CMD",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    command: Vec<std::ffi::OsString>,
}

#[derive(Debug, Subcommand)]
enum GateCommand {
    /// Decide one call and print the decision as one JSON object.
    Check(CheckArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum HostArg {
    Posix,
    Windows,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum RiskArg {
    /// A `shell` command line.
    Exec,
    /// An `execute_code` text.
    Code,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum AskerArg {
    None,
    Terminal,
    Web,
    Speech,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// The working directory (default: the current directory).
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// The kind of host to behave as.
    #[arg(long, value_enum, default_value = "posix")]
    host: HostArg,
    /// The risk kind: `exec` (shell) or `code` (execute_code).
    #[arg(long, value_enum, default_value = "exec")]
    risk: RiskArg,
    /// The tool called, by its protocol name (`shell`, `execute_code`, `mcp_install`,
    /// `mcp_connect`), in place of `--risk`.
    #[arg(long, value_name = "NAME", conflicts_with = "risk")]
    tool: Option<Tool>,
    /// A line of the installation's allow-list (repeatable; empty by default).
    #[arg(long = "allow", value_name = "LINE")]
    allow: Vec<String>,
    /// A saved exact-line grant of the tool being checked (repeatable).
    #[arg(long = "grant-exact", value_name = "LINE")]
    grant_exact: Vec<String>,
    /// A saved family grant (repeatable).
    #[arg(long = "grant-family", value_name = "NAME")]
    grant_family: Vec<String>,
    /// How a card would reach the person.
    #[arg(long, value_enum, default_value = "terminal")]
    asker: AskerArg,
    /// The card window of the asker's channel, in place of its default.
    #[arg(long, value_name = "MS")]
    card_window_ms: Option<u64>,
    /// The command line (or code) to decide, as one argument after `--`.
    #[arg(value_name = "COMMAND LINE", allow_hyphen_values = true)]
    line: String,
}

/// An error the user caused, answered with [`exit::USAGE`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Usage(String);

fn check(args: CheckArgs) -> Result<()> {
    if args.line.contains('\0') {
        bail!(Usage(
            "the line holds a NUL byte, which no command line can carry".into()
        ));
    }
    let workspace = match args.workspace {
        Some(w) => w,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    if !workspace.is_dir() {
        bail!(Usage(format!(
            "the workspace {} does not exist or is not a directory",
            workspace.display()
        )));
    }
    let tool = args.tool.unwrap_or(match args.risk {
        RiskArg::Exec => Tool::Shell,
        RiskArg::Code => Tool::ExecuteCode,
    });
    let mut config = GateConfig::new(workspace);
    config.host = match args.host {
        HostArg::Posix => Host::Posix,
        HostArg::Windows => Host::Windows,
    };
    config.asker = match args.asker {
        AskerArg::None => Asker::None,
        AskerArg::Terminal => Asker::Terminal,
        AskerArg::Web => Asker::Web,
        AskerArg::Speech => Asker::Speech,
    };
    config.allow_list = args.allow;
    if let (Some(ms), Some(channel)) = (args.card_window_ms, config.asker.channel()) {
        config.windows = config
            .windows
            .with(channel, std::time::Duration::from_millis(ms))
            .map_err(|e| Usage(e.to_string()))?;
    }
    let gate = Gate::new(config).map_err(|e| Usage(e.to_string()))?;
    let grants: GrantTable = args
        .grant_exact
        .into_iter()
        .map(|line| Grant::exact(tool, line))
        .chain(args.grant_family.into_iter().map(Grant::family))
        .collect();
    let decision = gate.decide(tool, &args.line, &grants);
    println!("{}", serde_json::to_string(&decision)?);
    Ok(())
}

fn adapter() -> Result<()> {
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    adapter::serve(stdin, stdout).context("the adapter's streams failed")
}

fn exec(args: ExecArgs) -> Result<ExitCode> {
    args.emulate.apply();
    let workspaces = if args.workspaces.is_empty() {
        vec![std::env::current_dir().context("cannot read the current directory")?]
    } else {
        args.workspaces
    };
    for w in &workspaces {
        if !w.is_dir() {
            bail!(Usage(format!(
                "--workspace {}: not a directory",
                w.display()
            )));
        }
    }
    let status = gatehouse::plane::cli::exec(&workspaces, args.allow_degraded, &args.command);
    Ok(ExitCode::from(u8::try_from(status).unwrap_or(u8::MAX)))
}

fn main() -> ExitCode {
    // The jail helper must be dispatched before clap or any thread exists: the kernel
    // refuses a new user namespace to a multi-threaded process. It never returns.
    let raw: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if raw.get(1).is_some_and(|a| a == "__jail") {
        gatehouse::helper::main(&raw[2..]);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Adapter => adapter(),
        Command::Gate {
            command: GateCommand::Check(args),
        } => check(args),
        Command::Info(args) => {
            args.emulate.apply();
            gatehouse::plane::cli::info(args.json)
                .map(|posture| println!("{posture}"))
                .map_err(|e| anyhow::Error::new(Usage(e.to_string())))
        }
        Command::Exec(args) => match exec(args) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
    };
    match result {
        Ok(()) => ExitCode::from(exit::OK),
        Err(e) => {
            eprintln!("gatehouse: {e:#}");
            if e.downcast_ref::<Usage>().is_some() {
                ExitCode::from(exit::USAGE)
            } else {
                ExitCode::from(exit::FAILURE)
            }
        }
    }
}
