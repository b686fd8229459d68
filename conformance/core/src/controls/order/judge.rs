//! Judging the order's answers (rulings, loads, session patterns, restarts) and what the
//! runner reads itself from the files a hook left (`jsonl`, `file`, `pidfile`). Tables in
//! expectations are subsets: every key written must hold, others are not looked at; the
//! string `@UUID@` stands for any UUID.

use serde_json::{json, Map, Value};
use std::path::PathBuf;

use super::model::{json as to_json, Action, Expect};
use crate::judge::{show, show_opt, Judge};
use crate::verdict::{self, Level};
use crate::vocab::Family;

crate::families! {
    super::model::Order;
    /// `load`.
    LOAD = "expectations include `loaded = false` but no `loaded = true`";
    /// `restart`, `crash`.
    RESUME = "expectations include `resumed = false` but no `resumed = true`";
    /// `rule`.
    RULE = "expectations include `added = false` but no `added = true`";
    /// `act`.
    ACT = "an `act` expects the call not to run (`ran = false`) or its response withheld (`withheld = CODE`) but none expects `ran = true` with nothing withheld";
}

/// The allowed-twin classification.
pub fn twin(a: &Action, x: &Expect) -> Option<(Family, bool)> {
    match a {
        Action::Call(_) => match x.decision.as_deref()? {
            "allow" => Some((super::super::gate::judge::DECISION, true)),
            "ask" | "deny" => Some((super::super::gate::judge::DECISION, false)),
            _ => None,
        },
        Action::Load(_) => x.loaded.map(|l| (LOAD, l)),
        Action::Restart(_) | Action::Crash(_) => x.resumed.map(|r| (RESUME, r)),
        Action::Rule(_) => x.added.map(|r| (RULE, r)),
        Action::Act(_) => {
            let withheld = matches!(&x.withheld, Some(toml::Value::String(_)));
            match x.ran {
                Some(false) => Some((ACT, false)),
                Some(true) if withheld => Some((ACT, false)),
                Some(true) => Some((ACT, true)),
                None if withheld => Some((ACT, false)),
                None => None,
            }
        }
        _ => None,
    }
}

pub use crate::judge::subset;

fn table(j: &mut Judge<'_>, key: &str, want: &Option<toml::Value>, got: Option<&Value>) {
    if let Some(w) = want {
        let w = to_json(w);
        if !subset(&w, got, j.sub) {
            j.push(key, &w.to_string(), &show_opt(got));
        }
    }
}

fn has_all(j: &mut Judge<'_>, key: &str, want: &Option<Vec<String>>, text: &str) {
    for w in want.iter().flatten() {
        let w = (j.sub)(w);
        if !text.contains(&w) {
            j.push(key, &format!("text holding {w:?}"), &format!("{text:?}"));
        }
    }
}

/// Compares `answer` with `x`.
pub fn judge(j: &mut Judge<'_>, a: &Action, x: &Expect, answer: &Map<String, Value>) {
    match a {
        Action::Call(_) => ruling(j, x, answer),
        Action::Act(_) => {
            ruling(j, x, answer);
            acted(j, x, answer);
        }
        Action::Calls(_) => {
            if let Some(want) = &x.rulings {
                let want = Value::Array(want.iter().map(to_json).collect());
                if !subset(&want, answer.get("rulings"), j.sub) {
                    j.push(
                        "rulings",
                        &want.to_string(),
                        &show_opt(answer.get("rulings")),
                    );
                }
            }
        }
        Action::Rule(_) | Action::Load(_) | Action::Restart(_) | Action::Crash(_) => {
            j.boolean("added", x.added, answer.get("added"));
            j.boolean("loaded", x.loaded, answer.get("loaded"));
            j.boolean("died", x.died, answer.get("died"));
            j.boolean("resumed", x.resumed, answer.get("resumed"));
            let err = answer
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            has_all(j, "error", &x.error_has, &err);
            let notices = answer
                .get("notices")
                .map(|v| v.to_string())
                .unwrap_or_default();
            has_all(j, "notices", &x.notices_has, &notices);
        }
        Action::Jsonl(_) => {
            let lines = answer
                .get("lines")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if let Some(n) = x.count {
                if lines.len() != n {
                    j.push("count", &n.to_string(), &lines.len().to_string());
                }
            }
            if let Some(keys) = &x.keys {
                let mut want = keys.clone();
                want.sort();
                for (i, l) in lines.iter().enumerate() {
                    let got: Vec<String> = l
                        .as_object()
                        .map(|o| o.keys().cloned().collect())
                        .unwrap_or_default();
                    if got != want {
                        j.push(
                            &format!("keys of line {}", i + 1),
                            &format!("{want:?}"),
                            &format!("{got:?}"),
                        );
                    }
                }
            }
            if let Some(want) = &x.lines {
                let want = Value::Array(want.iter().map(to_json).collect());
                if !subset(&want, Some(&Value::Array(lines.clone())), j.sub) {
                    j.push("lines", &want.to_string(), &Value::Array(lines).to_string());
                }
            }
            let text = answer.get("text").and_then(Value::as_str).unwrap_or("");
            for l in x.lacks.iter().flatten() {
                if text.contains(l.as_str()) {
                    j.push("lacks", &format!("no {l:?}"), "it is there");
                }
            }
        }
        Action::File(_) => {
            let text = answer
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            has_all(j, "text", &x.has, &text);
            for l in x.lacks.iter().flatten() {
                if text.contains(l.as_str()) {
                    j.push("lacks", &format!("no {l:?}"), "it is there");
                }
            }
            if x.no_bait == Some(true) && answer.get("bait") == Some(&Value::Bool(true)) {
                j.push("no_bait", "no planted secret", "a planted secret");
            }
        }
        Action::Pidfile(_) => j.boolean("alive", x.alive, answer.get("alive")),
    }
}

