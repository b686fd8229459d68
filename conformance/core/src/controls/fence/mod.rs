//! The `fence` control (`spec/execution-plane.md`): scenario model, wire messages and
//! judge of commands run in the plane, the posture and the runtime toggle; `choices`, its
//! setup field of the person's choices, read against the protocol's schema.

pub mod choices;
pub mod judge;
pub mod model;
pub mod wire;

/// The fence: `run`, `posture`, `toggle`.
pub struct Fence;

impl super::Control for Fence {
    type Action = model::Action;
    type Setup = model::SetupPatch;
    const CAPABILITIES: &'static [&'static str] = &["fence"];
}
