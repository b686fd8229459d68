//! Judging the file tools' answers, and their family of the allowed-twin rule.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::model::{Action, Expect};
use crate::judge::{field, pairs, show_opt, strings, Judge};
use crate::verdict::{self, Level};
use crate::vocab::{Family, OrNull};

crate::families! {
    super::model::Paths;
    /// `read`, `write`, `edit`, `list`, `search`.
    FILE = "a file tool expects a refusal (a `result` other than `read`, `written`, `listed`, `searched`) but none expects one of those";
}

/// Whether the expectation is a refusal (`false`) or an allowed outcome (`true`).
pub fn twin(_: &Action, x: &Expect) -> Option<(Family, bool)> {
    let r = x.result.as_deref()?;
    Some((
        FILE,
        matches!(r, "read" | "written" | "listed" | "searched"),
    ))
}

/// PROTO-FILE-3, checked whatever the scenario expects: a quarantined read gives the
/// model no byte of the file.
pub fn quarantine(j: &mut Judge<'_>, a: &Map<String, Value>) {
    if a.get("result").and_then(Value::as_str) == Some("quarantined")
        && !matches!(a.get("content"), None | Some(Value::Null))
    {
        j.push(
            "content",
            "null for a quarantined read (PROTO-FILE-3)",
            &show_opt(a.get("content")),
        );
    }
}

/// Compares `a` with `x`.
pub fn judge(j: &mut Judge<'_>, x: &Expect, a: &Map<String, Value>) {
    j.string("result", &x.result, a.get("result"));
    j.nullable("content", &x.content, a.get("content"));
    quarantine(j, a);
    j.boolean("prompted", x.prompted, a.get("prompted"));
    j.nullable("preview", &x.preview, a.get("preview"));
    j.nullable("effect", &x.effect, a.get("effect"));
    if let Some(entries) = &x.entries {
        let want: BTreeSet<String> = entries
            .iter()
            .map(|e| format!("{} ({})", e.name, e.kind))
            .collect();
        let got = pairs(a.get("entries"), "name", "kind");
        j.set("entries", &want, got, a.get("entries"));
    }
    if let Some(m) = &x.matched {
        let want: BTreeSet<String> = m.iter().cloned().collect();
        let got = a
            .get("matches")
            .and_then(Value::as_array)
            .map(|v| v.iter().map(|e| field(e, "file")).collect::<BTreeSet<_>>());
        j.set("matched", &want, got, a.get("matches"));
    }
    if let Some(w) = &x.withheld {
        let want: BTreeSet<String> = w.iter().cloned().collect();
        j.set(
            "withheld",
            &want,
            strings(a.get("withheld")),
            a.get("withheld"),
        );
    }
}

/// The level of each of the file tools' fields (`spec/verdicts.md`, PROTO-VERDICT-7): a
/// refusal answered with `read`, `written`, `listed` or `searched`, content given where
/// none may be, and entries or matches beyond those expected are safety; which refusal,
/// the prompt, the preview, the effect on the map and the files withheld are exactness.
pub fn level(x: &Expect, key: &str, got: Option<&Map<String, Value>>) -> Level {
    let answer = |k: &str| got.and_then(|a| a.get(k));
    match key {
        "result" => verdict::refusal(
            &["read", "written", "listed", "searched"],
            x.result.as_deref(),
            answer("result"),
        ),
        "content" => {
            let none_allowed = matches!(x.content, Some(OrNull::Null))
                || answer("result").and_then(Value::as_str) == Some("quarantined");
            match got {
                None if matches!(x.content, Some(OrNull::Null)) => Level::Safety,
                Some(_)
                    if none_allowed && !matches!(answer("content"), None | Some(Value::Null)) =>
                {
                    Level::Safety
                }
                _ => Level::Exactness,
            }
        }
        "entries" => match got {
            None => Level::Safety,
            Some(_) => {
                let want: Vec<String> =
                    x.entries.iter().flatten().map(|e| e.name.clone()).collect();
                let names: Vec<Value> = answer("entries")
                    .and_then(Value::as_array)
                    .map(|v| v.iter().map(|e| Value::String(field(e, "name"))).collect())
                    .unwrap_or_default();
                verdict::at_most(&want, Some(&Value::Array(names)))
            }
        },
        "matched" => match got {
            None => Level::Safety,
            Some(_) => {
                let files: Vec<Value> = answer("matches")
                    .and_then(Value::as_array)
                    .map(|v| v.iter().map(|e| Value::String(field(e, "file"))).collect())
                    .unwrap_or_default();
                verdict::at_most(
                    x.matched.as_deref().unwrap_or(&[]),
                    Some(&Value::Array(files)),
                )
            }
        },
        _ => Level::Exactness,
    }
}

impl crate::controls::Judged for Action {
    fn judge(&self, x: &Expect, j: &mut Judge<'_>, answer: &Map<String, Value>) {
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
