//! The `paths` control (`spec/path-confinement.md`): scenario model, wire messages and
//! judge of the file tools.

pub mod judge;
pub mod model;
pub mod wire;

/// The file tools: `read`, `write`, `edit`, `list`, ...
pub struct Paths;

impl super::Control for Paths {
    type Action = model::Action;
    type Setup = model::SetupPatch;
    const CAPABILITIES: &'static [&'static str] = &["paths"];
}
