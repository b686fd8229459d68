//! The `fence` control (`spec/execution-plane.md`): scenario model, wire messages and
//! judge of commands run in the plane, the posture and the runtime toggle.

pub mod judge;
pub mod model;
pub mod wire;

use serde::de::MapAccess;
use serde_json::{Map, Value};

use super::{Control, ControlAction, Problems, Setup, StepKind};
use crate::judge::Judge;
use crate::protocol::to_object;
use crate::verdict::{Ctx, Level};
use crate::vocab::Family;

/// The fence: `run`, `posture`, `toggle`.
pub struct Fence;

impl Control for Fence {
    const ACTION_KEYS: &'static [&'static str] = model::ACTION_KEYS;
    const EXPECT_KEYS: &'static [&'static str] = model::EXPECT_KEYS;
    type Setup = model::SetupPatch;
    const CAPABILITIES: &'static [&'static str] = &["fence"];
    type Action = model::Action;
    fn parse<'de, A: MapAccess<'de>>(
        key: &str,
        map: &mut A,
    ) -> Result<(model::Action, Problems), A::Error> {
        model::parse(key, map)
    }
}

impl ControlAction for model::Action {
    type Expect = model::Expect;
    fn label(&self) -> String {
        model::Action::label(self)
    }
    fn expect_keys(&self) -> &'static [&'static str] {
        model::Action::expect_keys(self)
    }
    fn capability(&self) -> Option<&'static str> {
        Some("fence")
    }
    fn kind(&self) -> StepKind {
        match self {
            model::Action::Run { .. } => StepKind::Run,
            _ => StepKind::Other,
        }
    }
    fn request(
        &self,
        session: &str,
        _: &Setup,
        sub: &dyn Fn(&str) -> String,
    ) -> Option<Map<String, Value>> {
        Some(to_object(&wire::request(self, session.to_string(), sub)))
    }
    fn judge(&self, x: &model::Expect, j: &mut Judge<'_>, answer: &Map<String, Value>) {
        super::paths::judge::quarantine(j, answer);
        judge::judge(j, x, answer)
    }
    fn twin(&self, x: &model::Expect, proves_effect: bool) -> Option<(Family, bool)> {
        judge::twin(self, x, proves_effect)
    }
    fn level(
        &self,
        x: &model::Expect,
        field: &str,
        got: Option<&Map<String, Value>>,
        _: Ctx,
    ) -> Level {
        judge::level(x, field, got)
    }
}
