//! The toolkit every control's judge uses to compare one answer with one expectation:
//! only the keys written are checked; `false` in TOML stands for JSON `null`; every
//! mismatch is one message prefixed with the step it concerns. It knows no control.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::vocab::OrNull;

/// Collects the mismatches of one step.
pub struct Judge<'a> {
    prefix: String,
    out: Vec<(String, String)>,
    /// The session's placeholder substitution, for paths in expectations.
    pub sub: &'a dyn Fn(&str) -> String,
}

impl<'a> Judge<'a> {
    /// A judge whose messages start with `prefix` (`step 2 (decide "ls")`).
    pub fn new(prefix: String, sub: &'a dyn Fn(&str) -> String) -> Self {
        Judge {
            prefix,
            out: Vec::new(),
            sub,
        }
    }

    /// The mismatches found, each with the field it concerns.
    pub fn finish(self) -> Vec<(String, String)> {
        self.out
    }

    /// One mismatch: `key: expected E, got G`.
    pub fn push(&mut self, key: &str, expected: &str, got: &str) {
        self.out.push((
            key.to_string(),
            format!("{}: {key}: expected {expected}, got {got}", self.prefix),
        ));
    }

    /// A string field.
    pub fn string(&mut self, key: &str, expected: &Option<String>, got: Option<&Value>) {
        if let Some(e) = expected {
            if got.and_then(Value::as_str) != Some(e.as_str()) {
                self.push(key, e, &show_opt(got));
            }
        }
    }

    /// A string-or-null field.
    pub fn nullable(&mut self, key: &str, expected: &Option<OrNull<String>>, got: Option<&Value>) {
        match expected {
            None => {}
            Some(OrNull::Null) => self.null(key, got),
            Some(OrNull::Value(e)) => self.string(key, &Some(e.clone()), got),
        }
    }

    /// `null` or an absent key both satisfy an expected null.
    pub fn null(&mut self, key: &str, got: Option<&Value>) {
        if !matches!(got, None | Some(Value::Null)) {
            self.push(key, "null", &show_opt(got));
        }
    }

    /// A boolean field.
    pub fn boolean(&mut self, key: &str, expected: Option<bool>, got: Option<&Value>) {
        if let Some(e) = expected {
            if got.and_then(Value::as_bool) != Some(e) {
                self.push(key, &e.to_string(), &show_opt(got));
            }
        }
    }

    /// An integer-or-null field.
    pub fn integer(&mut self, key: &str, expected: &Option<OrNull<i64>>, got: Option<&Value>) {
        match expected {
            None => {}
            Some(OrNull::Null) => self.null(key, got),
            Some(OrNull::Value(n)) if got.and_then(Value::as_i64) != Some(*n) => {
                self.push(key, &n.to_string(), &show_opt(got))
            }
            Some(OrNull::Value(_)) => {}
        }
    }

    /// A list compared as a set (`got` is `None` when the answer holds no list).
    pub fn set(
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
}

/// A value as it reads in a message: strings bare, `(missing)` for an absent key.
pub fn show_opt(v: Option<&Value>) -> String {
    v.map_or_else(|| "(missing)".to_string(), show)
}

/// A value as it reads in a message: strings bare.
pub fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Field `k` of an object as it reads in a message.
pub fn field(v: &Value, k: &str) -> String {
    v.get(k).map_or_else(|| "(missing)".into(), show)
}

/// A list of values as a set of their readings.
pub fn strings(v: Option<&Value>) -> Option<BTreeSet<String>> {
    v.and_then(Value::as_array)
        .map(|items| items.iter().map(show).collect())
}

/// The objects of a list as a set of `a (b)` readings of two fields.
pub fn pairs(v: Option<&Value>, a: &str, b: &str) -> Option<BTreeSet<String>> {
    v.and_then(Value::as_array).map(|items| {
        items
            .iter()
            .map(|e| format!("{} ({})", field(e, a), field(e, b)))
            .collect()
    })
}

fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && [8, 4, 4, 4, 12]
            .iter()
            .zip(&parts)
            .all(|(n, p)| p.len() == *n && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whether `got` holds everything `want` says (strings substituted, `@UUID@` any UUID).
pub fn subset(want: &Value, got: Option<&Value>, sub: &dyn Fn(&str) -> String) -> bool {
    match (want, got) {
        (Value::Object(w), Some(Value::Object(g))) => {
            w.iter().all(|(k, v)| subset(v, g.get(k), sub))
        }
        (Value::Array(w), Some(Value::Array(g))) => {
            w.len() == g.len() && w.iter().zip(g).all(|(a, b)| subset(a, Some(b), sub))
        }
        (Value::String(w), Some(Value::String(g))) if w == "@UUID@" => is_uuid(g),
        (Value::String(w), Some(Value::String(g))) => sub(w) == *g,
        // `false` stands for null.
        (Value::Bool(false), None | Some(Value::Null)) => true,
        (w, Some(g)) => w == g,
        (_, None) => false,
    }
}
