//! The `gatehouse` command: the protocol adapter (`gatehouse adapter`), a one-shot gate
//! check (`gatehouse gate check -- 'LINE'`), the fence's posture (`gatehouse info`) and one
//! command run in the fence (`gatehouse exec -- CMD ARGS...`), and the pre-tool hook of
//! Claude Code, Codex CLI, Gemini CLI and GitHub Copilot CLI (`gatehouse guard AGENT`, with `install`,
//! `uninstall` and `doctor`).
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
    /// Put Gatehouse in front of Claude Code, Codex CLI, Gemini CLI or GitHub Copilot CLI (their
    /// pre-tool hook).
    Guard {
        #[command(subcommand)]
        command: GuardCommand,
    },
}

/// `--config` of the hook commands.
#[derive(Debug, Args)]
struct HookArgs {
    /// The guard's configuration (default: $GATEHOUSE_GUARD_CONFIG, else
    /// $XDG_CONFIG_HOME/gatehouse/guard.toml).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum AgentArg {
    ClaudeCode,
    Codex,
    Gemini,
    Copilot,
}

impl AgentArg {
    fn agent(self) -> gatehouse::guard::Agent {
        use gatehouse::guard::Agent;
        match self {
            AgentArg::ClaudeCode => Agent::ClaudeCode,
            AgentArg::Codex => Agent::Codex,
            AgentArg::Gemini => Agent::Gemini,
            AgentArg::Copilot => Agent::Copilot,
        }
    }
}

#[derive(Debug, Args)]
struct InstallArgs {
    /// The agent.
    #[arg(value_enum)]
    agent: AgentArg,
    /// The project in the current directory (Claude Code, Gemini CLI): taken only where
    /// the fence keeps that settings file read-only.
    #[arg(long, conflicts_with = "user")]
    project: bool,
    /// The person's own settings, outside every workspace (the default).
    #[arg(long)]
    user: bool,
}

impl InstallArgs {
    /// The person's own settings unless `--project` (GUARD-INSTALL-4): a project's
    /// settings lie in the workspace, where what the guard lets run could rewrite them.
    fn scope(&self) -> Result<gatehouse::guard::install::Scope> {
        use gatehouse::guard::install::Scope;
        Ok(if self.project {
            Scope::Project(std::env::current_dir().context("cannot read the current directory")?)
        } else {
            Scope::User
        })
    }
}

