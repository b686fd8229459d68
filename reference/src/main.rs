//! The `gatehouse` command: the protocol adapter (`gatehouse adapter`) and a one-shot gate
//! check (`gatehouse gate check -- 'LINE'`).
//!
//! The edge of the program: parses arguments, reads the current directory and standard
//! streams, and turns every failure into one line on standard error and an exit code.

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use gatehouse::adapter::wire::Body;
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
    /// A saved exact-line grant (repeatable).
    #[arg(long = "grant-exact", value_name = "LINE")]
    grant_exact: Vec<String>,
    /// A saved family grant (repeatable).
    #[arg(long = "grant-family", value_name = "NAME")]
    grant_family: Vec<String>,
    /// How a card would reach the person.
    #[arg(long, value_enum, default_value = "terminal")]
    asker: AskerArg,
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
    let tool = match args.risk {
        RiskArg::Exec => Tool::Shell,
        RiskArg::Code => Tool::ExecuteCode,
    };
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
    let gate = Gate::new(config).map_err(|e| Usage(e.to_string()))?;
    let grants: GrantTable = args
        .grant_exact
        .into_iter()
        .map(|line| Grant::exact(tool, line))
        .chain(args.grant_family.into_iter().map(Grant::family))
        .collect();
    let decision = gate.decide(tool, &args.line, &grants);
    println!("{}", serde_json::to_string(&Body::Decision(decision))?);
    Ok(())
}

fn adapter() -> Result<()> {
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    gatehouse::adapter::serve(stdin, stdout).context("the adapter's streams failed")
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Adapter => adapter(),
        Command::Gate {
            command: GateCommand::Check(args),
        } => check(args),
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
