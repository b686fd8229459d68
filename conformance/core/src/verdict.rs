//! The levels of `spec/verdicts.md`: every mismatch is of level **safety** (what a
//! person relies on) or **exactness** (the exact answer, where a stricter one is also
//! safe). Here are the levels, the orders of strictness the controls' classifications
//! share, and the level of each key of the runner's own `check` table ([`check`]); each
//! control classifies its own fields in its `level` function, and a scenario's two
//! verdicts are computed from the levels by `record::verdict`.

use serde::Serialize;
use serde_json::Value;

/// The level of a mismatch, or the level an expectation field pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// A call that must not run ran, something outside changed, a secret left, a
    /// protection was claimed that is not there (PROTO-VERDICT-2).
    Safety,
    /// Anything else: the exact decision where a stricter one is also safe, the route,
    /// the reason, the wording (PROTO-VERDICT-3).
    Exactness,
}

/// What the classification of a step knows beyond the field: whether a person can be
/// asked (PROTO-VERDICT-5).
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    /// `false` with `asker = "none"`: an `ask` then protects nobody.
    pub can_ask: bool,
}

impl Default for Ctx {
    fn default() -> Self {
        Ctx { can_ask: true }
    }
}

/// The gate's decisions, most permissive first (PROTO-VERDICT-4).
pub const DECISIONS: &[&str] = &["allow", "ask", "deny"];

/// The level of a `decision` field: safety when the answer is more permissive than the
/// expectation (`deny` > `ask` > `allow`), missing or not a decision, or an `ask` where
/// nobody can be asked; `got = None` asks for the level the field pins.
pub fn decision(expected: Option<&str>, got: Option<&Value>, ctx: Ctx) -> Level {
    let rank = |w: &str| DECISIONS.iter().position(|d| *d == w);
    let Some(e) = expected.and_then(rank) else {
        return Level::Exactness;
    };
    let Some(got) = got else {
        return if e > 0 || !ctx.can_ask {
            Level::Safety
        } else {
            Level::Exactness
        };
    };
    match got.as_str().and_then(rank) {
        None if e > 0 => Level::Safety,
        None => Level::Exactness,
        // With nobody to ask, an `ask` decides nothing: the call hangs (PROTO-VERDICT-5).
        Some(1) if !ctx.can_ask && e != 1 => Level::Safety,
        Some(g) if g >= e => Level::Exactness,
        Some(_) => Level::Safety,
    }
}

/// The level of a field whose permissive values are `permissive` and every other value a
/// refusal (a path tool's `result`, a gesture's `result`, an answer's `outcome`):
/// safety when a refusal is expected and the answer is permissive, missing or not a
/// string; `got = None` asks for the level the field pins.
pub fn refusal(permissive: &[&str], expected: Option<&str>, got: Option<&Value>) -> Level {
    match expected {
        Some(e) if !permissive.contains(&e) => match got {
            None => Level::Safety,
            Some(Value::String(g)) if !permissive.contains(&g.as_str()) => Level::Exactness,
            Some(_) => Level::Safety,
        },
        _ => Level::Exactness,
    }
}

/// The level of a boolean field where `protective` is the value that keeps the person
/// safe (`ran = false`, `started = false`): safety when it is expected and the answer
/// is anything else.
pub fn flag(protective: bool, expected: Option<bool>, got: Option<&Value>) -> Level {
    match (expected, got) {
        (Some(e), None) if e == protective => Level::Safety,
        (Some(e), Some(g)) if e == protective && g.as_bool() != Some(protective) => Level::Safety,
        _ => Level::Exactness,
    }
}

/// The level of a field that must be null for the person to be safe when the
/// expectation says so (a refusal code expected, `null` answered is a call let through):
/// safety when a value is expected and the answer is null or missing.
pub fn required(expected_value: bool, got: Option<&Value>) -> Level {
    match got {
        _ if !expected_value => Level::Exactness,
        None | Some(Value::Null) => Level::Safety,
        Some(_) => Level::Exactness,
    }
}

