//! How a test says that it skipped: the one helper every test of the workspace calls when
//! the host cannot run (part of) what it checks (no bubblewrap, no Landlock, no Python...),
//! and the marker `cargo xtask test` reads back from the JUnit file to count that test as
//! skipped rather than passed.
//!
//! The crates' tests include this file by path (`#[path = ".../xtask/src/skip.rs"] mod
//! skip;`): it has no dependencies, so the line a test prints and the marker the summary
//! looks for cannot drift apart. A skip that the host's configuration forbids (for example
//! `GATEHOUSE_TEST_BWRAP=1` without bubblewrap) is a failure and never comes here.

/// What a skip's line begins with, on the test's standard error.
pub const MARKER: &str = "GATEHOUSE-SKIP: ";

/// The line that says `what` is skipped because of `why`, on one line whatever `why` holds.
pub fn line(what: &str, why: &str) -> String {
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{MARKER}{}: {}", flat(what), flat(why))
}

/// Says that this test skips `what` because of `why`; the test then returns (or goes on
/// with what the host can run). `cargo xtask test` counts the test as skipped, with `why`.
pub fn skip(what: &str, why: &str) {
    eprintln!("{}", line(what, why));
}
