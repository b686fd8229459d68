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

const EXEC_EXAMPLES: &str = "\
Examples:
  gatehouse exec -- make test
      run in the current directory, no network, only PATH, LANG, LC_*, TERM, TZ passed
  gatehouse exec --workspace ~/src/app -- sh -c 'echo hi > out.txt'
      the workspace is writable; everything else is read-only or absent
  gatehouse exec --pass-env CARGO_HOME --set-env RUST_LOG=debug -- cargo build
      pass one variable by name, set another
  gatehouse exec --pass-secret-env NPM_TOKEN -- npm publish
      a secret-looking name passes only this way, and the posture lists it
  gatehouse exec --ro ~/.cargo/registry --hide ~/src/app/.env -- cargo build --offline
      one more path visible read-only, one hidden even inside the workspace
  gatehouse exec --allow-domain registry.npmjs.org -- npm view is-number
      out only through the reference's proxy, to that one domain; all else refused, and logged
  gatehouse exec --network host -- cargo fetch
      the host's network as it is (no proxy); the host's UNIX sockets stay out of reach
  gatehouse exec --rw ~/.cache/build -- make
      one more writable root (.git and .gatehouse inside it stay read-only too)
  gatehouse exec -- python3
      from a terminal: an interactive prompt on a fresh pseudo-terminal of the jail's own
  gatehouse exec --no-tty -- python3 -c 'import sys; print(sys.stdin.isatty())'
      pipes instead (prints False); the default when stdin is not a terminal

Settings can live in $XDG_CONFIG_HOME/gatehouse/config.toml (or ~/.config/gatehouse/config.toml)
and, for a trusted project, in <workspace>/.gatehouse/config.toml; flags win; `gatehouse info`
shows where each setting came from.";