#[derive(Debug, Subcommand)]
enum GuardCommand {
    /// The hook of Claude Code: reads its PreToolUse/PostToolUse JSON on standard input.
    ClaudeCode(HookArgs),
    /// The hook of Codex CLI: reads its PreToolUse/PostToolUse JSON on standard input.
    Codex(HookArgs),
    /// The hook of Gemini CLI: reads its BeforeTool/AfterTool JSON on standard input.
    Gemini(HookArgs),
    /// The hook of GitHub Copilot CLI: reads its preToolUse JSON on standard input.
    Copilot(HookArgs),
    /// Merge the hook into the agent's settings (shows the change, keeps a backup).
    Install(InstallArgs),
    /// Take the hook out of the agent's settings again.
    Uninstall(InstallArgs),
    /// Say whether the hook is installed, whether the agent will run it, and what fence
    /// this machine gives.
    Doctor {
        /// The agent.
        #[arg(value_enum)]
        agent: AgentArg,
        #[command(flatten)]
        hook: HookArgs,
    },
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
    /// The choices of the table (`gatehouse::choices::table`), one flag per row.
    #[command(flatten)]
    choices: ChoiceArgs,
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

/// The flags of the table of choices, as given: each row that is a flag of `gatehouse
/// exec` becomes one argument (its name, value name, help and example from the row, its
/// action from the row's kind).
#[derive(Debug, Clone, Default)]
struct ChoiceArgs {
    flags: gatehouse::choices::Flags,
    /// `NAME=VALUE` arguments without `=`: a usage error when the layer is made.
    unsplit: Vec<(&'static str, String)>,
}

impl clap::FromArgMatches for ChoiceArgs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        use gatehouse::choices::{table::Kind, table::Slot, table::TABLE, Raw};
        let mut out = ChoiceArgs::default();
        for spec in TABLE.iter().filter(|s| s.flag) {
            let strings = || -> Vec<String> {
                m.get_many::<String>(spec.name)
                    .map(|v| v.cloned().collect())
                    .unwrap_or_default()
            };
            let raw = match (spec.kind(), spec.slot) {
                (Kind::Switch, _) => Raw::Switch(m.get_flag(spec.name)),
                (Kind::One, _) => match m.get_one::<String>(spec.name) {
                    Some(v) => Raw::One(v.clone()),
                    None => continue,
                },
                (Kind::List, Slot::Paths) => Raw::Paths(
                    m.get_many::<PathBuf>(spec.name)
                        .map(|v| v.cloned().collect())
                        .unwrap_or_default(),
                ),
                (Kind::List, _) => Raw::List(strings()),
                (Kind::Map, _) => {
                    let mut pairs = Vec::new();
                    for kv in strings() {
                        match kv.split_once('=') {
                            Some((k, v)) => pairs.push((k.to_string(), v.to_string())),
                            None => out.unsplit.push((spec.name, kv)),
                        }
                    }
                    Raw::Map(pairs)
                }
            };
            out.flags.set(spec, raw);
        }
        Ok(out)
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for ChoiceArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        use clap::{Arg, ArgAction};
        use gatehouse::choices::table::{Kind, Slot, TABLE};
        TABLE.iter().filter(|s| s.flag).fold(cmd, |cmd, spec| {
            let arg = Arg::new(spec.name).long(spec.name).help(spec.help());
            let arg = match (spec.kind(), spec.slot) {
                (Kind::Switch, _) => arg.action(ArgAction::SetTrue),
                (Kind::One, _) => arg.action(ArgAction::Set).value_name(spec.value_name),
                (Kind::List, Slot::Paths) => arg
                    .action(ArgAction::Append)
                    .value_name(spec.value_name)
                    .value_parser(clap::value_parser!(PathBuf)),
                (Kind::List | Kind::Map, _) => {
                    arg.action(ArgAction::Append).value_name(spec.value_name)
                }
            };
            cmd.arg(arg)
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl ExecArgs {
    /// The flags as a settings layer, each value with the flag it came from.
    fn layer(&self) -> Result<gatehouse::choices::Layer> {
        if let Some((flag, kv)) = self.choices.unsplit.first() {
            bail!(Usage(format!("--{flag} {kv}: expected NAME=VALUE")));
        }
        Ok(gatehouse::choices::Layer::from_flags(&self.choices.flags)
            .map_err(|e| Usage(e.to_string()))?)
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
            let mut v: serde_json::Value =
                serde_json::from_str(&p).context("the posture is not JSON")?;
            v["settings"] = serde_json::json!(lines);
            println!("{}", serde_json::to_string_pretty(&v)?);
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
        allow_degraded: args.choices.flags.switch("allow-degraded"),
        flags,
        trust_project_config: args.choices.flags.switch("trust-project-config"),
        no_config: args.choices.flags.switch("no-config"),
        no_tty: args.no_tty,
        command: args.command,
    };
    let status = gatehouse::plane::cli::exec(&request);
    Ok(ExitCode::from(u8::try_from(status).unwrap_or(u8::MAX)))
}

/// The hook: never an exit the agent reads as allow on failure. Standard input is read
/// whole (at most 16 MiB), the library answers, and a panic anywhere is caught and turned
/// into the block answer (Claude Code runs the call on exit 1 or 101; GUARD-FAIL-2).
fn guard_hook(agent: gatehouse::guard::Agent, args: &HookArgs) -> ExitCode {
    use std::io::{Read, Write};
    std::panic::set_hook(Box::new(|_| {}));
    // The guard's own deadline, well under the timeout `install` writes (GUARD-FAIL-3):
    // an agent runs a call whose hook timed out, so whatever keeps the decision busy (an
    // input, a configuration on a pipe, a slow disk), the block answer is given first.
    // Whoever takes `answered` first writes the one answer.
    let answered = std::sync::Arc::new(std::sync::Mutex::new(false));
    let mut deadline = gatehouse::guard::DEADLINE;
    if cfg!(feature = "test-faults") {
        if let Some(ms) = std::env::var("GATEHOUSE_GUARD_TEST_DEADLINE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
        {
            deadline = std::time::Duration::from_millis(ms);
        }
    }
    {
        let answered = answered.clone();
        std::thread::spawn(move || {
            std::thread::sleep(deadline);
            let mut done = answered.lock().unwrap_or_else(|e| e.into_inner());
            if !*done {
                *done = true;
                let reply = agent
                    .dialect()
                    .block(&gatehouse::guard::deadline_reason(deadline));
                let _ = std::io::stdout().write_all(reply.stdout.as_bytes());
                let _ = std::io::stderr().write_all(reply.stderr.as_bytes());
                std::process::exit(i32::from(reply.exit));
            }
        });
    }
    let reply = std::panic::catch_unwind(|| {
        let mut input = Vec::new();
        let read = std::io::stdin()
            .lock()
            .take((16 << 20) + 1)
            .read_to_end(&mut input);
        if let Err(e) = read {
            return agent
                .dialect()
                .block(&format!("cannot read the hook input: {e}"));
        }
        if input.len() > 16 << 20 {
            return agent
                .dialect()
                .block("the hook input is larger than 16 MiB");
        }
        if std::env::var_os("GATEHOUSE_GUARD_TEST_PANIC").is_some() && cfg!(feature = "test-faults")
        {
            panic!("a test fault");
        }
        if std::env::var_os("GATEHOUSE_GUARD_TEST_HANG").is_some() && cfg!(feature = "test-faults")
        {
            loop {
                std::thread::park();
            }
        }
        let program = match std::env::current_exe() {
            Ok(p) => p,
            Err(e) => {
                return agent
                    .dialect()
                    .block(&format!("cannot find this program: {e}"))
            }
        };
        let config = gatehouse::guard::config::config_path(args.config.as_deref())
            .and_then(|p| gatehouse::guard::config::GuardConfig::load(&p));
        gatehouse::guard::answer(agent, &input, config, &program)
    })
    .unwrap_or_else(|_| {
        agent
            .dialect()
            .block("internal error (a panic); the call is blocked")
    });
    let mut done = answered.lock().unwrap_or_else(|e| e.into_inner());
    if *done {
        // The deadline's answer is being written; the process ends with it.
        loop {
            std::thread::park();
        }
    }
    *done = true;
    let mut out = std::io::stdout().lock();
    if out
        .write_all(reply.stdout.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        let _ = std::io::stderr().write_all(b"gatehouse guard: cannot write the answer\n");
        return ExitCode::from(gatehouse::guard::dialect::EXIT_BLOCK);
    }
    let _ = std::io::stderr().write_all(reply.stderr.as_bytes());
    ExitCode::from(reply.exit)
}

/// A line on standard output that a closed pipe ends quietly (`doctor | head`): never
/// the panic of `println!`.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// [`say!`] without the line break.
macro_rules! say_raw {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}

fn guard_change(changes: &[gatehouse::guard::install::Change]) {
    for c in changes {
        if !c.changed {
            say!("{}: unchanged", c.file.display());
            continue;
        }
        say!("--- {}", c.file.display());
        say_raw!("{}", c.diff);
        if let Some(b) = &c.backup {
            say!("(the file as it was is kept in {})", b.display());
        }
    }
}

fn guard_doctor(agent: gatehouse::guard::Agent, hook: &HookArgs) -> Result<ExitCode> {
    use gatehouse::guard::install::{self, Scope};
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let mut ok = true;
    match gatehouse::guard::config::config_path(hook.config.as_deref())
        .and_then(|p| gatehouse::guard::config::GuardConfig::load(&p).map(|_| p))
    {
        Ok(p) => say!("configuration: {} reads", p.display()),
        Err(e) => {
            ok = false;
            say!("configuration: {e} (every call is blocked until it is fixed)");
        }
    }
    let mut any = false;
    for scope in [Scope::User, Scope::Project(cwd.clone())] {
        let Ok(file) = install::settings_file(agent, &scope) else {
            continue;
        };
        match install::installed(agent, &scope) {
            Ok(true) => {
                any = true;
                say!("hook: installed in {}", file.display());
            }
            Ok(false) => say!("hook: not in {}", file.display()),
            Err(e) => say!("hook: {e}"),
        }
    }
    ok &= any;
    let (runs, lines) = agent.dialect().runs_hooks()?;
    ok &= runs;
    for l in lines {
        say!("{l}");
    }
    say!("fence on this machine (what an allowed command runs in):");
    match gatehouse::plane::cli::info(false, &cwd) {
        Ok(p) => say!("{p}"),
        Err(e) => {
            ok = false;
            say!("  cannot tell: {e}");
        }
    }
    Ok(ExitCode::from(if ok { exit::OK } else { exit::FAILURE }))
}

fn guard(command: GuardCommand) -> Result<ExitCode> {
    use gatehouse::guard::install;
    Ok(match command {
        GuardCommand::ClaudeCode(a) => guard_hook(gatehouse::guard::Agent::ClaudeCode, &a),
        GuardCommand::Codex(a) => guard_hook(gatehouse::guard::Agent::Codex, &a),
        GuardCommand::Gemini(a) => guard_hook(gatehouse::guard::Agent::Gemini, &a),
        GuardCommand::Copilot(a) => guard_hook(gatehouse::guard::Agent::Copilot, &a),
        GuardCommand::Install(a) => {
            let program = std::env::current_exe().context("cannot find this program")?;
            let mut changes = install::install(a.agent.agent(), &a.scope()?, &program)
                .map_err(|e| Usage(e.to_string()))?;
            let config =
                gatehouse::guard::config::config_path(None).map_err(|e| Usage(e.to_string()))?;
            changes.extend(install::ensure_config(&config).map_err(|e| Usage(e.to_string()))?);
            guard_change(&changes);
            ExitCode::from(exit::OK)
        }
        GuardCommand::Uninstall(a) => {
            let changes = install::uninstall(a.agent.agent(), &a.scope()?)
                .map_err(|e| Usage(e.to_string()))?;
            guard_change(&changes);
            ExitCode::from(exit::OK)
        }
        GuardCommand::Doctor { agent, hook } => guard_doctor(agent.agent(), &hook)?,
    })
}

fn main() -> ExitCode {
    gatehouse::sys::mark::mark("main");
    // The jail helper must be dispatched before clap or any thread exists: the kernel
    // refuses a new user namespace to a multi-threaded process. It never returns.
    let raw: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if raw.get(1).is_some_and(|a| a == "__jail") {
        gatehouse::helper::main(&raw[2..]);
    }
    #[cfg(target_os = "linux")]
    if raw
        .get(1)
        .is_some_and(|a| a == gatehouse::fence::mount_points::LINGER_ARG)
    {
        gatehouse::helper::linger(&raw[2..]);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Adapter => adapter(),
        Command::Gate {
            command: GateCommand::Check(args),
        } => check(args),
        Command::Info(args) => info(args),
        Command::Guard { command } => match guard(command) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
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
