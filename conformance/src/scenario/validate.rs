//! The strictness rules of `scenarios/README.md` beyond what serde checks: one action per
//! step, table xor sequence, requirements present and defined, unique names, expectation
//! keys that fit the action, safe fixture paths, and the allowed twin of every refusal.

use std::collections::{BTreeSet, HashSet};
use std::path::{Component, Path};

use toml::Spanned;

use super::load::ScenarioError;
use super::model::*;
use crate::spec::is_requirement_id;

/// The capabilities this runner knows.
pub const KNOWN_CAPABILITIES: &[&str] =
    &["gate", "permissions", "hooks", "trust", "paths", "fence"];

struct Ctx<'a> {
    source: &'a str,
    display: &'a str,
    spec_ids: Option<&'a BTreeSet<String>>,
    errors: Vec<ScenarioError>,
}

impl Ctx<'_> {
    fn err(&mut self, offset: Option<usize>, message: String) {
        self.errors.push(ScenarioError::at(
            self.display,
            self.source,
            offset,
            message,
        ));
    }

    fn check_ids(&mut self, ids: &[Spanned<String>]) {
        for id in ids {
            let offset = Some(id.span().start);
            if !is_requirement_id(id.get_ref()) {
                self.err(
                    offset,
                    format!("`{}` is not a requirement ID", id.get_ref()),
                );
            } else if let Some(known) = self.spec_ids {
                if !known.contains(id.get_ref()) {
                    self.err(
                        offset,
                        format!("requirement `{}` is not defined in spec/", id.get_ref()),
                    );
                }
            }
        }
    }
}

/// Checks a parsed file and resolves it into a [`Scenario`].
pub fn validate(
    file: ScenarioFile,
    source: &str,
    display: &str,
    id: &str,
    spec_ids: Option<&BTreeSet<String>>,
) -> Result<Scenario, Vec<ScenarioError>> {
    let mut cx = Ctx {
        source,
        display,
        spec_ids,
        errors: Vec::new(),
    };

    if file.title.trim().is_empty() {
        cx.err(None, "`title` is empty".into());
    }
    if file.requirements.get_ref().is_empty() {
        cx.err(
            Some(file.requirements.span().start),
            "`requirements` is empty".into(),
        );
    }
    cx.check_ids(file.requirements.get_ref());
    for cap in &file.capabilities {
        if !KNOWN_CAPABILITIES.contains(&cap.as_str()) {
            cx.err(
                None,
                format!("unknown capability `{cap}`, expected one of {KNOWN_CAPABILITIES:?}"),
            );
        }
    }
    check_fixture(&mut cx, &file.fixture);

    let body = match (file.cases, file.steps) {
        (Some(_), Some(_)) => {
            cx.err(
                None,
                "a file holds either [[case]] rows or [[step]] entries, never both".into(),
            );
            None
        }
        (None, None) => {
            cx.err(None, "no [[case]] and no [[step]]: nothing to run".into());
            None
        }
        (Some(cases), None) => Some(table(&mut cx, cases, &file.setup)),
        (None, Some(steps)) => Some(sequence(&mut cx, steps)),
    };

    if let Some(body) = &body {
        check_names(&mut cx, body);
        check_twin(&mut cx, body);
    }
    match body {
        Some(body) if cx.errors.is_empty() => Ok(Scenario {
            id: id.to_string(),
            path: display.to_string(),
            title: file.title,
            requirements: file
                .requirements
                .into_inner()
                .into_iter()
                .map(Spanned::into_inner)
                .collect(),
            tier: file.tier,
            capabilities: file.capabilities,
            platform_os: file.platform.os,
            fixture: file.fixture,
            setup: file.setup,
            body,
        }),
        _ => Err(cx.errors),
    }
}

fn table(cx: &mut Ctx<'_>, cases: Vec<Spanned<Entry>>, file_setup: &SetupPatch) -> Body {
    if cases.is_empty() {
        cx.err(None, "[[case]] is empty".into());
    }
    let mut out = Vec::new();
    for (i, spanned) in cases.into_iter().enumerate() {
        let offset = Some(spanned.span().start);
        let entry = spanned.into_inner();
        if let Some(ids) = &entry.requirements {
            cx.check_ids(ids);
        }
        let setup = entry
            .setup
            .as_ref()
            .map_or_else(|| file_setup.clone(), |s| file_setup.overlay(s));
        let requirements = entry
            .requirements
            .clone()
            .unwrap_or_default()
            .into_iter()
            .map(Spanned::into_inner)
            .collect();
        if let Some(step) = step(cx, "case", i + 1, offset, entry) {
            out.push(Case {
                step,
                setup,
                requirements,
            });
        }
    }
    Body::Table(out)
}

