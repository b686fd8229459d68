//! The `opened` step: judging the answer `open` already gave (whether a session started,
//! the settings-named directories, the posture). It sends nothing; it borrows the trust
//! map's and the fence's judges for the parts of the answer that are theirs.

use serde::de::{Error as _, MapAccess};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::fence::judge::posture;
use super::fence::model::ExpectPosture;
use super::trust::judge::settings;
use super::trust::model::ExpectSetting;
use super::{Control, ControlAction, Judged, Problems, Setup, StepKind, ToRequest};
use crate::judge::Judge;
use crate::verdict::{Ctx, Level};
use crate::vocab::Family;

/// The action keys this part owns.
pub const ACTION_KEYS: &[&str] = &["opened"];

/// `opened = true`.
#[derive(Debug, Clone)]
pub struct Action;

/// Reads `opened = true`; the second part holds `opened = false`.
pub fn parse<'de, A: MapAccess<'de>>(
    key: &str,
    map: &mut A,
) -> Result<(Action, Problems), A::Error> {
    if key != "opened" {
        return Err(A::Error::custom(format!("`{key}` is not `opened`")));
    }
    let problems = if map.next_value::<bool>()? {
        Vec::new()
    } else {
        vec!["`opened` must be `true`".to_string()]
    };
    Ok((Action, problems))
}

/// The `expect` keys of `opened`.
pub const EXPECT_KEYS: &[&str] = &["started", "settings", "posture"];

/// What the `open` answer must show.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Whether a session is running.
    pub started: Option<bool>,
    /// The settings-named directories, in order.
    pub settings: Option<Vec<ExpectSetting>>,
    /// The posture.
    pub posture: Option<ExpectPosture>,
}

/// Compares the `open` answer with `x`.
pub fn judge(j: &mut Judge<'_>, x: &Expect, a: &Map<String, Value>) {
    j.boolean("started", x.started, a.get("started"));
    if let Some(s) = &x.settings {
        settings(j, s, a.get("settings"));
    }
    if let Some(p) = &x.posture {
        posture(j, p, a.get("posture"));
    }
}

/// `opened`: the part of the `open` answer a scenario judges.
pub struct Open;

impl Control for Open {
    type Action = Action;
    type Setup = super::NoSetup;
    const CAPABILITIES: &'static [&'static str] = &[];
}

impl ControlAction for Action {
    const ACTION_KEYS: &'static [&'static str] = ACTION_KEYS;
    const EXPECT_KEYS: &'static [&'static str] = EXPECT_KEYS;
    type Expect = Expect;
    fn parse<'de, A: MapAccess<'de>>(
        key: &str,
        map: &mut A,
    ) -> Result<(Action, Problems), A::Error> {
        parse(key, map)
    }
    fn label(&self) -> String {
        "opened".to_string()
    }
    fn expect_keys(&self) -> &'static [&'static str] {
        EXPECT_KEYS
    }
    fn capability(&self) -> Option<&'static str> {
        None
    }
    fn kind(&self) -> StepKind {
        StepKind::Opened
    }
}

impl ToRequest for Action {
    fn request(
        &self,
        _: &str,
        _: &Setup,
        _: &dyn Fn(&str) -> String,
    ) -> Option<Map<String, Value>> {
        None
    }
}

impl Judged for Action {
    fn judge(&self, x: &Expect, j: &mut Judge<'_>, answer: &Map<String, Value>) {
        super::paths::judge::quarantine(j, answer);
        judge(j, x, answer)
    }
    fn twin(&self, _: &Expect, _: bool) -> Option<(Family, bool)> {
        None
    }
    /// `started = false` answered with a running session and the posture's claims are
    /// safety (PROTO-VERDICT-8); the settings directories are exactness.
    fn level(&self, x: &Expect, field: &str, got: Option<&Map<String, Value>>, _: Ctx) -> Level {
        match field {
            "started" => crate::verdict::flag(false, x.started, got.and_then(|a| a.get("started"))),
            f if f == "posture" || f.starts_with("posture.") => match &x.posture {
                Some(p) => super::fence::judge::posture_level(p, f, got.map(|a| a.get("posture"))),
                None => Level::Exactness,
            },
            _ => Level::Exactness,
        }
    }
}
