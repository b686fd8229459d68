//! `gatehouse-conform-core`: the library of the Gatehouse conformance runner
//! `gatehouse-conform`.
//!
//! It drives any implementation through the adapter protocol (`spec/adapter-protocol.md`),
//! judges the scenarios in `scenarios/` and reports. It never links the reference library:
//! it speaks the protocol only, exactly as a third party would. The binary
//! (`conformance/src`) parses the command line and calls it; `gatehouse-conform-vm` and
//! `gatehouse-conform-docs` build on it.
//!
//! From the bottom up: [`scenario`] reads and validates the scenario files, `fixture`
//! builds them, [`protocol`] speaks the protocol (its [`protocol::client`] holds the
//! connection), `controls` holds one module per control (its scenario keys, the requests
//! it builds, the judging of its answers) on the toolkit of `judge` and [`verdict`],
//! [`observe`] is what the runner watches itself (planted secrets, snapshots, inotify,
//! left-over processes) and `check` judges with it, [`runner`] walks the scenarios,
//! [`record`] and [`report`] keep and render the results, [`expectations`] compares them
//! with known failures, [`spec`], [`untestable`] and [`trace`] join the spec and the
//! scenarios, [`public_record`] and [`asi`] read the spec's lists of public bypasses and
//! of the OWASP agentic risks, [`checklist`] freezes the spec and the scenarios per
//! release, [`submission`] packages and verifies a certified run and [`diff`] compares two
//! runs; [`commands`] are `run`, `trace`, `lint`, `checklist`, `certify`, `verify` and
//! `diff` as the binary calls them.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod asi;
pub(crate) mod check;
pub mod checklist;
pub mod commands;
pub(crate) mod controls;
pub mod diff;
pub mod error;
pub mod events;
pub mod exit;
pub mod expectations;
pub mod filter;
pub(crate) mod fixture;
pub mod identity;
pub(crate) mod judge;
pub mod locate;
pub mod observe;
pub mod protocol;
pub mod public_record;
pub mod record;
pub mod report;
pub mod runner;
pub mod scenario;
#[cfg(test)]
mod schema_tests;
pub mod spec;
pub mod submission;
pub mod trace;
pub mod untestable;
pub mod verdict;
pub(crate) mod vocab;
