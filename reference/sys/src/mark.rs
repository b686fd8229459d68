//! Timing marks of a diagnostic build. With the `timing-marks` feature each [`mark`] writes
//! one line, `gatehouse-mark SECONDS.NANOSECONDS PID PHASE` (`CLOCK_MONOTONIC`, the PID as
//! the process sees it, so 1 for the jail's init), to the process's standard error in one
//! `write(2)`; the `phases` bench reads them from a run of `gatehouse exec` and prints where
//! the time of one command goes (benches/README.md). Without the feature, in every build
//! that is shipped, tested or certified, [`mark`] is empty and compiles to nothing.
//!
//! A build with the feature is for measuring only: the jail's processes write their marks
//! into the command's standard error before the command runs.

/// Note that this process reached `phase` (nothing without the `timing-marks` feature).
#[cfg(not(feature = "timing-marks"))]
#[inline(always)]
pub fn mark(_phase: &str) {}

/// Note that this process reached `phase`: one line on standard error.
#[cfg(feature = "timing-marks")]
pub fn mark(phase: &str) {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime(2) writes into `t`, a local this call owns.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    let line = format!(
        "gatehouse-mark {}.{:09} {} {phase}\n",
        t.tv_sec,
        t.tv_nsec,
        std::process::id()
    );
    // SAFETY: write(2) reads `line`'s bytes, which live across the call; a failed or
    // short write only loses a mark.
    unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
}
