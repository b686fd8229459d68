//! The logic behind `gatehouse info` and `gatehouse exec`, free of any argument parser so
//! that `main` only dispatches: the posture as the plane would report it, and one command
//! run through the fence with the plane's scrubbed environment.
//!
//! Environment: `GATEHOUSE_FENCE`, `GATEHOUSE_EMULATE_NO_USERNS`,
//! `GATEHOUSE_LANDLOCK_MAX_ABI`, `GATEHOUSE_JAIL_HELPER` (see [`FenceOptions::from_env`]) and
//! `GATEHOUSE_ENV_SCRUBBING=off` (the plane-wide opt-out).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::choices::{Choices, Layer, NetworkMode};
use crate::exit::SETUP_FAILED as EXIT_SETUP_FAILED;
use crate::fence::launch::{Stream, Streams};
use crate::fence::{current_posture, Fence, FenceOptions, MountPoints, Policy, PostureChoices};

/// Why `gatehouse info` or `gatehouse exec` could not do what was asked; each names what
/// it concerns. (The command's own failure is its exit status, not an error.)
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The operator's options, or a fence that cannot be prepared or started.
    #[error(transparent)]
    Fence(#[from] crate::fence::FenceError),
    /// A choice (flag, file, path) that cannot be honoured.
    #[error(transparent)]
    Choice(#[from] super::choices::ChoiceError),
    /// An argument of the command that is not UTF-8.
    #[error("argument {0:?} is not UTF-8")]
    NotUtf8(OsString),
    /// No command after `--`.
    #[error("no command given (gatehouse exec [--workspace DIR]... -- CMD ARGS...)")]
    NoCommand,
    /// A step of running the command that failed on the host; `what` names it.
    #[error("{what}: {source}")]
    Io {
        /// The step: `current directory`, `the allow-list proxy`, `the terminal relay`,
        /// ...
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
}

impl CliError {
    fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> CliError {
        move |source| CliError::Io { what, source }
    }
}

impl From<crate::choices::LoadError> for CliError {
    fn from(e: crate::choices::LoadError) -> CliError {
        CliError::Choice(e.into())
    }
}

impl From<crate::net::NameError> for CliError {
    fn from(e: crate::net::NameError) -> CliError {
        CliError::Choice(e.into())
    }
}

/// `GATEHOUSE_ENV_SCRUBBING=off`: hand tools the full environment (reported in the posture).
pub const ENV_SCRUBBING: &str = "GATEHOUSE_ENV_SCRUBBING";

/// Whether the environment is scrubbed (the opt-out is `GATEHOUSE_ENV_SCRUBBING=off`).
pub fn env_scrubbing_from_env() -> bool {
    !matches!(
        std::env::var(ENV_SCRUBBING).as_deref(),
        Ok("off" | "0" | "false" | "no")
    )
}

/// The posture, as `gatehouse info` prints it (human, or pretty JSON), with the choices
/// the configuration files of a session rooted at `project` make (the network mode, the
/// allowed domains, every secret-looking name passed, every extra path resolved:
/// FENCE-PATHS-1). Options the environment spells wrongly (`GATEHOUSE_FENCE=bogus`), a
/// file with an unknown key and a path that does not exist are an error, not a posture:
/// the operator asked for something that cannot be.
pub fn info(json: bool, project: &Path) -> Result<String, CliError> {
    let mut posture = current_posture(&FenceOptions::from_env()?);
    posture.env_scrubbing = env_scrubbing_from_env();
    let settings = settings(project, &Layer::default(), false, false)?;
    let extra =
        super::choices::resolve_paths(&settings, &crate::fence::guarded::Guarded::from_env(&[]))?;
    let mut secrets: Vec<String> = settings
        .pass_secrets
        .iter()
        .map(|v| v.value.to_string())
        .collect();
    secrets.sort();
    posture.choices = PostureChoices {
        network: settings.network.value.to_string(),
        allowed_domains: settings
            .allow_domains
            .iter()
            .map(|d| d.value.clone())
            .collect(),
        passed_secrets: secrets,
        read_only: extra.read_only,
        writable: extra.writable,
        hidden: extra.hidden,
    };
    // The entries of this PATH a jail rooted at `project` could not read (FENCE-ENV-12).
    if posture.is_fenced() {
        let mut roots = vec![project.to_path_buf()];
        roots.extend(posture.choices.writable.iter().cloned());
        let mut policy = Policy::new(roots, Policy::in_jail_scratch_name());
        policy.read_only = posture.choices.read_only.clone();
        policy.hidden = posture.choices.hidden.clone();
        let mut env = super::env::jail_env(
            std::env::vars_os(),
            &policy.home(),
            None,
            posture.env_scrubbing,
        );
        posture.path_dropped = super::env::fit_path(&mut env, &policy, posture.backend);
    }
    Ok(if json {
        posture.to_json()
    } else {
        posture.render()
    })
}

/// What `gatehouse exec` was asked, as the command line gave it.
#[derive(Debug, Clone, Default)]
pub struct ExecRequest {
    /// Workspace roots (default: the current directory).
    pub workspaces: Vec<PathBuf>,
    /// `--allow-degraded`.
    pub allow_degraded: bool,
    /// The choices given as flags (they win over the files).
    pub flags: Layer,
    /// `--trust-project-config`.
    pub trust_project_config: bool,
    /// `--no-config`: read neither file.
    pub no_config: bool,
    /// `--no-tty`: relayed pipes even when standard input is a terminal.
    pub no_tty: bool,
    /// The command and its arguments.
    pub command: Vec<OsString>,
}

/// The settings of a session rooted at `project`: the user's file, the project's (when
/// trusted) and `flags`, each with its source.
pub fn settings(
    project: &Path,
    flags: &Layer,
    trust_project: bool,
    no_files: bool,
) -> Result<Choices, crate::choices::LoadError> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    let inputs = crate::choices::Inputs {
        user_file: crate::choices::user_file(xdg.as_deref(), home.as_deref()),
        project,
        home: home.as_deref(),
        trust_project,
        no_files,
    };
    let mut s = crate::choices::load(&inputs, flags)?;
    // The toolchains found where their installers put them (FENCE-TOOL-1 to 6).
    let found = super::toolchains::discover(&|k: &str| std::env::var_os(k));
    let system: Vec<PathBuf> = crate::fence::policy::SYSTEM_DIRS
        .iter()
        .map(PathBuf::from)
        .collect();
    super::toolchains::apply(&mut s, &found, &[project.to_path_buf()], &system);
    Ok(s)
}

/// The settings' lines for `gatehouse info`: each setting with where it came from.
pub fn settings_report(project: &Path) -> Result<Vec<String>, crate::choices::LoadError> {
    let mut lines = settings(project, &Layer::default(), false, false)?.provenance();
    lines.extend(super::toolchains::report());
    Ok(lines)
}

pub use super::env::{PROXY_PORT, PROXY_VARIABLES};

/// Serve the jail's listener with the allow-list proxy; every decision goes to a session
/// log of its own (outside every writable root), and each refusal also to stderr.
fn serve_proxy(
    allow: crate::net::AllowList,
    listener: std::net::TcpListener,
) -> Result<crate::net::Running, CliError> {
    let log = super::log::default_dir().and_then(|dir| {
        let id = format!(
            "exec-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0)
        );
        super::log::SessionLog::open(&dir, &id).ok()
    });
    if let Some(l) = &log {
        eprintln!(
            "gatehouse exec: network decisions are logged in {}",
            l.path().display()
        );
    }
    let log = std::sync::Arc::new(log);
    let journal: crate::net::Journal = std::sync::Arc::new(move |ev: &crate::net::NetEvent| {
        match ev {
            crate::net::NetEvent::Refused { status, detail, .. } => {
                eprintln!("gatehouse proxy: refused ({status}): {detail}")
            }
            crate::net::NetEvent::Suppressed { refusals } => {
                eprintln!("gatehouse proxy: {refusals} more refusals, counted, not shown")
            }
            crate::net::NetEvent::Allowed { .. } => {}
        }
        if let Some(l) = log.as_ref() {
            l.record("net", serde_json::to_value(ev).unwrap_or_default());
        }
    });
    crate::net::Proxy::new(allow, journal)
        .spawn(listener)
        .map_err(CliError::io("the allow-list proxy"))
}

/// Run one command in the fence as a person would: its output streams to ours, its exit
/// status is returned, and stderr says which fence held it. Workspaces default to the
/// current directory. Returns 125 when the fence refused or failed (nothing ran).
pub fn exec(req: &ExecRequest) -> i32 {
    match exec_inner(req) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("gatehouse exec: {e}");
            EXIT_SETUP_FAILED
        }
    }
}

