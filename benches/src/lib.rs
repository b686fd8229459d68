//! Benchmarks live in `benches/`; this library holds only what their binaries share.

/// The median of `v` (sorted in place, by IEEE 754's total order: a NaN sorts last, and
/// the measurements hold none); of an even count, the mean of the middle two.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The release `gatehouse` a whole-process bench measures: `GATEHOUSE` when set, else the
/// static build where the platform has one (`cargo build-static`,
/// `target/x86_64-unknown-linux-gnu/release/gatehouse`, which the conformance runner
/// certifies there), else the one beside the bench's executable, else `target/release`.
pub fn release_gatehouse() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("GATEHOUSE") {
        return Some(std::path::PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/deps/<bench>-<hash> → target/<triple>/release/gatehouse (static),
    // else target/<profile>/gatehouse, else release.
    let target = exe.parent()?.parent()?.parent()?;
    let static_build = if cfg!(all(
        target_os = "linux",
        target_env = "gnu",
        target_arch = "x86_64"
    )) {
        Some(target.join("x86_64-unknown-linux-gnu/release/gatehouse"))
    } else {
        None
    };
    static_build
        .into_iter()
        .chain([
            exe.parent()?.parent()?.join("gatehouse"),
            target.join("release/gatehouse"),
        ])
        .find(|p| p.exists())
}
