//! `gatehouse guard`: the library in front of an agent the person already runs (spec
//! chapter `guard.md`). Claude Code, Codex CLI, Gemini CLI and GitHub Copilot CLI each call a pre-tool hook
//! with the call as JSON; the guard reads it ([`dialect::Dialect`], one module per agent),
//! asks the library's one decision order ([`crate::order`]: patterns, the gate, grants,
//! the mode, hooks, the trust map's plan) through a [`GuardedSession`] kept per agent
//! session under the state directory, and writes the library's answer back in the
//! agent's dialect. It decides nothing itself: an allow becomes the command rewritten to
//! run in the fence ([`rewrite`]), an ask is an ask only where the agent asks (otherwise
//! the library, told that nobody can be asked, has already denied it), a deny is the
//! agent's block answer. Every failure is the block answer too ([`answer`] never returns
//! anything else on error).
//!
//! - [`dialect`]: the trait and the neutral event and answer;
//! - [`claude`], [`codex`], [`gemini`], [`copilot`]: the four dialects;
//! - [`config`]: the configuration file, `guard.toml`;
//! - [`rewrite`]: the fenced command line and its quoting;
//! - [`reach`]: what no file tool may reach (protected and hidden paths);
//! - [`install`]: merging the hook into each agent's settings, and the doctor.
//!
//! May touch: the state directory (through [`GuardedSession`]), the configuration file,
//! the files the configuration names, the workspace (the gate's jail and path roots), the
//! process table (the agent file's hooks).

pub mod claude;
pub mod codex;
pub mod config;
pub mod copilot;
pub mod dialect;
pub mod gemini;
pub mod install;
pub mod reach;
pub mod rewrite;

use crate::config::{AgentFile, ConfigError as FileError, SettingsFile};
use crate::gate::{Asker, GateConfig, Verdict};
use crate::order::{GuardedSession, Route, Ruling, SessionConfig, SessionError, SourceRef, Stage};
use crate::paths::Roots;
use crate::records::atomic::write_json;
use crate::records::{read_json, RecordError, StateDir};
use crate::trust::TrustMap;
use config::{ConfigError, GuardConfig};
use dialect::{Answer, Dialect, Guarded, HookEvent, PreTool, Reply, ShapeError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// How long the guard decides at most (GUARD-FAIL-3): a third of the shortest timeout
/// `install` writes ([`Dialect::hook_timeout`](dialect::Dialect::hook_timeout), 60 s), so that a loaded machine still
/// hears the block answer before the agent gives up on the hook and runs the call.
pub const DEADLINE: std::time::Duration = std::time::Duration::from_secs(20);

/// How much of a session's journal a hook process reads back (GUARD-FAIL-3): the last
/// 32 KiB, about a hundred records (a call and its post-tool event write three, about
/// 300 bytes each), where the decision a post-tool event follows lies (the agent sends it
/// right after the call ran, a few parallel calls apart at most). A post-tool event whose
/// decision lies further back records nothing. Reading the whole journal made a call cost
/// 67 ms at call 1,500 of a session (4 ms at call 1); a 256 KiB window still 17 ms.
pub const JOURNAL_WINDOW: u64 = 32 << 10;

/// The block answer's reason when the deadline passes.
pub fn deadline_reason(deadline: std::time::Duration) -> String {
    format!(
        "denied (deadline, stage guard): no decision within {} ms, the guard's own deadline (well under the agent's hook timeout, after which the agent would run the call unjudged); the call is blocked",
        deadline.as_millis()
    )
}

/// The agents the guard stands in front of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    /// Claude Code.
    ClaudeCode,
    /// Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
    /// GitHub Copilot CLI.
    Copilot,
}

impl Agent {
    /// Every agent.
    pub const ALL: [Agent; 4] = [
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Gemini,
        Agent::Copilot,
    ];