/// `gatehouse exec`, stage by stage (each stage ends at the `sys::mark` it names): read the
/// command, the settings and the extra paths; prepare the fence, its environment and
/// posture; run the command in its jail and relay it; put everything back.
fn exec_inner(req: &ExecRequest) -> Result<i32, CliError> {
    crate::sys::mark::mark("exec-start");
    let (options, argv, cwd, workspaces) = read_command(req)?;
    let (settings, allow) = read_settings(req, &workspaces)?;
    let extra = resolve_extra_paths(req, &workspaces, &settings)?;
    let asked = Asked {
        options,
        argv,
        cwd,
        workspaces,
        settings,
        allow,
        extra,
    };
    // The scratch is a private tmpfs of the native jail; a backend that needs it on the
    // host gets a fresh host directory from the fence, removed below.
    crate::sys::mark::mark("paths-resolved");
    let mut host_scratch: Option<PathBuf> = None;
    let result = run_fenced(req, asked, &mut host_scratch);
    crate::sys::mark::mark("exec-done");
    put_back(host_scratch);
    result
}

/// What `gatehouse exec` was asked, read before the fence is prepared.
struct Asked {
    options: FenceOptions,
    argv: Vec<String>,
    cwd: PathBuf,
    workspaces: Vec<PathBuf>,
    settings: Choices,
    /// The allow-list, in the `allow-list` network mode.
    allow: Option<crate::net::AllowList>,
    extra: super::choices::ExtraPaths,
}

