//! Crash points: places in the write paths where the process can be made to kill itself
//! with `SIGKILL`, so that the conformance suite can prove that a `kill -9` at that moment
//! loses nothing acknowledged. Off unless armed; arming is the protocol's test-only
//! `crash_at` step (never a setting a person configures).
//!
//! May touch: the process itself (it sends `SIGKILL` to its own pid).

use std::sync::atomic::{AtomicU8, Ordering};

/// Where to die.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CrashPoint {
    /// A replaced document's temporary file is written and synced, not yet renamed.
    BeforeRename,
    /// Half of a journal record is written, the rest not.
    MidAppend,
}

static ARMED: AtomicU8 = AtomicU8::new(0);

fn code(p: CrashPoint) -> u8 {
    match p {
        CrashPoint::BeforeRename => 1,
        CrashPoint::MidAppend => 2,
    }
}

/// Arms `point` (once: the next time it is reached the process dies).
pub fn arm(point: CrashPoint) {
    ARMED.store(code(point), Ordering::SeqCst);
}

/// Whether `point` is armed (disarming it: the caller dies next).
pub(crate) fn armed(point: CrashPoint) -> bool {
    ARMED
        .compare_exchange(code(point), 0, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
}

/// Dies now, as `kill -9` would.
pub(crate) fn die() -> ! {
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
    std::process::abort()
}