/// The codes of the hook runs of `event` in an answer.
fn codes_of(a: &Map<String, Value>, event: &str) -> Vec<String> {
    a.get("hooks")
        .and_then(Value::as_array)
        .map(|hs| {
            hs.iter()
                .filter(|h| h.get("event").and_then(Value::as_str) == Some(event))
                .map(|h| h.get("code").map_or_else(String::new, show))
                .collect()
        })
        .unwrap_or_default()
}

/// What an `act` ran and what came back.
fn acted(j: &mut Judge<'_>, x: &Expect, a: &Map<String, Value>) {
    j.boolean("ran", x.ran, a.get("ran"));
    j.boolean("truncated", x.truncated, a.get("truncated"));
    for (key, want) in [("not_run", &x.not_run), ("withheld", &x.withheld)] {
        match want {
            None => {}
            Some(toml::Value::Boolean(false)) => j.null(key, a.get(key)),
            Some(toml::Value::String(code)) => j.string(key, &Some(code.clone()), a.get(key)),
            Some(other) => j.push(key, "a code or false", &other.to_string()),
        }
    }
    if let Some(exit) = &x.exit {
        let got = a.get("exit");
        let ok = match exit {
            toml::Value::Integer(n) => got.and_then(Value::as_i64) == Some(*n),
            toml::Value::String(s) if s == "nonzero" => {
                got.and_then(Value::as_i64).is_some_and(|n| n != 0)
            }
            _ => false,
        };
        if !ok {
            j.push("exit", &exit.to_string(), &show_opt(got));
        }
    }
    for (key, event, want) in [
        ("post_hooks", "post_tool_use", &x.post_hooks),
        (
            "response_hooks",
            "tool_response_transform",
            &x.response_hooks,
        ),
    ] {
        if let Some(want) = want {
            let got = codes_of(a, event);
            if &got != want {
                j.push(key, &format!("{want:?}"), &format!("{got:?}"));
            }
        }
    }
    if let Some(want) = &x.marked {
        let want = Value::Array(want.iter().map(to_json).collect());
        if !subset(&want, a.get("marked"), j.sub) {
            j.push("marked", &want.to_string(), &show_opt(a.get("marked")));
        }
    }
}

