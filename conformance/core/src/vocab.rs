//! The shared vocabulary of scenarios and answers that belongs to no single control:
//! `OrNull<T>` (a TOML value that is either a `T` or `false`, which stands for JSON `null`
//! because TOML has no null), the yes/no answer, the tool names, the allowed-twin family.

use serde::{Deserialize, Deserializer};

/// An expected value that may be JSON `null`, written `false` in TOML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrNull<T> {
    /// `false` in the file: the answer must carry `null` (or omit the key).
    Null,
    /// A concrete expected value.
    Value(T),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Raw<T> {
    Flag(bool),
    Value(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OrNull<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Raw::<T>::deserialize(deserializer) {
            Ok(Raw::Flag(false)) => Ok(OrNull::Null),
            Ok(Raw::Flag(true)) => Err(serde::de::Error::custom(
                "`true` is not allowed here: write the expected value, or `false` for null",
            )),
            Ok(Raw::Value(v)) => Ok(OrNull::Value(v)),
            Err(_) => Err(serde::de::Error::custom(
                "invalid value: expected the expected value, or `false` for null",
            )),
        }
    }
}

/// What the person answers to a question: `yes`, `no` or `leave`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum YesNo {
    /// Yes.
    Yes,
    /// No.
    No,
    /// Stop (Ctrl-C): leave.
    Leave,
}

/// The tools a grant may be bound to and a `run` may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantTool {
    /// The `shell` tool.
    Shell,
    /// The `execute_code` tool.
    ExecuteCode,
}

/// Lowercase wire word of a serde unit enum value.
pub fn word<T: serde::Serialize>(v: T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A family of steps whose refusals and allowed outcomes are weighed together by the
/// allowed-twin rule; `control` then `order` sort the messages, `rule` is the message.
/// Declared with [`families!`](crate::families), which numbers both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Family {
    /// Its control's position in the registry.
    pub control: u8,
    /// Its position among its control's families, in declaration order.
    pub order: u8,
    /// What is missing, for the message.
    pub rule: &'static str,
}
