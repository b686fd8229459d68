//! Gatehouse's execution floor: everything that runs a tool's command, and nothing that
//! decides whether it may run. From the bottom up:
//!
//! - [`exit`]: the jail helper's exit codes;
//! - [`net`]: the allow-list proxy a jail in the `allow-list` network mode reaches the
//!   outside through (hyper, tokio);
//! - [`choices`]: the person's choices for working in the fence (`config.toml`, TOML:
//!   network, environment, extra paths), from files and flags, each with its source;
//! - [`fence`]: the execution fence, what a tool's command can touch;
//! - [`plane`]: the execution plane, pooled executors in the fence and the session's
//!   runtime toggle, and the logic of `gatehouse info` and `gatehouse exec`;
//! - [`helper`]: the jail helper's entry (`gatehouse __jail`).
//!
//! It uses only the kernel layer (`gatehouse-sys`, reached here as `crate::sys`); the
//! decision modules of the crate `gatehouse` (the permissions, hooks and the decision
//! order) sit above it and call into it, never the other way. `gatehouse` re-exports each
//! module under its old name (`gatehouse::fence`, `gatehouse::plane`, ...).
#![deny(missing_docs)]
// The kernel layer's `unsafe` lives in its own crate (`gatehouse-sys`); none here.
#![forbid(unsafe_code)]

pub mod choices;
pub mod exit;
pub mod fence;
pub mod helper;
pub mod net;
pub mod plane;
use gatehouse_sys as sys;