fn ruling(j: &mut Judge<'_>, x: &Expect, a: &Map<String, Value>) {
    for (k, v) in [
        ("decision", &x.decision),
        ("stage", &x.stage),
        ("route", &x.route),
        ("reason", &x.reason),
        ("label", &x.label),
        ("mode", &x.mode),
        ("mode_source", &x.mode_source),
    ] {
        j.string(k, v, a.get(k));
    }
    table(j, "source", &x.source, a.get("source"));
    table(j, "input", &x.input, a.get("input"));
    if let Some(want) = &x.hooks {
        let got: Vec<String> = a
            .get("hooks")
            .and_then(Value::as_array)
            .map(|hs| {
                hs.iter()
                    .filter(|h| h.get("event").and_then(Value::as_str) == Some("pre_tool_use"))
                    .map(|h| h.get("code").map_or_else(String::new, show))
                    .collect()
            })
            .unwrap_or_default();
        if &got != want {
            j.push("hooks", &format!("{want:?}"), &format!("{got:?}"));
        }
    }
    if let Some(adv) = &x.advice {
        let got = a.get("advice").and_then(|v| v.get("code"));
        match adv {
            toml::Value::Boolean(false) => j.null("advice", got),
            toml::Value::String(code) => j.string("advice", &Some(code.clone()), got),
            other => j.push("advice", "a hook code or false", &other.to_string()),
        }
    }
    if let Some(want) = &x.redirects {
        let want = Value::Array(want.iter().map(to_json).collect());
        if !subset(&want, a.get("redirects"), j.sub) {
            j.push(
                "redirects",
                &want.to_string(),
                &show_opt(a.get("redirects")),
            );
        }
    }
    if let Some(needle) = &x.hook_message_contains {
        let msg = a
            .get("source")
            .and_then(|_| a.get("hooks"))
            .and_then(Value::as_array)
            .map(|hs| {
                hs.iter()
                    .filter_map(|h| h.get("message").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
            .unwrap_or_default();
        if !msg.contains(needle.as_str()) {
            j.push(
                "hook message",
                &format!("text holding {needle:?}"),
                &format!("{msg:?}"),
            );
        }
    }
}

/// What the runner reads itself for a local step.
pub fn local(
    a: &Action,
    locate: &dyn Fn(&str) -> PathBuf,
    bait: &dyn Fn(&str) -> bool,
) -> Map<String, Value> {
    let mut m = Map::new();
    match a {
        Action::Jsonl(p) | Action::File(p) => {
            let text = std::fs::read_to_string(locate(p)).unwrap_or_default();
            if matches!(a, Action::Jsonl(_)) {
                let lines: Vec<Value> = text
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| serde_json::from_str(l).unwrap_or_else(|_| json!({ "(not JSON)": l })))
                    .collect();
                m.insert("lines".into(), Value::Array(lines));
            }
            m.insert("bait".into(), json!(bait(&text)));
            m.insert("text".into(), json!(text));
        }
        Action::Pidfile(p) => {
            let pid = std::fs::read_to_string(locate(p)).unwrap_or_default();
            let pid = pid.trim();
            let alive = pid.parse::<u32>().is_ok_and(|pid| {
                crate::fixture::resources::process_alive(pid, std::time::Duration::from_secs(3))
            });
            m.insert("alive".into(), json!(alive));
            m.insert("pid".into(), json!(pid));
        }
        _ => {}
    }
    m
}

/// The level of each of the order's fields (`spec/verdicts.md`, PROTO-VERDICT-9): the
/// decision (and each ruling's) by strictness, where nobody can be asked with the route
/// `no_asker` or the mode `restricted`; a call that ran, or whose response came back,
/// that must not; a stream not cut; a rule added, a file loaded or a session resumed
/// that must be refused; a file holding what it must not or a planted secret; a process
/// alive that must be gone: safety. The stage, route, reason, label, mode, source,
/// hooks run, advice, input after the transforms, redirections, messages, errors,
/// notices, the record's lines and keys, the exit's exact value and the marks: exactness.
pub fn level(
    x: &Expect,
    field: &str,
    got: Option<&Map<String, Value>>,
    ctx: crate::verdict::Ctx,
) -> Level {
    let ctx = crate::verdict::Ctx {
        can_ask: ctx.can_ask
            && x.route.as_deref() != Some("no_asker")
            && x.mode.as_deref() != Some("restricted"),
    };
    let answer = |k: &str| got.and_then(|a| a.get(k));
    let code = |v: &Option<toml::Value>| matches!(v, Some(toml::Value::String(_)));
    // Static (no answer): a required value stands as missing.
    let value = |k: &str| if got.is_none() { None } else { answer(k) };
    match field {
        "decision" => verdict::decision(x.decision.as_deref(), value("decision"), ctx),
        "ran" => verdict::flag(false, x.ran, value("ran")),
        "truncated" => verdict::flag(true, x.truncated, value("truncated")),
        "added" => verdict::flag(false, x.added, value("added")),
        "loaded" => verdict::flag(false, x.loaded, value("loaded")),
        "resumed" => verdict::flag(false, x.resumed, value("resumed")),
        "alive" => verdict::flag(false, x.alive, value("alive")),
        "not_run" => verdict::required(code(&x.not_run), value("not_run")),
        "withheld" => verdict::required(code(&x.withheld), value("withheld")),
        "exit" => {
            let fails = match &x.exit {
                Some(toml::Value::Integer(n)) => *n != 0,
                Some(toml::Value::String(s)) => s == "nonzero",
                _ => false,
            };
            verdict::exit(fails, value("exit"))
        }
        "lacks" | "no_bait" => Level::Safety,
        "rulings" => {
            let want = x.rulings.iter().flatten().map(|r| {
                r.get("decision")
                    .and_then(toml::Value::as_str)
                    .map(str::to_string)
            });
            let got_rulings = answer("rulings").and_then(Value::as_array);
            let worst = want
                .enumerate()
                .map(|(i, d)| {
                    let g = match (got, got_rulings) {
                        (None, _) => None,
                        (Some(_), r) => r.and_then(|r| r.get(i)).and_then(|r| r.get("decision")),
                    };
                    verdict::decision(d.as_deref(), g, ctx)
                })
                .min();
            worst.unwrap_or(Level::Exactness)
        }
        _ => Level::Exactness,
    }
}

impl crate::controls::Judged for Action {
    fn judge(&self, x: &Expect, j: &mut Judge<'_>, answer: &Map<String, Value>) {
        judge(j, self, x, answer)
    }
    fn twin(&self, x: &Expect, _: bool) -> Option<(Family, bool)> {
        twin(self, x)
    }
    fn level(
        &self,
        x: &Expect,
        field: &str,
        got: Option<&Map<String, Value>>,
        ctx: crate::verdict::Ctx,
    ) -> Level {
        level(x, field, got, ctx)
    }
}
