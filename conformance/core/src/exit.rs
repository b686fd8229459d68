//! The runner's exit codes, one documented constant each.

/// Every scenario passed (skips allowed), or the trace/lint found nothing.
pub const SUCCESS: i32 = 0;
/// A scenario failed or errored, a scenario file was invalid, or trace/lint found a problem.
pub const FAILURE: i32 = 1;
/// Usage or configuration error: a bad flag, a missing directory, an implementation that
/// cannot be started, refuses the handshake or speaks another protocol major version.
pub const USAGE: i32 = 2;
