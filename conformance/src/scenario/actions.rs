//! Turning the action keys of one `[[case]]` or `[[step]]` into [`Action`]s, and the
//! table of which `expect` keys fit which action.

use super::model::*;
use super::{GrantTool, ReadSpec, RunSpec, YesNo, STEP_GESTURES};

/// Every action the entry writes, or the messages for `true`-only keys written `false`
/// and for unknown gesture names.
pub fn actions_of(e: &mut Entry) -> (Vec<Action>, Vec<String>) {
    let mut out = Vec::new();
    let mut errs = Vec::new();
    let mut flag = |v: Option<bool>, key: &str, action: Action, out: &mut Vec<Action>| {
        if let Some(b) = v {
            if !b {
                errs.push(format!("`{key}` must be `true`"));
            }
            out.push(action);
        }
    };
    if let Some(line) = e.decide.take() {
        out.push(Action::Call {
            key: "decide",
            tool: "shell".into(),
            input: line,
        });
    }
    if let Some(code) = e.code.take() {
        out.push(Action::Call {
            key: "code",
            tool: "execute_code".into(),
            input: code,
        });
    }
    if let Some(t) = e.tool.take() {
        out.push(Action::Call {
            key: "tool",
            tool: t.name,
            input: t.input,
        });
    }
    if let Some(c) = e.answer {
        out.push(Action::Answer(c));
    }
    flag(e.grants, "grants", Action::Grants, &mut out);
    if let Some(t) = e.revoke.take() {
        out.push(Action::Revoke(t));
    }
    flag(e.audit, "audit", Action::Audit, &mut out);
    if let Some(r) = e.read.take() {
        let (path, if_asked) = match r {
            ReadSpec::Path(p) => (p, None),
            ReadSpec::Full(f) => (f.path, f.if_asked),
        };
        out.push(Action::Read {
            path,
            if_asked: if_asked.unwrap_or(YesNo::No),
        });
    }
    if let Some(w) = e.write.take() {
        out.push(Action::Write {
            path: w.path,
            content: w.content,
            old: None,
            data: w.data,
            if_asked: w.if_asked.unwrap_or(YesNo::Yes),
        });
    }
    if let Some(w) = e.edit.take() {
        out.push(Action::Write {
            path: w.path,
            content: w.new,
            old: Some(w.old),
            data: w.data,
            if_asked: w.if_asked.unwrap_or(YesNo::Yes),
        });
    }
    if let Some(p) = e.list.take() {
        out.push(Action::List(p));
    }
    if let Some(s) = e.search.take() {
        out.push(Action::Search {
            path: s.path,
            pattern: s.pattern,
        });
    }
    if let Some(p) = e.query.take() {
        out.push(Action::Query(p));
    }
    if let Some(g) = e.gesture.take() {
        if !STEP_GESTURES.contains(&g.name.as_str()) {
            errs.push(format!(
                "unknown gesture `{}`, expected one of {STEP_GESTURES:?} (startup, skip_permissions and settings_dir are setup fields; read_prompt is `read.if_asked`)",
                g.name
            ));
        }
        out.push(Action::Gesture {
            name: g.name,
            path: g.path,
            answer: g.answer.unwrap_or(YesNo::Yes),
        });
    }
    let mut flag2 = |v: Option<bool>, key: &str, action: Action, out: &mut Vec<Action>| {
        if let Some(b) = v {
            if !b {
                errs.push(format!("`{key}` must be `true`"));
            }
            out.push(action);
        }
    };
    flag2(e.status, "status", Action::Status, &mut out);
    flag2(e.resume, "resume", Action::Resume, &mut out);
    if let Some(r) = e.clear {
        out.push(Action::Clear(r));
    }
    flag2(e.turn, "turn", Action::Turn, &mut out);
    flag2(e.opened, "opened", Action::Opened, &mut out);
    if let Some(r) = e.run.take() {
        let (tool, input, cwd) = match r {
            RunSpec::Line(l) => (GrantTool::Shell, l, None),
            RunSpec::Full(f) => (f.tool.unwrap_or(GrantTool::Shell), f.input, f.cwd),
        };
        out.push(Action::Run { tool, input, cwd });
    }
    flag2(e.posture, "posture", Action::Posture, &mut out);
    if let Some(t) = e.toggle.take() {
        out.push(Action::Toggle {
            to: t.to,
            confirmed: t.confirmed,
        });
    }
    (out, errs)
}

/// The action keys, for the "exactly one of" message.
pub const ACTION_KEYS: &str = "decide, code, tool, answer, grants, revoke, audit, read, write, edit, list, search, query, gesture, status, resume, clear, turn, opened, run, posture, toggle";

/// The `expect` keys written that do not apply to `action`.
pub fn misplaced_expect_keys(action: &Action, x: &Expect) -> Vec<&'static str> {
    let present = [
        ("decision", x.decision.is_some()),
        ("route", x.route.is_some()),
        ("reason", x.reason.is_some()),
        ("offers", x.offers.is_some()),
        ("card", x.card.is_some()),
        ("outcome", x.outcome.is_some()),
        ("saved", x.saved.is_some()),
        ("grants", x.grants.is_some()),
        ("revoked", x.revoked.is_some()),
        ("outcomes", x.outcomes.is_some()),
        ("result", x.result.is_some()),
        ("content", x.content.is_some()),
        ("prompted", x.prompted.is_some()),
        ("preview", x.preview.is_some()),
        ("effect", x.effect.is_some()),
        ("entries", x.entries.is_some()),
        ("matched", x.matched.is_some()),
        ("withheld", x.withheld.is_some()),
        ("trust", x.trust.is_some()),
        ("namespace", x.namespace.is_some()),
        ("key", x.key.is_some()),
        ("rule", x.rule.is_some()),
        ("refused", x.refused.is_some()),
        ("rules", x.rules.is_some()),
        ("roots", x.roots.is_some()),
        ("unreopened", x.unreopened.is_some()),
        ("started", x.started.is_some()),
        ("settings", x.settings.is_some()),
        ("exit", x.exit.is_some()),
        ("signal", x.signal.is_some()),
        ("held_by", x.held_by.is_some()),
        ("posture", x.posture.is_some()),
    ];
    let allowed: &[&str] = match action {
        Action::Call { .. } => &["decision", "route", "reason", "offers", "card"],
        Action::Answer(_) => &["outcome", "saved"],
        Action::Grants => &["grants"],
        Action::Revoke(_) => &["revoked"],
        Action::Audit => &["outcomes"],
        Action::Read { .. } => &["result", "content", "prompted", "preview"],
        Action::Write { .. } => &["result", "prompted", "effect"],
        Action::List(_) => &["result", "entries"],
        Action::Search { .. } => &["result", "matched", "withheld"],
        Action::Query(_) => &["trust", "namespace", "key", "rule", "refused"],
        Action::Gesture { .. } => &["result"],
        Action::Status => &["rules", "roots"],
        Action::Resume => &["roots", "unreopened"],
        Action::Clear(_) => &["started"],
        Action::Turn => &[],
        Action::Opened => &["started", "settings", "posture"],
        Action::Run { .. } => &["exit", "signal", "held_by", "refused", "posture"],
        Action::Posture => &["posture"],
        Action::Toggle { .. } => &["refused", "posture"],
    };
    present
        .into_iter()
        .filter(|(k, p)| *p && !allowed.contains(k))
        .map(|(k, _)| k)
        .collect()
}