#[derive(Debug, Args)]
#[command(after_help = EXEC_EXAMPLES)]
struct ExecArgs {
    /// A workspace root, writable inside the fence (repeatable; default: the current
    /// directory). Example: --workspace ~/src/app
    #[arg(long = "workspace", value_name = "DIR")]
    workspaces: Vec<PathBuf>,
    /// Run even where a required protection is missing; the posture says what is not
    /// covered. Example: --allow-degraded
    #[arg(long)]
    allow_degraded: bool,
    /// The jail's network: `off` (its own network namespace with nothing but loopback,
    /// the default) or `allow-list` (out only through the reference's proxy, to the
    /// domains of --allow-domain; HTTP_PROXY, HTTPS_PROXY and ALL_PROXY point at it) or
    /// `host` (the host's network, no namespace of its own; the host's UNIX sockets stay
    /// unreachable, and the posture claims no `network`). Example: --network host
    #[arg(long, value_name = "MODE")]
    network: Option<String>,
    /// Allow one domain through the proxy (repeatable; `*.example.org` allows every name
    /// below example.org, not example.org itself); implies --network allow-list.
    /// Example: --allow-domain registry.npmjs.org
    #[arg(long = "allow-domain", value_name = "DOMAIN")]
    allow_domain: Vec<String>,
    /// Pass one variable of this environment by name (repeatable); a secret-looking
    /// name is refused here. Example: --pass-env CARGO_HOME
    #[arg(long = "pass-env", value_name = "NAME")]
    pass_env: Vec<String>,
    /// Pass a secret-looking variable on purpose (repeatable); the posture lists it.
    /// Example: --pass-secret-env NPM_TOKEN
    #[arg(long = "pass-secret-env", value_name = "NAME")]
    pass_secret_env: Vec<String>,
    /// Set a variable inside the jail (repeatable). Example: --set-env RUST_LOG=debug
    #[arg(long = "set-env", value_name = "NAME=VALUE")]
    set_env: Vec<String>,
    /// Make a path visible read-only (repeatable; it must exist). Example: --ro /opt/sdk
    #[arg(long = "ro", value_name = "PATH")]
    read_only: Vec<PathBuf>,
    /// Add a writable root (repeatable; it must exist; protected paths apply inside it).
    /// Example: --rw ~/.cache/build
    #[arg(long = "rw", value_name = "PATH")]
    writable: Vec<PathBuf>,
    /// Hide a path even where a visible tree holds it (repeatable; it must exist).
    /// Example: --hide ~/src/app/.env
    #[arg(long = "hide", value_name = "PATH")]
    hidden: Vec<PathBuf>,
    /// Honour <workspace>/.gatehouse/config.toml although the user's file does not list
    /// the project in `trusted-projects`. Example: --trust-project-config
    #[arg(long)]
    trust_project_config: bool,
    /// Read no configuration file. Example: --no-config
    #[arg(long)]
    no_config: bool,
    /// Run with relayed pipes even from a terminal. By default a command started from a
    /// terminal (standard input is one) gets a fresh pseudo-terminal of the jail's own,
    /// relayed by gatehouse with yours in raw mode, never your terminal itself.
    /// Example: --no-tty
    #[arg(long)]
    no_tty: bool,
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

impl ExecArgs {
    /// The flags as a settings layer, each value with the flag it came from.
    fn layer(&self) -> Result<gatehouse::choices::Layer> {
        use gatehouse::choices::{Flags, Layer};
        let network =
            match &self.network {
                None => None,
                Some(n) => Some(n.parse().map_err(
                    |e: gatehouse::choices::UnknownNetworkMode| Usage(format!("--network: {e}")),
                )?),
            };
        let mut set_env = Vec::new();
        for kv in &self.set_env {
            let Some((k, v)) = kv.split_once('=') else {
                bail!(Usage(format!("--set-env {kv}: expected NAME=VALUE")));
            };
            set_env.push((k.to_string(), v.to_string()));
        }
        let flags = Flags {
            network,
            allow_domains: self.allow_domain.clone(),
            pass_env: self.pass_env.clone(),
            pass_secret_env: self.pass_secret_env.clone(),
            set_env,
            read_only: self.read_only.clone(),
            writable: self.writable.clone(),
            hidden: self.hidden.clone(),
        };
        Ok(Layer::from_flags(&flags).map_err(|e| Usage(e.to_string()))?)
    }
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

fn info(args: InfoArgs) -> Result<()> {
    args.emulate.apply();
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let posture = gatehouse::plane::cli::info(args.json, &cwd).map_err(|e| Usage(e.to_string()));
    let settings = gatehouse::plane::cli::settings_report(&cwd).map_err(|e| Usage(e.to_string()));
    match (posture, settings) {
        (Ok(p), Ok(lines)) if args.json => {
            let mut v: serde_json::Value = serde_json::from_str(&p).expect("the posture is JSON");
            v["settings"] = serde_json::json!(lines);
            println!("{}", serde_json::to_string_pretty(&v).expect("JSON"));
            Ok(())
        }
        (Ok(p), Ok(lines)) => {
            println!("{p}");
            println!("settings (each with where it came from):");
            for l in lines {
                println!("  {l}");
            }
            Ok(())
        }
        (Err(e), _) | (_, Err(e)) => Err(anyhow::Error::new(e)),
    }
}

fn exec(args: ExecArgs) -> Result<ExitCode> {
    args.emulate.apply();
    let flags = args.layer()?;
    for w in &args.workspaces {
        if !w.is_dir() {
            bail!(Usage(format!(
                "--workspace {}: not a directory",
                w.display()
            )));
        }
    }
    let request = gatehouse::plane::cli::ExecRequest {
        workspaces: args.workspaces,
        allow_degraded: args.allow_degraded,
        flags,
        trust_project_config: args.trust_project_config,
        no_config: args.no_config,
        no_tty: args.no_tty,
        command: args.command,
    };
    let status = gatehouse::plane::cli::exec(&request);
    Ok(ExitCode::from(u8::try_from(status).unwrap_or(u8::MAX)))
}

fn main() -> ExitCode {
    gatehouse::sys::mark::mark("main");
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
        Command::Info(args) => info(args),
        Command::Exec(args) => match exec(args) {
            Ok(code) => {
                gatehouse::sys::mark::mark("main-end");
                return code;
            }
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
