//! `gatehouse-conform`: the Gatehouse conformance runner.
//!
//! It drives any implementation through the adapter protocol (`spec/adapter-protocol.md`),
//! judges the scenarios in `scenarios/` and reports. It never links the reference library:
//! it speaks the protocol only, exactly as a third party would.

#![forbid(unsafe_code)]

mod bait;
mod check;
mod cli;
mod client;
mod controls;
mod docs;
mod error;
mod events;
mod exit;
mod expectations;
mod filter;
mod fixture;
mod identity;
mod judge;
mod keyring;
mod locate;
mod protocol;
mod reap;
mod record;
mod report;
mod runner;
mod scenario;
#[cfg(test)]
mod schema_tests;
mod snapshot;
mod spec;
mod trace;
mod untestable;
mod verdict;
mod vm;
mod vocab;
mod watch;

fn main() {
    std::process::exit(cli::main());
}
