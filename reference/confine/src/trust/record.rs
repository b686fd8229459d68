//! Persistence with the session record: `--resume` restores the map (rules its writes
//! recorded included) and its reach, asking nothing; `/clear` empties it and closes
//! what was opened, so the next startup asks again.

use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use super::map::{Origin, Reach};
use super::{Namespace, Trust, TrustKey, TrustMap};

/// A path kept exactly: text when it is UTF-8, raw bytes otherwise.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum Spelling {
    /// UTF-8 text.
    Text(String),
    /// Anything else.
    Bytes(Vec<u8>),
}

impl Spelling {
    fn from_bytes(b: Vec<u8>) -> Spelling {
        match String::from_utf8(b) {
            Ok(s) => Spelling::Text(s),
            Err(e) => Spelling::Bytes(e.into_bytes()),
        }
    }
    fn bytes(&self) -> &[u8] {
        match self {
            Spelling::Text(s) => s.as_bytes(),
            Spelling::Bytes(b) => b,
        }
    }
}

/// One persisted rule.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleRecord {
    /// Its namespace.
    pub namespace: Namespace,
    /// Its key's spelling (`""` is the working directory).
    pub path: Spelling,
    /// Its polarity.
    pub trust: Trust,
    /// What wrote it.
    pub origin: Origin,
}

/// The map as stored in the session record. Rules are in decision order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustRecord {
    /// The working directory the relative rules are spelled against.
    pub workdir: Spelling,
    /// Every rule, oldest decision first.
    pub rules: Vec<RuleRecord>,
    /// What was opened beside the working directory.
    pub reach: Vec<Reach>,
}

impl TrustMap {
    /// The record to store with the session.
    pub fn record(&self) -> TrustRecord {
        TrustRecord {
            workdir: Spelling::from_bytes(self.workdir.as_os_str().as_bytes().to_vec()),
            rules: self
                .rules()
                .into_iter()
                .map(|(k, r)| RuleRecord {
                    namespace: k.ns,
                    path: Spelling::from_bytes(k.raw()),
                    trust: r.trust,
                    origin: r.origin,
                })
                .collect(),
            reach: self.reach.clone(),
        }
    }

    /// `--resume`: the map exactly as recorded. The caller reopens [`TrustMap::reach`]
    /// and reports any entry that can no longer be opened.
    pub fn resume(record: &TrustRecord) -> TrustMap {
        let workdir = PathBuf::from(std::ffi::OsString::from_vec(
            record.workdir.bytes().to_vec(),
        ));
        let mut map = TrustMap::new(workdir);
        for r in &record.rules {
            map.set(
                &TrustKey::from_raw(r.namespace, r.path.bytes()),
                r.trust,
                r.origin,
            );
        }
        map.reach = record.reach.clone();
        map
    }

    /// `/clear`: a new session. Every rule goes and everything opened beside the working
    /// directory closes (returned, for the caller to close); the startup question is put
    /// again by the caller.
    pub fn clear(&mut self) -> Vec<Reach> {
        let closed = std::mem::take(&mut self.reach);
        *self = TrustMap::new(std::mem::take(&mut self.workdir));
        closed
    }
}

impl serde::Serialize for TrustMap {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.record().serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for TrustMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        TrustRecord::deserialize(d).map(|r| TrustMap::resume(&r))
    }
}
