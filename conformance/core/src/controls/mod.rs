//! The controls the suite certifies, one module each (`gate`, `paths`, `trust`, `fence`,
//! `order`, plus `open` for judging the `open` answer), and the registry that dispatches
//! to them. Each control implements [`Control`] (its step, setup and capabilities) and
//! its step's parts in their own files: [`ControlAction`] (`model.rs`: keys, parsing,
//! what the runner does with it), [`ToRequest`] (`wire.rs`), [`Judged`] (`judge.rs`: the
//! judging of its answer, its allowed twin, the level of each field); the runner holds
//! its steps as [`Action`]s and never names a control. Each control declares its
//! `[setup]` fields once ([`setup!`](crate::setup), `setup.rs`) and its [`Control`] impl
//! in its `model.rs`; the registry generates from them the aggregate [`SetupPatch`] and
//! [`Setup`], their reading, overlay, resolution, the `open` setup, the capabilities the
//! fields imply and [`known_capabilities`]. A control's module is declared here, inline
//! (its doc and its three files: it has no `mod.rs`), beside its line in `registry!`.

/// The `fence` control (`spec/execution-plane.md`): scenario model, wire messages and
/// judge of commands run in the plane, the posture and the runtime toggle; `choices`, its
/// setup field of the person's choices, read against the protocol's schema.
pub mod fence {
    pub mod choices;
    pub mod judge;
    pub mod model;
    pub mod wire;
}

/// The gate control (`spec/approval-gate.md`): scenario model, wire messages and judge of the
/// tool-call decisions, cards, grants and the audit trail.
pub mod gate {
    pub mod judge;
    pub mod model;
    pub mod wire;
}

pub mod open;

/// The permissions and hooks control (`spec/permissions.md`, `spec/hooks.md`,
/// `spec/decision-order.md`): scenario model, wire messages and judge of tool calls
/// through the whole decision order, the loading of agent and settings files, patterns
/// added in the session, restarts and crashes between steps, and the files a hook left,
/// which the runner reads itself.
pub mod order {
    pub mod judge;
    pub mod model;
    pub mod wire;
}

/// The `paths` control (`spec/path-confinement.md`): scenario model, wire messages and
/// judge of the file tools.
pub mod paths {
    pub mod judge;
    pub mod model;
    pub mod wire;
}

pub mod setup;

/// The `trust` control (`spec/trust-map.md`): scenario model, wire messages and judge of
/// the trust map.
pub mod trust {
    pub mod judge;
    pub mod model;
    pub mod wire;
}

use std::fmt::Debug;
use std::sync::OnceLock;

use serde::de::{self, DeserializeOwned, MapAccess};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::judge::Judge;
use crate::protocol::SessionDirs;
use crate::verdict::{Ctx, Level};
use crate::vocab::Family;
pub use setup::{NoSetup, SetupFields};

