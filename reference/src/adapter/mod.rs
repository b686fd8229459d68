//! The adapter: serves the conformance protocol (`spec/adapter-protocol.md`) over standard
//! input and output. Translation only: every behaviour is the library's, each step one
//! call of a session of the library, and nothing here decides.
//!
//! From the bottom up: [`wire`] holds the JSON shapes and the setup-field reader;
//! [`control`] the trait every control implements and the session table as controls see
//! it; one module per control above them, each owning its ops, the reading of their
//! requests, their answers and its setup fields: [`gate`] (the gate's setup and its
//! cards), [`order`] (permissions and hooks: every tool call through
//! [`gatehouse::order::GuardedSession`]), [`files`] (paths and trust, through
//! [`gatehouse::workspace`]) and [`fence`] (the plane, through
//! [`gatehouse::plane::session`]); [`environment`] (what `hello` says of the host); and
//! [`server`] on top, holding the list of controls and the session table, answering
//! `hello`, `open`, `close` and `bye` and handing every other op to its control. Adding a
//! control is one module and, in this file, its `mod` line and one line in [`REGISTRY`].

pub mod control;
pub mod environment;
pub mod fence;
pub mod files;
pub mod gate;
pub mod order;
pub mod server;
pub mod wire;

pub use server::serve;

use control::Registered;

/// The controls, in the order `hello` lists their capabilities. Adding a control is its
/// module, its `mod` line above and one line here.
pub const REGISTRY: &[Registered] = &[
    Registered::of::<gate::Gate>(),
    Registered::of::<order::Order>(),
    Registered::of::<files::Files>(),
    Registered::of::<fence::Fence>(),
];

/// The protocol version this adapter speaks.
pub const PROTOCOL_VERSION: &str = "1.5";
