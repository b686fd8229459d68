//! What every agent's pre-tool hook has in common, behind one trait: an event read from
//! the agent's JSON ([`HookEvent`]), the library's answer in neutral form ([`Answer`]),
//! and the bytes and exit status the agent reads back ([`Reply`]). Each agent's module
//! ([`super::claude`], [`super::codex`], [`super::gemini`], [`super::copilot`]) implements [`Dialect`] and
//! decides nothing: it only translates.
//!
//! The same trait carries each agent's installation facts (its settings file, the events
//! and matchers, the timeout and its unit, the fail-closed setting, what else makes it
//! run hooks), so that one agent is one file.
//!
//! Pure data and JSON; touches nothing (an implementation's `enable_hooks` and
//! `runs_hooks` read or write the agent's own configuration).

use super::install::{Change, InstallError, Scope};
use serde_json::{Map, Value};
use std::path::PathBuf;

/// The exit status every agent reads as "blocked" (Claude Code, Codex CLI, Gemini CLI and
/// GitHub Copilot CLI alike), with the reason on standard error.
pub const EXIT_BLOCK: u8 = 2;

/// A tool call the guard puts through the library, in the library's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guarded {
    /// A shell command line (`shell` with `{"cmd": LINE}`); `field` is the key of the
    /// agent's input that holds it.
    Shell {
        /// The command line as the agent would run it.
        command: String,
        /// The key of `tool_input` holding it (`command`).
        field: &'static str,
    },
    /// A file tool naming paths: the library's `read`, `write` or `edit` of each, or
    /// its `list` or `search` of the tree beneath each (a glob pattern's literal
    /// directory).
    File {
        /// `read`, `write`, `edit`, `list` or `search`.
        tool: &'static str,
        /// The paths as the agent wrote them (relative ones read from its `cwd`).
        paths: Vec<String>,
    },
    /// A tool the guard does not guard: it passes unchanged.
    Unguarded,
}

/// The agent's pre-tool event.
#[derive(Debug, Clone, PartialEq)]
pub struct PreTool {
    /// The agent's session id.
    pub session_id: String,
    /// The agent's working directory for the call.
    pub cwd: String,
    /// The agent's tool name.
    pub tool_name: String,
    /// The agent's input object, kept whole so that a rewrite changes one field only.
    pub tool_input: Map<String, Value>,
    /// The call's id, when the agent gives one.
    pub tool_use_id: Option<String>,
    /// What the library is asked.
    pub guarded: Guarded,
    /// Whether the agent really puts this call's ask to the person (its dialect's
    /// [`Dialect::can_ask`], unless its mode ignores a hook's ask for this tool).
    pub asks: bool,
}

/// The agent's post-tool event: the call ran.
#[derive(Debug, Clone, PartialEq)]
pub struct PostTool {
    /// The agent's session id.
    pub session_id: String,
    /// The agent's working directory.
    pub cwd: String,
    /// The agent's tool name.
    pub tool_name: String,
    /// The call's id, when the agent gives one.
    pub tool_use_id: Option<String>,
}

/// One hook event.
#[derive(Debug, Clone, PartialEq)]
pub enum HookEvent {
    /// Before a tool runs.
    PreTool(PreTool),
    /// After it ran.
    PostTool(PostTool),
}

/// The library's answer, in neutral form.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Run it, with this input (the command rewritten to run in the fence).
    Allow {
        /// The input to run with; `None` keeps the agent's own.
        input: Option<Map<String, Value>>,
        /// Why, in one line.
        reason: String,
    },
    /// Ask the person (only where the dialect can ask), showing this input.
    Ask {
        /// The input to run with if the person approves.
        input: Option<Map<String, Value>>,
        /// Why, in one line.
        reason: String,
    },
    /// Refuse the call.
    Deny {
        /// Why, in one line: the reason code and a sentence.
        reason: String,
    },
    /// Say nothing: a tool not guarded, or a post-tool event recorded.
    Pass,
}

/// What the hook process writes and how it exits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Standard output (one JSON object, or empty).
    pub stdout: String,
    /// Standard error (one line, or empty).
    pub stderr: String,
    /// The exit status.
    pub exit: u8,
}

impl Reply {
    /// The block answer every agent honours: exit 2 and one line on standard error.
    pub fn block(reason: &str) -> Reply {
        Reply {
            stdout: String::new(),
            stderr: format!("gatehouse guard: {}\n", one_line(reason)),
            exit: EXIT_BLOCK,
        }
    }

    /// Nothing to say: exit 0, no output.
    pub fn silent() -> Reply {
        Reply {
            stdout: String::new(),
            stderr: String::new(),
            exit: 0,
        }
    }

    /// One JSON object on standard output, exit 0.
    pub fn json(v: &Value) -> Reply {
        Reply {
            stdout: format!("{v}\n"),
            stderr: String::new(),
            exit: 0,
        }
    }
}

