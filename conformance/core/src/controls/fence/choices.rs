//! The fence's setup field `choices` (execution-plane chapter, section 15; protocol 1.4):
//! the person's choices for working in the fence, each key one flag of `gatehouse exec`.
//! The choices are the protocol schema's (`spec/protocol.schema.json`, `$defs.choices`):
//! their names, their kinds (one string, a list, names to values, a switch) and which
//! name the person's secrets (`x-secret`) are read from it, so the runner names none of
//! them and a new choice is a property of the schema (and a row of the reference's table,
//! which a test of the reference holds to the same schema).
//!
//! May touch: nothing (data).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// The protocol's schema, as the runner was built with it.
const SCHEMA: &str = include_str!("../../../../../spec/protocol.schema.json");

/// The shape of a choice's value, from its schema type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A string (`null` on the wire is absent: a scenario leaves the key out).
    One,
    /// An array of strings.
    List,
    /// An object of strings.
    Map,
    /// A boolean.
    Switch,
}

impl Kind {
    /// What a value of this kind is written as, for an error line.
    fn expected(self) -> &'static str {
        match self {
            Kind::One => "a string",
            Kind::List => "an array of strings",
            Kind::Map => "a table of strings",
            Kind::Switch => "a boolean",
        }
    }

    /// The kind of a schema property (`type`, or an `enum` of strings).
    fn of(p: &Value) -> Option<Kind> {
        let types: Vec<&str> = match p.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        match types.iter().find(|t| **t != "null").copied() {
            Some("array") => Some(Kind::List),
            Some("object") => Some(Kind::Map),
            Some("boolean") => Some(Kind::Switch),
            Some("string") => Some(Kind::One),
            None if p.get("enum").is_some() => Some(Kind::One),
            _ => None,
        }
    }
}

/// One choice of the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Property {
    kind: Kind,
    /// `x-secret`: the choice names the person's secrets, passed on purpose.
    secret: bool,
}

/// The schema's choices by name (empty should the schema the runner was built with not
/// hold them: then every choice a scenario writes is refused by name).
fn properties() -> &'static BTreeMap<String, Property> {
    static PROPS: OnceLock<BTreeMap<String, Property>> = OnceLock::new();
    PROPS.get_or_init(|| {
        let schema: Value = serde_json::from_str(SCHEMA).unwrap_or(Value::Null);
        let Some(props) = schema["$defs"]["choices"]["properties"].as_object() else {
            return BTreeMap::new();
        };
        props
            .iter()
            .filter_map(|(name, p)| {
                let kind = Kind::of(p)?;
                let secret = p.get("x-secret").and_then(Value::as_bool) == Some(true);
                Some((name.clone(), Property { kind, secret }))
            })
            .collect()
    })
}

/// One choice's value as the scenario writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Chosen {
    One(String),
    List(Vec<String>),
    Map(BTreeMap<String, String>),
    Switch(bool),
}

impl Chosen {
    /// `value` as a value of `kind`, or `None` when it is not one.
    fn read(kind: Kind, value: Value) -> Option<Chosen> {
        let strings = |v: Vec<Value>| -> Option<Vec<String>> {
            v.into_iter()
                .map(|x| match x {
                    Value::String(s) => Some(s),
                    _ => None,
                })
                .collect()
        };
        match (kind, value) {
            (Kind::One, Value::String(s)) => Some(Chosen::One(s)),
            (Kind::List, Value::Array(v)) => strings(v).map(Chosen::List),
            (Kind::Map, Value::Object(m)) => m
                .into_iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Some((k, s)),
                    _ => None,
                })
                .collect::<Option<BTreeMap<_, _>>>()
                .map(Chosen::Map),
            (Kind::Switch, Value::Bool(b)) => Some(Chosen::Switch(b)),
            _ => None,
        }
    }

    /// The value as sent: every string, and every value of names to values, with its
    /// placeholders substituted (paths, values; a name or a mode has none to substitute).
    fn wire(&self, sub: &dyn Fn(&str) -> String) -> Value {
        match self {
            Chosen::One(s) => Value::String(sub(s)),
            Chosen::List(v) => Value::Array(v.iter().map(|s| Value::String(sub(s))).collect()),
            Chosen::Map(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), Value::String(sub(v))))
                    .collect(),
            ),
            Chosen::Switch(b) => Value::Bool(*b),
        }
    }
}