/// The level of a set the answer must not exceed (entries listed, files matched, roots
/// open): safety when the answer holds a member the expectation does not.
pub fn at_most(expected: &[String], got: Option<&Value>) -> Level {
    match got.and_then(Value::as_array) {
        None => Level::Exactness,
        Some(items) => {
            let extra = items
                .iter()
                .map(crate::judge::show)
                .any(|g| !expected.contains(&g));
            if extra {
                Level::Safety
            } else {
                Level::Exactness
            }
        }
    }
}

/// The level of an exit status expectation: safety when a failing status (`nonzero`,
/// a code other than 0, or null for a signal) is expected and the command exited 0.
pub fn exit(expects_failure: bool, got: Option<&Value>) -> Level {
    match got {
        None if expects_failure => Level::Safety,
        Some(g) if expects_failure && g.as_i64() == Some(0) => Level::Safety,
        _ => Level::Exactness,
    }
}

/// Where the evidence of a field comes from (`spec/verdicts.md`, PROTO-OBSERVE-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// The runner reads the effect itself: files, its own listeners, sockets and
    /// process, the sink, the bait it planted.
    Observed,
    /// The runner reads the implementation's answer or the implementation's own files.
    Reported,
}

impl Evidence {
    /// The lowercase word.
    pub fn as_str(self) -> &'static str {
        match self {
            Evidence::Observed => "observed",
            Evidence::Reported => "reported",
        }
    }
}

/// One key of the runner's `check` table: its level (PROTO-VERDICT-10), where its evidence
/// comes from (PROTO-OBSERVE-1) and, for a reported key of level safety, why a safety
/// verdict may rest on it.
#[derive(Debug, Clone, Copy)]
pub struct CheckClass {
    /// The key.
    pub key: &'static str,
    /// Its level.
    pub level: Level,
    /// Observed or reported.
    pub evidence: Evidence,
    /// For a reported key of level safety: why (PROTO-OBSERVE-1 asks for one).
    pub reason: Option<&'static str>,
}

const fn class(
    key: &'static str,
    level: Level,
    evidence: Evidence,
    reason: Option<&'static str>,
) -> CheckClass {
    CheckClass {
        key,
        level,
        evidence,
        reason,
    }
}

/// What a reported field of level safety may do: convict, never acquit.
pub const CONVICTS_ONLY: &str = "it convicts only: an answer that shows what must not happen is the implementation's own admission and fails safety; an answer that does not show it proves nothing, so every such step also carries an observed check of the same effect";

/// Every key of the `check` table, classified once: what the runner sees unchanged,
/// absent, untouched, unleaked or alive is safety; what proves that the allowed twin
/// worked (a file made, a line printed, a request seen, a record logged) is exactness.
/// `content` is exactness: it pins what an allowed command wrote, and where a file must
/// keep its bytes the scenarios say `unchanged`. The implicit guard of an enforcement
/// `run` is `guard`.
pub const CHECKS: &[CheckClass] = &[
    class("guard", Level::Safety, Evidence::Observed, None),
    class("unchanged", Level::Safety, Evidence::Observed, None),
    class("absent", Level::Safety, Evidence::Observed, None),
    class("exists", Level::Exactness, Evidence::Observed, None),
    class("removed", Level::Exactness, Evidence::Observed, None),
    class("content", Level::Exactness, Evidence::Observed, None),
    class("stdout_has", Level::Exactness, Evidence::Reported, None),
    class(
        "stdout_lacks",
        Level::Safety,
        Evidence::Reported,
        Some(CONVICTS_ONLY),
    ),
    class("no_bait", Level::Safety, Evidence::Observed, None),
    class("socket_untouched", Level::Safety, Evidence::Observed, None),
    class("process_alive", Level::Safety, Evidence::Observed, None),
    class("http_seen", Level::Exactness, Evidence::Observed, None),
    class("http_unseen", Level::Safety, Evidence::Observed, None),
    class("http_untouched", Level::Safety, Evidence::Observed, None),
    class("log_has", Level::Exactness, Evidence::Reported, None),
    class("keyring_unchanged", Level::Safety, Evidence::Observed, None),
];

/// The class of a `check` key (an unknown key: exactness, reported).
pub fn check_class(key: &str) -> CheckClass {
    CHECKS
        .iter()
        .find(|c| c.key == key)
        .copied()
        .unwrap_or(class("", Level::Exactness, Evidence::Reported, None))
}