/// The registry: every control, named by its field of [`Setup`], in the order their
/// keys are listed and their actions tried. Adding a control is one line here (and its
/// module).
macro_rules! registry {
    ($($name:ident: $control:ty),* $(,)?) => {
        const NAMES: &[&str] = &[$(stringify!($name)),*];
        $(impl Placed for $control {
            const INDEX: u8 = position(NAMES, stringify!($name));
        })*

        /// Every control, in the order their keys are listed and their messages sorted.
        pub const REGISTRY: &[Registered] = &[$(Registered {
            actions: <<$control as Control>::Action as ControlAction>::ACTION_KEYS,
            expect: <<$control as Control>::Action as ControlAction>::EXPECT_KEYS,
            setup: <<$control as Control>::Setup as SetupFields>::KEYS,
            capabilities: <$control as Control>::CAPABILITIES,
        }),*];

        /// Reads the value of action `key` (one of [`action_keys`]) with the owning
        /// control's parser; the second part holds the problems serde cannot see.
        pub fn parse_action<'de, A: MapAccess<'de>>(
            key: &str,
            map: &mut A,
        ) -> Result<(Bare, Problems), A::Error> {
            $(
                if <<$control as Control>::Action as ControlAction>::ACTION_KEYS.contains(&key) {
                    let (action, problems) =
                        <<$control as Control>::Action as ControlAction>::parse(key, map)?;
                    return Ok((Bare(Box::new(action)), problems));
                }
            )*
            Err(de::Error::unknown_field(key, action_keys()))
        }

        /// `[setup]` as written, split by the control that owns each key.
        #[derive(Debug, Clone, Default)]
        pub struct SetupPatch {
            $(
                #[doc = concat!("The fields of `", stringify!($name), "`.")]
                pub $name: <$control as Control>::Setup,
            )*
        }

        /// A resolved setup, defaults applied, by control.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct Setup {
            $(
                #[doc = concat!("The fields of `", stringify!($name), "`.")]
                pub $name: <<$control as Control>::Setup as SetupFields>::Resolved,
            )*
        }

        impl SetupPatch {
            /// Reads the value of `key` into the control that owns it.
            fn set<'de, A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
                $(
                    if <<$control as Control>::Setup as SetupFields>::KEYS.contains(&key) {
                        return self.$name.set(key, map);
                    }
                )*
                Err(de::Error::unknown_field(key, setup_keys()))
            }

            /// `self` with every field written in `over` replaced.
            pub fn overlay(&self, over: &SetupPatch) -> SetupPatch {
                SetupPatch {
                    $($name: self.$name.overlay(&over.$name),)*
                }
            }

            /// The capabilities the fields written here need: of each control with a
            /// field written, its first capability (none for the base, `gate`).
            pub fn implied_capabilities(&self) -> Vec<&'static str> {
                let mut caps = Vec::new();
                $(
                    if let Some(cap) = <$control as Control>::CAPABILITIES.first() {
                        if *cap != BASE_CAPABILITY && self.$name.needs_capability() {
                            caps.push(*cap);
                        }
                    }
                )*
                caps
            }

            /// The setup with defaults filled in (workspace and home are added by the
            /// runner).
            pub fn resolve(&self) -> Setup {
                Setup {
                    $($name: self.$name.resolve(),)*
                }
            }
        }

        impl Setup {
            /// The setup sent in `open`: the session's directories, then the fields of
            /// each control the scenario needs (`caps`); the base control's always.
            pub fn wire(
                &self,
                caps: &[String],
                dirs: &SessionDirs,
                sub: &dyn Fn(&str) -> String,
            ) -> Map<String, Value> {
                let needs = |of: &[&str]| {
                    of.contains(&BASE_CAPABILITY) || caps.iter().any(|c| of.contains(&c.as_str()))
                };
                let mut out = Map::new();
                out.insert("workspace".into(), Value::String(dirs.workspace.clone()));
                out.insert("home".into(), Value::String(dirs.home.clone()));
                $(
                    if needs(<$control as Control>::CAPABILITIES) {
                        out.extend(<<$control as Control>::Setup as SetupFields>::wire(
                            &self.$name,
                            dirs,
                            sub,
                        ));
                    }
                )*
                out
            }

            /// What the classification of a step knows from the setup (PROTO-VERDICT-5).
            pub fn ctx(&self) -> Ctx {
                let mut ctx = Ctx::default();
                $(<<$control as Control>::Setup as SetupFields>::ctx(&self.$name, &mut ctx);)*
                ctx
            }
        }
    };
}

registry![
    gate: gate::model::Gate,
    paths: paths::model::Paths,
    trust: trust::model::Trust,
    open: open::Open,
    fence: fence::model::Fence,
    order: order::model::Order,
];

/// A control's position in the registry, which sorts its families (written by
/// `registry!`).
pub trait Placed {
    /// Its position, from 0.
    const INDEX: u8;
}

