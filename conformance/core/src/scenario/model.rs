//! The data model of a scenario file, deserialized strictly (unknown keys are errors at
//! their line and column), plus the resolved forms the runner uses. What a step does and
//! what its answer must show belong to the controls (`crate::controls`); this module holds
//! what every scenario shares: the header, `[platform]`, the fixture, `check`, and the
//! shape of a `[[case]]` or `[[step]]`.

use std::collections::BTreeMap;

use serde::de::{self, MapAccess};
use serde::{Deserialize, Deserializer, Serialize};
use toml::Spanned;

use crate::controls::{self, Action, Bare, KnownKey, SetupPatch};
use crate::fixture::Fixture;

/// One scenario file exactly as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// States the behaviour, present tense.
    pub title: String,
    /// The requirement IDs the file covers.
    pub requirements: Spanned<Vec<Spanned<String>>>,
    /// `decision` or `enforcement`.
    pub tier: Tier,
    /// Capabilities the implementation must declare.
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// Prose for reviewers; never sent, shown by `gatehouse-conform docs`.
    #[serde(default)]
    pub info: Option<String>,
    /// Where a public report of what this scenario reproduces can be read: advisories,
    /// issues, pages (the forms are `source.rs`'s; the classes `spec/public-record.toml`'s).
    #[serde(default)]
    pub sources: Vec<Spanned<String>>,
    /// Where the scenario applies.
    #[serde(default)]
    pub platform: Platform,
    /// The files built fresh for every session.
    #[serde(default)]
    pub fixture: Fixture,
    /// The session's setup (fields not written take the defaults).
    #[serde(default)]
    pub setup: SetupPatch,
    /// Table form: each row its own session.
    #[serde(default, rename = "case")]
    pub cases: Option<Vec<Spanned<Entry>>>,
    /// Sequence form: all steps in one session.
    #[serde(default, rename = "step")]
    pub steps: Option<Vec<Spanned<Entry>>>,
}

/// The scenario's tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Pure policy: nothing runs.
    Decision,
    /// Commands really run inside the fence.
    Enforcement,
}

/// `[platform]`: where a scenario applies.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    /// The runner's host os (`std::env::consts::OS`); absent means any.
    #[serde(default)]
    pub os: Option<Vec<String>>,
    /// The Landlock ABI the implementation declares (`null` counts as 0).
    #[serde(default)]
    pub landlock_abi: Option<Range>,
    /// The fence backends the implementation may declare (`environment.fence_backend`).
    #[serde(default)]
    pub fence_backend: Option<Vec<String>>,
    /// `true`: the steps need a fence the implementation builds on this host with the
    /// default policy, whatever its backend (`environment.fence_backend` not null). Where
    /// it refuses to claim one (no user namespaces), the scenario is skipped with that
    /// reason; the refusal itself is pinned by scenarios of its own.
    #[serde(default)]
    pub needs_fence: bool,
    /// `true`: the steps set `user.*` extended attributes on fixture files. The runner
    /// probes the filesystem its fixtures are made on (tmpfs has them only from Linux 6.6)
    /// and skips the scenario, naming the filesystem's answer, where it lacks them.
    #[serde(default)]
    pub fixture_xattrs: bool,
    /// `true`: the steps need the key the runner plants in the implementation's session
    /// keyring (Linux, with python3 and the kernel's keys); skipped, naming why, where
    /// none was planted.
    #[serde(default)]
    pub keyring_bait: bool,
    /// The runner's host architectures (`std::env::consts::ARCH`); absent means any.
    #[serde(default)]
    pub arch: Option<Vec<String>>,
}

/// One `[[case]]` row or `[[step]]` entry as written: the keys every entry may carry and
/// the action keys, each read by the control that owns it. `setup` and `requirements`
/// are allowed in cases only (checked by validation); the `expect` table is kept as
/// written until its action is known.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Optional name, unique in the file.
    pub name: Option<String>,
    /// Every action key written, read, with the problems serde cannot see.
    pub actions: Vec<(Bare, controls::Problems)>,
    /// What the answer must show, as written.
    pub expect: Option<Spanned<toml::Value>>,
    /// What the runner checks itself after the step.
    pub check: Option<Check>,
    /// Case only: setup fields replacing the file's.
    pub setup: Option<SetupPatch>,
    /// Case only: requirement IDs added to the file's.
    pub requirements: Option<Vec<Spanned<String>>>,
    /// What this entry pins: requirements of the file (or the case) or parts of them
    /// (`PROTO-TRUST-1.b`).
    pub pins: Option<Vec<Spanned<String>>>,
    /// Why the entry expects what it does, where that surprises (`git status` asks: it
    /// runs what the repository configures); never sent, shown by the reports beside a
    /// failure of the entry.
    pub why: Option<Spanned<String>>,
}

