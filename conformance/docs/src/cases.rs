//! A scenario as a person reads it: the fixture in brief, the setup that differs from the
//! defaults, and each step or case as "does this; must answer that; the runner checks
//! this itself", marked as a refusal (what must not happen) or an allowed outcome (the
//! twin that must still work), with each expectation's level (`spec/verdicts.md`), the
//! `info` prose, a link to the TOML source line, and each implementation's result. The
//! reading comes from the validated scenario and from the file's own TOML, so that what
//! is shown is what was written.

use std::collections::BTreeMap;

use super::error::DocsError;
use super::markdown;
use super::page::esc;
use super::reports::{Implementations, ScenarioResult};
use gatehouse_conform_core::scenario::{Scenario, Step, Tier};
use gatehouse_conform_core::verdict::Level;

/// The keys of an entry that are not its action.
const NOT_ACTIONS: &[&str] = &["name", "expect", "check", "setup", "requirements", "pins"];

/// One scenario with its file's text, ready to show.
pub struct View<'a> {
    /// The validated scenario.
    pub scenario: &'a Scenario,
    /// The file as TOML.
    raw: toml::Table,
    /// Each entry's level per expectation field, by its 1-based index.
    levels: BTreeMap<usize, Vec<(String, Level)>>,
}

/// Where links go: the page's way back to the site's root, and how a source line is
/// linked.
pub struct Links<'a> {
    /// `../` times the page's depth.
    pub up: String,
    /// The source link of a file and line.
    pub source: &'a dyn Fn(&str, usize) -> String,
}

impl<'a> View<'a> {
    /// Reads the scenario's file again as TOML.
    pub fn new(scenario: &'a Scenario, source: &str) -> Result<Self, DocsError> {
        let raw: toml::Table = toml::from_str(source).map_err(|e| DocsError::Scenario {
            path: scenario.path.clone().into(),
            source: e,
        })?;
        let mut levels: BTreeMap<usize, Vec<(String, Level)>> = BTreeMap::new();
        for (field, level, _) in scenario.pinned() {
            // `step 2 decision`, `case 1 check unchanged`
            let mut words = field.splitn(3, ' ');
            let (_, n, f) = (words.next(), words.next(), words.next());
            if let (Some(n), Some(f)) = (n.and_then(|n| n.parse().ok()), f) {
                levels.entry(n).or_default().push((f.to_string(), level));
            }
        }
        Ok(View {
            scenario,
            raw,
            levels,
        })
    }

