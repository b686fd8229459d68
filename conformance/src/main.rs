//! `gatehouse-conform`: the Gatehouse conformance runner.
//!
//! It drives any implementation through the adapter protocol (`spec/adapter-protocol.md`),
//! judges the scenarios in `scenarios/` and reports. It never links the reference library:
//! it speaks the protocol only, exactly as a third party would.
//!
//! This binary is the command line only ([`cli`]): the runner is the library
//! `gatehouse-conform-core` (`conformance/core`), the `vm` and `docs` commands are the
//! crates `gatehouse-conform-vm` (`conformance/vm`) and `gatehouse-conform-docs`
//! (`conformance/docs`).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod cli;

fn main() {
    std::process::exit(cli::main());
}
