//! Scenario files: the strict TOML model of `scenarios/README.md`, its loading and its
//! validation. Nothing here talks to an implementation.

mod load;
mod model;
mod nullable;
mod validate;

pub use load::{load_dir, load_file, LoadReport, ScenarioError};
pub use model::*;
pub use nullable::OrNull;