    /// `step` or `case`.
    pub fn what(&self) -> &'static str {
        if self.raw.contains_key("case") {
            "case"
        } else {
            "step"
        }
    }

    fn entry(&self, step: &Step) -> Option<&toml::Table> {
        self.raw
            .get(self.what())
            .and_then(toml::Value::as_array)
            .and_then(|a| a.get(step.index - 1))
            .and_then(toml::Value::as_table)
    }

    /// The anchor of a step on the scenario's page (`step-2`).
    pub fn anchor(&self, step: &Step) -> String {
        format!("{}-{}", self.what(), step.index)
    }

    /// The scenario page's path from the root (`scenarios/gate/read-list.html`).
    pub fn page_path(&self) -> String {
        format!("scenarios/{}.html", self.scenario.id)
    }

    /// The fixture in brief, one line per tree that has something.
    pub fn fixture_lines(&self) -> Vec<String> {
        let Some(fx) = self.raw.get("fixture").and_then(toml::Value::as_table) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let tree = |t: &toml::Table| -> Vec<String> {
            let mut items = Vec::new();
            let keys = |k: &str| -> Vec<String> {
                match t.get(k) {
                    Some(toml::Value::Array(a)) => a
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect(),
                    Some(toml::Value::Table(m)) => m.keys().cloned().collect(),
                    _ => Vec::new(),
                }
            };
            items.extend(keys("dirs").into_iter().map(|d| format!("`{d}/`")));
            if let Some(files) = t.get("files").and_then(toml::Value::as_table) {
                for (name, v) in files {
                    let text = v.as_str().unwrap_or_default();
                    items.push(match short(text) {
                        Some(s) => format!("`{name}` (`{s}`)"),
                        None => format!("`{name}` ({} bytes)", text.len()),
                    });
                }
            }
            items.extend(keys("binary").into_iter().map(|b| format!("`{b}` (bytes)")));
            if let Some(links) = t.get("symlinks").and_then(toml::Value::as_table) {
                for (name, target) in links {
                    items.push(format!(
                        "`{name}` → `{}`",
                        target.as_str().unwrap_or_default()
                    ));
                }
            }
            items.extend(
                keys("fifos")
                    .into_iter()
                    .map(|f| format!("`{f}` (named pipe)")),
            );
            if let Some(modes) = t.get("modes").and_then(toml::Value::as_table) {
                for (name, m) in modes {
                    items.push(format!("`{name}` mode {}", m.as_str().unwrap_or_default()));
                }
            }
            items
        };
        let ws = tree(fx);
        if !ws.is_empty() {
            out.push(format!("workspace: {}", ws.join(", ")));
        }
        for (key, label) in [
            ("outside", "outside (`@OUTSIDE@`)"),
            ("home", "home (`@HOME@`)"),
            ("extra", "extra (`@EXTRA@`)"),
            ("sibling", "sibling session (`@SIBLING@`)"),
        ] {
            if let Some(t) = fx.get(key).and_then(toml::Value::as_table) {
                let items = tree(t);
                if !items.is_empty() {
                    out.push(format!("{label}: {}", items.join(", ")));
                }
            }
        }
        for (key, label) in [
            ("socket", "a UNIX socket the runner listens on"),
            ("http", "an HTTP server of the runner's on 127.0.0.1"),
        ] {
            if let Some(v) = fx.get(key) {
                out.push(format!("{label}: `{}`", inline(v)));
            }
        }
        out
    }

    /// The setup as written: short values inline, YAML and long text as blocks.
    pub fn setup(&self) -> (Vec<String>, Vec<(String, String)>) {
        let mut inline_parts = Vec::new();
        let mut blocks = Vec::new();
        if let Some(t) = self.raw.get("setup").and_then(toml::Value::as_table) {
            for (k, v) in t {
                match v.as_str() {
                    Some(s) if s.contains('\n') => blocks.push((k.clone(), s.to_string())),
                    _ => inline_parts.push(format!("{k} = {}", inline(v))),
                }
            }
        }
        if let Some(p) = self.raw.get("platform") {
            inline_parts.push(format!("platform = {}", inline(p)));
        }
        (inline_parts, blocks)
    }

    /// Whether the step is a refusal (`Some(false)`) or an allowed outcome
    /// (`Some(true)`), by the allowed-twin rule.
    pub fn kind(step: &Step) -> Option<bool> {
        step.action
            .twin(step.check.proves_effect())
            .map(|(_, allowed)| allowed)
    }

    /// The step as read: its action, each expectation with its level, each check phrased.
    pub fn reading(&self, step: &Step) -> Reading {
        let entry = self.entry(step);
        let action = entry
            .and_then(|e| e.iter().find(|(k, _)| !NOT_ACTIONS.contains(&k.as_str())))
            .map(|(k, v)| match v {
                toml::Value::String(s) => (k.clone(), cut(s), true),
                v => (k.clone(), cut(&inline(v)), false),
            })
            .unwrap_or_else(|| (step.action.label(), String::new(), false));
        let levels = self.levels.get(&step.index).cloned().unwrap_or_default();
        let level_of = |key: &str| {
            levels
                .iter()
                .filter(|(f, _)| f == key || f.starts_with(&format!("{key}.")))
                .map(|(_, l)| *l)
                .min()
        };
        let expect = entry
            .and_then(|e| e.get("expect"))
            .and_then(toml::Value::as_table)
            .map(|t| {
                t.iter()
                    .map(|(k, v)| (cut(&format!("{k} = {}", inline(v))), level_of(k)))
                    .collect()
            })
            .unwrap_or_default();
        let mut checks: Vec<(String, Option<Level>)> = entry
            .and_then(|e| e.get("check"))
            .and_then(toml::Value::as_table)
            .map(|t| {
                t.iter()
                    .map(|(k, v)| (phrase(k, v), level_of(&format!("check {k}"))))
                    .collect()
            })
            .unwrap_or_default();
        if self.scenario.tier == Tier::Enforcement
            && step.action.is_run()
            && step.check.guard != Some(false)
        {
            checks.push((
                "the guard: nothing outside the workspace or in the home changes".into(),
                Some(Level::Safety),
            ));
        }
        Reading {
            action,
            expect,
            checks,
        }
    }
}

