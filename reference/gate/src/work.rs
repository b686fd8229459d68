//! A count of the steps the gate's readers take over a line, for the tests that check
//! that every decision is at most linear in its input (GATE-DANGER-12): counted, never
//! timed. Outside tests [`tick`] is empty and compiles to nothing.
//!
//! Touches nothing but a thread-local counter, and only in test builds.

#[cfg(test)]
thread_local! {
    static STEPS: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, u64::MAX)) };
}

/// Counts `n` steps of work. In a test, past the limit set by [`measure`] it panics, so
/// that a superlinear reader fails its test instead of running for hours.
#[inline(always)]
pub fn tick(n: usize) {
    #[cfg(test)]
    STEPS.with(|s| {
        let (count, limit) = s.get();
        let count = count.saturating_add(n as u64);
        assert!(count <= limit, "more than {limit} steps of work");
        s.set((count, limit));
    });
    #[cfg(not(test))]
    let _ = n;
}

/// Runs `f` and returns the steps it counted, panicking past `limit`.
#[cfg(test)]
pub fn measure(limit: u64, f: impl FnOnce()) -> u64 {
    STEPS.with(|s| s.set((0, limit)));
    f();
    let (count, _) = STEPS.with(|s| s.get());
    STEPS.with(|s| s.set((0, u64::MAX)));
    count
}