    /// Its dialect.
    pub fn dialect(self) -> &'static dyn Dialect {
        match self {
            Agent::ClaudeCode => &claude::ClaudeCode,
            Agent::Codex => &codex::Codex,
            Agent::Gemini => &gemini::Gemini,
            Agent::Copilot => &copilot::Copilot,
        }
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        self.dialect().name()
    }

    /// The agent named `s`.
    pub fn parse(s: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == s)
    }

    /// The agent's name for people.
    pub fn title(self) -> &'static str {
        self.dialect().title()
    }
}

/// Why the guard could not decide (every one is answered with the block answer).
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// The hook input is unreadable or of an unknown shape.
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// The guard's configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The agent file or settings file the configuration names.
    #[error(transparent)]
    File(#[from] FileError),
    /// The session cannot be opened.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// A record cannot be read or written.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The fenced command cannot be written.
    #[error(transparent)]
    Rewrite(#[from] rewrite::RewriteError),
    /// No state directory can be found.
    #[error(
        "no state directory: set state-dir in the guard configuration, or XDG_STATE_HOME or HOME"
    )]
    NoStateDir,
    /// The agent's working directory is unusable.
    #[error("{0}")]
    Workspace(String),
}

/// What the guard keeps of a session beside the library's records: its roots, fixed at
/// its first call (a later `cd` of the agent never widens them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct GuardRecord {
    agent: String,
    roots: Vec<PathBuf>,
}

/// The folder of an agent session: the agent's name and its id, every byte other than
/// ASCII letters, digits and `-` written `_xx`, so two ids never share a folder.
pub fn folder(agent: Agent, session_id: &str) -> String {
    let mut out = format!("{}-", agent.name());
    for b in session_id.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("_{b:02x}"));
        }
    }
    out
}

/// Answers one hook call: `stdin` is the agent's JSON, `config` the guard's configuration
/// as loaded, `program` the `gatehouse` the rewritten command calls. Never fails: every
/// error is the agent's block answer (GUARD-FAIL-1).
pub fn answer(
    agent: Agent,
    stdin: &[u8],
    config: Result<GuardConfig, ConfigError>,
    program: &Path,
) -> Reply {
    let dialect = agent.dialect();
    match decide(agent, stdin, config, program) {
        Ok(a) => {
            if matches!(a, Answer::Ask { .. }) && !dialect.can_ask() {
                // Never reached: the library was told nobody can be asked. Kept so that
                // no path ever hands an ask to an agent that would run the call.
                return dialect.block("the call needs approval and this agent cannot ask");
            }
            dialect.render(&a)
        }
        Err(e) => dialect.block(&e.to_string()),
    }
}

fn decide(
    agent: Agent,
    stdin: &[u8],
    config: Result<GuardConfig, ConfigError>,
    program: &Path,
) -> Result<Answer, GuardError> {
    let text =
        std::str::from_utf8(stdin).map_err(|e| ShapeError::NotJson(format!("not UTF-8 ({e})")))?;
    let value: Value =
        serde_json::from_str(text).map_err(|e| ShapeError::NotJson(e.to_string()))?;
    let event = agent.dialect().parse(&value)?;
    let config = config?;
    match event {
        HookEvent::PreTool(pre) => {
            if pre.guarded == Guarded::Unguarded {
                return Ok(Answer::Pass);
            }
            let mut o = open(agent, &config, program, &pre.session_id, &pre.cwd, pre.asks)?;
            pre_tool(agent, &config, program, &mut o.session, &o.roots, &pre)
        }
        HookEvent::PostTool(post) => {
            let asks = agent.dialect().can_ask();
            let mut o = open(agent, &config, program, &post.session_id, &post.cwd, asks)?;
            if let Some(id) = &post.tool_use_id {
                o.session.note_ran(id)?;
            }
            Ok(Answer::Pass)
        }
    }
}

