//! The gate control (`spec/approval-gate.md`): scenario model, wire messages and judge of the
//! tool-call decisions, cards, grants and the audit trail.

pub mod judge;
pub mod model;
pub mod wire;

/// The approval gate: `decide`, `call`, `answer`, `grants`, `revoke`, `audit`.
pub struct Gate;

impl super::Control for Gate {
    type Action = model::Action;
    type Setup = model::SetupPatch;
    const CAPABILITIES: &'static [&'static str] = &["gate"];
}