/// Stage `exec-start`: the operator's options, the command (UTF-8, not empty), the current
/// directory and the workspaces (the current directory by default).
fn read_command(
    req: &ExecRequest,
) -> Result<(FenceOptions, Vec<String>, PathBuf, Vec<PathBuf>), CliError> {
    let mut options = FenceOptions::from_env()?;
    options.allow_degraded |= req.allow_degraded;
    let argv: Vec<String> = req
        .command
        .iter()
        .map(|a| a.clone().into_string().map_err(CliError::NotUtf8))
        .collect::<Result<_, _>>()?;
    if argv.is_empty() {
        return Err(CliError::NoCommand);
    }
    let cwd = std::env::current_dir().map_err(CliError::io("current directory"))?;
    let workspaces: Vec<PathBuf> = if req.workspaces.is_empty() {
        vec![cwd.clone()]
    } else {
        req.workspaces.clone()
    };
    Ok((options, argv, cwd, workspaces))
}

/// Stage `settings-read`: the settings of the first workspace's layers (each file ignored
/// said why), and the allow-list of the `allow-list` network mode.
fn read_settings(
    req: &ExecRequest,
    workspaces: &[PathBuf],
) -> Result<(Choices, Option<crate::net::AllowList>), CliError> {
    let settings = settings(
        &workspaces[0],
        &req.flags,
        req.trust_project_config,
        req.no_config,
    )?;
    crate::sys::mark::mark("settings-read");
    for (file, why) in &settings.files {
        if let Some(why) = why {
            eprintln!("gatehouse exec: ignored {}: {why}", file.display());
        }
    }
    let allow = if settings.network.value.proxied() {
        Some(crate::net::AllowList::parse(
            settings.allow_domains.iter().map(|d| &d.value),
        )?)
    } else {
        None
    };
    Ok((settings, allow))
}

