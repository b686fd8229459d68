//! What every control of the adapter implements, and what it may ask of the session
//! table. A control ([`Control`]) owns its ops (their names, the reading of their
//! requests, their answers), its setup fields and the capabilities it declares; the
//! server holds the list of controls and dispatches every op through it, and never names
//! an op of a control. The controls reach the open sessions only through [`Sessions`],
//! which the server implements.
//!
//! Translation only, like the rest of the adapter: a control turns a request into one
//! call of the library and its outcome into an answer, and decides nothing.

use gatehouse::order::GuardedSession;
use gatehouse::plane::session::Session as Plane;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::wire::{Body, WireError};

/// The open sessions, as a control reaches them.
pub trait Sessions {
    /// The guarded session `name`, whether or not its trust map started.
    fn opened(&mut self, name: &str) -> Result<&mut GuardedSession, WireError>;
    /// The guarded session `name`, which must have started (PROTO-SETUP-2: after
    /// `started: false` no step but `close`).
    fn started(&mut self, name: &str) -> Result<&mut GuardedSession, WireError>;
    /// The plane of session `name`, started with the defaults if no fence step has
    /// needed it yet.
    fn plane(&mut self, name: &str) -> Result<&mut Plane, WireError>;
    /// Both at once, the plane started first as [`Sessions::plane`] does: what a call
    /// run in the fence needs.
    fn with_plane(&mut self, name: &str) -> Result<(&mut GuardedSession, &mut Plane), WireError>;
}

/// One control of the adapter.
pub trait Control {
    /// The capabilities it declares in `hello`.
    const CAPABILITIES: &'static [&'static str];
    /// The ops it answers.
    const OPS: &'static [&'static str];
    /// The setup fields of `open` it takes (PROTO-SESSION-2: any other is refused).
    const SETUP_FIELDS: &'static [&'static str];
    /// One of its requests, as read.
    type Request;
    /// Reads a request whose op is one of [`Control::OPS`].
    fn parse(op: &str, request: &Value) -> Result<Self::Request, WireError>;
    /// Answers one request.
    fn answer(request: Self::Request, sessions: &mut dyn Sessions) -> Result<Body, WireError>;
}

/// Reads a request of op `op` with serde; a request that does not read is an `error`.
pub fn parse_as<T: DeserializeOwned>(op: &str, request: &Value) -> Result<T, WireError> {
    T::deserialize(request).map_err(|e| WireError::error(format!("bad {op:?} request: {e}")))
}

/// One control as the server's list holds it.
pub struct Registered {
    /// The capabilities it declares.
    pub capabilities: &'static [&'static str],
    /// The ops it answers.
    pub ops: &'static [&'static str],
    /// The setup fields it takes.
    pub setup_fields: &'static [&'static str],
    /// Reads and answers one of its requests.
    pub handle: fn(&str, &Value, &mut dyn Sessions) -> Result<Body, WireError>,
}

impl Registered {
    /// The entry of control `C`.
    pub const fn of<C: Control>() -> Registered {
        Registered {
            capabilities: C::CAPABILITIES,
            ops: C::OPS,
            setup_fields: C::SETUP_FIELDS,
            handle: handle::<C>,
        }
    }
}

fn handle<C: Control>(
    op: &str,
    request: &Value,
    sessions: &mut dyn Sessions,
) -> Result<Body, WireError> {
    C::answer(C::parse(op, request)?, sessions)
}