/// The position of `name` in `names` (a const fn, for [`Placed::INDEX`]).
const fn position(names: &[&str], name: &str) -> u8 {
    let mut i = 0;
    while i < names.len() {
        let (a, b) = (names[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut k = 0;
            while k < a.len() && a[k] == b[k] {
                k += 1;
            }
            if k == a.len() {
                return i as u8;
            }
        }
        i += 1;
    }
    panic!("not in the registry")
}

/// Declares a control's families of the allowed-twin rule in its `judge.rs`, numbered by
/// the control's place in the registry and their declaration order:
///
/// ```text
/// families! {
///     super::Trust;
///     /// `query`.
///     QUERY = "a `query` expects ... but none expects `trusted`";
/// }
/// ```
#[macro_export]
macro_rules! families {
    (@at $n:expr; $owner:ty;) => {};
    (@at $n:expr; $owner:ty; $(#[doc = $doc:literal])* $name:ident = $rule:expr; $($rest:tt)*) => {
        $(#[doc = $doc])*
        pub const $name: $crate::vocab::Family = $crate::vocab::Family {
            control: <$owner as $crate::controls::Placed>::INDEX,
            order: $n,
            rule: $rule,
        };
        $crate::families!(@at $n + 1; $owner; $($rest)*);
    };
    ($owner:ty; $($rest:tt)*) => {
        $crate::families!(@at 0; $owner; $($rest)*);
    };
}

/// Problems with a step that serde cannot see (`posture = false`), one message each; the
/// loader reports each at the step's line.
pub type Problems = Vec<String>;

/// What one control is to the registry: its step type, its `[setup]` fields and the
/// capabilities it answers to. Its parts implement their own traits in their own files:
/// [`ControlAction`] in `model.rs`, [`ToRequest`] in `wire.rs`, [`Judged`] in `judge.rs`;
/// its `model.rs` implements this trait.
pub trait Control {
    /// One of its steps as read.
    type Action: Step;
    /// Its `[setup]` fields, declared with [`setup!`](crate::setup) ([`NoSetup`]: none).
    type Setup: SetupFields;
    /// The capabilities it answers to; its setup fields are sent in `open` when the
    /// scenario needs one, and writing one implies the first. [`BASE_CAPABILITY`]: always
    /// sent, implies none; empty: never sent.
    const CAPABILITIES: &'static [&'static str];
}

/// What a step is to the runner, beyond its control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// `opened`: sends nothing, judges the `open` answer.
    Opened,
    /// Runs a command in the plane: the implicit guard and the `stdout_*` checks apply.
    Run,
    /// A tool call whose answer may open a card.
    Call,
    /// `answer = "silence"`: nobody answers the card.
    Silence,
    /// Anything else.
    Other,
}

/// One control's step as read (its `model.rs`): the keys it owns, its parsing, and what
/// the runner asks of it besides the request and the judging. Each control classifies its
/// own `expect` fields in [`Judged`] and nowhere else.
pub trait ControlAction: Debug + Clone + Send + Sync + Sized + 'static {
    /// Its action keys in a `[[case]]` or `[[step]]`.
    const ACTION_KEYS: &'static [&'static str];
    /// Its `expect` keys.
    const EXPECT_KEYS: &'static [&'static str];
    /// Its `expect` table.
    type Expect: DeserializeOwned + Default + Debug + Clone + Send + Sync + 'static;
    /// Reads the value of action `key`, one of [`ControlAction::ACTION_KEYS`]; the second
    /// part holds the problems serde cannot see.
    fn parse<'de, A: MapAccess<'de>>(key: &str, map: &mut A) -> Result<(Self, Problems), A::Error>;
    /// A short label for messages: `decide "ls /etc"`.
    fn label(&self) -> String;
    /// The `expect` keys that apply to this action.
    fn expect_keys(&self) -> &'static [&'static str];
    /// The capability the action needs, beyond `gate` for the gate's own steps.
    fn capability(&self) -> Option<&'static str>;
    /// What the step is to the runner.
    fn kind(&self) -> StepKind {
        StepKind::Other
    }
}

