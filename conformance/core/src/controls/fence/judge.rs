//! Judging the fence's answers (exit status, signal, the fence that held, refusals, the
//! posture), and its families of the allowed-twin rule.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::model::{Action, ExitSpec, ExitWord, Expect, ExpectPosture};
use crate::judge::{show_opt, strings, Judge};
use crate::verdict::{self, Level};
use crate::vocab::{Family, OrNull};

crate::families! {
    super::model::Fence;
    /// `run`.
    RUN = "a `run` expects a refusal (`refused`, a nonzero `exit`, a `signal`) but none expects `exit = 0` with a `check` proving its effect (`exists`, `content` or `stdout_has`)";
    /// `toggle`.
    TOGGLE = "a `toggle` expects a refusal but none expects `refused = false`";
}

/// Whether the expectation is a refusal (`false`) or an allowed outcome (`true`);
/// `proves_effect`: the step's `check` proves a positive effect.
pub fn twin(action: &Action, x: &Expect, proves_effect: bool) -> Option<(Family, bool)> {
    match action {
        Action::Run { .. } => {
            let nonzero = matches!(
                x.exit,
                Some(OrNull::Value(ExitSpec::Word(ExitWord::Nonzero)))
                    | Some(OrNull::Value(ExitSpec::Code(1..))),
            ) || matches!(x.exit, Some(OrNull::Value(ExitSpec::Code(..0))));
            if matches!(x.refused, Some(OrNull::Value(_)))
                || nonzero
                || matches!(x.signal, Some(OrNull::Value(_)))
            {
                return Some((RUN, false));
            }
            let zero = matches!(
                x.exit,
                Some(OrNull::Value(ExitSpec::Word(ExitWord::Zero)))
                    | Some(OrNull::Value(ExitSpec::Code(0)))
            );
            (zero && proves_effect).then_some((RUN, true))
        }
        Action::Toggle { .. } => match &x.refused {
            Some(OrNull::Value(_)) => Some((TOGGLE, false)),
            Some(OrNull::Null) => Some((TOGGLE, true)),
            None => None,
        },
        Action::Posture => None,
    }
}

/// Compares `a` with `x`.
pub fn judge(j: &mut Judge<'_>, x: &Expect, a: &Map<String, Value>) {
    j.nullable("refused", &x.refused, a.get("refused"));
    if let Some(exit) = &x.exit {
        let got = a.get("exit");
        let ok = match exit {
            OrNull::Null => matches!(got, None | Some(Value::Null)),
            OrNull::Value(ExitSpec::Code(n)) => got.and_then(Value::as_i64) == Some(*n),
            OrNull::Value(ExitSpec::Word(ExitWord::Zero)) => got.and_then(Value::as_i64) == Some(0),
            OrNull::Value(ExitSpec::Word(ExitWord::Nonzero)) => {
                got.and_then(Value::as_i64).is_some_and(|n| n != 0)
            }
        };
        if !ok {
            let want = match exit {
                OrNull::Null => "null".to_string(),
                OrNull::Value(ExitSpec::Code(n)) => n.to_string(),
                OrNull::Value(ExitSpec::Word(ExitWord::Zero)) => "0".to_string(),
                OrNull::Value(ExitSpec::Word(ExitWord::Nonzero)) => "nonzero".to_string(),
            };
            j.push("exit", &want, &show_opt(got));
        }
    }
    j.integer("signal", &x.signal, a.get("signal"));
    j.string("held_by", &x.held_by, a.get("held_by"));
    if let Some(p) = &x.posture {
        posture(j, p, a.get("posture"));
    }
}

/// The posture object of an answer.
pub fn posture(j: &mut Judge<'_>, p: &ExpectPosture, got: Option<&Value>) {
    let f = |k: &str| got.and_then(|v| v.get(k));
    j.string("posture.state", &p.state, f("state"));
    j.nullable("posture.backend", &p.backend, f("backend"));
    j.boolean("posture.degraded", p.degraded, f("degraded"));
    j.integer("posture.landlock_abi", &p.landlock_abi, f("landlock_abi"));
    let nc = strings(f("not_covered"));
    if let Some(want) = &p.not_covered {
        let want: BTreeSet<String> = want.iter().cloned().collect();
        j.set("posture.not_covered", &want, nc.clone(), f("not_covered"));
    }
    for code in p.not_covered_has.iter().flatten() {
        if !nc.as_ref().is_some_and(|s| s.contains(code)) {
            j.push(
                "posture.not_covered",
                &format!("a list holding {code}"),
                &show_opt(f("not_covered")),
            );
        }
    }
    for code in p.not_covered_lacks.iter().flatten() {
        if nc.as_ref().is_some_and(|s| s.contains(code)) {
            j.push(
                "posture.not_covered",
                &format!("a list without {code}"),
                &show_opt(f("not_covered")),
            );
        }
    }
    j.string("posture.env", &p.env, f("env"));
    j.string("posture.session_log", &p.session_log, f("session_log"));
    let c = |k: &str| f("choices").and_then(|v| v.get(k));
    j.string("posture.choices.network", &p.network, c("network"));
    if let Some(want) = &p.passed_secrets {
        let want: BTreeSet<String> = want.iter().cloned().collect();
        j.set(
            "posture.choices.passed_secrets",
            &want,
            strings(c("passed_secrets")),
            c("passed_secrets"),
        );
    }
    for (key, want) in [("ro", &p.ro), ("rw", &p.rw), ("hide", &p.hide)] {
        if let Some(want) = want {
            // The posture names resolved paths; the runner's own directories are
            // resolved too, so the expectation is the substituted path made real.
            let want: BTreeSet<String> = want
                .iter()
                .map(|x| {
                    let s = (j.sub)(x);
                    std::fs::canonicalize(&s)
                        .map(|p| p.display().to_string())
                        .unwrap_or(s)
                })
                .collect();
            j.set(
                &format!("posture.choices.{key}"),
                &want,
                strings(c(key)),
                c(key),
            );
        }
    }
    if let Some(want) = &p.path_dropped {
        // Entries as written: substituted, never resolved (the runner's directories are
        // already real).
        let want: BTreeSet<String> = want.iter().map(|x| (j.sub)(x)).collect();
        j.set(
            "posture.path_dropped",
            &want,
            strings(f("path_dropped")),
            f("path_dropped"),
        );
    }
    if let Some(needle) = &p.reason_contains {
        if !f("reason")
            .and_then(Value::as_str)
            .is_some_and(|r| r.contains(needle.as_str()))
        {
            j.push(
                "posture.reason",
                &format!("text containing {needle:?}"),
                &show_opt(f("reason")),
            );
        }
    }
    if let Some(needle) = &p.reason_lacks {
        if f("reason")
            .and_then(Value::as_str)
            .is_some_and(|r| r.contains(needle.as_str()))
        {
            j.push(
                "posture.reason",
                &format!("text without {needle:?}"),
                &show_opt(f("reason")),
            );
        }
    }
}