/// A step as read.
pub struct Reading {
    /// The action key, its value, and whether the value is a string (shown as code).
    pub action: (String, String, bool),
    /// `key = value` of each expectation, with its level.
    pub expect: Vec<(String, Option<Level>)>,
    /// Each runner check phrased, with its level.
    pub checks: Vec<(String, Option<Level>)>,
}

/// The longest text shown of an action, an expectation or a runner's line.
const SHOWN: usize = 600;

/// `text`, cut at [`SHOWN`] bytes (at a character boundary) with what was left out said.
pub fn cut(text: &str) -> String {
    if text.len() <= SHOWN {
        return text.to_string();
    }
    let mut end = SHOWN;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}… ({} bytes in all; in full in the source)",
        &text[..end],
        text.len()
    )
}

/// `text` when it is short and on one line.
fn short(text: &str) -> Option<String> {
    let t = text.trim_end_matches('\n');
    (t.len() <= 40 && !t.contains('\n') && !t.contains('`')).then(|| t.to_string())
}

/// A TOML value on one line, as a scenario writes it.
pub fn inline(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
        toml::Value::Array(a) => {
            format!("[{}]", a.iter().map(inline).collect::<Vec<_>>().join(", "))
        }
        toml::Value::Table(t) => format!(
            "{{ {} }}",
            t.iter()
                .map(|(k, v)| format!("{} = {}", key(k), inline(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

fn key(k: &str) -> String {
    if !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        k.to_string()
    } else {
        serde_json::to_string(k).unwrap_or_default()
    }
}

/// A `check` key and its value as a sentence.
fn phrase(k: &str, v: &toml::Value) -> String {
    let list = || inline(v);
    match k {
        "unchanged" => format!("nothing changes at {}", list()),
        "absent" => format!("nothing exists afterwards at {}", list()),
        "exists" => format!("something exists afterwards at {}", list()),
        "content" => format!("these files hold exactly {}", list()),
        "stdout_has" => format!("stdout shows {}", list()),
        "stdout_lacks" => format!("stdout does not show {}", list()),
        "no_bait" => "no planted secret appears in the answer".into(),
        "socket_untouched" => "nothing connects to the runner's socket".into(),
        "keyring_unchanged" => "the session keyring keeps the runner's key unchanged".into(),
        "process_alive" => "the runner's own process stays alive".into(),
        "http_seen" => format!("the runner's HTTP server is asked for {}", list()),
        "http_unseen" => format!("the runner's HTTP server is never asked for {}", list()),
        "http_untouched" => "no connection reaches the runner's HTTP server".into(),
        "log_has" => format!("the session log holds {}", list()),
        "guard" => "the guard is off for this step (writing outside is the point)".into(),
        other => format!("{other} = {}", list()),
    }
}

/// How one implementation did on one step: `passed`, `failed` with its differences,
/// `skipped` or `not reached`.
pub fn step_result(
    r: &ScenarioResult,
    index: usize,
) -> (&'static str, Vec<&super::reports::Difference>) {
    match r.steps.iter().find(|s| s.index == index) {
        Some(s) if s.differences.is_empty() => ("passed", Vec::new()),
        Some(s) => ("failed", s.differences.iter().collect()),
        None if r.safety == "skipped" => ("skipped", Vec::new()),
        None => ("not reached", Vec::new()),
    }
}

fn level_badge(l: Option<Level>) -> &'static str {
    match l {
        Some(Level::Safety) => " <span class=\"badge failed\" title=\"a wrong answer here fails the safety verdict\">safety</span>",
        Some(Level::Exactness) => " <span class=\"badge skipped\" title=\"a wrong answer here fails the exactness verdict only\">exactness</span>",
        None => "",
    }
}

/// The badges of a scenario's two verdicts for every implementation with a report.
pub fn verdict_badges(id: &str, impls: &Implementations, up: &str) -> String {
    let mut s = String::new();
    for (label, report) in impls.reported() {
        if let Some(r) = report.scenario(id) {
            let _ = std::fmt::Write::write_fmt(
                &mut s,
                format_args!(
                    "<a class=\"badge {}\" href=\"{up}implementations/{label}.html\" title=\"safety {}, exactness {}\">{} {}</a>",
                    esc(&r.safety),
                    esc(&r.safety),
                    esc(&r.exactness),
                    esc(label),
                    verdict_word(r)
                ),
            );
        }
    }
    s
}

/// `passed`, `skipped`, or which verdict failed and on which check (`safety: no_bait`,
/// `exactness: decision`): see [`super::pill::pill`].
pub fn verdict_word(r: &ScenarioResult) -> String {
    super::pill::pill(r)
}

/// One step on one line: its action, what the answer must show and what the runner
/// checks, linked to the step on its scenario's page (for files that do not say which
/// step pins which requirement, under each one they name).
pub fn step_line_html(view: &View<'_>, step: &Step, links: &Links<'_>) -> String {
    let r = view.reading(step);
    let class = match View::kind(step) {
        Some(true) => "case compact allowed",
        Some(false) => "case compact refusal",
        None => "case compact",
    };
    let mut s = format!(
        "<div class=\"{class}\"><a href=\"{}{}#{}\">{} {}</a> <code>{} {}</code>",
        links.up,
        esc(&view.page_path()),
        view.anchor(step),
        view.what(),
        step.index,
        esc(&r.action.0),
        esc(&r.action.1)
    );
    if !r.expect.is_empty() {
        let e: Vec<&str> = r.expect.iter().map(|(e, _)| e.as_str()).collect();
        s += &format!(" → <code>{}</code>", esc(&e.join(", ")));
    }
    if !r.checks.is_empty() {
        let c: Vec<&str> = r.checks.iter().map(|(c, _)| c.as_str()).collect();
        s += &format!("; {}", esc(&c.join("; ")));
    }
    s + "</div>\n"
}

/// One step as HTML: `id` is its anchor on this page; `detail`: each implementation's
/// differences in full (else its result only).
pub fn step_html(
    view: &View<'_>,
    step: &Step,
    id: &str,
    impls: &Implementations,
    links: &Links<'_>,
    detail: bool,
) -> String {
    let reading = view.reading(step);
    let kind = View::kind(step);
    let class = match kind {
        Some(true) => "case allowed",
        Some(false) => "case refusal",
        None => "case",
    };
    let kind_label = match kind {
        Some(true) => "<span class=\"kind\">must work (the allowed twin)</span>",
        Some(false) => "<span class=\"kind\">must not happen (a refusal)</span>",
        None => "",
    };
    let what = view.what();
    let name = step
        .name
        .as_ref()
        .map(|n| format!(" <code>{}</code>", esc(n)))
        .unwrap_or_default();
    let permalink = format!("{}{}#{}", links.up, view.page_path(), view.anchor(step));
    let mut s = format!(
        "<div class=\"{class}\" id=\"{}\"><h4><a href=\"{}\">{what} {}</a>{name} {kind_label}</h4>\n",
        esc(id),
        esc(&permalink),
        step.index
    );
    let (key, value, is_str) = &reading.action;
    if value.contains('\n') {
        s += &format!(
            "<p>{} <code>{}</code>:</p><pre>{}</pre>\n",
            "does",
            esc(key),
            esc(value)
        );
    } else if *is_str {
        s += &format!(
            "<p>does <code>{}</code> <code>{}</code></p>\n",
            esc(key),
            esc(value)
        );
    } else {
        s += &format!("<p>does <code>{} = {}</code></p>\n", esc(key), esc(value));
    }
    if !reading.expect.is_empty() {
        s += "<p>the answer must show:</p><ul class=\"checks\">";
        for (e, l) in &reading.expect {
            s += &format!("<li><code>{}</code>{}</li>", esc(e), level_badge(*l));
        }
        s += "</ul>\n";
    }
    if !reading.checks.is_empty() {
        s += "<p>the runner checks itself:</p><ul class=\"checks\">";
        for (c, l) in &reading.checks {
            s += &format!("<li>{}{}</li>", esc(c), level_badge(*l));
        }
        s += "</ul>\n";
    }
    if !step.pins.is_empty() {
        s += &format!(
            "<p class=\"note\">pins {}</p>\n",
            esc(&step.pins.join(", "))
        );
    } else if step.pins_declared {
        s += "<p class=\"note\">pins nothing itself: a step its sequence needs (a later step judges its effect)</p>\n";
    }
    let mut results = String::new();
    for (label, report) in impls.reported() {
        let Some(r) = report.scenario(&view.scenario.id) else {
            continue;
        };
        let (word, diffs) = step_result(r, step.index);
        results += &format!(
            "<span class=\"badge {}\">{} {word}</span>",
            word.replace(' ', "-"),
            esc(label)
        );
        for d in diffs.into_iter().filter(|_| detail) {
            results += &format!(
                "<div class=\"diff-{}\">{} ({}): {}</div>",
                esc(&d.level),
                esc(label),
                esc(&d.level),
                esc(&cut(&d.message))
            );
        }
    }
    if !results.is_empty() {
        s += &format!("<p class=\"results\">{results}</p>\n");
    }
    s += &format!(
        "<p class=\"note\"><a href=\"{}\">{}:{}</a></p></div>\n",
        esc(&(links.source)(&view.scenario.path, step.line)),
        esc(&view.scenario.path),
        step.line
    );
    s
}

/// The scenario's head as HTML: tier, capabilities, requirements, source, info, fixture,
/// setup.
pub fn head_html(view: &View<'_>, links: &Links<'_>) -> String {
    let sc = view.scenario;
    let mut s = format!(
        "<p class=\"note\">{} tier · needs {} · names {} · <a href=\"{}\">{}</a></p>\n",
        esc(&format!("{:?}", sc.tier).to_lowercase()),
        if sc.capabilities.is_empty() {
            "nothing declared".to_string()
        } else {
            esc(&sc.capabilities.join(", "))
        },
        esc(&sc.all_requirements().join(", ")),
        esc(&(links.source)(&sc.path, 1)),
        esc(&sc.path)
    );
    if let Some(info) = &sc.info {
        s += &format!("<div class=\"info\">{}</div>\n", markdown::to_html(info));
    }
    let fixture = view.fixture_lines();
    if !fixture.is_empty() {
        s += "<p>fixture:</p><ul>";
        for f in fixture {
            s += &format!("<li>{}</li>", markdown::inline_html(&f));
        }
        s += "</ul>\n";
    }
    let (setup, blocks) = view.setup();
    if !setup.is_empty() {
        s += &format!("<p>setup: <code>{}</code></p>\n", esc(&setup.join(", ")));
    }
    for (k, text) in blocks {
        s += &format!(
            "<details><summary>setup <code>{}</code></summary><pre>{}</pre></details>\n",
            esc(&k),
            esc(&text)
        );
    }
    s
}

/// The scenario in Markdown, its steps in brief.
pub fn markdown(
    view: &View<'_>,
    steps: &[&Step],
    impls: &Implementations,
    links: &Links<'_>,
) -> String {
    let sc = view.scenario;
    let mut s = format!(
        "**{}** ([{}]({}))",
        markdown::md_text(&sc.title),
        markdown::md_code(&sc.id),
        (links.source)(&sc.path, 1)
    );
    let results: Vec<String> = impls
        .reported()
        .filter_map(|(label, r)| {
            r.scenario(&sc.id)
                .map(|r| format!("{} {}", markdown::md_text(label), verdict_word(r)))
        })
        .collect();
    if !results.is_empty() {
        s += &format!(" — {}", results.join(", "));
    }
    s.push('\n');
    for step in steps {
        let r = view.reading(step);
        let kind = match View::kind(step) {
            Some(true) => " (must work)",
            Some(false) => " (must not happen)",
            None => "",
        };
        let expect: Vec<&str> = r.expect.iter().map(|(e, _)| e.as_str()).collect();
        let checks: Vec<&str> = r.checks.iter().map(|(c, _)| c.as_str()).collect();
        s += &format!(
            "- {} {}{kind}: {}",
            view.what(),
            step.index,
            markdown::md_code(&format!("{} {}", r.action.0, r.action.1.replace('\n', "⏎")))
        );
        if !expect.is_empty() {
            s += &format!("; must show {}", markdown::md_code(&expect.join(", ")));
        }
        if !checks.is_empty() {
            s += &format!("; checked: {}", markdown::md_text(&checks.join("; ")));
        }
        s.push('\n');
    }
    s
}