/// What a step may use when the runner answers it itself.
pub struct RunnerEnv<'a> {
    /// The session's name.
    pub session: &'a str,
    /// The session's placeholder substitution.
    pub sub: &'a dyn Fn(&str) -> String,
    /// A path as written (placeholders, relative to the workspace) made absolute.
    pub locate: &'a dyn Fn(&str) -> std::path::PathBuf,
    /// Whether a text holds a planted secret.
    pub has_bait: &'a dyn Fn(&str) -> bool,
}

/// A step the runner carries out itself ([`ToRequest::by_runner`]).
#[derive(Debug, Clone)]
pub enum ByRunner {
    /// The answer, read by the runner itself (from the files).
    Answer(Map<String, Value>),
    /// End the implementation (`kill`: at once, else cleanly), start it again and
    /// resume the session.
    Restart {
        /// Kill rather than close.
        kill: bool,
    },
    /// Send `arm`, then `inner`, the request the implementation must die in; then start
    /// it again and resume the session.
    Crash {
        /// Arms the crash point.
        arm: Map<String, Value>,
        /// The request to die in.
        inner: Map<String, Value>,
    },
}

/// A step's request (its control's `wire.rs`).
pub trait ToRequest {
    /// The request line's body (without id), or `None` when it sends nothing.
    fn request(
        &self,
        session: &str,
        setup: &Setup,
        sub: &dyn Fn(&str) -> String,
    ) -> Option<Map<String, Value>>;
    /// What the runner does itself for this step instead of sending its request
    /// (`None`: it sends the request).
    fn by_runner(&self, _: &RunnerEnv<'_>) -> Option<ByRunner> {
        None
    }
}

/// The judging of a step's answer (its control's `judge.rs`).
pub trait Judged: ControlAction {
    /// Compares `answer` with the expectation.
    fn judge(&self, x: &Self::Expect, j: &mut Judge<'_>, answer: &Map<String, Value>);
    /// The allowed-twin classification: a refusal (`false`) or an allowed outcome
    /// (`true`) of a family; `proves_effect`: the step's `check` proves an effect.
    fn twin(&self, x: &Self::Expect, proves_effect: bool) -> Option<(Family, bool)>;
    /// The level (`spec/verdicts.md`) of expectation field `field`, as `judge` names it
    /// (`decision`, `offers.exact`): with `got`, of its mismatch against that answer;
    /// with `None`, the level the field pins (safety when some answer could fail safety
    /// on it). The control's whole classification of its fields, in one place.
    fn level(
        &self,
        x: &Self::Expect,
        field: &str,
        got: Option<&Map<String, Value>>,
        ctx: Ctx,
    ) -> Level;
}

/// A whole step: its model, request and judging.
pub trait Step: ControlAction + ToRequest + Judged {}

impl<T: ControlAction + ToRequest + Judged> Step for T {}

/// One registered control: the keys it owns in a scenario file.
pub struct Registered {
    /// Its action keys in a `[[case]]` or `[[step]]`.
    pub actions: &'static [&'static str],
    /// Its `expect` keys.
    pub expect: &'static [&'static str],
    /// Its `[setup]` keys.
    pub setup: &'static [&'static str],
    /// The capabilities it answers to.
    pub capabilities: &'static [&'static str],
}

/// The capability every implementation has: the gate's.
pub const BASE_CAPABILITY: &str = "gate";

/// The capabilities no control owns. `guard` (protocol 1.6) has no setup field and no op
/// of its own: an implementation that declares it is an agent with a pre-tool guard in
/// front, and the guard chapter's steps are the calls its model makes.
pub const OTHER_CAPABILITIES: &[&str] = &["guard"];

/// The capabilities this runner knows: each control's, in registry order, then
/// [`OTHER_CAPABILITIES`].
pub fn known_capabilities() -> &'static [&'static str] {
    static KEYS: OnceLock<Vec<&'static str>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut all = joined(|r| r.capabilities);
        all.extend(OTHER_CAPABILITIES);
        all
    })
}

fn joined(pick: fn(&Registered) -> &'static [&'static str]) -> Vec<&'static str> {
    REGISTRY.iter().flat_map(pick).copied().collect()
}

