//! The adapter: serves the conformance protocol (`spec/adapter-protocol.md`) over standard
//! input and output, putting every step to the real gate.
//!
//! [`wire`] holds the JSON shapes, [`setup`] turns an `open` request's setup into a
//! session, [`environment`] describes the host for `hello`, and [`server`] reads requests
//! and dispatches them.

pub mod environment;
pub mod fence;
pub mod files;
pub mod roots_session;
pub mod server;
pub mod setup;
pub mod trust;
pub mod wire;

pub use server::{serve, Server};

/// The protocol version this adapter speaks.
pub const PROTOCOL_VERSION: &str = "1.1";

/// The capabilities this adapter implements.
pub const CAPABILITIES: &[&str] = &["gate", "paths", "trust", "fence"];
