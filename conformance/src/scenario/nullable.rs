//! `OrNull<T>`: a TOML value that is either a `T` or `false`, which stands for JSON `null`
//! because TOML has no null (`family = false`, `saved = false`).

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
