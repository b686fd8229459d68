//! Gatehouse, the reference implementation of the guardrails between an agent and the
//! machine it works on. Its floors are crates of their own, which the compiler keeps from
//! importing a floor above them (CONTRIBUTING.md, the crate graph); this crate re-exports
//! each of their modules under its name here, from the bottom up:
//!
//! - [`sys`]: the kernel layer (namespaces, mounts, Landlock, seccomp, `openat2`,
//!   capabilities, descriptors), the crate `gatehouse-sys` (`reference/sys`), the only
//!   crate holding `unsafe`;
//! - the confinement floor, the crate `gatehouse-confine` (`reference/confine`, no
//!   runtime): [`paths`], path confinement, every file operation beneath its root;
//!   [`trust`], the trust map, what the agent may read and write on whose word;
//!   [`workspace`], a session's roots and trust map kept in lock-step, the file tools
//!   through them; and the protected paths ([`fence::protect`]);
//! - the execution floor, the crate `gatehouse-fence` (`reference/fence`, the only crate
//!   with hyper): [`exit`], the jail helper's exit codes; [`net`], the allow-list proxy a
//!   jail in the `allow-list` network mode reaches the outside through; [`choices`], the
//!   person's choices for working in the fence (`config.toml`, TOML: network, environment,
//!   extra paths), from files and flags, each with its source; [`fence`], the execution
//!   fence, what a tool's command can touch; [`plane`], the execution plane, pooled
//!   executors in the fence and the session's runtime toggle; [`helper`], the jail
//!   helper's entry (`gatehouse __jail`);
//! - the decisions: [`gate`], the approval gate, which call runs, asks or is refused: the
//!   crate `gatehouse-gate` (`reference/gate`), which needs no other part of Gatehouse, so
//!   an agent embeds it without the fence's runtime (tokio, hyper); and the crate
//!   `gatehouse-policy` (`reference/policy`): [`permissions`], permission patterns, their
//!   merge, labels and safety modes; [`hooks`], hooks as real child processes, their
//!   answers, failures, lanes, transforms and `redact_secrets`; [`config`], the agent file
//!   and the person's settings file (YAML, the permissions and hooks), read strictly;
//!   [`records`], records that survive the process (replaced whole, or journalled);
//!   [`order`], the one decision order every tool call walks across the controls, and the
//!   guarded session that records it;
//! - [`guard`] (this crate's own): `gatehouse guard`, the library in front of Claude Code,
//!   Codex CLI and Gemini CLI through their pre-tool hooks.
//!
//! The conformance adapter and the command line are the binary's (`main.rs`): they
//! translate between their wire and these modules, and decide nothing.
#![deny(missing_docs)]
// The kernel layer's `unsafe` lives in its own crate (`gatehouse-sys`); none here.
#![forbid(unsafe_code)]

pub use gatehouse_confine::{paths, trust, workspace};
pub use gatehouse_fence::{choices, exit, fence, helper, net, plane};
pub use gatehouse_gate as gate;
pub use gatehouse_policy::{config, hooks, order, permissions, records};
pub mod guard;
pub use gatehouse_sys as sys;