/// The keys of an entry that belong to no control.
const ENTRY_KEYS: &[&str] = &[
    "name",
    "expect",
    "check",
    "setup",
    "requirements",
    "pins",
    "why",
];

fn entry_keys() -> &'static [&'static str] {
    static KEYS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        ENTRY_KEYS[..1]
            .iter()
            .chain(controls::action_keys())
            .chain(&ENTRY_KEYS[1..])
            .copied()
            .collect()
    })
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Entry;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a [[case]] or [[step]] table")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entry, A::Error> {
                let mut e = Entry {
                    name: None,
                    actions: Vec::new(),
                    expect: None,
                    check: None,
                    setup: None,
                    requirements: None,
                    pins: None,
                    why: None,
                };
                while let Some(key) = map.next_key_seed(KnownKey(entry_keys()))? {
                    match key.as_str() {
                        "name" => e.name = Some(map.next_value()?),
                        "expect" => e.expect = Some(map.next_value()?),
                        "check" => e.check = Some(map.next_value()?),
                        "setup" => e.setup = Some(map.next_value()?),
                        "requirements" => e.requirements = Some(map.next_value()?),
                        "pins" => e.pins = Some(map.next_value()?),
                        "why" => e.why = Some(map.next_value()?),
                        action => e.actions.push(controls::parse_action(action, &mut map)?),
                    }
                }
                Ok(e)
            }
        }
        d.deserialize_map(V)
    }
}

/// `check = { ... }`: evaluated by the runner on the real filesystem and on the answer,
/// never taken from the implementation's word.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// Paths whose every property (recursively for directories) must not change.
    #[serde(default)]
    pub unchanged: Vec<String>,
    /// Paths where nothing may exist after the step.
    #[serde(default)]
    pub absent: Vec<String>,
    /// Paths of the fixture the allowed twin removed or moved away: nothing is there
    /// after the step. Exactness, unlike `absent` (PROTO-VERDICT-17): a stricter
    /// implementation that refuses the twin leaves the file, which is no hole.
    #[serde(default)]
    pub removed: Vec<String>,
    /// Paths where something must exist after the step.
    #[serde(default)]
    pub exists: Vec<String>,
    /// Regular files and their exact contents after the step.
    #[serde(default)]
    pub content: BTreeMap<String, String>,
    /// Strings the `run` answer's stdout must hold.
    #[serde(default)]
    pub stdout_has: Vec<String>,
    /// Strings the `run` answer's stdout must not hold.
    #[serde(default)]
    pub stdout_lacks: Vec<String>,
    /// No planted secret anywhere in the answer.
    #[serde(default)]
    pub no_bait: bool,
    /// Nothing connected to the runner's socket.
    #[serde(default)]
    pub socket_untouched: bool,
    /// The runner's own process is alive and not stopped.
    #[serde(default)]
    pub process_alive: bool,
    /// The session keyring the runner started the implementation in holds exactly the
    /// key it planted, with its payload (`[platform] keyring_bait`).
    #[serde(default)]
    pub keyring_unchanged: bool,
    /// Paths the runner's HTTP server (`[fixture.http]`) must have been asked for.
    #[serde(default)]
    pub http_seen: Vec<String>,
    /// Paths the runner's HTTP server must never have been asked for.
    #[serde(default)]
    pub http_unseen: Vec<String>,
    /// No connection at all reached the runner's HTTP server.
    #[serde(default)]
    pub http_untouched: bool,
    /// Records the session log (`@LOG@`, read by the runner) must hold: each table's
    /// fields all equal in one record of one `.jsonl` file (`{ kind = "net", status = 403 }`).
    #[serde(default)]
    pub log_has: Vec<BTreeMap<String, serde_json::Value>>,
    /// `false` turns off the implicit guard of enforcement `run` steps.
    pub guard: Option<bool>,
}

