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
//! The prompt asks one question only: may this path take the data's trust (for
//! untrusted data: may it stop being trusted)? Declining means the write does not happen
//! and the map is unchanged. Reconciliation marks the exact path written, never its
//! parent (TRUST-WRITE-8); an untrusted mark is recorded before the first byte lands, a
//! trusted one only after the write succeeded (TRUST-WRITE-9). A redirection (`>`, `>>`,
//! ...) is a write of untrusted data ([`TrustMap::plan_redirect`]); files a program
//! opens itself are not recorded.

use super::map::Origin;
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
    /// The origin its rule is recorded with (`write`, or `redirect`).
    pub origin: Origin,
}

impl WritePlan {
    /// The observable effect (TRUST-OBS-1): `unchanged`, `marked_untrusted`,
    /// `marked_trusted`, or `took_data_trust` for a never-mentioned path.
    pub fn effect_name(&self) -> &'static str {
        match (self.destination, self.effect) {
            (_, WriteEffect::Unchanged) => "unchanged",
            (Destination::NeverMentioned, WriteEffect::Mark(_)) => "took_data_trust",
            (_, WriteEffect::Mark(Trust::Untrusted)) => "marked_untrusted",
            (_, WriteEffect::Mark(Trust::Trusted)) => "marked_trusted",
        }
    }
}

impl TrustMap {
    /// The data trust of an `edit` (TRUST-WRITE-10): untrusted when the turn's data is,
    /// or when the file edited is not trusted (the result still holds its old bytes).
    pub fn edit_data(&self, key: &TrustKey, turn: Trust) -> Trust {
        if turn == Trust::Trusted && self.is_trusted(key) {
            Trust::Trusted
        } else {
            Trust::Untrusted
        }
    }

    /// A redirection the agent's shell opens for writing (TRUST-WRITE-11): a write of
    /// untrusted data, recorded with the origin `redirect`.
    pub fn plan_redirect(&self, key: &TrustKey) -> WritePlan {
        WritePlan {
            origin: Origin::Redirect,
            ..self.plan_write(key, Trust::Untrusted)
        }
    }

    /// Matches a write of `data` to `key` against the table. Pure: changes nothing.
    pub fn plan_write(&self, key: &TrustKey, data: Trust) -> WritePlan {
        let key = &self.normal(key);
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
            origin: Origin::Write,
        }
    }

    /// Before the first byte lands (after a yes where the plan prompts): records an
    /// untrusted mark (TRUST-WRITE-9).
    pub fn before_write(&mut self, plan: &WritePlan) {
        if plan.effect == WriteEffect::Mark(Trust::Untrusted) {
            self.set(&plan.key, Trust::Untrusted, plan.origin);
        }
    }

    /// After the write succeeded: records a trusted mark (TRUST-WRITE-9).
    pub fn after_write(&mut self, plan: &WritePlan) {
        if plan.effect == WriteEffect::Mark(Trust::Trusted) {
            self.set(&plan.key, Trust::Trusted, plan.origin);
        }
    }

    /// Both steps at once, for a caller with nothing between them: applies the plan's
    /// effect to the exact path.
    pub fn reconcile(&mut self, plan: &WritePlan) {
        self.before_write(plan);
        self.after_write(plan);
    }
}