/// Every action key of every control, in registry order.
pub fn action_keys() -> &'static [&'static str] {
    static KEYS: OnceLock<Vec<&'static str>> = OnceLock::new();
    KEYS.get_or_init(|| joined(|r| r.actions))
}

/// Every `expect` key of every control.
pub fn expect_keys() -> &'static [&'static str] {
    static KEYS: OnceLock<Vec<&'static str>> = OnceLock::new();
    KEYS.get_or_init(|| joined(|r| r.expect))
}

/// Every `[setup]` key of every control.
pub fn setup_keys() -> &'static [&'static str] {
    static KEYS: OnceLock<Vec<&'static str>> = OnceLock::new();
    KEYS.get_or_init(|| joined(|r| r.setup))
}

/// The object-safe face of a [`ControlAction`] before its `expect` table is attached.
trait AnyBare: Debug + Send + Sync {
    fn label(&self) -> String;
    fn expect_keys(&self) -> &'static [&'static str];
    fn attach(&self, text: Option<&str>, written: Vec<String>) -> Result<Action, ExpectError>;
    fn clone_box(&self) -> Box<dyn AnyBare>;
}

impl<T: Step> AnyBare for T {
    fn label(&self) -> String {
        ControlAction::label(self)
    }
    fn expect_keys(&self) -> &'static [&'static str] {
        ControlAction::expect_keys(self)
    }
    fn attach(&self, text: Option<&str>, written: Vec<String>) -> Result<Action, ExpectError> {
        let expect = match text {
            None => T::Expect::default(),
            Some(text) => {
                T::Expect::deserialize(toml::de::ValueDeserializer::new(text)).map_err(|e| {
                    ExpectError::Invalid(
                        e.span().map(|s| s.start),
                        e.message().trim_end().replace('\n', " "),
                    )
                })?
            }
        };
        Ok(Action(Box::new(Bound {
            action: self.clone(),
            expect,
            written,
        })))
    }
    fn clone_box(&self) -> Box<dyn AnyBare> {
        Box::new(self.clone())
    }
}

/// An action as read, before its `expect` table is attached.
#[derive(Debug)]
pub struct Bare(Box<dyn AnyBare>);

impl Clone for Bare {
    fn clone(&self) -> Self {
        Bare(self.0.clone_box())
    }
}

impl Bare {
    /// A short label for messages: `decide "ls /etc"`.
    pub fn label(&self) -> String {
        self.0.label()
    }

    /// Attaches the `expect` table, given as its source text (`None`: not written).
    pub fn with_expect(self, text: Option<&str>) -> Result<Action, ExpectError> {
        let mut written = Vec::new();
        if let Some(text) = text {
            let raw: toml::Value = toml::Value::deserialize(toml::de::ValueDeserializer::new(text))
                .map_err(|e| ExpectError::Invalid(e.span().map(|s| s.start), e.message().into()))?;
            let own = self.0.expect_keys();
            let misplaced: Vec<&'static str> = raw
                .as_table()
                .into_iter()
                .flat_map(|t| t.keys())
                .filter(|k| !own.contains(&k.as_str()))
                .filter_map(|k| expect_keys().iter().find(|x| **x == k.as_str()).copied())
                .collect();
            if !misplaced.is_empty() {
                return Err(ExpectError::Misplaced(misplaced));
            }
            written = raw
                .as_table()
                .into_iter()
                .flat_map(|t| t.keys().cloned())
                .collect();
        }
        self.0.attach(text, written)
    }
}

/// Why an `expect` table does not fit its action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpectError {
    /// Keys of other actions.
    Misplaced(Vec<&'static str>),
    /// Not a valid table for the action: offset in the table's text and message.
    Invalid(Option<usize>, String),
}

/// A control's action with its expectation.
#[derive(Debug, Clone)]
struct Bound<T: Step> {
    action: T,
    expect: T::Expect,
    /// The `expect` keys written, in the file's order.
    written: Vec<String>,
}

