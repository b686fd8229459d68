//! Judging one answer against one expectation. Only the keys written are checked; `false`
//! in TOML stands for JSON `null` in a string-or-null field. The result is a list of
//! mismatch messages, each prefixed with the step it concerns.

mod controls;

use serde_json::{Map, Value};

use crate::scenario::{Action, Expect, Grant, GrantTool, OrNull, Step};

/// Compares `answer` with `step.expect`; `what` is `step` or `case`.
#[cfg(test)]
pub fn judge(what: &str, step: &Step, answer: &Map<String, Value>) -> Vec<String> {
    judge_with(what, step, answer, &|s: &str| s.to_string())
}

/// [`judge`], with `sub` applied to the paths of expectations (placeholders).
pub fn judge_with(
    what: &str,
    step: &Step,
    answer: &Map<String, Value>,
    sub: &dyn Fn(&str) -> String,
) -> Vec<String> {
    let mut j = Judge {
        prefix: format!("{what} {} ({})", step.index, step.action.label()),
        out: Vec::new(),
        sub,
    };
    let x = &step.expect;
    match &step.action {
        Action::Call { .. } => j.call(x, answer),
        Action::Answer(_) => {
            j.string("outcome", &x.outcome, answer.get("outcome"));
            if let Some(saved) = &x.saved {
                let got = answer.get("saved");
                match saved {
                    OrNull::Null => j.null("saved", got),
                    OrNull::Value(g) => {
                        j.grant_list("saved", std::slice::from_ref(g), got.map(one))
                    }
                }
            }
        }
        Action::Grants => {
            if let Some(g) = &x.grants {
                j.grant_list("grants", g, answer.get("grants").cloned());
            }
        }
        Action::Revoke(_) => {
            if let Some(g) = &x.revoked {
                j.grant_list("revoked", g, answer.get("revoked").cloned());
            }
        }
        Action::Audit => {
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
        _ => j.controls(x, answer),
    }
    j.out
}

fn one(v: &Value) -> Value {
    Value::Array(vec![v.clone()])
}

struct Judge<'a> {
    prefix: String,
    out: Vec<String>,
    sub: &'a dyn Fn(&str) -> String,
}