impl Check {
    /// The keys written (the implicit guard is not one).
    pub fn written(&self) -> Vec<&'static str> {
        [
            ("unchanged", !self.unchanged.is_empty()),
            ("absent", !self.absent.is_empty()),
            ("removed", !self.removed.is_empty()),
            ("exists", !self.exists.is_empty()),
            ("content", !self.content.is_empty()),
            ("stdout_has", !self.stdout_has.is_empty()),
            ("stdout_lacks", !self.stdout_lacks.is_empty()),
            ("no_bait", self.no_bait),
            ("socket_untouched", self.socket_untouched),
            ("process_alive", self.process_alive),
            ("http_seen", !self.http_seen.is_empty()),
            ("http_unseen", !self.http_unseen.is_empty()),
            ("http_untouched", self.http_untouched),
            ("log_has", !self.log_has.is_empty()),
        ]
        .into_iter()
        .filter_map(|(k, on)| on.then_some(k))
        .collect()
    }

    /// Whether it proves a positive effect (the allowed twin of a refused run).
    pub fn proves_effect(&self) -> bool {
        !self.exists.is_empty()
            || !self.content.is_empty()
            || !self.stdout_has.is_empty()
            || !self.http_seen.is_empty()
    }
}

/// A validated step or case, ready to run.
#[derive(Debug, Clone)]
pub struct Step {
    /// 1-based position in the file.
    pub index: usize,
    /// 1-based line of the `[[case]]` or `[[step]]` header in the file.
    pub line: usize,
    /// Optional name.
    pub name: Option<String>,
    /// The action and its expectation.
    pub action: Action,
    /// The runner's own checks (empty when not written).
    pub check: Check,
    /// The requirements and parts it says it pins (`pins`; empty when not written).
    pub pins: Vec<String>,
    /// Whether `pins` is written: `pins = []` says the entry pins nothing (a gesture or a
    /// query whose effect a later step judges), which is not the same as not saying.
    pub pins_declared: bool,
    /// Why it expects what it does (`why`), when written.
    pub why: Option<String>,
}

impl Step {
    /// How messages name it: `step 2 (decide "ls")`; `what` is `step` or `case`.
    pub fn label(&self, what: &str) -> String {
        format!("{what} {} ({})", self.index, self.action.label())
    }

    /// Compares `answer` with the expectation, each mismatch with its level as the
    /// step's control classifies it; `sub` applies the session's placeholders to the
    /// paths of expectations.
    pub fn judge(
        &self,
        what: &str,
        answer: &serde_json::Map<String, serde_json::Value>,
        sub: &dyn Fn(&str) -> String,
        ctx: crate::verdict::Ctx,
    ) -> Vec<crate::verdict::Difference> {
        let mut j = crate::judge::Judge::new(self.label(what), sub);
        self.action.judge(&mut j, answer);
        j.finish()
            .into_iter()
            .map(|(field, message)| crate::verdict::Difference {
                level: self.action.level(&field, answer, ctx),
                field,
                message,
            })
            .collect()
    }

    /// Every expectation field and `check` key written, with the level it pins.
    pub fn pinned(&self, ctx: crate::verdict::Ctx) -> Vec<(String, crate::verdict::Level)> {
        let mut out = self.action.pinned(ctx);
        out.extend(
            self.check
                .written()
                .into_iter()
                .map(|k| (format!("check {k}"), crate::verdict::check(k))),
        );
        out
    }
}

/// A table row: its own setup and extra requirements.
#[derive(Debug, Clone)]
pub struct Case {
    /// The step to run.
    pub step: Step,
    /// The file's setup overlaid with the row's.
    pub setup: SetupPatch,
    /// Requirement IDs added by the row.
    pub requirements: Vec<String>,
}

/// The body of a scenario: table or sequence.
#[derive(Debug, Clone)]
pub enum Body {
    /// `[[case]]` rows, each a fresh session.
    Table(Vec<Case>),
    /// `[[step]]` entries in one session.
    Sequence(Vec<Step>),
}

impl Body {
    /// Every step or case, in order.
    pub fn steps(&self) -> Vec<&Step> {
        match self {
            Body::Table(cases) => cases.iter().map(|c| &c.step).collect(),
            Body::Sequence(steps) => steps.iter().collect(),
        }
    }
}

/// A loaded, validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Path under `scenarios/` without `.toml`, with `/` separators.
    pub id: String,
    /// The file it came from (as displayed in messages).
    pub path: String,
    /// The title.
    pub title: String,
    /// The prose for reviewers, if written.
    pub info: Option<String>,
    /// The public reports it reproduces, as written (`ScenarioFile::sources`).
    pub sources: Vec<String>,
    /// The file-level requirement IDs.
    pub requirements: Vec<String>,
    /// The tier.
    pub tier: Tier,
    /// Required capabilities.
    pub capabilities: Vec<String>,
    /// Allowed host operating systems (`None`: any).
    pub platform_os: Option<Vec<String>>,
    /// The ranges over the implementation's declared environment.
    pub platform: Platform,
    /// Whether the text uses `@SIBLING@` or has `[fixture.sibling]`: a second session.
    pub uses_sibling: bool,
    /// Whether the text uses `@RUNNER_PID@` or checks `process_alive`.
    pub uses_runner_pid: bool,
    /// Whether the text uses `@SINK@`: the runner makes its sink in the workspace.
    pub uses_sink: bool,
    /// The fixture.
    pub fixture: Fixture,
    /// The file's setup.
    pub setup: SetupPatch,
    /// Table or sequence.
    pub body: Body,
}

