//! The allowed-twin rule: a file whose expectations include a refusal of some kind of
//! step must also expect an allowed outcome of the same kind, so that an implementation
//! that refuses everything fails somewhere in every file. What counts as each is defined
//! in `scenarios/README.md` ("The allowed twin") and, family by family, by the control
//! that owns the step (`twin` in each control's judge).

use std::collections::BTreeSet;

use super::model::Step;
use crate::vocab::Family;

/// The families with a refusal and no allowed outcome, in order.
pub fn missing_twins<'a>(steps: impl Iterator<Item = &'a Step>) -> Vec<Family> {
    let mut refused = BTreeSet::new();
    let mut allowed = BTreeSet::new();
    for s in steps {
        match s.action.twin(s.check.proves_effect()) {
            Some((f, true)) => {
                allowed.insert(f);
            }
            Some((f, false)) => {
                refused.insert(f);
            }
            None => {}
        }
    }
    refused.difference(&allowed).copied().collect()
}