/// Stage `paths-resolved` (FENCE-PATHS-3): what jailed code must never change wherever it
/// lies (the home, the user's configuration where HOME and XDG_* put it, the session logs,
/// the credential stores, a configuration file read outside the workspaces); every
/// writable root, the workspaces included, is checked against it, then the extra paths
/// resolved.
fn resolve_extra_paths(
    req: &ExecRequest,
    workspaces: &[PathBuf],
    settings: &Choices,
) -> Result<super::choices::ExtraPaths, CliError> {
    let mut guarded = crate::fence::guarded::Guarded::from_env(&[]);
    for (file, _) in &settings.files {
        if !workspaces.iter().any(|w| file.starts_with(w)) {
            guarded.tree(file, "a configuration file read for this command");
        }
    }
    if let Some(dir) = super::log::default_dir() {
        guarded.tree(&dir, "the session logs");
    }
    for w in workspaces {
        let label = if req.workspaces.is_empty() {
            format!("the workspace (the current directory, {})", w.display())
        } else {
            format!("--workspace {}", w.display())
        };
        guarded
            .check(w, &label)
            .map_err(super::choices::ChoiceError::from)?;
    }
    Ok(super::choices::resolve_paths(settings, &guarded)?)
}

/// From the fence's preparation to the command's exit code: a host scratch directory the
/// fence made is put in `host_scratch` as soon as it exists, for [`put_back`].
fn run_fenced(
    req: &ExecRequest,
    asked: Asked,
    host_scratch: &mut Option<PathBuf>,
) -> Result<i32, CliError> {
    let fence = prepare_fence(&asked)?;
    if !fence.policy().scratch_in_jail {
        *host_scratch = Some(fence.policy().scratch.clone());
    }
    let (env, posture) = jail_env_and_posture(&fence, &asked)?;
    let program = asked.argv.first().cloned().unwrap_or_default();
    let jail_path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let dropped = posture.path_dropped.clone();
    let mut lookups = crate::net::resolver::Lookups::default();
    let code = run_in_jail(req, &fence, asked, env, posture, &mut lookups)?;
    if code == crate::exit::NOT_FOUND {
        if let Some(hint) = not_found_hint(&program, &jail_path, &dropped) {
            eprintln!("{hint}");
        }
    }
    // The names the fence's resolver refused (FENCE-NET-13), one line each.
    let registries: Vec<&str> = super::toolchains::REGISTRY_DOMAINS
        .iter()
        .map(|(d, _)| *d)
        .collect();
    for line in crate::net::resolver::hint_lines(&lookups, &registries) {
        let _ = std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("{line}\n"));
    }
    Ok(code)
}

/// A command not found in the jail because its only copy lies in a `PATH` entry the jail
/// cannot read (FENCE-ENV-13): one line naming the entry and the flag that would show
/// it. `None` when the name holds a `/`, when some entry the jail keeps has it (the 127
/// is then the command's own), or when no dropped entry has it.
pub(crate) fn not_found_hint(program: &str, jail_path: &str, dropped: &[String]) -> Option<String> {
    use crate::fence::jail::program_candidates;
    if program.is_empty() || program.contains('/') {
        return None;
    }
    if program_candidates(program, Some(jail_path))
        .next()
        .is_some()
    {
        return None;
    }
    let dir = dropped.iter().find(|d| {
        program_candidates(program, Some(d.as_str()))
            .next()
            .is_some()
    })?;
    Some(format!(
        "gatehouse exec: `{program}` is in {dir}, a PATH entry the jail cannot read; `--ro {dir}` would make it visible read-only"
    ))
}

/// Stages `fence-prepare` and `fence-prepared`: the policy (the workspaces and the extra
/// writable roots, the read-only and hidden paths, the network mode, the working
/// directory when it lies in a workspace), and the fence prepared for it.
fn prepare_fence(asked: &Asked) -> Result<Fence, CliError> {
    let extra = &asked.extra;
    let mut all = asked.workspaces.clone();
    all.extend(extra.writable.iter().cloned());
    let mut policy = Policy::new(all, Policy::in_jail_scratch_name());
    policy.scratch_in_jail = true;
    policy.read_only = extra.read_only.clone();
    policy.hidden = extra.hidden.clone();
    policy.host_network = asked.settings.network.value == NetworkMode::Host;
    // With the network off the fence answers the jail's lookups itself (FENCE-NET-13).
    policy.resolver = asked.settings.network.value == NetworkMode::Off;
    let real_cwd = std::fs::canonicalize(&asked.cwd).unwrap_or(asked.cwd.clone());
    let resolved: Vec<PathBuf> = policy
        .workspaces
        .iter()
        .filter_map(|w| std::fs::canonicalize(w).ok())
        .collect();
    if resolved.iter().any(|w| real_cwd.starts_with(w)) {
        policy.cwd = Some(real_cwd);
    }
    crate::sys::mark::mark("fence-prepare");
    let fence = Fence::prepare_for_checked(policy, &asked.options)?;
    crate::sys::mark::mark("fence-prepared");
    Ok(fence)
}