/// `s` on one line: every control character (newlines included) shown as a space.
pub fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The hook's JSON does not have the shape this agent sends.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// The input is not one JSON object.
    #[error("the hook input is not a JSON object: {0}")]
    NotJson(String),
    /// A field the dialect needs is missing or of the wrong type.
    #[error("the hook input has no {0} of the expected type")]
    Field(&'static str),
    /// The event is not one this dialect knows.
    #[error("unknown hook event {0:?}")]
    UnknownEvent(String),
    /// A file tool names a place that cannot be decided on its real path (a `..` after
    /// a wildcard of a glob pattern, a patch naming no file).
    #[error("the file tool's {0}; the guard decides file tools on their real paths only")]
    Undecidable(String),
}

/// One agent's hook dialect: how its JSON reads, and how an answer is written for it.
pub trait Dialect {
    /// The agent's name as the command line spells it (`claude-code`).
    fn name(&self) -> &'static str;
    /// Whether the agent really asks the person when told to (only Claude Code).
    fn can_ask(&self) -> bool;
    /// Reads one event.
    fn parse(&self, input: &Value) -> Result<HookEvent, ShapeError>;
    /// Writes one answer; `Ask` is never given to a dialect that cannot ask.
    fn render(&self, answer: &Answer) -> Reply;
    /// The block answer for `reason` (GUARD-DENY-1): exit 2, the line on standard
    /// error, and whatever else this agent reads a refusal's reason from.
    fn block(&self, reason: &str) -> Reply {
        Reply::block(reason)
    }

    // What installing the hook means for this agent (GUARD-INSTALL-1 to -4,
    // GUARD-FAIL-3): [`super::install`] merges, removes and checks with these alone.

    /// The agent's name for people (`Claude Code`).
    fn title(&self) -> &'static str;
    /// The settings file the hook goes into for `scope` (an error where the agent has no
    /// such file).
    fn settings_file(&self, scope: &Scope) -> Result<PathBuf, InstallError>;
    /// The events and matchers the hook is installed for: `(event, matcher)`, every tool
    /// the guard decides (GUARD-DECIDE-5).
    fn hook_events(&self) -> &'static [(&'static str, &'static str)];
    /// The setting that makes the agent block the call when its hook fails or times out,
    /// as `(key, value)` of the matcher entry, where the pinned version has one
    /// (GUARD-FAIL-3).
    fn fail_closed(&self) -> Option<(&'static str, &'static str)>;
    /// One hook entry of the agent's settings for `matcher`, running `command`: Claude
    /// Code's shape by default (`{"matcher", "hooks": [{"type", "command", "timeout"}]}`),
    /// with the fail-closed setting where there is one.
    fn hook_entry(&self, matcher: &str, command: &str) -> Value {
        let mut entry = serde_json::json!({
            "matcher": matcher,
            "hooks": [{ "type": "command", "command": command, "timeout": self.hook_timeout() }],
        });
        if let Some((key, value)) = self.fail_closed() {
            entry[key] = serde_json::json!(value);
        }
        entry
    }
    /// How long the agent waits for the hook, in the unit its settings take.
    fn hook_timeout(&self) -> u64;
    /// Milliseconds in one unit of [`Dialect::hook_timeout`].
    fn timeout_unit_ms(&self) -> u64;
    /// What else the agent needs to run hooks at all, done at install (the change made,
    /// if any).
    fn enable_hooks(&self) -> Result<Option<Change>, InstallError> {
        Ok(None)
    }
    /// Whether the agent will run the installed hook, for `gatehouse guard doctor`: the
    /// lines to show, and `false` when it will not.
    fn runs_hooks(&self) -> Result<(bool, Vec<String>), InstallError>;
    /// Whether the agent applies a patch a shell line carries itself, outside every
    /// fence, so that the line's files are decided as its patch tool's are.
    fn applies_patches_from_shell(&self) -> bool {
        false
    }
}

/// The string field `key` of `obj`.
pub fn string_field(obj: &Map<String, Value>, key: &'static str) -> Result<String, ShapeError> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(ShapeError::Field(key)),
    }
}

/// The optional string field `key` of `obj` (present and not a string is an error).
pub fn optional_string(
    obj: &Map<String, Value>,
    key: &'static str,
) -> Result<Option<String>, ShapeError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ShapeError::Field(key)),
    }
}

/// The object field `key` of `obj`.
pub fn object_field<'a>(
    obj: &'a Map<String, Value>,
    key: &'static str,
) -> Result<&'a Map<String, Value>, ShapeError> {
    match obj.get(key) {
        Some(Value::Object(m)) => Ok(m),
        _ => Err(ShapeError::Field(key)),
    }
}

/// The fields every agent's events share, and the whole object.
#[derive(Debug)]
pub struct Common<'a> {
    /// The event object.
    pub obj: &'a Map<String, Value>,
    /// `session_id` (never empty).
    pub session_id: String,
    /// `cwd`.
    pub cwd: String,
    /// `hook_event_name`.
    pub event: String,
}

