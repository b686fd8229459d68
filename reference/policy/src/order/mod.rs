//! The decision order (spec chapter `decision-order.md`): every tool call, of every tool,
//! walks one order across the controls, and the result is one [`Ruling`] with its stage,
//! route, reason code and source. [`decide`] is the walk; [`redirect`] finds the targets a
//! shell line opens for writing; [`ruling`] is the result; [`session`] keeps a session's
//! state and records it under the state directory so that it survives the process.
//!
//! Sits above every control (`gate`, `permissions`, `hooks`, `trust`, `paths`) and below
//! the adapter and the CLI; nothing here is imported by a control.

pub mod decide;
pub mod redirect;
pub mod ruling;
pub mod session;

pub use decide::{decide, Call, Controls, Policy};
pub use ruling::{Redirect, Route, Ruling, SourceRef, Stage};
pub use session::{GuardedSession, SessionConfig, SessionError, SessionRecord};
