//! Scenario files: the strict TOML model of `scenarios/README.md`, its loading and its
//! validation. Nothing here talks to an implementation.

mod actions;
mod controls;
mod load;
mod model;
mod nullable;
mod twin;
mod validate;

pub use controls::*;
#[cfg(test)]
pub use load::load_file;
pub use load::{line_col, load_dir, LoadReport, ScenarioError};
pub use model::*;
pub use nullable::OrNull;

#[cfg(test)]
mod tests;
