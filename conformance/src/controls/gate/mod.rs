//! The gate control (`spec/approval-gate.md`): scenario model, wire messages and judge of the
//! tool-call decisions, cards, grants and the audit trail.

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

/// The approval gate: `decide`, `call`, `answer`, `grants`, `revoke`, `audit`.
pub struct Gate;

impl Control for Gate {
    const ACTION_KEYS: &'static [&'static str] = model::ACTION_KEYS;
    const EXPECT_KEYS: &'static [&'static str] = model::EXPECT_KEYS;
    type Setup = model::SetupPatch;
    const CAPABILITIES: &'static [&'static str] = &["gate"];
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
        None
    }
    fn kind(&self) -> StepKind {
        match self {
            model::Action::Call { .. } => StepKind::Call,
            model::Action::Answer(model::Choice::Silence) => StepKind::Silence,
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
        judge::judge(j, self, x, answer)
    }
    fn twin(&self, x: &model::Expect, _: bool) -> Option<(Family, bool)> {
        judge::twin(self, x)
    }
    fn level(
        &self,
        x: &model::Expect,
        field: &str,
        got: Option<&Map<String, Value>>,
        ctx: Ctx,
    ) -> Level {
        judge::level(x, field, got, ctx)
    }
}