/// The jail's environment (scrubbed, the settings' choices applied, pointed at the proxy,
/// `PATH` fitted to the jail) and the posture reported with it.
fn jail_env_and_posture(
    fence: &Fence,
    asked: &Asked,
) -> Result<(super::choices::Env, crate::fence::Posture), CliError> {
    let (settings, allow, extra) = (&asked.settings, &asked.allow, &asked.extra);
    let scrubbing = env_scrubbing_from_env();
    let mut posture = fence.posture().clone();
    posture.env_scrubbing = scrubbing;
    // TMPDIR is the session's scratch temporary directory on every backend, a jail
    // with a private `/tmp` included (the spec's environment table, FENCE-JAIL-4).
    let base = super::env::jail_env(
        std::env::vars_os(),
        &fence.policy().home(),
        Some(&fence.policy().tmpdir()),
        scrubbing,
    );
    let parent: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let (mut env, passed_secrets) = super::choices::apply_env(base, &parent, settings)?;
    if allow.is_some() {
        super::env::point_at_proxy(&mut env);
    }
    let mut network = settings.network.value.to_string();
    // FENCE-NET-13 on bubblewrap: its jail keeps the host's /etc/resolv.conf and its helper
    // holds no right to port 53, so the fence answers no lookup there (not built); the
    // person is told the hint will not come.
    if settings.network.value == NetworkMode::Off
        && matches!(fence.kind(), crate::fence::Kind::Bwrap { .. })
    {
        network.push_str(" (failed name lookups are named on the native backend only)");
    }
    posture.choices = PostureChoices {
        network,
        allowed_domains: allow
            .as_ref()
            .map(|a| a.entries().iter().map(|e| e.to_string()).collect())
            .unwrap_or_default(),
        passed_secrets,
        read_only: extra.read_only.clone(),
        writable: extra.writable.clone(),
        hidden: extra.hidden.clone(),
    };
    // Only the entries of PATH the jail can read, whoever set it (FENCE-ENV-12).
    if posture.is_fenced() {
        posture.path_dropped = super::env::fit_path(&mut env, fence.policy(), posture.backend);
    }
    Ok((env, posture))
}