/// Reads the fields every agent's events share.
pub fn common(input: &Value) -> Result<Common<'_>, ShapeError> {
    let Value::Object(obj) = input else {
        return Err(ShapeError::NotJson("not an object".into()));
    };
    let session_id = string_field(obj, "session_id")?;
    if session_id.is_empty() {
        return Err(ShapeError::Field("session_id"));
    }
    Ok(Common {
        obj,
        session_id,
        cwd: string_field(obj, "cwd")?,
        event: string_field(obj, "hook_event_name")?,
    })
}

/// Reads a pre-tool event given how this agent names its tools (`classify` maps a tool
/// name and its input to what the library is asked, or an error for a guarded tool whose
/// input has the wrong shape).
pub fn pre_tool(
    obj: &Map<String, Value>,
    session_id: String,
    cwd: String,
    classify: impl Fn(&str, &Map<String, Value>) -> Result<Guarded, ShapeError>,
) -> Result<HookEvent, ShapeError> {
    let tool_name = string_field(obj, "tool_name")?;
    let tool_input = object_field(obj, "tool_input")?.clone();
    let guarded = classify(&tool_name, &tool_input)?;
    Ok(HookEvent::PreTool(PreTool {
        asks: false,
        session_id,
        cwd,
        tool_name,
        tool_input,
        tool_use_id: optional_string(obj, "tool_use_id")?,
        guarded,
    }))
}

/// Reads a post-tool event.
pub fn post_tool(
    obj: &Map<String, Value>,
    session_id: String,
    cwd: String,
) -> Result<HookEvent, ShapeError> {
    Ok(HookEvent::PostTool(PostTool {
        session_id,
        cwd,
        tool_name: string_field(obj, "tool_name")?,
        tool_use_id: optional_string(obj, "tool_use_id")?,
    }))
}

/// A file tool's path field, the first of `keys` present (a string).
pub fn path_of(
    input: &Map<String, Value>,
    keys: &[&'static str],
    tool: &'static str,
) -> Result<Guarded, ShapeError> {
    for k in keys {
        if input.contains_key(*k) {
            return Ok(Guarded::File {
                tool,
                paths: vec![string_field(input, k)?],
            });
        }
    }
    Err(ShapeError::Field(keys.first().copied().unwrap_or("path")))
}

/// The directory a search or listing starts from: the first of `keys` present (a
/// string), else the working directory (`.`), as the agents default it.
pub fn dir_of(input: &Map<String, Value>, keys: &[&'static str]) -> Result<String, ShapeError> {
    for k in keys {
        if let Some(v) = optional_string(input, k)? {
            if !v.is_empty() {
                return Ok(v);
            }
        }
    }
    Ok(".".into())
}

/// Whether a path component is a glob pattern (`*`, `?`, `[`, `{`).
fn is_wild(c: &str) -> bool {
    c.contains(['*', '?', '[', '{'])
}

/// The directory a glob `pattern` searches, read from `dir`: `dir` joined with the
/// pattern's literal leading components (an absolute pattern starts at `/`). A `..`
/// after a wildcard climbs from wherever the wildcard matched, which no single path
/// names: undecidable.
pub fn glob_base(dir: &str, pattern: &str) -> Result<String, ShapeError> {
    let mut base = if pattern.starts_with('/') {
        String::from("/")
    } else {
        dir.to_string()
    };
    let mut wild = false;
    for c in pattern.split('/').filter(|c| !c.is_empty()) {
        if is_wild(c) && c.contains("..") {
            // `{..,src}`: a brace alternative that climbs.
            return Err(ShapeError::Undecidable(format!(
                "glob pattern {pattern:?} climbs with .. inside a wildcard"
            )));
        }
        if is_wild(c) {
            wild = true;
        } else if wild && c == ".." {
            return Err(ShapeError::Undecidable(format!(
                "glob pattern {pattern:?} climbs with .. after a wildcard"
            )));
        } else if !wild {
            if !base.ends_with('/') {
                base.push('/');
            }
            base.push_str(c);
        }
    }
    Ok(base)
}

/// The files a patch in Codex's `apply_patch` format adds, updates, deletes or moves to
/// (`*** Add File: P`, `*** Update File: P`, `*** Delete File: P`, `*** Move to: P`). A
/// `***` line of another shape (another spelling Codex might read as a file) makes the
/// whole patch undecidable.
pub fn patch_paths(patch: &str) -> Result<Vec<String>, ShapeError> {
    const HEADS: [&str; 4] = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    const MARKS: [&str; 3] = ["*** Begin Patch", "*** End Patch", "*** End of File"];
    let mut paths = Vec::new();
    for l in patch.lines() {
        let l = l.trim();
        if !l.starts_with("***") || MARKS.contains(&l) {
            continue;
        }
        match HEADS.iter().find_map(|h| l.strip_prefix(h)) {
            Some(p) => paths.push(p.trim().to_string()),
            None => {
                return Err(ShapeError::Undecidable(format!(
                    "patch line {l:?} is no header the guard reads"
                )))
            }
        }
    }
    Ok(paths)
}

/// `input` with `field` set to `value`.
pub fn with_field(input: &Map<String, Value>, field: &str, value: String) -> Map<String, Value> {
    let mut m = input.clone();
    m.insert(field.to_string(), Value::String(value));
    m
}
