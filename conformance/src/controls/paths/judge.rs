//! Judging the file tools' answers, and their family of the allowed-twin rule.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::model::{Action, Expect};
use crate::judge::{field, pairs, show_opt, strings, Judge};
use crate::vocab::Family;

/// `read`, `write`, `edit`, `list`, `search`.
pub const FILE: Family = Family {
    order: 10,
    rule: "a file tool expects a refusal (a `result` other than `read`, `written`, `listed`, `searched`) but none expects one of those",
};

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
