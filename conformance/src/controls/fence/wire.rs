//! The fence's messages of the adapter protocol: the `open` setup fields of `fence` and
//! the requests of the fence steps.

use serde::Serialize;
use serde_json::{Map, Value};

use super::model::{Action, Choices, FencePolicy, Limits, OnOff, Setup};
use crate::protocol::{to_object, SessionDirs};
use crate::vocab::GrantTool;

/// The `fence` fields of the `open` setup (sent when the scenario needs `fence`).
#[derive(Debug, Clone, Serialize)]
pub struct WireSetup {
    /// `required`, `degraded` or `off`.
    pub fence_policy: FencePolicy,
    /// Every workspace root; the first is `workspace`.
    pub workspaces: Vec<String>,
    /// The directory for the session's log, outside the workspace.
    pub log_dir: String,
    /// Run as if the kernel offered less, or `null`.
    pub limits: Option<Limits>,
    /// The person's choices (protocol 1.4), sent only when the scenario writes them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub choices: Option<Choices>,
}

/// The fence requests.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Run one command in the plane as an approved call.
    Run {
        /// Session.
        session: String,
        /// `shell` or `execute_code`.
        tool: GrantTool,
        /// The command line or code.
        input: String,
        /// The working directory, or `null` for the workspace.
        cwd: Option<String>,
        /// On a terminal of the jail's own (protocol 1.5); sent only when asked.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        tty: bool,
    },
    /// The session's posture.
    Posture {
        /// Session.
        session: String,
    },
    /// The session's runtime toggle.
    Toggle {
        /// Session.
        session: String,
        /// `on` or `off`.
        to: OnOff,
        /// Whether the person confirmed.
        confirmed: bool,
    },
}

/// The setup fields; the sibling session gets its own workspace only.
pub fn setup(s: &Setup, dirs: &SessionDirs, sub: &dyn Fn(&str) -> String) -> Map<String, Value> {
    let extra: Vec<String> = if dirs.sibling {
        Vec::new()
    } else {
        s.workspaces.iter().map(|w| sub(w)).collect()
    };
    to_object(&WireSetup {
        fence_policy: s.fence_policy,
        workspaces: std::iter::once(dirs.workspace.clone())
            .chain(extra)
            .collect(),
        log_dir: dirs.log_dir.clone(),
        limits: s.limits.clone(),
        choices: s.choices.as_ref().map(|c| {
            let all = |v: &[String]| v.iter().map(|x| sub(x)).collect::<Vec<_>>();
            Choices {
                ro: all(&c.ro),
                rw: all(&c.rw),
                hide: all(&c.hide),
                set_env: c.set_env.iter().map(|(k, v)| (k.clone(), sub(v))).collect(),
                ..c.clone()
            }
        }),
    })
}

/// The request of one step.
pub fn request(action: &Action, session: String, sub: &dyn Fn(&str) -> String) -> Request {
    match action {
        Action::Run {
            tool,
            input,
            cwd,
            tty,
        } => Request::Run {
            session,
            tool: *tool,
            input: sub(input),
            cwd: cwd.as_deref().map(sub),
            tty: *tty,
        },
        Action::Posture => Request::Posture { session },
        Action::Toggle { to, confirmed } => Request::Toggle {
            session,
            to: *to,
            confirmed: *confirmed,
        },
    }
}
