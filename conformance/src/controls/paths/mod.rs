//! The `paths` control (`spec/path-confinement.md`): scenario model, wire messages and
//! judge of the file tools.

pub mod judge;
pub mod model;
pub mod wire;
