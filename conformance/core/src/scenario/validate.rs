//! The strictness rules of `scenarios/README.md` beyond what serde checks: one action per
//! step, table xor sequence, requirements present and defined, unique names, expectation
//! keys that fit the action, safe fixture paths, and the allowed twin of every refusal.

use std::collections::{BTreeSet, HashSet};
use std::path::{Component, Path};

use toml::Spanned;

use super::error::{line_col, ScenarioError};
use super::model::*;
use super::twin::missing_twins;
use crate::controls::{self, Action, ExpectError, SetupPatch};
use crate::fixture::placeholders::{split_root, unknown_placeholders};
use crate::fixture::{Fixture, Tree};
use crate::spec::{is_citation, is_requirement_id, split_part};

struct Ctx<'a> {
    source: &'a str,
    display: &'a str,
    spec_ids: Option<&'a BTreeSet<String>>,
    errors: Vec<ScenarioError>,
    /// The requirements the entry being read names (the file's and its case's).
    named: Vec<String>,
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

impl Ctx<'_> {
    /// `pins`: each a citation the spec defines, of a requirement the entry names.
    fn check_pins(&mut self, pins: &[Spanned<String>], what: &str, index: usize) {
        for pin in pins {
            let offset = Some(pin.span().start);
            let cited = pin.get_ref();
            if !is_citation(cited) {
                self.err(
                    offset,
                    format!("{what} {index}: `{cited}` is not a requirement ID or a part of one (`ID.a`)"),
                );
                continue;
            }
            if let Some(known) = self.spec_ids {
                if !known.contains(cited) {
                    self.err(
                        offset,
                        format!("{what} {index}: `{cited}` is not defined in spec/"),
                    );
                    continue;
                }
            }
            let base = split_part(cited).0;
            if !self.named.iter().any(|n| n == base) {
                self.err(
                    offset,
                    format!("{what} {index}: pins `{cited}`, but `{base}` is not among the requirements it names"),
                );
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
        named: file
            .requirements
            .get_ref()
            .iter()
            .map(|r| r.get_ref().clone())
            .collect(),
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
    let mut seen_sources = BTreeSet::new();
    for source in &file.sources {
        if let Err(message) = super::source::check_form(source.get_ref()) {
            cx.err(Some(source.span().start), message);
        } else if !seen_sources.insert(source.get_ref().as_str()) {
            cx.err(
                Some(source.span().start),
                format!("source `{}` is listed twice", source.get_ref()),
            );
        }
    }
    for cap in &file.capabilities {
        if !controls::known_capabilities().contains(&cap.as_str()) {
            cx.err(
                None,
                format!(
                    "unknown capability `{cap}`, expected one of {:?}",
                    controls::known_capabilities()
                ),
            );
        }
    }
    check_fixture(&mut cx, &file.fixture);
    for unknown in unknown_placeholders(source) {
        cx.err(
            Some(unknown.offset),
            format!(
                "unknown placeholder `{}`: nothing replaces it, so it would be sent as written \
                 (see scenarios/README.md for the list)",
                unknown.token
            ),
        );
    }

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
        check_opened(&mut cx, body);
        check_sink(&mut cx, body);
    }
    let uses_sibling = source.contains("@SIBLING@") || !is_empty_tree(&file.fixture.sibling);
    let uses_runner_pid = source.contains("@RUNNER_PID@")
        || body
            .as_ref()
            .is_some_and(|b| steps_of(b).iter().any(|s| s.check.process_alive));
    if source.contains("@SOCKET@") && file.fixture.socket.is_none() {
        cx.err(
            None,
            "`@SOCKET@` is used but there is no [fixture.socket]".into(),
        );
    }
    if source.contains("@HTTP_PORT@") && file.fixture.http.is_none() {
        cx.err(
            None,
            "`@HTTP_PORT@` is used but there is no [fixture.http]".into(),
        );
    }
    if let Some(b) = &body {
        if steps_of(b).iter().any(|s| {
            s.check.http_untouched
                || !s.check.http_seen.is_empty()
                || !s.check.http_unseen.is_empty()
        }) && file.fixture.http.is_none()
        {
            cx.err(
                None,
                "`check.http_seen`, `http_unseen` and `http_untouched` need a [fixture.http]"
                    .into(),
            );
        }
        if steps_of(b).iter().any(|s| s.check.socket_untouched) && file.fixture.socket.is_none() {
            cx.err(
                None,
                "`check.socket_untouched` needs a [fixture.socket]".into(),
            );
        }
        // `absent` is safety: on a file the fixture made, it would prove that an allowed
        // twin removed it, and convict an implementation that refused the twin
        // (stricter, so safe). That is `removed`'s job, at the exactness level.
        let made = file.fixture.workspace();
        for s in steps_of(b) {
            for a in &s.check.absent {
                if made.files.contains_key(a)
                    || made.symlinks.contains_key(a)
                    || made.binary.contains_key(a)
                    || made.dirs.contains(a)
                    || made.fifos.contains(a)
                {
                    cx.err(
                        None,
                        format!(
                            "step {}: `check.absent` names `{a}`, which the fixture makes: to prove the allowed twin removed it, write `removed = [\"{a}\"]` (exactness; `absent` is safety and would fail an implementation that refuses the twin, PROTO-VERDICT-17)",
                            s.index
                        ),
                    );
                }
            }
        }
        if steps_of(b).iter().any(|s| s.check.keyring_unchanged) && !file.platform.keyring_bait {
            cx.err(
                None,
                "`check.keyring_unchanged` needs `[platform] keyring_bait = true`".into(),
            );
        }
    }
    if let Some(b) = &body {
        let steps = steps_of(b);
        if !steps.is_empty() && steps.iter().all(|s| s.pins_declared) {
            for id in file.requirements.get_ref() {
                let id = id.get_ref();
                let pinned = steps
                    .iter()
                    .flat_map(|s| &s.pins)
                    .any(|p| split_part(p).0 == id);
                if !pinned {
                    cx.err(
                        Some(file.requirements.span().start),
                        format!("`{id}` is named, but no step's `pins` names it (a file whose every step says what it pins names only what they pin)"),
                    );
                }
            }
        }
    }
    match body {
        Some(body) if cx.errors.is_empty() => Ok(Scenario {
            id: id.to_string(),
            path: display.to_string(),
            title: file.title,
            info: file.info,
            sources: file.sources.into_iter().map(Spanned::into_inner).collect(),
            requirements: file
                .requirements
                .into_inner()
                .into_iter()
                .map(Spanned::into_inner)
                .collect(),
            tier: file.tier,
            capabilities: {
                let mut setups = vec![&file.setup];
                if let Body::Table(cases) = &body {
                    setups.extend(cases.iter().map(|c| &c.setup));
                }
                effective_capabilities(&file.capabilities, file.tier, &setups, &body)
            },
            platform_os: file.platform.os.clone(),
            platform: file.platform,
            uses_sibling,
            uses_runner_pid,
            uses_sink: source.contains("@SINK@"),
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
        let requirements: Vec<String> = entry
            .requirements
            .clone()
            .unwrap_or_default()
            .into_iter()
            .map(Spanned::into_inner)
            .collect();
        let file_named = cx.named.clone();
        cx.named.extend(requirements.iter().cloned());
        let made = step(cx, "case", i + 1, offset, entry);
        cx.named = file_named;
        if let Some(step) = made {
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
    let Entry {
        name,
        mut actions,
        expect,
        check,
        pins,
        why,
        ..
    } = e;
    let why = why.map(|w| {
        let at = w.span().start;
        let text = w.into_inner();
        if text.trim().is_empty() || text.contains('\n') {
            cx.err(
                Some(at),
                format!("{what} {index}: `why` is one line of prose, not empty"),
            );
        }
        text.trim().to_string()
    });
    let pins_declared = pins.is_some();
    let pins: Vec<String> = pins
        .map(|p| {
            cx.check_pins(&p, what, index);
            p.into_iter().map(Spanned::into_inner).collect()
        })
        .unwrap_or_default();
    for (_, problems) in &actions {
        for m in problems {
            cx.err(offset, format!("{what} {index}: {m}"));
        }
    }
    if actions.len() != 1 {
        let n = if actions.is_empty() {
            "no action"
        } else {
            "more than one action"
        };
        cx.err(
            offset,
            format!(
                "{what} {index}: {n}; write exactly one of {}",
                controls::action_keys().join(", ")
            ),
        );
        return None;
    }
    let (bare, _) = actions.remove(0);
    let label = bare.label();
    let start = expect.as_ref().map_or(0, |x| x.span().start);
    let text = expect
        .as_ref()
        .and_then(|x| cx.source.get(x.span()))
        .map(str::to_string);
    let action = match bare.with_expect(text.as_deref()) {
        Ok(a) => a,
        Err(ExpectError::Misplaced(keys)) => {
            for key in keys {
                cx.err(
                    offset,
                    format!("{what} {index}: `expect.{key}` does not apply to {label}"),
                );
            }
            return None;
        }
        Err(ExpectError::Invalid(at, message)) => {
            cx.err(Some(start + at.unwrap_or(0)), message);
            return None;
        }
    };
    let check = check.unwrap_or_default();
    check_check(cx, what, index, offset, &action, &check);
    Some(Step {
        index,
        line: offset.map_or(0, |o| line_col(cx.source, o).0),
        name,
        action,
        check,
        pins,
        pins_declared,
        why,
    })
}

fn check_check(
    cx: &mut Ctx<'_>,
    what: &str,
    index: usize,
    offset: Option<usize>,
    action: &Action,
    c: &Check,
) {
    if (!c.stdout_has.is_empty() || !c.stdout_lacks.is_empty()) && !action.is_run() {
        cx.err(
            offset,
            format!(
                "{what} {index}: `check.stdout_has` and `check.stdout_lacks` apply to `run` only"
            ),
        );
    }
    let paths = c
        .unchanged
        .iter()
        .chain(&c.absent)
        .chain(&c.removed)
        .chain(&c.exists)
        .chain(c.content.keys());
    for p in paths {
        let beneath = |rest: &str| {
            Path::new(rest)
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        };
        match split_root(p) {
            Some((root, rest)) => {
                // Resolved as if the root were `/r/root`: a suffix (`@LOG@.gone`) names a
                // sibling in the session's directory and is fine; a `..` is not.
                let resolved = format!("/r/root{rest}");
                let stays = Path::new(&resolved).components().all(|c| {
                    matches!(
                        c,
                        Component::RootDir | Component::Normal(_) | Component::CurDir
                    )
                });
                if !stays {
                    cx.err(
                        offset,
                        format!("{what} {index}: check path `{p}` climbs out of `{root}`: no `..` after the placeholder"),
                    );
                }
            }
            None => {
                if p.is_empty()
                    || p.starts_with('@') && !p.starts_with("@NAME:") && !p.starts_with("@PATH:")
                    || !beneath(p)
                {
                    cx.err(
                        offset,
                        format!("{what} {index}: check path `{p}` must start with a placeholder of a root (`@OUTSIDE@/...`) or be relative to the workspace, without `..`"),
                    );
                }
            }
        }
    }
}

fn steps_of(body: &Body) -> Vec<&Step> {
    body.steps()
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

/// PROTO-OBSERVE-2: a `run` whose secret is judged puts what the command holds where the
/// runner reads it itself; `no_bait` on the answer alone convicts only.
fn check_sink(cx: &mut Ctx<'_>, body: &Body) {
    for step in steps_of(body) {
        if step.check.no_bait && step.action.is_run() && !step.action.label().contains("@SINK@") {
            let offset = cx
                .source
                .lines()
                .take(step.line.saturating_sub(1))
                .map(|l| l.len() + 1)
                .sum();
            cx.err(
                Some(offset),
                "`check.no_bait` on a `run` must have the command write what it holds to `@SINK@`: the answer alone is the implementation's word (PROTO-OBSERVE-2)".into(),
            );
        }
    }
}

fn check_twin(cx: &mut Ctx<'_>, body: &Body) {
    for family in missing_twins(steps_of(body).into_iter()) {
        cx.err(
            None,
            format!(
                "{}: every file carries the allowed twin of each refusal",
                family.rule
            ),
        );
    }
}

fn check_opened(cx: &mut Ctx<'_>, body: &Body) {
    let misplaced = match body {
        Body::Table(cases) => cases.iter().any(|c| c.step.action.is_opened()),
        Body::Sequence(steps) => steps.iter().skip(1).any(|s| s.action.is_opened()),
    };
    if misplaced {
        cx.err(
            None,
            "`opened` judges the answer to `open`: it is allowed as the first [[step]] only".into(),
        );
    }
}

/// The file's capabilities plus those its tier, setup fields and actions imply.
fn effective_capabilities(
    file_caps: &[String],
    tier: Tier,
    setups: &[&SetupPatch],
    body: &Body,
) -> Vec<String> {
    let mut caps: Vec<String> = file_caps.to_vec();
    let mut add = |c: &str| {
        if !caps.iter().any(|x| x == c) {
            caps.push(c.to_string());
        }
    };
    if tier == Tier::Enforcement {
        add("fence");
    }
    for s in setups {
        for c in s.implied_capabilities() {
            add(c);
        }
    }
    for step in steps_of(body) {
        if let Some(c) = step.action.capability() {
            add(c);
        }
    }
    caps
}

fn check_fixture(cx: &mut Ctx<'_>, f: &Fixture) {
    for (tree, t) in [
        ("fixture", f.workspace()),
        ("fixture.outside", f.outside.clone()),
        ("fixture.home", f.home.clone()),
        ("fixture.extra", f.extra.clone()),
        ("fixture.sibling", f.sibling.clone()),
    ] {
        for (p, hex) in &t.binary {
            if hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                cx.err(
                    None,
                    format!("[{tree}]: binary `{p}` must be hex digits in pairs"),
                );
            }
        }
        for (p, mode) in &t.modes {
            if mode.is_empty()
                || mode.len() > 4
                || !mode.bytes().all(|b| (b'0'..=b'7').contains(&b))
            {
                cx.err(
                    None,
                    format!("[{tree}]: mode `{mode}` of `{p}` must be octal, like \"0644\""),
                );
            }
        }
        let paths = t
            .dirs
            .iter()
            .chain(t.files.keys())
            .chain(t.symlinks.keys())
            .chain(t.binary.keys())
            .chain(&t.fifos)
            .chain(t.modes.keys());
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

fn is_empty_tree(t: &Tree) -> bool {
    t.dirs.is_empty()
        && t.files.is_empty()
        && t.symlinks.is_empty()
        && t.binary.is_empty()
        && t.fifos.is_empty()
}
