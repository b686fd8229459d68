//! The controls the suite certifies, one module each (`gate`, `paths`, `trust`, `fence`,
//! plus `open` for judging the `open` answer), and the registry that dispatches to them.
//! Each control owns its scenario model (setup fields, steps, `expect` keys), its wire
//! messages and its judge; this module only routes a key, a step or a setup to the
//! control that owns it. A new control is one new module plus its lines here.

pub mod fence;
pub mod gate;
pub mod open;
pub mod order;
pub mod paths;
pub mod trust;

use std::sync::OnceLock;

use serde::de::{self, MapAccess};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::judge::Judge;
use crate::protocol::{to_object, SessionDirs};
use crate::vocab::Family;

/// One registered control: the keys it owns in a scenario file.
pub struct Registered {
    /// Its action keys in a `[[case]]` or `[[step]]`.
    pub actions: &'static [&'static str],
    /// Its `expect` keys.
    pub expect: &'static [&'static str],
    /// Its `[setup]` keys.
    pub setup: &'static [&'static str],
}

/// Every control, in the order their keys are listed and their messages sorted.
pub const REGISTRY: &[Registered] = &[
    Registered {
        actions: gate::model::ACTION_KEYS,
        expect: gate::model::EXPECT_KEYS,
        setup: gate::model::SETUP_KEYS,
    },
    Registered {
        actions: paths::model::ACTION_KEYS,
        expect: paths::model::EXPECT_KEYS,
        setup: paths::model::SETUP_KEYS,
    },
    Registered {
        actions: trust::model::ACTION_KEYS,
        expect: trust::model::EXPECT_KEYS,
        setup: trust::model::SETUP_KEYS,
    },
    Registered {
        actions: open::ACTION_KEYS,
        expect: open::EXPECT_KEYS,
        setup: &[],
    },
    Registered {
        actions: fence::model::ACTION_KEYS,
        expect: fence::model::EXPECT_KEYS,
        setup: fence::model::SETUP_KEYS,
    },
    Registered {
        actions: order::model::ACTION_KEYS,
        expect: order::model::EXPECT_KEYS,
        setup: order::model::SETUP_KEYS,
    },
];

/// The capabilities this runner knows.
pub const KNOWN_CAPABILITIES: &[&str] =
    &["gate", "permissions", "hooks", "trust", "paths", "fence"];

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

/// An action as read, before its `expect` table is attached.
#[derive(Debug, Clone)]
pub enum Bare {
    /// A gate step.
    Gate(gate::model::Action),
    /// A file-tool step.
    Paths(paths::model::Action),
    /// A trust-map step.
    Trust(trust::model::Action),
    /// `opened`.
    Opened(open::Action),
    /// A fence step.
    Fence(fence::model::Action),
    /// A permissions-and-hooks step.
    Order(order::model::Action),
}

/// Reads the value of action `key` (one of [`action_keys`]) with the owning control's
/// parser; the second part holds the problems serde cannot see.
pub fn parse_action<'de, A: MapAccess<'de>>(
    key: &str,
    map: &mut A,
) -> Result<(Bare, Vec<String>), A::Error> {
    let owns = |keys: &[&str]| keys.contains(&key);
    Ok(if owns(gate::model::ACTION_KEYS) {
        let (a, p) = gate::model::parse(key, map)?;
        (Bare::Gate(a), p)
    } else if owns(paths::model::ACTION_KEYS) {
        (Bare::Paths(paths::model::parse(key, map)?), Vec::new())
    } else if owns(trust::model::ACTION_KEYS) {
        let (a, p) = trust::model::parse(key, map)?;
        (Bare::Trust(a), p)
    } else if owns(open::ACTION_KEYS) {
        let (a, p) = open::parse(key, map)?;
        (Bare::Opened(a), p)
    } else if owns(fence::model::ACTION_KEYS) {
        let (a, p) = fence::model::parse(key, map)?;
        (Bare::Fence(a), p)
    } else if owns(order::model::ACTION_KEYS) {
        let (a, p) = order::model::parse(key, map)?;
        (Bare::Order(a), p)
    } else {
        return Err(de::Error::unknown_field(key, action_keys()));
    })
}

impl Bare {
    /// A short label for messages: `decide "ls /etc"`.
    pub fn label(&self) -> String {
        match self {
            Bare::Gate(a) => a.label(),
            Bare::Paths(a) => a.label(),
            Bare::Trust(a) => a.label(),
            Bare::Opened(_) => "opened".to_string(),
            Bare::Fence(a) => a.label(),
            Bare::Order(a) => a.label(),
        }
    }