impl Scenario {
    /// Every requirement the scenario cites, file-level and per case, deduplicated.
    pub fn all_requirements(&self) -> Vec<String> {
        let mut all = self.requirements.clone();
        if let Body::Table(cases) = &self.body {
            for case in cases {
                all.extend(case.requirements.iter().cloned());
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        all.retain(|id| seen.insert(id.clone()));
        all
    }

    /// Every step or case with the requirements it names: the file's and, for a case, the
    /// case's own.
    pub fn entries(&self) -> Vec<(&Step, Vec<String>)> {
        match &self.body {
            Body::Sequence(steps) => steps
                .iter()
                .map(|s| (s, self.requirements.clone()))
                .collect(),
            Body::Table(cases) => cases
                .iter()
                .map(|c| {
                    let mut reqs = self.requirements.clone();
                    reqs.extend(c.requirements.iter().cloned());
                    (&c.step, reqs)
                })
                .collect(),
        }
    }

    /// What a step or case pins, as requirement IDs and parts (`ID.a`): what its `pins`
    /// says (nothing for `pins = []`); without `pins`, its case's own requirements, or the file's requirement when
    /// the file names one only. Empty: the file names several and does not say which
    /// this one pins.
    pub fn step_pins(&self, step: &Step, named: &[String]) -> Vec<String> {
        if step.pins_declared {
            return step.pins.clone();
        }
        let own: Vec<String> = named[self.requirements.len()..].to_vec();
        if !own.is_empty() {
            own
        } else if self.requirements.len() == 1 {
            self.requirements.clone()
        } else {
            Vec::new()
        }
    }

    /// Every field the scenario pins (`step 2 decision`, `case 1 check unchanged`) with
    /// its level, and the requirements each pins it for: the file's for a step, the
    /// file's and the case's for a case. The implicit guard of an enforcement `run` is
    /// `check guard`, of level safety.
    pub fn pinned(&self) -> Vec<(String, crate::verdict::Level, Vec<String>)> {
        use crate::verdict::{Ctx, Level};
        let ctx = |setup: &SetupPatch| setup.resolve().ctx();
        let of = |step: &Step, what: &str, ctx: Ctx, reqs: Vec<String>| {
            let mut fields = step.pinned(ctx);
            if self.tier == Tier::Enforcement
                && step.action.is_run()
                && step.check.guard != Some(false)
            {
                fields.push(("check guard".to_string(), Level::Safety));
            }
            fields
                .into_iter()
                .map(|(f, l)| (format!("{what} {} {f}", step.index), l, reqs.clone()))
                .collect::<Vec<_>>()
        };
        match &self.body {
            Body::Sequence(steps) => steps
                .iter()
                .flat_map(|s| of(s, "step", ctx(&self.setup), self.requirements.clone()))
                .collect(),
            Body::Table(cases) => cases
                .iter()
                .flat_map(|c| {
                    let mut reqs = self.requirements.clone();
                    reqs.extend(c.requirements.iter().cloned());
                    of(&c.step, "case", ctx(&c.setup), reqs)
                })
                .collect(),
        }
    }
}

/// An integer range over the implementation's declared environment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    /// Lowest value accepted.
    pub min: Option<i64>,
    /// Highest value accepted.
    pub max: Option<i64>,
}

impl Range {
    /// Whether `v` (`None`: the environment says null, read as 0) lies in the range.
    pub fn holds(&self, v: Option<i64>) -> bool {
        let v = v.unwrap_or(0);
        self.min.map_or(true, |m| v >= m) && self.max.map_or(true, |m| v <= m)
    }

    /// `>= 3`, `<= 2`, `3..=5`.
    pub fn describe(&self) -> String {
        match (self.min, self.max) {
            (Some(a), Some(b)) => format!("{a}..={b}"),
            (Some(a), None) => format!(">= {a}"),
            (None, Some(b)) => format!("<= {b}"),
            (None, None) => "any".into(),
        }
    }
}
