//! From a scenario to the wire: the `open` setup of a session (the 1.1 fields of a
//! capability sent only when the scenario needs that capability) and the request for each
//! action, every string passed through the session's placeholder substitution.

use crate::fixture::Placeholders;
use crate::protocol::{FenceSetup, FileSetup, RequestBody, TrustSetup, WireSetup};
use crate::scenario::{Action, Grant, Setup};

/// The setup sent in `open`. `workspace` overrides the fixture's (the sibling session).
pub fn setup(s: &Setup, caps: &[String], p: &Placeholders, sibling: bool) -> WireSetup {
    let has = |c: &str| caps.iter().any(|x| x == c);
    let s_ = |x: &std::path::Path| x.to_string_lossy().into_owned();
    let workspace = if sibling { &p.sibling } else { &p.workspace };
    let log = if sibling {
        p.log.join("sibling")
    } else {
        p.log.clone()
    };
    WireSetup {
        workspace: s_(workspace),
        home: s_(&p.home),
        host: s.host,
        asker: s.asker,
        allow_list: s.allow_list.iter().map(|a| p.apply(a)).collect(),
        grants: s
            .grants
            .iter()
            .map(|g| Grant {
                key: p.apply(&g.key),
                ..g.clone()
            })
            .collect(),
        card_window_ms: s.card_window_ms,
        files: has("paths").then(|| FileSetup {
            roots: s.roots.iter().map(|r| p.apply(r)).collect(),
            resolver: s.resolver,
        }),
        trust: has("trust").then(|| TrustSetup {
            startup: s.startup,
            skip_permissions: s.skip_permissions,
            settings_dirs: s
                .settings_dirs
                .iter()
                .map(|d| crate::scenario::SettingsDir {
                    name: p.apply(&d.name),
                    ..d.clone()
                })
                .collect(),
        }),
        fence: has("fence").then(|| FenceSetup {
            fence_policy: s.fence_policy,
            workspaces: std::iter::once(s_(workspace))
                .chain(if sibling {
                    Vec::new()
                } else {
                    s.workspaces.iter().map(|w| p.apply(w)).collect()
                })
                .collect(),
            log_dir: s_(&log),
            limits: s.limits.clone(),
        }),
    }
}

/// The request for one action (`None` for `opened`, which sends nothing).
pub fn request(
    action: &Action,
    session: &str,
    setup: &Setup,
    p: &Placeholders,
) -> Option<RequestBody> {
    let session = session.to_string();
    let sub = |x: &str| p.apply(x);
    Some(match action {
        Action::Call { tool, input, .. } => RequestBody::Decide {
            session,
            tool: sub(tool),
            input: sub(input),
        },
        Action::Answer(c) => RequestBody::Answer {
            session,
            choice: c.as_str().to_string(),
        },
        Action::Grants => RequestBody::Grants { session },
        Action::Revoke(t) => RequestBody::Revoke {
            session,
            target: sub(t),
        },
        Action::Audit => RequestBody::Audit { session },
        Action::Read { path, if_asked } => RequestBody::Read {
            session,
            path: sub(path),
            if_asked: *if_asked,
        },
        Action::Write {
            path,
            content,
            old: None,
            data,
            if_asked,
        } => RequestBody::Write {
            session,
            path: sub(path),
            content: content.clone(),
            data: data.unwrap_or(setup.data_trust),
            if_asked: *if_asked,
        },
        Action::Write {
            path,
            content,
            old: Some(old),
            data,
            if_asked,
        } => RequestBody::Edit {
            session,
            path: sub(path),
            old: old.clone(),
            new: content.clone(),
            data: data.unwrap_or(setup.data_trust),
            if_asked: *if_asked,
        },
        Action::List(path) => RequestBody::List {
            session,
            path: sub(path),
        },
        Action::Search { path, pattern } => RequestBody::Search {
            session,
            path: sub(path),
            pattern: pattern.clone(),
        },
        Action::Query(path) => RequestBody::Query {
            session,
            path: sub(path),
        },
        Action::Gesture { name, path, answer } => RequestBody::Gesture {
            session,
            name: name.clone(),
            path: sub(path),
            answer: *answer,
        },
        Action::Status => RequestBody::Status { session },
        Action::Resume => RequestBody::Resume { session },
        Action::Clear(r) => RequestBody::Clear {
            session,
            startup: *r,
        },
        Action::Turn => RequestBody::Turn { session },
        Action::Opened => return None,
        Action::Run { tool, input, cwd } => RequestBody::Run {
            session,
            tool: *tool,
            input: sub(input),
            cwd: cwd.as_deref().map(sub),
        },
        Action::Posture => RequestBody::Posture { session },
        Action::Toggle { to, confirmed } => RequestBody::Toggle {
            session,
            to: *to,
            confirmed: *confirmed,
        },
    })
}
