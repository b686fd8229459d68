//! What every control of the adapter implements, and what it may ask of the session
//! table. A control ([`Control`]) owns its ops (their names, the reading of their
//! requests, their answers), its setup fields (one typed struct declared with
//! [`setup!`]), the capabilities it declares, and its state in each open session (opened
//! from the setup in `open`, ended in `close`). The registry ([`super::registry`])
//! generates from them the list of controls, the typed setup of a session
//! ([`super::Setups`]) and its states ([`super::States`]); the server holds the states by
//! session name and dispatches every op through the list, and never names a control, an
//! op of one or a setup field. The controls reach the open sessions only through
//! [`Sessions`].
//!
//! Translation only, like the rest of the adapter: a control turns a request into one
//! call of the library and its outcome into an answer, and decides nothing.

use gatehouse::order::GuardedSession;
use gatehouse::plane::session::Session as Plane;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::wire::{Body, WireError};
use super::{Setups, States};

/// The open sessions, as a control reaches them: its own state through [`state`], the
/// guarded session (the order's) and the plane (the fence's) through the methods here.
pub trait Sessions {
    /// The states of the open session `name`, one per control.
    fn states(&mut self, name: &str) -> Result<&mut States, WireError>;
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

/// A control's setup fields, as [`setup!`] declares them: their names and their reading.
pub trait Setup: Sized {
    /// The fields, in the order they are read (PROTO-SESSION-2: a field no control
    /// declares is refused).
    const FIELDS: &'static [&'static str];
    /// Reads the fields from an `open` request's setup: absent and `null` are `None`, a
    /// value that does not read is `unsupported`, naming its field.
    fn read(setup: &Map<String, Value>) -> Result<Self, WireError>;
    /// Whether the setup names any of [`Setup::FIELDS`] (`null` included).
    fn named(&self) -> bool;
}

/// Declares a control's setup fields once, each with its doc and its type: the struct
/// (every field an `Option`: absent and `null` are `None`) and its [`Setup`] impl.
macro_rules! setup {
    (
        $(#[doc = $doc:literal])*
        pub struct $name:ident {
            $($(#[doc = $fdoc:literal])* $field:ident: $ty:ty),* $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        pub struct $name {
            named: bool,
            $($(#[doc = $fdoc])* pub $field: Option<$ty>,)*
        }

        impl $crate::adapter::control::Setup for $name {
            const FIELDS: &'static [&'static str] = &[$(stringify!($field)),*];
            fn read(
                setup: &serde_json::Map<String, serde_json::Value>,
            ) -> Result<Self, $crate::adapter::wire::WireError> {
                Ok($name {
                    named: <Self as $crate::adapter::control::Setup>::FIELDS
                        .iter()
                        .any(|f| setup.contains_key(*f)),
                    $($field: $crate::adapter::wire::field(setup, stringify!($field))?,)*
                })
            }
            fn named(&self) -> bool {
                self.named
            }
        }
    };
}
pub(crate) use setup;

/// The slot of control `C`'s state in a session's [`States`] (written by the registry).
pub trait Slot<C: Control> {
    /// `C`'s state, `None` once it is taken.
    fn slot(&mut self) -> &mut Option<C::State>;
}

/// Control `C`'s own state in the open session `name`.
pub fn state<'a, C: Control>(
    sessions: &'a mut dyn Sessions,
    name: &str,
) -> Result<&'a mut C::State, WireError>
where
    States: Slot<C>,
{
    Slot::<C>::slot(sessions.states(name)?)
        .as_mut()
        .ok_or_else(|| WireError::error(format!("no open session {name:?}")))
}

/// What a control's `open` works with.
pub struct Opening<'a> {
    /// The session's name.
    pub session: &'a str,
    /// The whole setup, typed, every control's part (a control may read another's field:
    /// the fence guards the order's files).
    pub setup: &'a Setups,
    /// The session's states opened so far: those of the controls before this one in the
    /// registry.
    pub opened: &'a mut States,
    /// The states of the session of the same name this one replaces, if any; each is
    /// ended when the new session is in place, unless a control ends its own first.
    pub replaced: Option<&'a mut States>,
    /// The fields of the `open` answer (`started`, `settings`, `posture`, ...).
    pub answer: &'a mut Map<String, Value>,
}

/// One control of the adapter.
pub trait Control {
    /// The capabilities it declares in `hello`.
    const CAPABILITIES: &'static [&'static str];
    /// The ops it answers.
    const OPS: &'static [&'static str];
    /// Its setup fields, declared with [`setup!`].
    type Setup: Setup;
    /// What it keeps for each open session.
    type State;
    /// One of its requests, as read.
    type Request;
    /// Opens its part of a session, in the registry's order.
    fn open(opening: &mut Opening<'_>) -> Result<Self::State, WireError>;
    /// Ends its part of a session at `close` (dropped by default).
    fn close(state: Self::State) {
        drop(state);
    }
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
            setup_fields: <C::Setup as Setup>::FIELDS,
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