/// `choices`: the choices the scenario writes, each a property of the schema's
/// `$defs.choices` with a value of its kind; sent as written (placeholders applied), the
/// others left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choices(BTreeMap<String, Chosen>);

impl Choices {
    /// The choices as sent in `open`'s setup.
    pub fn wire(&self, sub: &dyn Fn(&str) -> String) -> Value {
        Value::Object(
            self.0
                .iter()
                .map(|(k, v)| (k.clone(), v.wire(sub)))
                .collect(),
        )
    }

    /// The names the session passes on purpose although they look secret: the values of
    /// the choices the schema marks `x-secret`. They are no leak where they show.
    pub fn secrets(&self) -> Vec<String> {
        let props = properties();
        self.0
            .iter()
            .filter(|(k, _)| props.get(*k).is_some_and(|p| p.secret))
            .flat_map(|(_, v)| match v {
                Chosen::List(names) => names.clone(),
                Chosen::One(name) => vec![name.clone()],
                Chosen::Map(m) => m.keys().cloned().collect(),
                Chosen::Switch(_) => Vec::new(),
            })
            .collect()
    }
}

impl<'de> Deserialize<'de> for Choices {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Choices, D::Error> {
        let props = properties();
        let written = BTreeMap::<String, Value>::deserialize(d)?;
        let mut out = BTreeMap::new();
        for (key, value) in written {
            let Some(p) = props.get(&key) else {
                let known: Vec<&str> = props.keys().map(String::as_str).collect();
                return Err(D::Error::custom(format!(
                    "unknown choice `{key}`, expected one of {}",
                    known.join(", ")
                )));
            };
            let Some(v) = Chosen::read(p.kind, value) else {
                return Err(D::Error::custom(format!(
                    "choice `{key}`: expected {}",
                    p.kind.expected()
                )));
            };
            out.insert(key, v);
        }
        Ok(Choices(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(toml_text: &str) -> Result<Choices, String> {
        toml::from_str::<Choices>(toml_text).map_err(|e| e.to_string())
    }

    #[test]
    fn the_schema_names_the_choices_and_one_secret() {
        let props = properties();
        assert!(props.len() >= 8, "{props:?}");
        assert!(props.values().any(|p| p.secret));
    }

    #[test]
    fn every_kind_is_read_and_sent_with_placeholders() {
        let c = read(
            "ro = [\"@HOME@/r\"]\nset_env = { A = \"@HOME@\" }\nnetwork = \"host\"\nconfig_files = true\n",
        )
        .unwrap();
        let sub = |s: &str| s.replace("@HOME@", "/h");
        assert_eq!(
            c.wire(&sub),
            serde_json::json!({"ro": ["/h/r"], "set_env": {"A": "/h"}, "network": "host",
                               "config_files": true})
        );
    }

    #[test]
    fn an_unknown_choice_or_a_wrong_kind_is_refused_by_name() {
        let e = read("pass_envs = [\"A\"]\n").unwrap_err();
        assert!(e.contains("unknown choice `pass_envs`"), "{e}");
        let e = read("ro = \"/r\"\n").unwrap_err();
        assert!(
            e.contains("choice `ro`: expected an array of strings"),
            "{e}"
        );
        let e = read("set_env = { A = 1 }\n").unwrap_err();
        assert!(e.contains("choice `set_env`"), "{e}");
    }

    #[test]
    fn the_secrets_are_the_values_of_the_secret_choices() {
        let secret = properties()
            .iter()
            .find(|(_, p)| p.secret && p.kind == Kind::List)
            .map(|(k, _)| k.clone())
            .unwrap();
        let c = read(&format!(
            "{secret} = [\"T_TOKEN\"]\npass_env = [\"EDITOR\"]\n"
        ))
        .unwrap();
        assert_eq!(c.secrets(), vec!["T_TOKEN".to_string()]);
    }
}