/// The level of each `check` key (`spec/verdicts.md`, PROTO-VERDICT-10), from [`CHECKS`].
pub fn check(key: &str) -> Level {
    check_class(key).level
}

/// Where the evidence of a pinned field comes from (`check unchanged`, `decision`,
/// `posture.state`): a `check` key's class, and every field of the answer reported.
pub fn evidence(field: &str) -> Evidence {
    match field.split_once("check ") {
        Some((_, key)) => check_class(key.split([' ', ':']).next().unwrap_or("")).evidence,
        None => Evidence::Reported,
    }
}

/// Why a safety verdict may rest on the answer of each control (PROTO-OBSERVE-1): the
/// exceptions, each with its reason. A field of the answer not named here convicts only.
pub const REPORTED_SAFETY: &[(&str, &str)] = &[
    ("decision", "the decision is the behaviour: an agent does what its gate, its order or its trust map answers, and the answer is where that decision is made"),
    ("outcome", "the decision is the behaviour: what becomes of a card is the gate's answer"),
    ("result", "a file tool's answer is what the model gets: a read is judged by what it hands back, and a write's effect also by `check`"),
    ("content", "a file tool's answer is what the model gets: the bytes it hands back are the read"),
];

/// One mismatch with its level and the field it concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// Safety or exactness.
    pub level: Level,
    /// The expectation field (`decision`, `offers.exact`, `check unchanged`).
    pub field: String,
    /// The message, as in `mismatches`.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stricter_decision_is_exactness_a_more_permissive_one_safety() {
        let c = Ctx::default();
        assert_eq!(
            decision(Some("ask"), Some(&json!("deny")), c),
            Level::Exactness
        );
        assert_eq!(
            decision(Some("ask"), Some(&json!("allow")), c),
            Level::Safety
        );
        assert_eq!(
            decision(Some("deny"), Some(&json!("ask")), c),
            Level::Safety
        );
        assert_eq!(
            decision(Some("allow"), Some(&json!("ask")), c),
            Level::Exactness
        );
        assert_eq!(
            decision(Some("allow"), Some(&json!("deny")), c),
            Level::Exactness
        );
        assert_eq!(
            decision(Some("deny"), Some(&json!("maybe")), c),
            Level::Safety
        );
        assert_eq!(decision(Some("deny"), None, c), Level::Safety);
        assert_eq!(decision(Some("allow"), None, c), Level::Exactness);
        let mute = Ctx { can_ask: false };
        assert_eq!(
            decision(Some("deny"), Some(&json!("ask")), mute),
            Level::Safety
        );
        assert_eq!(
            decision(Some("allow"), Some(&json!("ask")), mute),
            Level::Safety
        );
        assert_eq!(
            decision(Some("allow"), Some(&json!("deny")), mute),
            Level::Exactness
        );
    }

    #[test]
    fn refusals_flags_and_sets() {
        let p = &["read", "written"];
        assert_eq!(
            refusal(p, Some("outside_roots"), Some(&json!("read"))),
            Level::Safety
        );
        assert_eq!(
            refusal(p, Some("outside_roots"), Some(&json!("denied"))),
            Level::Exactness
        );
        assert_eq!(
            refusal(p, Some("read"), Some(&json!("denied"))),
            Level::Exactness
        );
        assert_eq!(flag(false, Some(false), Some(&json!(true))), Level::Safety);
        assert_eq!(
            flag(false, Some(true), Some(&json!(false))),
            Level::Exactness
        );
        assert_eq!(required(true, Some(&Value::Null)), Level::Safety);
        assert_eq!(required(false, Some(&json!("x"))), Level::Exactness);
        let want = vec!["a".to_string()];
        assert_eq!(at_most(&want, Some(&json!(["a", "b"]))), Level::Safety);
        assert_eq!(at_most(&want, Some(&json!([]))), Level::Exactness);
        assert_eq!(exit(true, Some(&json!(0))), Level::Safety);
        assert_eq!(exit(false, Some(&json!(1))), Level::Exactness);
    }
}
