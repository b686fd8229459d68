//! Gatehouse's decisions beside the approval gate: what a tool call may do, on whose word,
//! and the one order every call walks. From the bottom up:
//!
//! - [`permissions`]: permission patterns, their merge, labels and safety modes;
//! - [`hooks`]: hooks as real child processes, their answers, failures, lanes, transforms
//!   and `redact_secrets`;
//! - [`config`]: the agent file and the person's settings file (YAML, the permissions
//!   and hooks), read strictly;
//! - [`records`]: records that survive the process (replaced whole, or journalled);
//! - [`order`]: the one decision order every tool call walks across the controls, and the
//!   guarded session that records it.
//!
//! It uses the floors below, reached here by their old names: the gate (`gatehouse-gate`,
//! as `crate::gate`), the confinement floor (`gatehouse-confine`: `crate::paths`,
//! `crate::trust`, `crate::workspace`) and the execution floor (`gatehouse-fence`:
//! `crate::plane`, whose session runs an approved command and whose environment filter
//! hooks spawn with). Nothing below calls back up here. `gatehouse` re-exports each
//! module under its old name (`gatehouse::order`, ...).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod config;
pub mod hooks;
pub mod order;
pub mod permissions;
pub mod records;
use gatehouse_confine::{paths, trust, workspace};
use gatehouse_fence::plane;
use gatehouse_gate as gate;
