//! Judging the gate's answers (decision, card, saved grants, the grant table, the audit
//! trail) and the gate's family of the allowed-twin rule.

use serde_json::{Map, Value};

use super::model::{Action, Expect, Grant};
use crate::judge::{show, show_opt, Judge};
use crate::verdict::{self, Ctx, Level};
use crate::vocab::{word, Family, GrantTool, OrNull};

crate::families! {
    super::model::Gate;
    /// `decide`, `code`, `tool`.
    DECISION = "expectations include `ask` or `deny` but no `allow`";
}

/// Whether the expectation is a refusal (`false`) or an allowed outcome (`true`).
pub fn twin(action: &Action, x: &Expect) -> Option<(Family, bool)> {
    match action {
        Action::Call { .. } => match x.decision.as_deref()? {
            "allow" => Some((DECISION, true)),
            "ask" | "deny" => Some((DECISION, false)),
            _ => None,
        },
        _ => None,
    }
}

/// Compares `answer` with `x`.
pub fn judge(j: &mut Judge<'_>, action: &Action, x: &Expect, answer: &Map<String, Value>) {
    match action {
        Action::Call { .. } => call(j, x, answer),
        Action::Answer(_) => {
            j.string("outcome", &x.outcome, answer.get("outcome"));
            if let Some(saved) = &x.saved {
                let got = answer.get("saved");
                match saved {
                    OrNull::Null => j.null("saved", got),
                    OrNull::Value(g) => grant_list(
                        j,
                        "saved",
                        std::slice::from_ref(g),
                        got.map(|v| Value::Array(vec![v.clone()])),
                    ),
                }
            }
        }
        Action::Grants => {
            if let Some(g) = &x.grants {
                grant_list(j, "grants", g, answer.get("grants").cloned());
            }
        }
        Action::Revoke(_) => {
            if let Some(g) = &x.revoked {
                grant_list(j, "revoked", g, answer.get("revoked").cloned());
            }
        }
        Action::Audit => {
            if let Some(want) = &x.records {
                let want = Value::Array(
                    want.iter()
                        .map(|v| serde_json::to_value(v).unwrap_or(Value::Null))
                        .collect(),
                );
                if !crate::judge::subset(&want, answer.get("records"), j.sub) {
                    j.push(
                        "records",
                        &want.to_string(),
                        &show_opt(answer.get("records")),
                    );
                }
            }
            if let Some(expected) = &x.outcomes {
                let got: Option<Vec<String>> =
                    answer
                        .get("records")
                        .and_then(Value::as_array)
                        .map(|records| {
                            records
                                .iter()
                                .map(|r| r.get("outcome").map_or_else(|| "(missing)".into(), show))
                                .collect()
                        });
                match got {
                    Some(got) if &got == expected => {}
                    Some(got) => j.push("outcomes", &format!("{expected:?}"), &format!("{got:?}")),
                    None => j.push(
                        "outcomes",
                        &format!("{expected:?}"),
                        &show_opt(answer.get("records")),
                    ),
                }
            }
        }
    }
}