/// The object-safe face of a [`Bound`] step.
trait AnyStep: Debug + Send + Sync {
    fn label(&self) -> String;
    fn capability(&self) -> Option<&'static str>;
    fn kind(&self) -> StepKind;
    fn by_runner(&self, env: &RunnerEnv<'_>) -> Option<ByRunner>;
    fn request(
        &self,
        session: &str,
        setup: &Setup,
        sub: &dyn Fn(&str) -> String,
    ) -> Option<Map<String, Value>>;
    fn judge(&self, j: &mut Judge<'_>, answer: &Map<String, Value>);
    fn twin(&self, proves_effect: bool) -> Option<(Family, bool)>;
    fn level(&self, field: &str, got: Option<&Map<String, Value>>, ctx: Ctx) -> Level;
    fn written(&self) -> &[String];
    fn clone_box(&self) -> Box<dyn AnyStep>;
}

impl<T: Step> AnyStep for Bound<T> {
    fn label(&self) -> String {
        self.action.label()
    }
    fn capability(&self) -> Option<&'static str> {
        self.action.capability()
    }
    fn kind(&self) -> StepKind {
        self.action.kind()
    }
    fn by_runner(&self, env: &RunnerEnv<'_>) -> Option<ByRunner> {
        self.action.by_runner(env)
    }
    fn request(
        &self,
        session: &str,
        setup: &Setup,
        sub: &dyn Fn(&str) -> String,
    ) -> Option<Map<String, Value>> {
        self.action.request(session, setup, sub)
    }
    fn judge(&self, j: &mut Judge<'_>, answer: &Map<String, Value>) {
        self.action.judge(&self.expect, j, answer)
    }
    fn twin(&self, proves_effect: bool) -> Option<(Family, bool)> {
        self.action.twin(&self.expect, proves_effect)
    }
    fn level(&self, field: &str, got: Option<&Map<String, Value>>, ctx: Ctx) -> Level {
        self.action.level(&self.expect, field, got, ctx)
    }
    fn written(&self) -> &[String] {
        &self.written
    }
    fn clone_box(&self) -> Box<dyn AnyStep> {
        Box::new(self.clone())
    }
}

/// One step's action with its expectation, owned by one control.
#[derive(Debug)]
pub struct Action(Box<dyn AnyStep>);

impl Clone for Action {
    fn clone(&self) -> Self {
        Action(self.0.clone_box())
    }
}

impl Action {
    /// A short label for messages: `decide "ls /etc"`.
    pub fn label(&self) -> String {
        self.0.label()
    }

    /// The capability the action needs, beyond `gate` for the gate's own steps.
    pub fn capability(&self) -> Option<&'static str> {
        self.0.capability()
    }

    /// Whether it is `opened` (sends nothing).
    pub fn is_opened(&self) -> bool {
        self.0.kind() == StepKind::Opened
    }

    /// Whether it runs a command in the plane (`run`): the implicit guard and the
    /// `stdout_*` checks apply.
    pub fn is_run(&self) -> bool {
        self.0.kind() == StepKind::Run
    }

    /// Whether it is a tool call whose answer may open a card.
    pub fn is_call(&self) -> bool {
        self.0.kind() == StepKind::Call
    }

    /// Whether it is `answer = "silence"`: nobody answers the card.
    pub fn is_silence(&self) -> bool {
        self.0.kind() == StepKind::Silence
    }

    /// What the runner does itself for the step, when it does not send its request.
    pub fn by_runner(&self, env: &RunnerEnv<'_>) -> Option<ByRunner> {
        self.0.by_runner(env)
    }

    /// The request line's body (without id), or `None` for `opened`.
    pub fn request(
        &self,
        session: &str,
        setup: &Setup,
        sub: &dyn Fn(&str) -> String,
    ) -> Option<Map<String, Value>> {
        self.0.request(session, setup, sub)
    }

    /// Compares `answer` with the expectation.
    pub fn judge(&self, j: &mut Judge<'_>, answer: &Map<String, Value>) {
        self.0.judge(j, answer)
    }

