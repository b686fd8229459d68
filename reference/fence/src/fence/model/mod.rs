//! The fence's model: data only, no process started. What is bound where and the options
//! ([`policy`]), what no writable root may hold ([`guarded`]) and which of a root's names
//! are protected ([`protect`]: the crate `gatehouse-confine`'s list, one with the file
//! tools), what this host offers ([`host`]), the protections by the chapter's codes
//! ([`coverage`]), what is claimed and what is missing ([`posture`]), and the one error
//! type ([`error`]). It uses nothing of the fence above it.

pub mod coverage;
pub mod error;
pub mod guarded;
pub mod host;
pub mod policy;
pub mod posture;
pub use gatehouse_confine::protect;
