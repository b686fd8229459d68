//! The adapter: serves the conformance protocol (`spec/adapter-protocol.md`) over standard
//! input and output. Translation only: every behaviour is the library's, each step one
//! call of a session of the library, and nothing here decides.
//!
//! From the bottom up: [`wire`] holds the JSON shapes and the setup-field reader; one
//! translator per control above it, [`gate`] (the gate's setup), [`files`] (paths and
//! trust, through [`gatehouse::workspace`]), [`order`] (permissions and hooks: every tool
//! call through [`gatehouse::order::GuardedSession`]), [`fence`] (the plane, through
//! [`gatehouse::plane::session`]) and [`environment`] (what `hello` says of the host); and
//! [`server`] on top, reading requests and dispatching them.

pub mod environment;
pub mod fence;
pub mod files;
pub mod gate;
pub mod order;
pub mod server;
pub mod wire;

pub use server::serve;

/// The protocol version this adapter speaks.
pub const PROTOCOL_VERSION: &str = "1.5";

/// The capabilities this adapter implements.
pub const CAPABILITIES: &[&str] = &["gate", "permissions", "hooks", "paths", "trust", "fence"];