    fn expect_keys(&self) -> &'static [&'static str] {
        match self {
            Bare::Gate(a) => a.expect_keys(),
            Bare::Paths(a) => a.expect_keys(),
            Bare::Trust(a) => a.expect_keys(),
            Bare::Opened(_) => open::EXPECT_KEYS,
            Bare::Fence(a) => a.expect_keys(),
            Bare::Order(a) => a.expect_keys(),
        }
    }

    /// Attaches the `expect` table, given as its source text (`None`: not written).
    pub fn with_expect(self, text: Option<&str>) -> Result<Action, ExpectError> {
        let Some(text) = text else {
            return Ok(self.attach());
        };
        let raw: toml::Value = toml::Value::deserialize(toml::de::ValueDeserializer::new(text))
            .map_err(|e| ExpectError::Invalid(e.span().map(|s| s.start), e.message().into()))?;
        let own = self.expect_keys();
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
        fn typed<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, ExpectError> {
            T::deserialize(toml::de::ValueDeserializer::new(text)).map_err(|e| {
                ExpectError::Invalid(
                    e.span().map(|s| s.start),
                    e.message().trim_end().replace('\n', " "),
                )
            })
        }
        Ok(match self {
            Bare::Gate(action) => Action::Gate(action, typed(text)?),
            Bare::Paths(action) => Action::Paths(action, typed(text)?),
            Bare::Trust(action) => Action::Trust(action, typed(text)?),
            Bare::Opened(_) => Action::Opened(typed(text)?),
            Bare::Fence(action) => Action::Fence(action, typed(text)?),
            Bare::Order(action) => Action::Order(action, Box::new(typed(text)?)),
        })
    }

    fn attach(self) -> Action {
        match self {
            Bare::Gate(a) => Action::Gate(a, Default::default()),
            Bare::Paths(a) => Action::Paths(a, Default::default()),
            Bare::Trust(a) => Action::Trust(a, Default::default()),
            Bare::Opened(_) => Action::Opened(Default::default()),
            Bare::Fence(a) => Action::Fence(a, Default::default()),
            Bare::Order(a) => Action::Order(a, Default::default()),
        }
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

/// One step's action with its expectation, owned by one control.
#[derive(Debug, Clone)]
pub enum Action {
    /// A gate step.
    Gate(gate::model::Action, gate::model::Expect),
    /// A file-tool step.
    Paths(paths::model::Action, paths::model::Expect),
    /// A trust-map step.
    Trust(trust::model::Action, trust::model::Expect),
    /// `opened`: judge the answer `open` gave.
    Opened(open::Expect),
    /// A fence step.
    Fence(fence::model::Action, fence::model::Expect),
    /// A permissions-and-hooks step.
    Order(order::model::Action, Box<order::model::Expect>),
}

impl Action {
    /// A short label for messages: `decide "ls /etc"`.
    pub fn label(&self) -> String {
        match self {
            Action::Gate(a, _) => a.label(),
            Action::Paths(a, _) => a.label(),
            Action::Trust(a, _) => a.label(),
            Action::Opened(_) => "opened".to_string(),
            Action::Fence(a, _) => a.label(),
            Action::Order(a, _) => a.label(),
        }
    }

    /// The capability the action needs, beyond `gate` for the gate's own steps.
    pub fn capability(&self) -> Option<&'static str> {
        match self {
            Action::Paths(..) => Some("paths"),
            Action::Trust(..) => Some("trust"),
            Action::Fence(..) => Some("fence"),
            Action::Order(order::model::Action::Act(_), _) => Some("fence"),
            Action::Order(..) => Some("permissions"),
            Action::Gate(..) | Action::Opened(_) => None,
        }
    }

    /// Whether it is `opened` (sends nothing).
    pub fn is_opened(&self) -> bool {
        matches!(self, Action::Opened(_))
    }

    /// Whether it runs a command in the plane (`run`): the implicit guard and the
    /// `stdout_*` checks apply.
    pub fn is_run(&self) -> bool {
        matches!(
            self,
            Action::Fence(fence::model::Action::Run { .. }, _)
                | Action::Order(order::model::Action::Act(_), _)
        )
    }

    /// Whether it is a tool call whose answer may open a card.
    pub fn is_call(&self) -> bool {
        matches!(self, Action::Gate(gate::model::Action::Call { .. }, _))
    }

    /// Whether it is `answer = "silence"`: nobody answers the card.
    pub fn is_silence(&self) -> bool {
        matches!(
            self,
            Action::Gate(gate::model::Action::Answer(gate::model::Choice::Silence), _)
        )
    }

    /// The request line's body (without id), or `None` for `opened`.
    pub fn request(
        &self,
        session: &str,
        setup: &Setup,
        sub: &dyn Fn(&str) -> String,
    ) -> Option<Map<String, Value>> {
        let session = session.to_string();
        Some(match self {
            Action::Gate(a, _) => to_object(&gate::wire::request(a, session, sub)),
            Action::Paths(a, _) => to_object(&paths::wire::request(a, session, &setup.paths, sub)),
            Action::Trust(a, _) => to_object(&trust::wire::request(a, session, sub)),
            Action::Opened(_) => return None,
            Action::Fence(a, _) => to_object(&fence::wire::request(a, session, sub)),
            Action::Order(a, _) => {
                order::wire::request(a, &session, std::path::Path::new(&sub("@CONFIG@")), sub)?
            }
        })
    }

    /// Compares `answer` with the expectation.
    pub fn judge(&self, j: &mut Judge<'_>, answer: &Map<String, Value>) {
        match self {
            Action::Gate(a, x) => gate::judge::judge(j, a, x, answer),
            Action::Paths(_, x) => paths::judge::judge(j, x, answer),
            Action::Trust(_, x) => {
                paths::judge::quarantine(j, answer);
                trust::judge::judge(j, x, answer)
            }
            Action::Opened(x) => {
                paths::judge::quarantine(j, answer);
                open::judge(j, x, answer)
            }
            Action::Fence(_, x) => {
                paths::judge::quarantine(j, answer);
                fence::judge::judge(j, x, answer)
            }
            Action::Order(a, x) => order::judge::judge(j, a, x, answer),
        }
    }

    /// The allowed-twin classification: a refusal (`false`) or an allowed outcome
    /// (`true`) of a family; `proves_effect`: the step's `check` proves an effect.
    pub fn twin(&self, proves_effect: bool) -> Option<(Family, bool)> {
        match self {
            Action::Gate(a, x) => gate::judge::twin(a, x),
            Action::Paths(a, x) => paths::judge::twin(a, x),
            Action::Trust(a, x) => trust::judge::twin(a, x),
            Action::Opened(_) => None,
            Action::Fence(a, x) => fence::judge::twin(a, x, proves_effect),
            Action::Order(a, x) => order::judge::twin(a, x),
        }
    }
}