    /// The allowed-twin classification: a refusal (`false`) or an allowed outcome
    /// (`true`) of a family; `proves_effect`: the step's `check` proves an effect.
    pub fn twin(&self, proves_effect: bool) -> Option<(Family, bool)> {
        self.0.twin(proves_effect)
    }

    /// The level of a mismatch of `field` against `answer` (`spec/verdicts.md`).
    pub fn level(&self, field: &str, answer: &Map<String, Value>, ctx: Ctx) -> Level {
        self.0.level(field, Some(answer), ctx)
    }

    /// Each `expect` key written with the level it pins: safety when some answer could
    /// fail safety on it.
    pub fn pinned(&self, ctx: Ctx) -> Vec<(String, Level)> {
        self.0
            .written()
            .iter()
            .map(|k| (k.clone(), self.0.level(k, None, ctx)))
            .collect()
    }
}

impl<'de> Deserialize<'de> for SetupPatch {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = SetupPatch;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a setup table")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SetupPatch, A::Error> {
                let mut s = SetupPatch::default();
                while let Some(key) = map.next_key_seed(KnownKey(setup_keys()))? {
                    s.set(&key, &mut map)?;
                }
                Ok(s)
            }
        }
        d.deserialize_map(V)
    }
}

/// A map key that must be one of `.0`: anything else is an `unknown field` error at the
/// key's position.
pub struct KnownKey(pub &'static [&'static str]);

impl<'de> de::DeserializeSeed<'de> for KnownKey {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        let key = String::deserialize(d)?;
        if self.0.contains(&key.as_str()) {
            Ok(key)
        } else {
            Err(de::Error::unknown_field(&key, self.0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_open_setup_carries_the_fields_of_the_capabilities_needed() {
        let patch: SetupPatch = toml::from_str(
            "fence_policy = \"degraded\"\nlimits = { userns = false, landlock_abi = 2 }\n",
        )
        .unwrap();
        let dirs = SessionDirs {
            workspace: "/r/workspace".into(),
            home: "/r/home".into(),
            log_dir: "/r/log".into(),
            sibling: false,
        };
        let caps = ["trust".to_string(), "fence".to_string()];
        let wire = patch.resolve().wire(&caps, &dirs, &|s| s.to_string());
        assert_eq!(
            Value::Object(wire),
            json!({"workspace": "/r/workspace", "home": "/r/home", "host": "posix",
                   "asker": "terminal", "allow_list": [], "grants": [], "card_window_ms": null,
                   "startup": "yes", "skip_permissions": false, "settings_dirs": [],
                   "fence_policy": "degraded", "workspaces": ["/r/workspace"],
                   "log_dir": "/r/log", "limits": {"userns": false, "landlock_abi": 2}})
        );
    }

    #[test]
    fn families_sort_by_the_registry_then_their_declaration() {
        let in_order = [
            gate::judge::DECISION,
            paths::judge::FILE,
            trust::judge::QUERY,
            trust::judge::GESTURE,
            fence::judge::RUN,
            fence::judge::TOGGLE,
            order::judge::LOAD,
            order::judge::RESUME,
            order::judge::RULE,
            order::judge::ACT,
        ];
        assert!(in_order.windows(2).all(|w| w[0] < w[1]), "{in_order:#?}");
        assert_eq!((order::judge::ACT.control, order::judge::ACT.order), (5, 3));
    }

    #[test]
    fn every_key_has_one_owner() {
        for keys in [action_keys(), setup_keys(), expect_keys()] {
            let mut seen = std::collections::BTreeSet::new();
            let dup: Vec<_> = keys.iter().filter(|k| !seen.insert(**k)).collect();
            // `expect` keys may be shared by controls (`result`, `refused`, `posture`);
            // action and setup keys may not.
            if !std::ptr::eq(keys, expect_keys()) {
                assert!(dup.is_empty(), "{dup:?}");
            }
        }
    }
}
