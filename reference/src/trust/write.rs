//! The write table (seed `004`, "What a write does"). Every row is exact:
//!
//! | data      | destination      | prompt? | effect on the map                  |
//! |-----------|------------------|---------|------------------------------------|
//! | trusted   | trusted          | no      | unchanged                          |
//! | untrusted | trusted          | yes     | that path becomes untrusted        |
//! | trusted   | untrusted        | no      | that path becomes trusted          |
//! | untrusted | untrusted        | no      | unchanged                          |
//! | either    | never mentioned  | yes     | that path takes the data's trust   |
//!
//! The prompt asks one question only: may this path stop being trusted (or, never
//! mentioned, may it be written at all)? Declining means the write does not happen and
//! the map is unchanged. Reconciliation marks the exact path written, never its parent.
//! A redirection (`>`, `>>`) is a write like any other; files a program opens itself
//! are not recorded.

use super::{Trust, TrustKey, TrustMap};

/// The destination's standing before the write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Destination {
    /// A rule covers it and says trusted.
    Trusted,
    /// A rule covers it and says untrusted.
    Untrusted,
    /// No rule covers it.
    NeverMentioned,
}

/// What reconciliation does to the map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteEffect {
    /// Nothing.
    Unchanged,
    /// The exact path written is marked with this polarity.
    Mark(Trust),
}

/// The row a write matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritePlan {
    /// The exact path to be written.
    pub key: TrustKey,
    /// The data's trust (trusted means the turn observed nothing untrusted).
    pub data: Trust,
    /// The destination's standing.
    pub destination: Destination,
    /// Whether a person must be asked before the write.
    pub prompt: bool,
    /// What the write does to the map once it happened.
    pub effect: WriteEffect,
}

impl TrustMap {
    /// Matches a write of `data` to `key` against the table. Pure: changes nothing.
    pub fn plan_write(&self, key: &TrustKey, data: Trust) -> WritePlan {
        let destination = match self.decision(key) {
            Some(Trust::Trusted) => Destination::Trusted,
            Some(Trust::Untrusted) => Destination::Untrusted,
            None => Destination::NeverMentioned,
        };
        let (prompt, effect) = match (data, destination) {
            (Trust::Trusted, Destination::Trusted) => (false, WriteEffect::Unchanged),
            (Trust::Untrusted, Destination::Trusted) => (true, WriteEffect::Mark(Trust::Untrusted)),
            (Trust::Trusted, Destination::Untrusted) => (false, WriteEffect::Mark(Trust::Trusted)),
            (Trust::Untrusted, Destination::Untrusted) => (false, WriteEffect::Unchanged),
            (d, Destination::NeverMentioned) => (true, WriteEffect::Mark(d)),
        };
        WritePlan {
            key: key.clone(),
            data,
            destination,
            prompt,
            effect,
        }
    }

    /// Reconciles after the write happened: applies the plan's effect to the exact path.
    pub fn reconcile(&mut self, plan: &WritePlan) {
        if let WriteEffect::Mark(t) = plan.effect {
            self.set(&plan.key, t);
        }
    }
}
