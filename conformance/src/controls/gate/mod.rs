//! The gate control (`spec/approval-gate.md`): scenario model, wire messages and judge of the
//! tool-call decisions, cards, grants and the audit trail.

pub mod judge;
pub mod model;
pub mod wire;
