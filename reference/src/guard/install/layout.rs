//! A settings file written back in the person's own layout (GUARD-INSTALL-5): the keys of
//! each object in the order the file had them (new keys after), the file's indent (or one
//! line when the file was one line), and its final newline, so that `install` changes
//! only the lines of the guard's entries and its diff shows only those.
//!
//! Pure: text in, text out.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// The shape of a JSON text: each object's keys in the text's order.
#[derive(Debug, Default)]
enum Shape {
    /// An object: its keys in order, each with its value's shape.
    Object(Vec<(String, Shape)>),
    /// An array: each element's shape.
    Array(Vec<Shape>),
    /// Anything else.
    #[default]
    Leaf,
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Shape, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Shape;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Shape, A::Error> {
                let mut keys = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, Shape>()? {
                    keys.push((k, v));
                }
                Ok(Shape::Object(keys))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Shape, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = s.next_element::<Shape>()? {
                    items.push(v);
                }
                Ok(Shape::Array(items))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
                Ok(Shape::Leaf)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
                Ok(Shape::Leaf)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
                Ok(Shape::Leaf)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
                Ok(Shape::Leaf)
            }
            fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
                Ok(Shape::Leaf)
            }
            fn visit_unit<E>(self) -> Result<Shape, E> {
                Ok(Shape::Leaf)
            }
        }
        d.deserialize_any(V)
    }
}

/// The indent of `text`: the leading blanks of its first indented line (two spaces when
/// none), or `None` when the text holds no line break inside its value (one line).
fn indent_of(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if !trimmed.is_empty() && !trimmed.contains('\n') {
        return None;
    }
    let found = text
        .lines()
        .map(|l| &l[..l.len() - l.trim_start().len()])
        .find(|i| !i.is_empty())
        .unwrap_or("  ");
    Some(found.to_string())
}

/// `value` as text in the layout of `before` (the file's text until now, empty for a new
/// file: two spaces and a final newline).
pub fn render(value: &Value, before: &str) -> String {
    let shape = serde_json::from_str::<Shape>(before).unwrap_or_default();
    let indent = indent_of(before);
    let mut out = String::new();
    write(&mut out, value, &shape, indent.as_deref(), 0);
    if before.is_empty() || before.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn newline(out: &mut String, indent: Option<&str>, level: usize) {
    if let Some(i) = indent {
        out.push('\n');
        for _ in 0..level {
            out.push_str(i);
        }
    }
}

fn write(out: &mut String, v: &Value, shape: &Shape, indent: Option<&str>, level: usize) {
    let sep = if indent.is_some() { ": " } else { ":" };
    match v {
        Value::Object(m) if !m.is_empty() => {
            let known: &[(String, Shape)] = match shape {
                Shape::Object(k) => k,
                _ => &[],
            };
            let mut keys: Vec<(&String, &Shape)> = known
                .iter()
                .filter(|(k, _)| m.contains_key(k))
                .map(|(k, s)| (k, s))
                .collect();
            let leaf = Shape::Leaf;
            for k in m.keys() {
                if !known.iter().any(|(kk, _)| kk == k) {
                    keys.push((k, &leaf));
                }
            }
            out.push('{');
            for (n, (k, s)) in keys.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                newline(out, indent, level + 1);
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push_str(sep);
                write(out, &m[k.as_str()], s, indent, level + 1);
            }
            newline(out, indent, level);
            out.push('}');
        }
        Value::Array(a) if !a.is_empty() => {
            let known: &[Shape] = match shape {
                Shape::Array(k) => k,
                _ => &[],
            };
            // The guard's entries are put at, and taken from, the front of a list: its
            // tail keeps the old elements' shapes.
            let offset = a.len().saturating_sub(known.len());
            let skip = known.len().saturating_sub(a.len());
            out.push('[');
            for (n, e) in a.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                newline(out, indent, level + 1);
                let s = n
                    .checked_sub(offset)
                    .and_then(|i| known.get(skip + i))
                    .unwrap_or(&Shape::Leaf);
                write(out, e, s, indent, level + 1);
            }
            newline(out, indent, level);
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_comes_back_in_its_own_layout() {
        for text in [
            "{\n    \"zeta\": 1,\n    \"alpha\": [\n        true,\n        \"x\"\n    ],\n    \"m\": {}\n}\n",
            "{\"zeta\":1,\"alpha\":{\"b\":[1,2],\"a\":null}}",
            "{\n  \"b\": \"\\u00e9\",\n  \"a\": []\n}",
        ] {
            let v: Value = serde_json::from_str(text).unwrap();
            let back = render(&v, text);
            assert_eq!(serde_json::from_str::<Value>(&back).unwrap(), v);
            if !text.contains("\\u") {
                assert_eq!(back, text);
            }
        }
        assert_eq!(
            render(&serde_json::json!({"a": 1}), ""),
            "{\n  \"a\": 1\n}\n"
        );
    }
}
