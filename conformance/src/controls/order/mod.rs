//! The permissions and hooks control (`spec/permissions.md`, `spec/hooks.md`,
//! `spec/decision-order.md`): scenario model, wire messages and judge of tool calls
//! through the whole decision order, the loading of agent and settings files, patterns
//! added in the session, restarts and crashes between steps, and the files a hook left,
//! which the runner reads itself.

pub mod judge;
pub mod model;
pub mod wire;

use serde::de::MapAccess;
use serde_json::{Map, Value};

use super::{Control, ControlAction, Problems, Setup, StepKind};
use crate::judge::Judge;
use crate::verdict::{Ctx, Level};
use crate::vocab::Family;

/// The decision order: permissions, hooks, `act`, records.
pub struct Order;

impl Control for Order {
    const ACTION_KEYS: &'static [&'static str] = model::ACTION_KEYS;
    const EXPECT_KEYS: &'static [&'static str] = model::EXPECT_KEYS;
    type Setup = model::SetupPatch;
    const CAPABILITIES: &'static [&'static str] = &["permissions", "hooks"];
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
        match self {
            model::Action::Act(_) => Some("fence"),
            _ => Some("permissions"),
        }
    }
    fn kind(&self) -> StepKind {
        match self {
            model::Action::Act(_) => StepKind::Run,
            _ => StepKind::Other,
        }
    }
    fn request(
        &self,
        session: &str,
        _: &Setup,
        sub: &dyn Fn(&str) -> String,
    ) -> Option<Map<String, Value>> {
        wire::request(self, session, std::path::Path::new(&sub("@CONFIG@")), sub)
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
