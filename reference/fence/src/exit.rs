//! The jail helper's exit codes, shared by the fence (which sets it up), the plane's
//! executor (which runs inside it) and the launchers that read them. Documented constants,
//! as a shell reports them.

/// The fence could not be set up: nothing was run.
pub const SETUP_FAILED: i32 = 125;
/// The command could not be executed.
pub const CANNOT_EXECUTE: i32 = 126;
/// The command was not found.
pub const NOT_FOUND: i32 = 127;
