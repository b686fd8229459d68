//! The adapter: serves the conformance protocol (`spec/adapter-protocol.md`) over standard
//! input and output. Translation only: every behaviour is the library's, each step one
//! call of a session of the library, and nothing here decides.
//!
//! From the bottom up: [`wire`] holds the JSON shapes and the setup-field reader;
//! [`control`] the trait every control implements (its ops, its typed setup, its state
//! per session) and the session table as controls see it; one module per control above
//! them, each owning its ops, the reading of their requests, their answers, its setup
//! fields and its state: [`gate`] (the gate's setup and its cards), [`order`]
//! (permissions and hooks: every tool call through
//! [`gatehouse::order::GuardedSession`]), [`files`] (paths and trust, through
//! [`gatehouse::workspace`]) and [`fence`] (the plane, through
//! [`gatehouse::plane::session`]); [`environment`] (what `hello` says of the host); this
//! file, the registry ([`registry!`]), which generates from the controls their list, the
//! typed setup of a session and its states; and [`server`] on top, holding the session
//! table, answering `hello`, `open`, `close` and `bye` through the registry and handing
//! every other op to its control. Adding a control is one module and, in this file, its
//! `mod` line and one line in `registry!`.

pub mod control;
pub mod environment;
pub mod fence;
pub mod files;
pub mod gate;
pub mod order;
pub mod server;
pub mod wire;

pub use server::serve;

use std::collections::HashMap;

use control::{Control, Opening, Registered, Sessions, Setup};
use gatehouse::order::GuardedSession;
use gatehouse::plane::session::Session as Plane;
use serde_json::{Map, Value};
use wire::WireError;

/// The registry: every control, named by its field of [`Setups`] and [`States`], in the
/// order `hello` lists their capabilities and `open` opens them. Generates [`REGISTRY`],
/// [`Setups`] (each control's typed setup, read in that order) and [`States`] (each
/// control's state in one session, opened in that order, ended in `close`).
macro_rules! registry {
    ($($name:ident: $control:ty),* $(,)?) => {
        /// The controls, in the order `hello` lists their capabilities.
        pub const REGISTRY: &[Registered] = &[$(Registered::of::<$control>()),*];

        /// An `open` request's setup, read into each control's typed setup.
        pub struct Setups {
            $(
                #[doc = concat!("The setup fields of `", stringify!($name), "`.")]
                pub $name: <$control as Control>::Setup,
            )*
        }

        impl Setups {
            /// Reads every control's fields, in the registry's order.
            pub fn read(setup: &Map<String, Value>) -> Result<Setups, WireError> {
                Ok(Setups {
                    $($name: <<$control as Control>::Setup as Setup>::read(setup)?,)*
                })
            }
        }

        /// One open session: each control's state (`None` only while it opens, or once
        /// a control ended another's early).
        pub struct States {
            $(
                #[doc = concat!("The state of `", stringify!($name), "`.")]
                pub $name: Option<<$control as Control>::State>,
            )*
        }

        $(impl control::Slot<$control> for States {
            fn slot(&mut self) -> &mut Option<<$control as Control>::State> {
                &mut self.$name
            }
        })*

        impl States {
            /// Opens session `session` control by control, in the registry's order;
            /// `replaced` is the session of the same name it replaces. The fields of the
            /// `open` answer are added to `answer`.
            pub fn open(
                session: &str,
                setup: &Setups,
                mut replaced: Option<&mut States>,
                answer: &mut Map<String, Value>,
            ) -> Result<States, WireError> {
                let mut opened = States { $($name: None,)* };
                $(
                    let state = <$control as Control>::open(&mut Opening {
                        session,
                        setup,
                        opened: &mut opened,
                        replaced: replaced.as_deref_mut(),
                        answer: &mut *answer,
                    })?;
                    opened.$name = Some(state);
                )*
                Ok(opened)
            }

            /// Ends the session, control by control, in the reverse of the registry's
            /// order: a control opened later may lean on an earlier one (the fence's plane
            /// runs in the order's state directory, which the order removes when it closes).
            pub fn close(self) {
                let mut closers: Vec<Box<dyn FnOnce()>> = Vec::new();
                $(
                    if let Some(state) = self.$name {
                        closers.push(Box::new(move || <$control as Control>::close(state)));
                    }
                )*
                for close in closers.into_iter().rev() {
                    close();
                }
            }
        }
    };
}

registry![
    gate: gate::Gate,
    order: order::Order,
    files: files::Files,
    fence: fence::Fence,
];

/// The protocol version this adapter speaks.
pub const PROTOCOL_VERSION: &str = "1.5";

/// The open sessions by name, as the server holds them.
pub type Table = HashMap<String, States>;

fn no_session(name: &str) -> WireError {
    WireError::error(format!("no open session {name:?}"))
}

/// The controls reach the session table here: a control its own state through
/// [`control::state`], the others the guarded session (the order's) and the plane (the
/// fence's), named here, the one place that knows every control.
impl Sessions for Table {
    fn states(&mut self, name: &str) -> Result<&mut States, WireError> {
        self.get_mut(name).ok_or_else(|| no_session(name))
    }

    fn opened(&mut self, name: &str) -> Result<&mut GuardedSession, WireError> {
        control::state::<order::Order>(self, name).map(order::OrderState::session)
    }

    fn started(&mut self, name: &str) -> Result<&mut GuardedSession, WireError> {
        let s = self.opened(name)?;
        if s.files().is_some_and(|f| !f.started()) {
            // PROTO-SETUP-2: after `started: false` no step but `close`.
            return Err(WireError::error(format!("session {name:?} did not start")));
        }
        Ok(s)
    }

    fn plane(&mut self, name: &str) -> Result<&mut Plane, WireError> {
        control::state::<fence::Fence>(self, name)?.plane(name)
    }

    fn with_plane(&mut self, name: &str) -> Result<(&mut GuardedSession, &mut Plane), WireError> {
        let states = self.states(name)?;
        // Both at once: two fields of the session's states.
        let plane = states
            .fence
            .as_mut()
            .ok_or_else(|| no_session(name))?
            .plane(name)?;
        let s = states
            .order
            .as_mut()
            .map(order::OrderState::session)
            .ok_or_else(|| no_session(name))?;
        Ok((s, plane))
    }
}