fn call(j: &mut Judge<'_>, x: &Expect, answer: &Map<String, Value>) {
    j.string("decision", &x.decision, answer.get("decision"));
    j.string("route", &x.route, answer.get("route"));
    j.string("reason", &x.reason, answer.get("reason"));
    if let Some(o) = &x.offers {
        let offers = answer.get("offers");
        let field = |k: &str| offers.and_then(|v| v.get(k));
        if let Some(exact) = o.exact {
            if field("exact") != Some(&Value::Bool(exact)) {
                j.push(
                    "offers.exact",
                    &exact.to_string(),
                    &show_opt(field("exact")),
                );
            }
        }
        j.nullable(
            "offers.exact_withheld",
            &o.exact_withheld,
            field("exact_withheld"),
        );
        j.nullable("offers.family", &o.family, field("family"));
        j.nullable(
            "offers.family_withheld",
            &o.family_withheld,
            field("family_withheld"),
        );
        if let Some(needle) = &o.text_contains {
            match field("text").and_then(Value::as_str) {
                Some(text) if text.contains(needle.as_str()) => {}
                _ => j.push(
                    "offers.text",
                    &format!("text containing {needle:?}"),
                    &show_opt(field("text")),
                ),
            }
        }
    }
    if let Some(card) = &x.card {
        let got = answer.get("card");
        match card {
            OrNull::Null => j.null("card", got),
            OrNull::Value(c) => {
                let field = |k: &str| got.and_then(|v| v.get(k));
                j.string("card.channel", &c.channel, field("channel"));
                if let Some(w) = c.window_ms {
                    if field("window_ms").and_then(Value::as_u64) != Some(w) {
                        j.push(
                            "card.window_ms",
                            &w.to_string(),
                            &show_opt(field("window_ms")),
                        );
                    }
                }
            }
        }
    }
}

fn grant_list(j: &mut Judge<'_>, key: &str, expected: &[Grant], got: Option<Value>) {
    let matches = got.as_ref().and_then(Value::as_array).is_some_and(|items| {
        items.len() == expected.len()
            && items.iter().zip(expected).all(|(g, e)| grant_matches(g, e))
    });
    if !matches {
        let want: Vec<String> = expected.iter().map(show_grant).collect();
        let got = match got.as_ref().and_then(Value::as_array) {
            Some(items) => format!(
                "[{}]",
                items
                    .iter()
                    .map(show_grant_value)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => show_opt(got.as_ref()),
        };
        let want = if key == "saved" {
            want.join("")
        } else {
            format!("[{}]", want.join(", "))
        };
        let got = if key == "saved" {
            got.trim_start_matches('[')
                .trim_end_matches(']')
                .to_string()
        } else {
            got
        };
        j.push(key, &want, &got);
    }
}

fn grant_matches(got: &Value, e: &Grant) -> bool {
    let s = |k: &str| got.get(k).and_then(Value::as_str);
    s("kind") == Some(word(e.kind).as_str())
        && s("key") == Some(e.key.as_str())
        && tool_matches(e.tool, got)
}

fn tool_matches(expected: Option<GrantTool>, got: &Value) -> bool {
    match expected {
        None => true,
        Some(t) => serde_json::to_value(t).ok().as_ref() == got.get("tool"),
    }
}

fn show_grant(g: &Grant) -> String {
    format!("{} {:?}", word(g.kind), g.key)
}

fn show_grant_value(v: &Value) -> String {
    match (
        v.get("kind").and_then(Value::as_str),
        v.get("key").and_then(Value::as_str),
    ) {
        (Some(kind), Some(key)) => format!("{kind} {key:?}"),
        _ => v.to_string(),
    }
}

/// The level of each of the gate's fields (`spec/verdicts.md`, PROTO-VERDICT-6): the
/// decision by strictness (an `ask` is no stricter than a `deny` where nobody can be
/// asked: `asker = "none"` or the route `no_asker`) and an answer's `outcome` (only
/// `approved` lets the call run) are safety; the route, the reason, the offers, the card
/// and its window, the grants saved, listed and revoked (bookkeeping whose effect the
/// decisions that follow pin) and the audit trail are exactness.
pub fn level(x: &Expect, field: &str, got: Option<&Map<String, Value>>, ctx: Ctx) -> Level {
    let ctx = Ctx {
        can_ask: ctx.can_ask && x.route.as_deref() != Some("no_asker"),
    };
    let answer = |k: &str| got.map(|a| a.get(k));
    match field {
        "decision" => verdict::decision(x.decision.as_deref(), answer("decision").flatten(), ctx),
        "outcome" => verdict::refusal(
            &["approved"],
            x.outcome.as_deref(),
            answer("outcome").flatten(),
        ),
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
