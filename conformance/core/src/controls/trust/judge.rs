//! Judging the trust map's answers (query, gestures, rules and roots, resume, clear, the
//! settings-named directories of `open`), and its families of the allowed-twin rule.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::model::{Action, Expect, ExpectRule, ExpectSetting};
use crate::judge::{field, pairs, show_opt, Judge};
use crate::verdict::{self, Level};
use crate::vocab::{Family, OrNull};

crate::families! {
    super::model::Trust;
    /// `query`.
    QUERY = "a `query` expects `untrusted`, `unknown` or a refusal but none expects `trusted`";
    /// `gesture`.
    GESTURE = "a `gesture` expects a refusal but none expects `result = \"done\"`";
}

/// Whether the expectation is a refusal (`false`) or an allowed outcome (`true`).
pub fn twin(action: &Action, x: &Expect) -> Option<(Family, bool)> {
    match action {
        Action::Query(_) => {
            if matches!(x.refused, Some(OrNull::Value(_))) {
                return Some((QUERY, false));
            }
            Some((QUERY, x.trust.as_deref()? == "trusted"))
        }
        Action::Gesture { .. } => Some((GESTURE, x.result.as_deref()? == "done")),
        _ => None,
    }
}

/// Compares `a` with `x`.
pub fn judge(j: &mut Judge<'_>, x: &Expect, a: &Map<String, Value>) {
    let sub = j.sub;
    j.string("result", &x.result, a.get("result"));
    j.string("trust", &x.trust, a.get("trust"));
    j.string("namespace", &x.namespace, a.get("namespace"));
    j.string("key", &x.key.as_deref().map(sub), a.get("key"));
    let rule = x.rule.clone().map(|r| match r {
        OrNull::Value(v) => OrNull::Value(sub(&v)),
        OrNull::Null => OrNull::Null,
    });
    j.nullable("rule", &rule, a.get("rule"));
    j.nullable("refused", &x.refused, a.get("refused"));
    if let Some(rules) = &x.rules {
        self::rules(j, rules, a.get("rules"));
    }
    if let Some(roots) = &x.roots {
        let want: BTreeSet<String> = roots
            .iter()
            .map(|r| format!("{} ({})", sub(&r.path), r.how))
            .collect();
        j.set(
            "roots",
            &want,
            pairs(a.get("roots"), "path", "how"),
            a.get("roots"),
        );
    }
    if let Some(un) = &x.unreopened {
        let want: BTreeSet<String> = un
            .iter()
            .map(|r| format!("{} ({})", sub(&r.path), r.code))
            .collect();
        let got = pairs(a.get("unreopened"), "path", "code");
        j.set("unreopened", &want, got, a.get("unreopened"));
    }
    j.boolean("started", x.started, a.get("started"));
}

fn rules(j: &mut Judge<'_>, want: &[ExpectRule], got: Option<&Value>) {
    let sub = j.sub;
    let Some(items) = got.and_then(Value::as_array) else {
        return j.push("rules", &format!("{} rule(s)", want.len()), &show_opt(got));
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
        j.push(
            "rules",
            &format!("also {missing:?}"),
            &format!("{} rule(s), unexpected {extra:?}", items.len()),
        );
    }
}

/// The settings-named directories of the `open` answer, in order.
pub fn settings(j: &mut Judge<'_>, want: &[ExpectSetting], got: Option<&Value>) {
    let sub = j.sub;
    let items = got.and_then(Value::as_array);
    let ok = items.is_some_and(|items| {
        items.len() == want.len()
            && items.iter().zip(want).all(|(g, w)| {
                // The name was sent with its placeholders replaced, so it is compared the
                // same way.
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
        j.push("settings", &format!("{want:?}"), &show_opt(got));
    }
}

/// The level of each of the trust map's fields (`spec/verdicts.md`, PROTO-VERDICT-7): a
/// gesture done that must be refused, a path answered `trusted` that is not, a refusal
/// expected and none given, a root open beyond those expected and a session started
/// that must not start are safety; the namespace, the key, the deciding rule, the rules
/// listed and the roots not reopened are exactness.
pub fn level(x: &Expect, key: &str, got: Option<&Map<String, Value>>) -> Level {
    let answer = |k: &str| got.and_then(|a| a.get(k));
    match key {
        "result" => verdict::refusal(&["done"], x.result.as_deref(), answer("result")),
        "trust" => verdict::refusal(&["trusted"], x.trust.as_deref(), answer("trust")),
        "refused" => verdict::required(
            matches!(x.refused, Some(OrNull::Value(_))),
            got.map_or(Some(&Value::Null), |a| a.get("refused")),
        ),
        "roots" => match got {
            None => Level::Safety,
            Some(_) => {
                let want: Vec<String> = x.roots.iter().flatten().map(|r| r.path.clone()).collect();
                let paths: Vec<Value> = answer("roots")
                    .and_then(Value::as_array)
                    .map(|v| v.iter().map(|e| Value::String(field(e, "path"))).collect())
                    .unwrap_or_default();
                // The expectation's paths hold placeholders; the answer's do not, so a
                // root is beyond only when no expected path ends as it does.
                let extra = paths.iter().filter_map(Value::as_str).any(|p| {
                    !want.iter().any(|w| {
                        let tail = w.rsplit('@').next().unwrap_or(w);
                        p.ends_with(tail)
                    })
                });
                if extra {
                    Level::Safety
                } else {
                    Level::Exactness
                }
            }
        },
        "started" => verdict::flag(false, x.started, answer("started")),
        _ => Level::Exactness,
    }
}

impl crate::controls::Judged for Action {
    fn judge(&self, x: &Expect, j: &mut Judge<'_>, answer: &Map<String, Value>) {
        super::super::paths::judge::quarantine(j, answer);
        judge(j, x, answer)
    }
    fn twin(&self, x: &Expect, _: bool) -> Option<(Family, bool)> {
        twin(self, x)
    }
    fn level(
        &self,
        x: &Expect,
        field: &str,
        got: Option<&Map<String, Value>>,
        _: crate::verdict::Ctx,
    ) -> Level {
        level(x, field, got)
    }
}