/// The level of each of the fence's fields (`spec/verdicts.md`, PROTO-VERDICT-8): a
/// refusal expected and none given, a status of 0 where the command must fail, and the
/// posture's claims ([`posture_level`]) are safety; the status's exact value, the signal
/// and which fence held are exactness.
pub fn level(x: &Expect, field: &str, got: Option<&Map<String, Value>>) -> Level {
    let answer = |k: &str| got.and_then(|a| a.get(k));
    match field {
        "refused" => match got {
            None => verdict::required(
                matches!(x.refused, Some(OrNull::Value(_))),
                Some(&Value::Null),
            ),
            Some(_) => verdict::required(
                matches!(x.refused, Some(OrNull::Value(_))),
                answer("refused"),
            ),
        },
        "exit" => {
            let fails = matches!(
                x.exit,
                Some(OrNull::Null) | Some(OrNull::Value(ExitSpec::Word(ExitWord::Nonzero)))
            ) || matches!(x.exit, Some(OrNull::Value(ExitSpec::Code(n))) if n != 0);
            match got {
                None => verdict::exit(fails, None),
                Some(_) => verdict::exit(fails, answer("exit")),
            }
        }
        f if f == "posture" || f.starts_with("posture.") => match &x.posture {
            Some(p) => posture_level(p, f, got.map(|a| a.get("posture"))),
            None => Level::Exactness,
        },
        _ => Level::Exactness,
    }
}

/// The level of a posture field (shared by `opened`): claiming a fence that is not
/// there (`state` `fence` where `off` or `none` is expected), not saying it is degraded,
/// leaving out a gap of `not_covered` or a secret passed in are safety (no protection
/// claimed that is not there); the backend, the ABI, the wording and the paths listed
/// are exactness. `got = None` asks for the level the field pins; `Some(None)` is an
/// answer without a posture.
pub fn posture_level(p: &ExpectPosture, field: &str, got: Option<Option<&Value>>) -> Level {
    let f = |k: &str| got.map(|g| g.and_then(|v| v.get(k)));
    let missing_any = |want: &[String], have: Option<Option<&Value>>| match have {
        None => !want.is_empty(),
        Some(h) => {
            let have = strings(h).unwrap_or_default();
            want.iter().any(|w| !have.contains(w))
        }
    };
    let level = |safe: bool| {
        if safe {
            Level::Safety
        } else {
            Level::Exactness
        }
    };
    match field {
        "posture" => {
            let mut fields = ["posture.state", "posture.degraded", "posture.not_covered"]
                .into_iter()
                .chain(["posture.choices.passed_secrets"]);
            level(fields.any(|k| posture_level(p, k, got) == Level::Safety))
        }
        "posture.state" => match f("state") {
            None => level(p.state.as_deref().is_some_and(|s| s != "fence")),
            Some(g) => verdict::refusal(&["fence"], p.state.as_deref(), g),
        },
        "posture.degraded" => match f("degraded") {
            None => level(p.degraded == Some(true)),
            Some(g) => verdict::flag(true, p.degraded, g),
        },
        "posture.not_covered" => {
            let want: Vec<String> = p
                .not_covered
                .iter()
                .flatten()
                .chain(p.not_covered_has.iter().flatten())
                .cloned()
                .collect();
            level(missing_any(&want, f("not_covered")))
        }
        "posture.choices.passed_secrets" => {
            let c = got.map(|g| {
                g.and_then(|v| v.get("choices"))
                    .and_then(|v| v.get("passed_secrets"))
            });
            level(missing_any(p.passed_secrets.as_deref().unwrap_or(&[]), c))
        }
        _ => Level::Exactness,
    }
}

impl crate::controls::Judged for Action {
    fn judge(&self, x: &Expect, j: &mut Judge<'_>, answer: &Map<String, Value>) {
        super::super::paths::judge::quarantine(j, answer);
        judge(j, x, answer)
    }
    fn twin(&self, x: &Expect, proves_effect: bool) -> Option<(Family, bool)> {
        twin(self, x, proves_effect)
    }
    fn level(
        &self,
        x: &Expect,
        field: &str,
        got: Option<&Map<String, Value>>,
        _: crate::verdict::Ctx,
    ) -> Level {
        level(x, field, got)
    }
}