/// `[setup]` as written, split by the control that owns each key.
#[derive(Debug, Clone, Default)]
pub struct SetupPatch {
    /// The gate's fields.
    pub gate: gate::model::SetupPatch,
    /// The file tools' fields.
    pub paths: paths::model::SetupPatch,
    /// The trust map's fields.
    pub trust: trust::model::SetupPatch,
    /// The fence's fields.
    pub fence: fence::model::SetupPatch,
    /// The order's fields.
    pub order: order::model::SetupPatch,
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
                    let owns = |keys: &[&str]| keys.contains(&key.as_str());
                    if owns(gate::model::SETUP_KEYS) {
                        s.gate.set(&key, &mut map)?;
                    } else if owns(paths::model::SETUP_KEYS) {
                        s.paths.set(&key, &mut map)?;
                    } else if owns(trust::model::SETUP_KEYS) {
                        s.trust.set(&key, &mut map)?;
                    } else if owns(order::model::SETUP_KEYS) {
                        s.order.set(&key, &mut map)?;
                    } else {
                        s.fence.set(&key, &mut map)?;
                    }
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

impl SetupPatch {
    /// `self` with every field written in `over` replaced.
    pub fn overlay(&self, over: &SetupPatch) -> SetupPatch {
        SetupPatch {
            gate: self.gate.overlay(&over.gate),
            paths: self.paths.overlay(&over.paths),
            trust: self.trust.overlay(&over.trust),
            fence: self.fence.overlay(&over.fence),
            order: self.order.overlay(&over.order),
        }
    }

    /// The capabilities the fields written here need.
    pub fn implied_capabilities(&self) -> Vec<&'static str> {
        [
            (self.paths.needs_capability(), "paths"),
            (self.trust.needs_capability(), "trust"),
            (self.fence.needs_capability(), "fence"),
            (self.order.needs_capability(), "permissions"),
        ]
        .into_iter()
        .filter_map(|(needs, cap)| needs.then_some(cap))
        .collect()
    }

    /// The setup with defaults filled in (workspace and home are added by the runner).
    pub fn resolve(&self) -> Setup {
        Setup {
            gate: self.gate.resolve(),
            paths: self.paths.resolve(),
            trust: self.trust.resolve(),
            fence: self.fence.resolve(),
            order: self.order.resolve(),
        }
    }
}

/// A resolved setup, defaults applied, by control.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup {
    /// The gate's.
    pub gate: gate::model::Setup,
    /// The file tools'.
    pub paths: paths::model::Setup,
    /// The trust map's.
    pub trust: trust::model::Setup,
    /// The fence's.
    pub fence: fence::model::Setup,
    /// The order's.
    pub order: order::model::Setup,
}

impl Setup {
    /// The setup sent in `open`: the session's directories, the gate's fields, and the
    /// fields of each other control the scenario needs (`caps`).
    pub fn wire(
        &self,
        caps: &[String],
        dirs: &SessionDirs,
        sub: &dyn Fn(&str) -> String,
    ) -> Map<String, Value> {
        let has = |c: &str| caps.iter().any(|x| x == c);
        let mut out = Map::new();
        out.insert("workspace".into(), Value::String(dirs.workspace.clone()));
        out.insert("home".into(), Value::String(dirs.home.clone()));
        out.extend(gate::wire::setup(&self.gate, sub));
        if has("paths") {
            out.extend(paths::wire::setup(&self.paths, sub));
        }
        if has("trust") {
            out.extend(trust::wire::setup(&self.trust, sub));
        }
        if has("fence") {
            out.extend(fence::wire::setup(&self.fence, dirs, sub));
        }
        if has("permissions") || has("hooks") {
            out.extend(order::wire::setup(
                &self.order,
                std::path::Path::new(&sub("@CONFIG@")),
                std::path::Path::new(&sub("@STATE@")),
                sub,
            ));
        }
        out
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
