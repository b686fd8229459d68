//! The `trust` control (`spec/trust-map.md`): scenario model, wire messages and judge of
//! the trust map.

pub mod judge;
pub mod model;
pub mod wire;

/// The trust map.
pub struct Trust;

impl super::Control for Trust {
    type Action = model::Action;
    type Setup = model::SetupPatch;
    const CAPABILITIES: &'static [&'static str] = &["trust"];
}
