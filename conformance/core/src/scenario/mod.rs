//! Scenario files: the strict TOML model of `scenarios/README.md`, its loading and its
//! validation. Nothing here talks to an implementation; each step's own vocabulary is
//! read by the control that owns it (`crate::controls`).

mod error;
mod load;
mod model;
mod source;
mod twin;
mod validate;

pub use error::{line_col, ScenarioError};
#[cfg(test)]
pub use load::load_file;
pub use load::{load_dir, LoadReport};
pub use model::*;
pub use source::check_form as check_source_form;

#[cfg(test)]
mod judge_tests;
#[cfg(test)]
mod tests;