/// Opens (or resumes) the library session of one agent session.
fn open(
    agent: Agent,
    config: &GuardConfig,
    program: &Path,
    session_id: &str,
    cwd: &str,
    asks: bool,
) -> Result<Opened, GuardError> {
    let cwd = Path::new(cwd);
    if !cwd.is_absolute() {
        return Err(GuardError::Workspace(format!(
            "the agent's working directory {cwd:?} is not absolute"
        )));
    }
    let state_dir = config.state_dir().ok_or(GuardError::NoStateDir)?;
    let state = StateDir::open(&state_dir, &[])?;
    let id = folder(agent, session_id);
    let dir = state.session(&id)?;
    // One hook process at a time per session (GUARD-STATE-1): an agent runs tool calls in
    // parallel, and a journal opened while another process appends would read that
    // record half written. The lock is released when the process exits.
    let lock_file = dir.join("guard.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_file)
        .map_err(|e| RecordError::io(&lock_file, e))?;
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|e| RecordError::io(&lock_file, e.into()))?;
    let record_file = dir.join("guard.json");
    let roots = match read_json::<GuardRecord>(&record_file)? {
        Some(r) => r.roots,
        None => {
            let roots = if config.workspaces.is_empty() {
                vec![std::fs::canonicalize(cwd).map_err(|e| {
                    GuardError::Workspace(format!(
                        "the agent's working directory {} cannot be opened: {e}",
                        cwd.display()
                    ))
                })?]
            } else {
                config.workspaces.clone()
            };
            write_json(
                &record_file,
                &GuardRecord {
                    agent: agent.name().into(),
                    roots: roots.clone(),
                },
            )?;
            roots
        }
    };
    // The gate's working directory is the agent's, when it lies inside a root: relative
    // paths of the line are read from there (GUARD-DECIDE-3).
    let real_cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    if !roots.iter().any(|r| crate::paths::is_within(&real_cwd, r)) {
        return Err(GuardError::Workspace(format!(
            "the agent works in {}, outside the session's workspace roots ({}); start the agent inside the workspace",
            cwd.display(),
            roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    out_of_reach(config, program, state.path(), &roots)?;
    let first = roots
        .first()
        .ok_or_else(|| GuardError::Workspace("the session has no workspace root".into()))?;
    let mut opened = Roots::open(first).map_err(|e| {
        GuardError::Workspace(format!(
            "cannot open the workspace {}: {e}",
            first.display()
        ))
    })?;
    for r in &roots[1..] {
        opened.add_dir(r).map_err(|e| {
            GuardError::Workspace(format!("cannot open the workspace {}: {e}", r.display()))
        })?;
    }
    let mut gate = GateConfig::new(real_cwd);
    gate.asker = if asks { Asker::Terminal } else { Asker::None };
    gate.allow_list = config.allow.clone();
    let agent_file = config
        .agent_file
        .as_deref()
        .map(AgentFile::load)
        .transpose()?;
    let settings = config
        .settings_file
        .as_deref()
        .map(SettingsFile::load)
        .transpose()?;
    let resume = dir.join("session.json").exists();
    let session = GuardedSession::open_recent(
        SessionConfig {
            id,
            gate,
            agent: agent_file,
            settings,
            flag: config.mode(),
            state_dir,
            roots: roots.clone(),
            grants: Vec::new(),
            trust: Some((TrustMap::new(first), opened)),
            resume,
        },
        JOURNAL_WINDOW,
    )?;
    Ok(Opened {
        session,
        roots,
        _lock: lock,
    })
}

/// What decides the next call stays out of the jail's reach and out of the agent's file
/// tools (ORDER-REC-1, ORDER-REC-6): the guard's configuration lies inside no workspace
/// root, and no `[exec]` path the jail sees (`ro`, `rw`) holds or lies within the state
/// directory (grants, journal, trust map) or holds the configuration. Compared as the
/// kernel would resolve them (symlinks followed, a missing tail appended).
fn out_of_reach(
    config: &GuardConfig,
    program: &Path,
    state: &Path,
    roots: &[PathBuf],
) -> Result<(), GuardError> {
    use crate::fence::guarded::real_path;
    use crate::paths::{is_within, overlaps};
    let file = config.file.as_deref().map(real_path);
    if let Some(f) = &file {
        if let Some(r) = roots.iter().find(|r| is_within(f, &real_path(r))) {
            return Err(GuardError::Workspace(format!(
                "the guard's configuration {} lies inside the workspace root {}, where jailed code and the agent's file tools could rewrite it; keep it outside every root",
                f.display(),
                r.display()
            )));
        }
    }
    // Every other file the guard reads (the agent file, whose hooks it runs on the host,
    // and the settings file) or runs (the `gatehouse` the rewritten line starts on the
    // host, this program, the shell): outside every root, resolved, existing or not
    // (GUARD-STATE-4).
    let program_default = program.to_path_buf();
    let named = [
        ("agent-file", config.agent_file.as_ref()),
        ("settings-file", config.settings_file.as_ref()),
        (
            "gatehouse",
            config.gatehouse.as_ref().or(Some(&program_default)),
        ),
        ("shell", config.shell.as_ref()),
    ];
    for (key, path) in named {
        let Some(path) = path else { continue };
        let real = reach::real_path(path);
        if let Some(r) = roots.iter().find(|r| is_within(&real, &real_path(r))) {
            return Err(GuardError::Workspace(format!(
                "the guard's {key} {} lies inside the workspace root {} (as {}), where jailed code and the agent's file tools could rewrite what the guard reads or runs on the host; keep it outside every root",
                path.display(),
                r.display(),
                real.display()
            )));
        }
    }
    let state = real_path(state);
    for flag in ["ro", "rw"] {
        let paths = config.exec.flags().paths(flag);
        for p in paths {
            let real = real_path(p);
            if overlaps(&real, &state) {
                return Err(GuardError::Workspace(format!(
                    "[exec] {flag} {}: holds or lies within the guard's state directory {} (its grants, journal and trust map), which jailed code must never reach",
                    p.display(),
                    state.display()
                )));
            }
            if let Some(f) = file.as_ref().filter(|f| is_within(f, &real)) {
                return Err(GuardError::Workspace(format!(
                    "[exec] {flag} {}: holds the guard's configuration {}, which jailed code must never reach",
                    p.display(),
                    f.display()
                )));
            }
            // A writable path over a file the guard reads or runs on the host would let
            // a call it lets run rewrite the next decision's policy (GUARD-STATE-4).
            if flag != "rw" {
                continue;
            }
            for (key, named) in named {
                let Some(named) = named else { continue };
                if is_within(&reach::real_path(named), &real) {
                    return Err(GuardError::Workspace(format!(
                        "[exec] rw {}: holds the guard's {key} {}, which it reads or runs on the host: a call it lets run could rewrite it; make the path read-only or move the file",
                        p.display(),
                        named.display()
                    )));
                }
            }
        }
    }
    Ok(())
}

/// A session opened for one hook call, with its roots and the lock held while the call
/// is decided and recorded.
struct Opened {
    session: GuardedSession,
    roots: Vec<PathBuf>,
    _lock: std::fs::File,
}

fn pre_tool(
    agent: Agent,
    config: &GuardConfig,
    program: &Path,
    session: &mut GuardedSession,
    roots: &[PathBuf],
    pre: &PreTool,
) -> Result<Answer, GuardError> {
    let mut reach = reach::Reach::new(roots, config.exec.flags().paths("hide"), home().as_deref());
    let cwd = Path::new(&pre.cwd);
    let (tool, input, shell) = match &pre.guarded {
        Guarded::Shell { command, field } => {
            // Codex applies a patch a shell line carries itself, outside every fence:
            // its files are decided as the apply_patch tool's are.
            if agent.dialect().applies_patches_from_shell() && command.contains("*** Begin Patch") {
                for p in dialect::patch_paths(command)? {
                    if let Some(refusal) = reach.refuse(cwd, reach::Access::Write, &p) {
                        return Ok(Answer::Deny { reason: refusal });
                    }
                }
            }
            ("shell", json!({ "cmd": command }), Some((command, *field)))
        }
        Guarded::File { tool, paths } => {
            // A leading `~` is the person's home, as the agents' file tools expand it.
            let paths = paths
                .iter()
                .map(|p| expand_home(p))
                .collect::<Result<Vec<String>, GuardError>>()?;
            let paths = &paths;
            // Every path first through the roots and the fence's reach (a deny in every
            // mode: GUARD-FILE-1 to -3), then each decided by the order; the strictest
            // ruling answers.
            for path in paths {
                if let Some(refusal) = confine(session, &pre.cwd, path) {
                    return Ok(Answer::Deny { reason: refusal });
                }
                if let Some(refusal) = reach.refuse(cwd, reach::Access::of(tool), path) {
                    return Ok(Answer::Deny { reason: refusal });
                }
            }
            let mut answer = None;
            for path in paths {
                // The agent's own input goes with the path, so that the person's hooks see
                // what the tool will write (an edit's new text, a write's content), not
                // only where (HOOK-DECL-4: hooks/every-mutating-tool's edit ran unseen).
                let input = json!({ "path": path, "tool_input": pre.tool_input });
                let call = session.call(tool, input, pre.tool_use_id.clone());
                let ruling = session.decide(&call)?;
                let a = answer_of(ruling.decision, None, explain(agent, &ruling, false));
                if matches!(a, Answer::Deny { .. }) {
                    return Ok(a);
                }
                if answer.is_none() || matches!(a, Answer::Ask { .. }) {
                    answer = Some(a);
                }
            }
            return Ok(answer.unwrap_or(Answer::Pass));
        }
        Guarded::Unguarded => return Ok(Answer::Pass),
    };
    let call = session.call(tool, input, pre.tool_use_id.clone());
    let ruling = session.decide(&call)?;
    let sentence = explain(agent, &ruling, true);
    let fenced = match shell {
        Some((command, field)) => {
            let program = config
                .gatehouse
                .clone()
                .unwrap_or_else(|| program.to_path_buf());
            let shell = config.shell.clone().unwrap_or_else(default_shell);
            let line = rewrite::fenced_line(&program, roots, &config.exec, &shell, command)?;
            Some(dialect::with_field(&pre.tool_input, field, line))
        }
        None => None,
    };
    Ok(answer_of(ruling.decision, fenced, sentence))
}

/// The order's decision as the library's neutral answer: `input` is what runs if it is
/// allowed (or approved), `reason` the one line the agent shows.
fn answer_of(
    decision: Verdict,
    input: Option<serde_json::Map<String, Value>>,
    reason: String,
) -> Answer {
    match decision {
        Verdict::Allow => Answer::Allow { input, reason },
        Verdict::Ask => Answer::Ask { input, reason },
        Verdict::Deny => Answer::Deny { reason },
    }
}

/// `/bin/bash` where it exists (the agents' shell tools are bash), else `/bin/sh`.
fn default_shell() -> PathBuf {
    let bash = PathBuf::from("/bin/bash");
    if bash.exists() {
        bash
    } else {
        PathBuf::from("/bin/sh")
    }
}

/// A file tool's path through the session's roots (GUARD-DECIDE-4): the refusal, when
/// the path (or, for a file not yet there, its directory) leads outside every root.
fn confine(session: &mut GuardedSession, cwd: &str, path: &str) -> Option<String> {
    let full = Path::new(cwd).join(path);
    let (_, roots) = session.trust_mut()?;
    let refused = |e: crate::paths::PathError| {
        Some(format!(
            "denied ({}): {} lies outside the workspace roots, or cannot be reached safely: {e}",
            e.code(),
            full.display()
        ))
    };
    match roots.resolve(&full, true) {
        Ok(_) => None,
        Err(e) if e.code() == "not_found" => match full.parent() {
            Some(parent) => match roots.resolve(parent, true) {
                Ok(_) => None,
                Err(e) if e.code() == "not_found" => None,
                Err(e) => refused(e),
            },
            None => None,
        },
        Err(e) => refused(e),
    }
}

/// `path` with a leading `~` or `~/` read as the person's home, as the agents' file tools
/// read it; `~name` (another person's home) cannot be decided here and is refused.
fn expand_home(path: &str) -> Result<String, GuardError> {
    let Some(rest) = path.strip_prefix('~') else {
        return Ok(path.to_string());
    };
    if !rest.is_empty() && !rest.starts_with('/') {
        return Err(ShapeError::Undecidable(format!("path {path:?} names another home")).into());
    }
    let home = home().ok_or(GuardError::Workspace(format!(
        "the path {path:?} starts at the home directory, and HOME is not set"
    )))?;
    Ok(format!("{}{rest}", home.display()))
}

/// The person's home, where git's global configuration is read from.
fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// The ruling in one line a person understands: the decision, the reason code, the stage
/// and a sentence. `fenced` says whether what is allowed runs in the fence (a shell line
/// rewritten into `gatehouse exec`); a file tool runs in the agent, outside every fence.
pub fn explain(agent: Agent, r: &Ruling, fenced: bool) -> String {
    let decision = match r.decision {
        Verdict::Allow => "allowed",
        Verdict::Ask => "asks",
        Verdict::Deny => "denied",
    };
    let what = match (&r.route, &r.source) {
        (Route::DenyPattern, Some(SourceRef::Pattern { pattern, .. })) => {
            format!("a deny pattern matches: {pattern}")
        }
        // A pattern or the allow-list approves neither of the next two: the dangerous list
        // outranks both (ORDER-STAGE-4), and a redirection's plan asks whatever allowed
        // the line (ORDER-REDIR-1). Saying otherwise sends the person to a fix that fails.
        (Route::NoAsker, _) if r.stage == Stage::AlwaysAsk => format!(
            "it always needs a person's approval, and {} cannot ask one from a hook; no pattern or allow-list entry outranks that, so run it yourself outside the agent",
            agent.title()
        ),
        (Route::NoAsker, _) if r.stage == Stage::Redirect => format!(
            "its redirection writes a file this session's trust map has not seen, which needs a person's approval, and {} cannot ask one from a hook; no pattern or allow-list entry approves that, so write the file another way or run the line yourself",
            agent.title()
        ),
        (Route::NoAsker, _) => format!(
            "it needs a person's approval, and {} cannot ask one from a hook; allow it with a pattern or the allow-list in the guard's configuration",
            agent.title()
        ),
        (Route::Restricted, _) => {
            "it needs approval, and the safety mode forbids every prompt".into()
        }
        (Route::Mode, _) if r.decision == Verdict::Deny => format!(
            "the safety mode {} refuses calls labelled {}",
            r.mode.mode.name(),
            r.label.name()
        ),
        (Route::PreemptHook | Route::DefaultHook, _) => "a hook decided it".into(),
        (Route::Transform, _) => "an input transform failed or the input is unreadable".into(),
        (Route::Card, _) => "it needs your approval".into(),
        _ if r.decision == Verdict::Allow && fenced => {
            "it runs inside the fence (gatehouse exec)".into()
        }
        _ if r.decision == Verdict::Allow => format!(
            "{} runs this file tool itself, outside the fence, on a path inside the workspace that nothing protected or hidden stands in the way of",
            agent.title()
        ),
        _ => "refused by the decision order".into(),
    };
    format!(
        "{decision} ({}, stage {}): {what}",
        r.reason,
        r.stage.name()
    )
}
