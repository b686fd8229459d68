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