impl Judge<'_> {
    fn push(&mut self, key: &str, expected: &str, got: &str) {
        self.out.push(format!(
            "{}: {key}: expected {expected}, got {got}",
            self.prefix
        ));
    }

    fn call(&mut self, x: &Expect, answer: &Map<String, Value>) {
        self.string("decision", &x.decision, answer.get("decision"));
        self.string("route", &x.route, answer.get("route"));
        self.string("reason", &x.reason, answer.get("reason"));
        if let Some(o) = &x.offers {
            let offers = answer.get("offers");
            let field = |k: &str| offers.and_then(|v| v.get(k));
            if let Some(exact) = o.exact {
                if field("exact") != Some(&Value::Bool(exact)) {
                    self.push(
                        "offers.exact",
                        &exact.to_string(),
                        &show_opt(field("exact")),
                    );
                }
            }
            self.nullable(
                "offers.exact_withheld",
                &o.exact_withheld,
                field("exact_withheld"),
            );
            self.nullable("offers.family", &o.family, field("family"));
            self.nullable(
                "offers.family_withheld",
                &o.family_withheld,
                field("family_withheld"),
            );
            if let Some(needle) = &o.text_contains {
                match field("text").and_then(Value::as_str) {
                    Some(text) if text.contains(needle.as_str()) => {}
                    _ => self.push(
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
                OrNull::Null => self.null("card", got),
                OrNull::Value(c) => {
                    let field = |k: &str| got.and_then(|v| v.get(k));
                    self.string("card.channel", &c.channel, field("channel"));
                    if let Some(w) = c.window_ms {
                        if field("window_ms").and_then(Value::as_u64) != Some(w) {
                            self.push(
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

    fn string(&mut self, key: &str, expected: &Option<String>, got: Option<&Value>) {
        if let Some(e) = expected {
            if got.and_then(Value::as_str) != Some(e.as_str()) {
                self.push(key, e, &show_opt(got));
            }
        }
    }

    fn nullable(&mut self, key: &str, expected: &Option<OrNull<String>>, got: Option<&Value>) {
        match expected {
            None => {}
            Some(OrNull::Null) => self.null(key, got),
            Some(OrNull::Value(e)) => self.string(key, &Some(e.clone()), got),
        }
    }

    /// `null` or an absent key both satisfy an expected null.
    fn null(&mut self, key: &str, got: Option<&Value>) {
        if !matches!(got, None | Some(Value::Null)) {
            self.push(key, "null", &show_opt(got));
        }
    }

    fn grant_list(&mut self, key: &str, expected: &[Grant], got: Option<Value>) {
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
            self.push(key, &want, &got);
        }
    }
}

fn grant_matches(got: &Value, e: &Grant) -> bool {
    let s = |k: &str| got.get(k).and_then(Value::as_str);
    let kind = serde_json::to_value(e.kind).ok();
    s("kind") == kind.as_ref().and_then(Value::as_str)
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
    let kind = serde_json::to_value(g.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    format!("{kind} {:?}", g.key)
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

/// A value as it reads in a message: strings bare, `(missing)` for an absent key.
fn show_opt(v: Option<&Value>) -> String {
    v.map_or_else(|| "(missing)".to_string(), show)
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_file;
    use crate::scenario::Body;
    use serde_json::json;

    fn steps(body: &str) -> Vec<Step> {
        let src =
            format!("title = \"t\"\nrequirements = [\"GATE-T-1\"]\ntier = \"decision\"\n{body}");
        let s = load_file(&src, "t.toml", "gate/t", None).expect("valid");
        match s.body {
            Body::Sequence(steps) => steps,
            Body::Table(cases) => cases.into_iter().map(|c| c.step).collect(),
        }
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn decision_mismatch_reads_well() {
        let s = steps("[[step]]\ndecide = \"ls /etc\"\nexpect = { decision = \"allow\" }\n[[step]]\ndecide = \"ls /etc\"\nexpect = { decision = \"ask\", route = \"card\" }\n");
        let answer = obj(json!({"id": 3, "ok": true, "decision": "allow", "route": "auto_safe"}));
        assert!(judge("step", &s[0], &answer).is_empty());
        assert_eq!(
            judge("step", &s[1], &answer),
            vec![
                "step 2 (decide \"ls /etc\"): decision: expected ask, got allow",
                "step 2 (decide \"ls /etc\"): route: expected card, got auto_safe",
            ]
        );
    }

    #[test]
    fn false_stands_for_null() {
        let s = steps("[[case]]\ndecide = \"x\"\nexpect = { decision = \"allow\", offers = { family = false, exact = true }, card = false }\n");
        let ok = obj(
            json!({"id": 1, "ok": true, "decision": "allow", "offers": {"family": null, "exact": true}}),
        );
        assert!(judge("case", &s[0], &ok).is_empty());
        let bad = obj(
            json!({"id": 1, "ok": true, "decision": "allow", "offers": {"family": "git", "exact": true},
                             "card": {"channel": "terminal"}}),
        );
        let m = judge("case", &s[0], &bad);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(
            m[0].ends_with("offers.family: expected null, got git"),
            "{m:?}"
        );
        assert!(m[1].contains("card: expected null"), "{m:?}");
    }

    #[test]
    fn saved_grants_and_outcomes() {
        let s = steps(
            "[[step]]\ndecide = \"git status\"\nexpect = { decision = \"allow\" }\n\
             [[step]]\nanswer = \"family\"\nexpect = { outcome = \"approved\", saved = { kind = \"family\", key = \"git\" } }\n\
             [[step]]\nanswer = \"once\"\nexpect = { saved = false }\n\
             [[step]]\ngrants = true\nexpect = { grants = [{ kind = \"family\", key = \"git\" }] }\n\
             [[step]]\naudit = true\nexpect = { outcomes = [\"approved\"] }\n",
        );
        let saved = obj(
            json!({"id": 1, "ok": true, "outcome": "approved", "saved": {"kind": "family", "key": "git"}}),
        );
        assert!(judge("step", &s[1], &saved).is_empty());
        assert_eq!(
            judge("step", &s[2], &saved),
            vec!["step 3 (answer \"once\"): saved: expected null, got {\"key\":\"git\",\"kind\":\"family\"}"]
        );
        let empty = obj(json!({"id": 1, "ok": true, "grants": []}));
        assert_eq!(
            judge("step", &s[3], &empty),
            vec!["step 4 (grants): grants: expected [family \"git\"], got []"]
        );
        let audit = obj(json!({"id": 1, "ok": true, "records": [{"outcome": "expired"}]}));
        assert_eq!(
            judge("step", &s[4], &audit),
            vec!["step 5 (audit): outcomes: expected [\"approved\"], got [\"expired\"]"]
        );
    }

    #[test]
    fn control_answers_are_judged() {
        let s = steps(
            "[[step]]\nread = \"f\"\nexpect = { result = \"quarantined\", prompted = false, preview = false }\n\
             [[step]]\nlist = \".\"\nexpect = { result = \"listed\", entries = [{ name = \"a\", kind = \"file\" }, { name = \"l\", kind = \"symlink\" }] }\n\
             [[step]]\nstatus = true\nexpect = { rules = [{ namespace = \"relative\", key = \"\", trust = \"trusted\", origin = \"startup\" }] }\n\
             [[step]]\nrun = \"x\"\nexpect = { exit = \"nonzero\", held_by = \"native\", posture = { state = \"fence\", not_covered_has = [\"truncate\"] } }\n\
             [[step]]\nrun = \"y\"\nexpect = { exit = 0 }\ncheck = { exists = [\"y\"] }\n",
        );
        let read = obj(json!({"result": "quarantined", "prompted": false, "preview": null}));
        assert!(judge("step", &s[0], &read).is_empty());
        let list = obj(
            json!({"result": "listed", "entries": [{"name": "l", "kind": "symlink"}, {"name": "a", "kind": "file"}]}),
        );
        assert!(judge("step", &s[1], &list).is_empty());
        let list = obj(json!({"result": "listed", "entries": [{"name": "a", "kind": "file"}]}));
        assert_eq!(
            judge("step", &s[1], &list),
            vec!["step 2 (list \".\"): entries: expected {\"a (file)\", \"l (symlink)\"}, got {\"a (file)\"}"]
        );
        let status = obj(
            json!({"rules": [{"namespace": "relative", "key": "", "trust": "trusted", "origin": "startup"}], "roots": []}),
        );
        assert!(judge("step", &s[2], &status).is_empty());
        let status = obj(json!({"rules": []}));
        assert_eq!(judge("step", &s[2], &status).len(), 1);
        let run = obj(
            json!({"exit": 0, "held_by": "native", "posture": {"state": "fence", "not_covered": []}}),
        );
        assert_eq!(
            judge("step", &s[3], &run),
            vec![
                "step 4 (run \"x\"): exit: expected nonzero, got 0",
                "step 4 (run \"x\"): posture.not_covered: expected a list holding truncate, got []",
            ]
        );
    }
}