fn sequence(cx: &mut Ctx<'_>, steps: Vec<Spanned<Entry>>) -> Body {
    if steps.is_empty() {
        cx.err(None, "[[step]] is empty".into());
    }
    let mut out = Vec::new();
    for (i, spanned) in steps.into_iter().enumerate() {
        let offset = Some(spanned.span().start);
        let entry = spanned.into_inner();
        if entry.setup.is_some() {
            cx.err(
                offset,
                format!("step {}: `setup` is allowed in a [[case]] only", i + 1),
            );
        }
        if entry.requirements.is_some() {
            cx.err(
                offset,
                format!(
                    "step {}: `requirements` is allowed in a [[case]] only",
                    i + 1
                ),
            );
        }
        if let Some(step) = step(cx, "step", i + 1, offset, entry) {
            out.push(step);
        }
    }
    Body::Sequence(out)
}

fn step(
    cx: &mut Ctx<'_>,
    what: &str,
    index: usize,
    offset: Option<usize>,
    e: Entry,
) -> Option<Step> {
    let mut actions = Vec::new();
    if let Some(line) = e.decide {
        actions.push(Action::Call {
            key: "decide",
            tool: "shell".into(),
            input: line,
        });
    }
    if let Some(code) = e.code {
        actions.push(Action::Call {
            key: "code",
            tool: "execute_code".into(),
            input: code,
        });
    }
    if let Some(t) = e.tool {
        actions.push(Action::Call {
            key: "tool",
            tool: t.name,
            input: t.input,
        });
    }
    if let Some(c) = e.answer {
        actions.push(Action::Answer(c));
    }
    if let Some(g) = e.grants {
        if !g {
            cx.err(offset, format!("{what} {index}: `grants` must be `true`"));
        }
        actions.push(Action::Grants);
    }
    if let Some(t) = e.revoke {
        actions.push(Action::Revoke(t));
    }
    if let Some(a) = e.audit {
        if !a {
            cx.err(offset, format!("{what} {index}: `audit` must be `true`"));
        }
        actions.push(Action::Audit);
    }
    if actions.len() != 1 {
        let n = if actions.is_empty() {
            "no action"
        } else {
            "more than one action"
        };
        cx.err(
            offset,
            format!("{what} {index}: {n}; write exactly one of decide, code, tool, answer, grants, revoke, audit"),
        );
        return None;
    }
    let action = actions.remove(0);
    let expect = e.expect.unwrap_or_default();
    for key in misplaced_expect_keys(&action, &expect) {
        cx.err(
            offset,
            format!(
                "{what} {index}: `expect.{key}` does not apply to {}",
                action.label()
            ),
        );
    }
    Some(Step {
        index,
        name: e.name,
        action,
        expect,
    })
}

fn misplaced_expect_keys(action: &Action, x: &Expect) -> Vec<&'static str> {
    let present = [
        ("decision", x.decision.is_some()),
        ("route", x.route.is_some()),
        ("reason", x.reason.is_some()),
        ("offers", x.offers.is_some()),
        ("card", x.card.is_some()),
        ("outcome", x.outcome.is_some()),
        ("saved", x.saved.is_some()),
        ("grants", x.grants.is_some()),
        ("revoked", x.revoked.is_some()),
        ("outcomes", x.outcomes.is_some()),
    ];
    let allowed: &[&str] = match action {
        Action::Call { .. } => &["decision", "route", "reason", "offers", "card"],
        Action::Answer(_) => &["outcome", "saved"],
        Action::Grants => &["grants"],
        Action::Revoke(_) => &["revoked"],
        Action::Audit => &["outcomes"],
    };
    present
        .into_iter()
        .filter(|(k, p)| *p && !allowed.contains(k))
        .map(|(k, _)| k)
        .collect()
}

fn steps_of(body: &Body) -> Vec<&Step> {
    match body {
        Body::Table(cases) => cases.iter().map(|c| &c.step).collect(),
        Body::Sequence(steps) => steps.iter().collect(),
    }
}

fn check_names(cx: &mut Ctx<'_>, body: &Body) {
    let mut seen = HashSet::new();
    for step in steps_of(body) {
        if let Some(name) = &step.name {
            if !seen.insert(name.clone()) {
                cx.err(
                    None,
                    format!(
                        "two cases or steps are named `{name}` (the second is #{})",
                        step.index
                    ),
                );
            }
        }
    }
}

fn check_twin(cx: &mut Ctx<'_>, body: &Body) {
    let decisions: Vec<&str> = steps_of(body)
        .iter()
        .filter_map(|s| s.expect.decision.as_deref())
        .collect();
    let refuses = decisions.iter().any(|d| *d == "ask" || *d == "deny");
    if refuses && !decisions.contains(&"allow") {
        cx.err(
            None,
            "expectations include `ask` or `deny` but no `allow`: every file carries the allowed twin of each refusal"
                .into(),
        );
    }
}

fn check_fixture(cx: &mut Ctx<'_>, f: &Fixture) {
    for (tree, t) in [
        ("fixture", f.workspace()),
        ("fixture.outside", f.outside.clone()),
        ("fixture.home", f.home.clone()),
    ] {
        let paths = t.dirs.iter().chain(t.files.keys()).chain(t.symlinks.keys());
        for p in paths {
            let path = Path::new(p);
            let ok = !p.is_empty()
                && path
                    .components()
                    .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
            if !ok {
                cx.err(
                    None,
                    format!("[{tree}]: path `{p}` must be relative and stay inside its tree"),
                );
            }
        }
    }
}
