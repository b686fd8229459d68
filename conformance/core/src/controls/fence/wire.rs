//! The fence's messages of the adapter protocol: the `open` setup fields of `fence` and
//! the requests of the fence steps.

use serde::Serialize;
use serde_json::{Map, Value};

use super::model::{Action, FencePolicy, Limits, OnOff, Setup};
use crate::protocol::SessionDirs;
use crate::vocab::GrantTool;

crate::wire_as_is!(FencePolicy, Limits);

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

/// The setup fields the fence sends itself: every workspace root, the first the
/// session's workspace (the sibling session gets its own workspace only), the log
/// directory, and the person's choices only when the scenario writes them.
impl crate::controls::setup::CustomWire for Setup {
    fn custom_wire(
        &self,
        dirs: &crate::protocol::SessionDirs,
        sub: &dyn Fn(&str) -> String,
        out: &mut Map<String, Value>,
    ) {
        setup(self, dirs, sub, out);
    }
}

pub fn setup(
    s: &Setup,
    dirs: &SessionDirs,
    sub: &dyn Fn(&str) -> String,
    out: &mut Map<String, Value>,
) {
    let extra: Vec<String> = if dirs.sibling {
        Vec::new()
    } else {
        s.workspaces.iter().map(|w| sub(w)).collect()
    };
    let workspaces: Vec<String> = std::iter::once(dirs.workspace.clone())
        .chain(extra)
        .collect();
    out.insert("workspaces".into(), Value::from(workspaces));
    out.insert("log_dir".into(), Value::String(dirs.log_dir.clone()));
    if let Some(c) = &s.choices {
        out.insert("choices".into(), c.wire(sub));
    }
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

impl crate::controls::ToRequest for Action {
    fn request(
        &self,
        session: &str,
        _: &crate::controls::Setup,
        sub: &dyn Fn(&str) -> String,
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        Some(crate::protocol::to_object(&request(
            self,
            session.to_string(),
            sub,
        )))
    }
}
