//! The `paths` control (`spec/path-confinement.md`): scenario model, wire messages and
//! judge of the file tools.

pub mod judge;
pub mod model;
pub mod wire;

use serde::de::MapAccess;
use serde_json::{Map, Value};

use super::{Control, ControlAction, Problems, Setup};
use crate::judge::Judge;
use crate::protocol::to_object;
use crate::verdict::{Ctx, Level};
use crate::vocab::Family;

/// The file tools: `read`, `write`, `edit`, `list`, ...
pub struct Paths;

impl Control for Paths {
    const ACTION_KEYS: &'static [&'static str] = model::ACTION_KEYS;
    const EXPECT_KEYS: &'static [&'static str] = model::EXPECT_KEYS;
    type Setup = model::SetupPatch;
    const CAPABILITIES: &'static [&'static str] = &["paths"];
    type Action = model::Action;
    fn parse<'de, A: MapAccess<'de>>(
        key: &str,
        map: &mut A,
    ) -> Result<(model::Action, Problems), A::Error> {
        Ok((model::parse(key, map)?, Problems::new()))
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
        Some("paths")
    }
    fn request(
        &self,
        session: &str,
        setup: &Setup,
        sub: &dyn Fn(&str) -> String,
    ) -> Option<Map<String, Value>> {
        Some(to_object(&wire::request(
            self,
            session.to_string(),
            &setup.paths,
            sub,
        )))
    }
    fn judge(&self, x: &model::Expect, j: &mut Judge<'_>, answer: &Map<String, Value>) {
        judge::judge(j, x, answer)
    }
    fn twin(&self, x: &model::Expect, _: bool) -> Option<(Family, bool)> {
        judge::twin(self, x)
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