/// Stages `mount-points-claim` to `mount-points-released`: the command's jail spawned,
/// relayed and reaped, with the terminating signals held and the mount points of missing
/// protected paths claimed around it; the exit code (128 + a signal's number).
fn run_in_jail(
    req: &ExecRequest,
    fence: &Fence,
    asked: Asked,
    env: super::choices::Env,
    mut posture: crate::fence::Posture,
    lookups: &mut crate::net::resolver::Lookups,
) -> Result<i32, CliError> {
    // A terminating signal from here on ends the jail, and this process dies of it only
    // once the mount points are let go (sys::ending): noted until the jail's helper is
    // known, then ending it. Declared before the mount points, so that it is let go
    // after them on every way out.
    #[cfg(unix)]
    let mut ending = crate::sys::ending::Ending::hold()
        .map_err(CliError::io("cannot hold the terminating signals"))?;
    // Held until the command's jail is gone: a mount point of a missing protected path
    // is removed only by the last jail of this root out (FENCE-PROTECT-10).
    crate::sys::mark::mark("mount-points-claim");
    // Left to a lingerer when this is the root's last jail out, so that back-to-back
    // commands create them once (FENCE-PROTECT-20).
    let linger = crate::fence::mount_points::Linger::from_env(fence.helper())
        .map_err(CliError::io("the placeholders' grace"))?;
    let mount_points = MountPoints::claim_lingering(fence.policy(), linger)
        .map_err(CliError::io("the mount points of the protected paths"))?;
    // The command's own jail proves the probe's legs before the command starts; its
    // standard streams are pipes we relay (FENCE-JAIL-15), never our own descriptors.
    let listen = asked.allow.as_ref().map(|_| PROXY_PORT);
    let mut proxy = None;
    let mut resolver = None;
    let (terminal, streams) = streams_for(req, fence);
    // Declared after the mount points, so that on every way out (a panic unwinding
    // too) the jail is ended and reaped before they go; on the way out below, its
    // init, which may still be taking the jail's mount tree down once nothing jailed
    // runs, is left after them.
    let mut jail = None;
    crate::sys::mark::mark("spawn-checked");
    let status = match fence.spawn_checked(asked.argv, env, listen, terminal, streams) {
        Ok(checked) => {
            let checked = jail.insert(checked);
            #[cfg(unix)]
            ending.watch(checked.child.id());
            relay_checked(
                checked,
                &asked.allow,
                &mut posture,
                &mut proxy,
                &mut resolver,
            )
        }
        Err(e) => Err(CliError::from(e)),
    };
    // A jail that did not end as it should is ended first.
    if status.is_err() {
        drop(jail.take());
    }
    crate::sys::mark::mark("waited");
    if let Some(r) = resolver.take() {
        *lookups = r.lookups();
    }
    drop(mount_points);
    crate::sys::mark::mark("mount-points-released");
    // This process exits next: an init still taking the jail's mount tree down once
    // nothing jailed runs is left to finish rather than waited for.
    if let Some(jail) = jail {
        jail.leave();
    }
    let status = status?;
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .or(status.signal().map(|s| 128 + s))
        .unwrap_or(EXIT_SETUP_FAILED))
}

/// Whether the jail gives the command a terminal, and the standard streams it is given.
/// From a terminal, a fresh one of the jail's own, relayed (FENCE-TTY-1); where no jail can
/// open one (macOS; Landlock alone, which has no devpts of its own), pipes as with
/// --no-tty.
fn streams_for(req: &ExecRequest, fence: &Fence) -> (bool, Streams) {
    let terminal = fence.gives_terminal()
        && !req.no_tty
        && std::io::IsTerminal::is_terminal(&std::io::stdin());
    let streams = if terminal {
        HELPER_STREAMS
    } else {
        PIPE_STREAMS
    };
    (terminal, streams)
}

/// Stages `spawn-checked` to `streams-closed` and the wait: the proxy served on the jail's
/// listener, the resolver on its port 53 (FENCE-NET-13), the posture printed, the terminal relayed, the command started, its streams
/// copied until closed, the jail reaped. The proxy is kept in `proxy` by the caller until
/// the jail is let go.
fn relay_checked(
    checked: &mut crate::fence::Checked,
    allow: &Option<crate::net::AllowList>,
    posture: &mut crate::fence::Posture,
    proxy: &mut Option<crate::net::Running>,
    resolver: &mut Option<crate::net::resolver::Running>,
) -> Result<std::process::ExitStatus, CliError> {
    if let (Some(allow), Some(listener)) = (allow.clone(), checked.take_listener()) {
        *proxy = Some(serve_proxy(allow, listener)?);
    }
    if let Some(sockets) = checked.take_resolver() {
        *resolver = Some(
            crate::net::resolver::Running::spawn(sockets.udp, sockets.tcp)
                .map_err(CliError::io("the fence's resolver"))?,
        );
    }
    let notes = checked.notes();
    if !notes.is_empty() {
        let reason = posture.reason.take().into_iter().chain(notes);
        posture.reason = Some(reason.collect::<Vec<_>>().join("; "));
    }
    // Without a terminal the command may start before its streams are relayed:
    // what it writes waits in the pipes, so the posture still comes first. The
    // posture and the relay's threads then cost no time of the command's.
    let master = checked.take_terminal();
    let started = if master.is_none() {
        checked.start().map_err(CliError::from)
    } else {
        Ok(())
    };
    // Never a panic once the command may run (a closed stderr would make
    // `eprintln!` panic): `checked` would still end the jail before the mount
    // points go, but nothing should depend on that.
    // The nested-repositories line once per workspace, not at every command
    // (FENCE-PROTECT-19).
    let mut shown = posture.clone();
    shown.reason = shown.reason.as_deref().and_then(super::told::once);
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!("gatehouse exec: {}\n", shown.render()),
    );
    let tty = match master {
        Some(master) => Some(TerminalRelay::start(master)?),
        None => None,
    };
    // With a terminal the command starts now that its relay runs; without one it
    // started above and `start` has nothing left to send.
    let started = started.and_then(|()| checked.start().map_err(CliError::from));
    // The streams are copied in this thread until the jail's last process has
    // closed them (a helper that refused says why on its stderr), then reaped.
    super::relay::copy(&mut checked.child);
    crate::sys::mark::mark("streams-closed");
    let status = started.and_then(|()| {
        checked
            .wait()
            .map_err(CliError::io("cannot wait for the fence"))
    });
    if let Some(t) = tty {
        t.finish();
    }
    status
}

