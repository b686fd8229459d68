//! The allowed-twin rule: a file whose expectations include a refusal of some kind of
//! step must also expect an allowed outcome of the same kind, so that an implementation
//! that refuses everything fails somewhere in every file. What counts as each is defined
//! in `scenarios/README.md` ("The allowed twin") and here, one family at a time.

use super::model::*;
use super::{ExitSpec, ExitWord, OrNull};

/// A family of steps whose refusals and allowed outcomes are weighed together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    /// `decide`, `code`, `tool`.
    Decision,
    /// `read`, `write`, `edit`, `list`, `search`.
    File,
    /// `query`.
    Query,
    /// `gesture`.
    Gesture,
    /// `run`.
    Run,
    /// `toggle`.
    Toggle,
}

impl Family {
    /// The rule for the message.
    pub fn rule(self) -> &'static str {
        match self {
            Family::Decision => "expectations include `ask` or `deny` but no `allow`",
            Family::File => "a file tool expects a refusal (a `result` other than `read`, `written`, `listed`, `searched`) but none expects one of those",
            Family::Query => "a `query` expects `untrusted`, `unknown` or a refusal but none expects `trusted`",
            Family::Gesture => "a `gesture` expects a refusal but none expects `result = \"done\"`",
            Family::Run => "a `run` expects a refusal (`refused`, a nonzero `exit`, a `signal`) but none expects `exit = 0` with a `check` proving its effect (`exists`, `content` or `stdout_has`)",
            Family::Toggle => "a `toggle` expects a refusal but none expects `refused = false`",
        }
    }
}

/// Whether an expectation is a refusal (`Some(false)`) or an allowed outcome (`Some(true)`).
pub fn classify(step: &Step) -> Option<(Family, bool)> {
    let x = &step.expect;
    let set = |r: &Option<OrNull<String>>| matches!(r, Some(OrNull::Value(_)));
    match &step.action {
        Action::Call { .. } => match x.decision.as_deref()? {
            "allow" => Some((Family::Decision, true)),
            "ask" | "deny" => Some((Family::Decision, false)),
            _ => None,
        },
        Action::Read { .. } | Action::Write { .. } | Action::List(_) | Action::Search { .. } => {
            let r = x.result.as_deref()?;
            let ok = matches!(r, "read" | "written" | "listed" | "searched");
            Some((Family::File, ok))
        }
        Action::Query(_) => {
            if set(&x.refused) {
                return Some((Family::Query, false));
            }
            match x.trust.as_deref()? {
                "trusted" => Some((Family::Query, true)),
                _ => Some((Family::Query, false)),
            }
        }
        Action::Gesture { .. } => Some((Family::Gesture, x.result.as_deref()? == "done")),
        Action::Run { .. } => {
            let nonzero = matches!(
                x.exit,
                Some(OrNull::Value(ExitSpec::Word(ExitWord::Nonzero)))
                    | Some(OrNull::Value(ExitSpec::Code(1..))),
            ) || matches!(x.exit, Some(OrNull::Value(ExitSpec::Code(..0))));
            if set(&x.refused) || nonzero || matches!(x.signal, Some(OrNull::Value(_))) {
                return Some((Family::Run, false));
            }
            let zero = matches!(
                x.exit,
                Some(OrNull::Value(ExitSpec::Word(ExitWord::Zero)))
                    | Some(OrNull::Value(ExitSpec::Code(0)))
            );
            (zero && step.check.proves_effect()).then_some((Family::Run, true))
        }
        Action::Toggle { .. } => match &x.refused {
            Some(OrNull::Value(_)) => Some((Family::Toggle, false)),
            Some(OrNull::Null) => Some((Family::Toggle, true)),
            None => None,
        },
        _ => None,
    }
}

/// The families with a refusal and no allowed outcome, in order.
pub fn missing_twins<'a>(steps: impl Iterator<Item = &'a Step>) -> Vec<Family> {
    let mut refused = std::collections::BTreeSet::new();
    let mut allowed = std::collections::BTreeSet::new();
    for s in steps {
        match classify(s) {
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
