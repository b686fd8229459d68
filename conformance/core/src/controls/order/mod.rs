//! The permissions and hooks control (`spec/permissions.md`, `spec/hooks.md`,
//! `spec/decision-order.md`): scenario model, wire messages and judge of tool calls
//! through the whole decision order, the loading of agent and settings files, patterns
//! added in the session, restarts and crashes between steps, and the files a hook left,
//! which the runner reads itself.

pub mod judge;
pub mod model;
pub mod wire;

/// The decision order: permissions, hooks, `act`, records.
pub struct Order;

impl super::Control for Order {
    type Action = model::Action;
    type Setup = model::SetupPatch;
    const CAPABILITIES: &'static [&'static str] = &["permissions", "hooks"];
}
