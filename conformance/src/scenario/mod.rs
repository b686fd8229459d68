//! Scenario files: the strict TOML model of `scenarios/README.md`, its loading and its
//! validation. Nothing here talks to an implementation; each step's own vocabulary is
//! read by the control that owns it (`crate::controls`).

mod load;
mod model;
mod twin;
mod validate;

#[cfg(test)]
pub use load::load_file;
pub use load::{line_col, load_dir, LoadReport, ScenarioError};
pub use model::*;

#[cfg(test)]
mod judge_tests;
#[cfg(test)]
mod tests;