/// Stage `exec-done`: the host scratch removed, and a terminating signal that came while
/// the jail ran died of now, whichever way the run ended, once everything is put back.
fn put_back(host_scratch: Option<PathBuf>) {
    if let Some(scratch) = host_scratch {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    #[cfg(unix)]
    if let Some(sig) = crate::sys::ending::noted() {
        let _ = std::io::Write::flush(&mut std::io::stdout());
        crate::sys::ending::die_of(sig);
    }
}

/// Standard streams as pipes (FENCE-JAIL-15): the jail is never handed a descriptor of
/// ours, which may be a file outside every root (a redirected stdout), a terminal or a
/// socket, and which would keep the rights it was opened with (`fchmod`, `ftruncate`,
/// `futimes` and `fsetxattr` on fd 1 change the file whatever the mounts say).
const PIPE_STREAMS: Streams = Streams::PIPED;

/// With a terminal the command's streams are the jail's pseudo-terminal; the jail's own
/// (its init's, or its helper's) stay pipes (its stderr says what failed), and its stdin is
/// closed so that only the terminal's relay reads ours.
const HELPER_STREAMS: Streams = Streams([Stream::Null, Stream::Piped, Stream::Piped]);

/// Our terminal relayed to the jail's (FENCE-TTY-5): ours in raw mode for the duration
/// (restored when this ends, and on a terminating signal), its window size copied at
/// start and on every change.
struct TerminalRelay {
    relay: crate::fence::tty::Relay,
    raw: Option<RawGuard>,
}

#[cfg(target_os = "linux")]
type RawGuard = crate::sys::pty::RawMode;
/// Elsewhere no terminal is relayed (`exec` asks for none).
#[cfg(not(target_os = "linux"))]
struct RawGuard;

impl TerminalRelay {
    fn start(master: std::os::fd::OwnedFd) -> Result<TerminalRelay, CliError> {
        let stdin = std::io::stdin();
        #[cfg(target_os = "linux")]
        let raw = {
            use std::os::fd::AsFd;
            let raw = match crate::sys::pty::RawMode::enter(stdin.as_fd()) {
                Ok(r) => Some(r),
                Err(e) => {
                    eprintln!("gatehouse exec: the terminal stays in its own mode: {e}");
                    None
                }
            };
            if let Some(r) = &raw {
                r.follow_window(&master);
            }
            raw
        };
        #[cfg(not(target_os = "linux"))]
        let raw: Option<RawGuard> = None;
        let relay = crate::fence::tty::Relay::start(
            master,
            Box::new(stdin),
            crate::fence::tty::AtEnd::Nothing,
            Box::new(std::io::stdout()),
            crate::fence::control_strings::ControlStrings::for_our_terminal(),
        )
        .map_err(CliError::io("the terminal relay"))?;
        Ok(TerminalRelay { relay, raw })
    }

    /// After the command ended: what it showed last is copied, our terminal restored.
    fn finish(self) {
        #[cfg(target_os = "linux")]
        if let Some(r) = &self.raw {
            r.stop_following();
        }
        let TerminalRelay { relay, raw } = self;
        if let Err(e) = relay.finish() {
            eprintln!("gatehouse exec: the terminal relay: {e}");
        }
        // Last: our terminal is put back once what the command showed is out.
        let _restored = raw;
    }
}
