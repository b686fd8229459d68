//! Judging the answers of the protocol 1.1 steps (file tools, trust map, fence) against
//! their `expect` keys. Lists the README calls sets are compared ignoring order; paths in
//! expectations go through the session's placeholder substitution first.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::{show, show_opt, Judge};
use crate::scenario::{
    ExitSpec, ExitWord, Expect, ExpectPosture, ExpectRule, ExpectSetting, OrNull,
};

impl Judge<'_> {
    /// Every 1.1 key written in `x`.
    pub(super) fn controls(&mut self, x: &Expect, a: &Map<String, Value>) {
        let sub = self.sub;
        self.string("result", &x.result, a.get("result"));
        self.nullable("content", &x.content, a.get("content"));
        // PROTO-FILE-3, checked whatever the scenario expects: a quarantined read gives
        // the model no byte of the file.
        if a.get("result").and_then(Value::as_str) == Some("quarantined")
            && !matches!(a.get("content"), None | Some(Value::Null))
        {
            self.push(
                "content",
                "null for a quarantined read (PROTO-FILE-3)",
                &show_opt(a.get("content")),
            );
        }
        self.boolean("prompted", x.prompted, a.get("prompted"));
        self.nullable("preview", &x.preview, a.get("preview"));
        self.nullable("effect", &x.effect, a.get("effect"));
        if let Some(entries) = &x.entries {
            let want: BTreeSet<String> = entries
                .iter()
                .map(|e| format!("{} ({})", e.name, e.kind))
                .collect();
            let got = a.get("entries").and_then(Value::as_array).map(|v| {
                v.iter()
                    .map(|e| format!("{} ({})", field(e, "name"), field(e, "kind")))
                    .collect::<BTreeSet<_>>()
            });
            self.set("entries", &want, got, a.get("entries"));
        }
        if let Some(m) = &x.matched {
            let want: BTreeSet<String> = m.iter().cloned().collect();
            let got = a
                .get("matches")
                .and_then(Value::as_array)
                .map(|v| v.iter().map(|e| field(e, "file")).collect::<BTreeSet<_>>());
            self.set("matched", &want, got, a.get("matches"));
        }
        if let Some(w) = &x.withheld {
            let want: BTreeSet<String> = w.iter().cloned().collect();
            let got = strings(a.get("withheld"));
            self.set("withheld", &want, got, a.get("withheld"));
        }
        self.string("trust", &x.trust, a.get("trust"));
        self.string("namespace", &x.namespace, a.get("namespace"));
        self.string("key", &x.key.as_deref().map(sub), a.get("key"));
        let rule = x.rule.clone().map(|r| match r {
            OrNull::Value(v) => OrNull::Value(sub(&v)),
            OrNull::Null => OrNull::Null,
        });
        self.nullable("rule", &rule, a.get("rule"));
        self.nullable("refused", &x.refused, a.get("refused"));
        if let Some(rules) = &x.rules {
            self.rules(rules, a.get("rules"));
        }
        if let Some(roots) = &x.roots {
            let want: BTreeSet<String> = roots
                .iter()
                .map(|r| format!("{} ({})", sub(&r.path), r.how))
                .collect();
            let got = a.get("roots").and_then(Value::as_array).map(|v| {
                v.iter()
                    .map(|e| format!("{} ({})", field(e, "path"), field(e, "how")))
                    .collect::<BTreeSet<_>>()
            });
            self.set("roots", &want, got, a.get("roots"));
        }
        if let Some(un) = &x.unreopened {
            let want: BTreeSet<String> = un
                .iter()
                .map(|r| format!("{} ({})", sub(&r.path), r.code))
                .collect();
            let got = a.get("unreopened").and_then(Value::as_array).map(|v| {
                v.iter()
                    .map(|e| format!("{} ({})", field(e, "path"), field(e, "code")))
                    .collect::<BTreeSet<_>>()
            });
            self.set("unreopened", &want, got, a.get("unreopened"));
        }
        self.boolean("started", x.started, a.get("started"));
        if let Some(settings) = &x.settings {
            self.settings(settings, a.get("settings"));
        }
        if let Some(exit) = &x.exit {
            let got = a.get("exit");
            let ok = match exit {
                OrNull::Null => matches!(got, None | Some(Value::Null)),
                OrNull::Value(ExitSpec::Code(n)) => got.and_then(Value::as_i64) == Some(*n),
                OrNull::Value(ExitSpec::Word(ExitWord::Zero)) => {
                    got.and_then(Value::as_i64) == Some(0)
                }
                OrNull::Value(ExitSpec::Word(ExitWord::Nonzero)) => {
                    got.and_then(Value::as_i64).is_some_and(|n| n != 0)
                }
            };
            if !ok {
                let want = match exit {
                    OrNull::Null => "null".to_string(),
                    OrNull::Value(ExitSpec::Code(n)) => n.to_string(),
                    OrNull::Value(ExitSpec::Word(ExitWord::Zero)) => "0".to_string(),
                    OrNull::Value(ExitSpec::Word(ExitWord::Nonzero)) => "nonzero".to_string(),
                };
                self.push("exit", &want, &show_opt(got));
            }
        }
        if let Some(signal) = &x.signal {
            let got = a.get("signal");
            match signal {
                OrNull::Null => self.null("signal", got),
                OrNull::Value(n) if got.and_then(Value::as_i64) != Some(*n) => {
                    self.push("signal", &n.to_string(), &show_opt(got))
                }
                OrNull::Value(_) => {}
            }
        }
        self.string("held_by", &x.held_by, a.get("held_by"));
        if let Some(p) = &x.posture {
            self.posture(p, a.get("posture"));
        }
    }

    fn boolean(&mut self, key: &str, expected: Option<bool>, got: Option<&Value>) {
        if let Some(e) = expected {
            if got.and_then(Value::as_bool) != Some(e) {
                self.push(key, &e.to_string(), &show_opt(got));
            }
        }
    }

    fn set(
        &mut self,
        key: &str,
        want: &BTreeSet<String>,
        got: Option<BTreeSet<String>>,
        raw: Option<&Value>,
    ) {
        match got {
            Some(g) if &g == want => {}
            Some(g) => self.push(key, &format!("{want:?}"), &format!("{g:?}")),
            None => self.push(key, &format!("{want:?}"), &show_opt(raw)),
        }
    }

    fn rules(&mut self, want: &[ExpectRule], got: Option<&Value>) {
        let sub = self.sub;
        let Some(items) = got.and_then(Value::as_array) else {
            return self.push("rules", &format!("{} rule(s)", want.len()), &show_opt(got));
        };
        let mut left: Vec<&Value> = items.iter().collect();
        let mut missing = Vec::new();
        for r in want {
            let key = sub(&r.key);
            let pos = left.iter().position(|g| {
                field(g, "namespace") == r.namespace
                    && field(g, "key") == key
                    && field(g, "trust") == r.trust
                    && r.origin.as_ref().map_or(true, |o| &field(g, "origin") == o)
            });
            match pos {
                Some(i) => {
                    left.remove(i);
                }
                None => missing.push(format!("{} {:?} {}", r.namespace, key, r.trust)),
            }
        }
        if !missing.is_empty() || !left.is_empty() {
            let extra: Vec<String> = left
                .iter()
                .map(|g| {
                    format!(
                        "{} {:?} {} ({})",
                        field(g, "namespace"),
                        field(g, "key"),
                        field(g, "trust"),
                        field(g, "origin")
                    )
                })
                .collect();
            self.push(
                "rules",
                &format!("also {missing:?}"),
                &format!("{} rule(s), unexpected {extra:?}", items.len()),
            );
        }
    }

    fn settings(&mut self, want: &[ExpectSetting], got: Option<&Value>) {
        let sub = self.sub;
        let items = got.and_then(Value::as_array);
        let ok = items.is_some_and(|items| {
            items.len() == want.len()
                && items.iter().zip(want).all(|(g, w)| {
                    // The name was sent with its placeholders replaced (wire.rs), so it
                    // is compared the same way.
                    field(g, "name") == sub(&w.name)
                        && field(g, "result") == w.result
                        && w.resolved
                            .as_ref()
                            .map_or(true, |r| field(g, "resolved") == sub(r))
                        && match &w.code {
                            None => true,
                            Some(OrNull::Null) => matches!(g.get("code"), None | Some(Value::Null)),
                            Some(OrNull::Value(c)) => &field(g, "code") == c,
                        }
                })
        });
        if !ok {
            let want: Vec<String> = want
                .iter()
                .map(|w| format!("{} {}", w.name, w.result))
                .collect();
            self.push("settings", &format!("{want:?}"), &show_opt(got));
        }
    }

    fn posture(&mut self, p: &ExpectPosture, got: Option<&Value>) {
        let f = |k: &str| got.and_then(|v| v.get(k));
        self.string("posture.state", &p.state, f("state"));
        self.nullable("posture.backend", &p.backend, f("backend"));
        self.boolean("posture.degraded", p.degraded, f("degraded"));
        if let Some(abi) = &p.landlock_abi {
            match abi {
                OrNull::Null => self.null("posture.landlock_abi", f("landlock_abi")),
                OrNull::Value(n) if f("landlock_abi").and_then(Value::as_i64) != Some(*n) => self
                    .push(
                        "posture.landlock_abi",
                        &n.to_string(),
                        &show_opt(f("landlock_abi")),
                    ),
                OrNull::Value(_) => {}
            }
        }
        let nc = strings(f("not_covered"));
        if let Some(want) = &p.not_covered {
            let want: BTreeSet<String> = want.iter().cloned().collect();
            self.set("posture.not_covered", &want, nc.clone(), f("not_covered"));
        }
        for code in p.not_covered_has.iter().flatten() {
            if !nc.as_ref().is_some_and(|s| s.contains(code)) {
                self.push(
                    "posture.not_covered",
                    &format!("a list holding {code}"),
                    &show_opt(f("not_covered")),
                );
            }
        }
        for code in p.not_covered_lacks.iter().flatten() {
            if nc.as_ref().is_some_and(|s| s.contains(code)) {
                self.push(
                    "posture.not_covered",
                    &format!("a list without {code}"),
                    &show_opt(f("not_covered")),
                );
            }
        }
        self.string("posture.env", &p.env, f("env"));
        self.string("posture.session_log", &p.session_log, f("session_log"));
        if let Some(needle) = &p.reason_contains {
            if !f("reason")
                .and_then(Value::as_str)
                .is_some_and(|r| r.contains(needle.as_str()))
            {
                self.push(
                    "posture.reason",
                    &format!("text containing {needle:?}"),
                    &show_opt(f("reason")),
                );
            }
        }
    }
}

fn field(v: &Value, k: &str) -> String {
    v.get(k).map_or_else(|| "(missing)".into(), show)
}

fn strings(v: Option<&Value>) -> Option<BTreeSet<String>> {
    v.and_then(Value::as_array)
        .map(|items| items.iter().map(show).collect())
}
