//! The `trust` control (`spec/trust-map.md`): scenario model, wire messages and judge of
//! the trust map.

pub mod judge;
pub mod model;
pub mod wire;
