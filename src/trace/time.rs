//! A trace's times: microseconds with three decimals, as clxfer writes them (`ts`, `dur`).

/// A `ts` or `dur` (microseconds, three decimals as clxfer writes them) in nanoseconds, rounded as
/// Perfetto rounds them.
pub fn ns(us: f64) -> i64 {
    (us * 1000.0).round() as i64
}
