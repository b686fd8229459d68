//! Merging the hooks of one lane that ran in parallel for one call (HOOK-PAR-1, -2):
//! deny > ask > allow > no decision, a failure counting as a deny; the hook reported is the
//! first, in declaration order, with the winning verdict. The result never depends on
//! which hook finished first.
//!
//! Pure.

use super::answer::{Outcome, Verdict};

/// The merged verdict of a lane and which hook gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// The winning verdict (`NoDecision` when no hook ran or none decided).
    pub verdict: Verdict,
    /// The index (declaration order) of the hook that gave it.
    pub hook: Option<usize>,
}

fn rank(v: Verdict) -> u8 {
    match v {
        Verdict::Deny => 3,
        Verdict::Ask => 2,
        Verdict::Allow => 1,
        Verdict::NoDecision => 0,
    }
}

/// Merges outcomes given in declaration order.
pub fn merge(outcomes: &[Outcome]) -> Merged {
    let mut best = Merged {
        verdict: Verdict::NoDecision,
        hook: None,
    };
    for (i, o) in outcomes.iter().enumerate() {
        if rank(o.verdict) > rank(best.verdict) {
            best = Merged {
                verdict: o.verdict,
                hook: Some(i),
            };
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::super::answer::Code;
    use super::*;
    use proptest::prelude::*;

    fn o(verdict: Verdict) -> Outcome {
        Outcome {
            verdict,
            code: Code::HookNoDecision,
            message: None,
            updated: None,
        }
    }

    #[test]
    fn deny_beats_ask_beats_allow() {
        let m = merge(&[
            o(Verdict::Allow),
            o(Verdict::Ask),
            o(Verdict::Deny),
            o(Verdict::Deny),
        ]);
        assert_eq!(
            m,
            Merged {
                verdict: Verdict::Deny,
                hook: Some(2)
            }
        );
        let m = merge(&[o(Verdict::Allow), o(Verdict::NoDecision), o(Verdict::Ask)]);
        assert_eq!(m.verdict, Verdict::Ask);
        assert_eq!(merge(&[]).verdict, Verdict::NoDecision);
    }

    proptest! {
        #[test]
        fn the_verdict_does_not_depend_on_order(v in proptest::collection::vec(0u8..4, 0..6), seed in any::<u64>()) {
            let all = [Verdict::Allow, Verdict::Ask, Verdict::Deny, Verdict::NoDecision];
            let outcomes: Vec<Outcome> = v.iter().map(|i| o(all[*i as usize])).collect();
            let mut shuffled = outcomes.clone();
            let n = shuffled.len();
            if n > 1 { shuffled.rotate_left((seed as usize) % n); }
            prop_assert_eq!(merge(&outcomes).verdict, merge(&shuffled).verdict);
        }
    }
}
