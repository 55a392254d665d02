//! A log-scale histogram: quantiles in constant memory, however many values. Bins are
//! 1/100 of a decade wide, so a quantile is reported within 1.2% of the true one, and never
//! outside the least and the greatest value; of a few values (up to [`EXACT`]) it is exact: a
//! table row of one kernel launch shows its time, not its bin's middle.

const PER_DECADE: f64 = 100.0;
/// Bins span 10^-20 to 10^20: at most 4,001 of them (32 KiB).
const LIMIT: f64 = 2000.0;
/// Up to this many values are also kept as they are.
const EXACT: usize = 8;

/// Counts in consecutive bins from `lo` up: an index, not a search, per value (the writer adds
/// one per transfer). Values mostly fall within a few decades, so few bins are kept.
#[derive(Debug, Clone, Default)]
pub struct Hist {
    lo: i32,
    bins: Vec<u64>,
    count: u64,
    /// Every value while there are at most [`EXACT`], else empty.
    few: smallvec::SmallVec<[f64; EXACT]>,
    /// The least and the greatest value (valid once `count` > 0).
    min: f64,
    max: f64,
}

impl Hist {
    /// Adds a positive, finite value (others are ignored).
    pub fn add(&mut self, v: f64) {
        self.add_times(v, 1);
    }

    /// Adds a value `n` times.
    pub fn add_times(&mut self, v: f64, n: u64) {
        if v > 0.0 && v.is_finite() && n > 0 {
            let x = (log10(v) * PER_DECADE).clamp(-LIMIT, LIMIT);
            // floor() without libm's call: truncation, one less for a negative fraction.
            let t = x as i32;
            let bin = t - i32::from((t as f64) > x);
            self.note(v, n);
            self.add_n(bin, n);
        }
    }

    /// The exact side of `n` more values `v`: the least, the greatest, and the few.
    fn note(&mut self, v: f64, n: u64) {
        if self.count == 0 {
            (self.min, self.max) = (v, v);
        } else {
            (self.min, self.max) = (self.min.min(v), self.max.max(v));
        }
        let was = self.count as usize;
        if n <= EXACT as u64 && was + n as usize <= EXACT && self.few.len() == was {
            self.few.extend(std::iter::repeat_n(v, n as usize));
        } else {
            self.few.clear();
        }
    }

    #[inline]
    fn add_n(&mut self, bin: i32, n: u64) {
        if self.bins.is_empty() {
            self.lo = bin;
        } else if bin < self.lo {
            let grow = (self.lo - bin) as usize;
            self.bins.splice(0..0, std::iter::repeat_n(0, grow));
            self.lo = bin;
        }
        let i = (bin - self.lo) as usize;
        if i >= self.bins.len() {
            self.bins.resize(i + 1, 0);
        }
        self.bins[i] += n;
        self.count += n;
    }

    fn bins(&self) -> impl Iterator<Item = (i32, u64)> + '_ {
        (self.lo..)
            .zip(self.bins.iter().copied())
            .filter(|&(_, n)| n > 0)
    }

    pub fn merge(&mut self, other: &Hist) {
        if other.count == 0 {
            return;
        }
        let exact = |h: &Hist| h.few.len() as u64 == h.count;
        if exact(self) && exact(other) && (self.count + other.count) as usize <= EXACT {
            self.few.extend_from_slice(&other.few);
        } else {
            self.few.clear();
        }
        (self.min, self.max) = match self.count {
            0 => (other.min, other.max),
            _ => (self.min.min(other.min), self.max.max(other.max)),
        };
        for (b, n) in other.bins() {
            self.add_n(b, n);
        }
    }

    #[cfg(test)]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The `q` quantile (0..=1): the value itself of a few values, else the geometric middle of
    /// the bin holding it, within the least and greatest value.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        if self.few.len() as u64 == self.count {
            let mut few = self.few.clone();
            few.sort_by(f64::total_cmp);
            return Some(few[rank as usize - 1]);
        }
        let mut seen = 0;
        for (b, n) in self.bins() {
            seen += n;
            if seen >= rank {
                let middle = 10f64.powf((b as f64 + 0.5) / PER_DECADE);
                return Some(middle.clamp(self.min, self.max));
            }
        }
        None
    }
}

/// log10 of a positive, finite value, within 2e-7 of libm's (a bin is 0.01), at a third of its
/// cost (the writer asks once per transfer): the binary exponent, and ln of the mantissa m in
/// [√½, √2) by the series 2·atanh(t), t = (m − 1)/(m + 1), |t| < 0.172, to t^9.
fn log10(v: f64) -> f64 {
    let bits = v.to_bits();
    let mut exponent = ((bits >> 52) & 0x7ff) as i64;
    if exponent == 0 {
        // Subnormal: rare enough for libm.
        return v.log10();
    }
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        exponent += 1;
    }
    let t = (m - 1.0) / (m + 1.0);
    let t2 = t * t;
    let ln_m = 2.0 * t * (1.0 + t2 * (1.0 / 3.0 + t2 * (0.2 + t2 * (1.0 / 7.0 + t2 / 9.0))));
    (exponent - 1023) as f64 * std::f64::consts::LOG10_2 + ln_m * std::f64::consts::LOG10_E
}

#[cfg(test)]
mod tests {
    use super::Hist;

    #[test]
    fn the_fast_log10_is_libms_within_2e_7() {
        let mut v = 1e-300;
        while v < 1e300 {
            for x in [v, v * 1.37, v * 1.9999, v * 7.3] {
                let (got, want) = (super::log10(x), x.log10());
                assert!((got - want).abs() < 2e-7, "{x}: {got} vs {want}");
            }
            v *= 10.0;
        }
        assert_eq!(super::log10(5e-320), 5e-320f64.log10());
    }

    #[test]
    fn quantiles_are_within_the_bin_width() {
        let mut h = Hist::default();
        for v in 1..=1000 {
            h.add(v as f64);
        }
        h.add(0.0);
        h.add(f64::NAN);
        assert_eq!(h.count(), 1000);
        for (q, want) in [(0.5, 500.0), (0.9, 900.0), (1.0, 1000.0), (0.0, 1.0)] {
            let got = h.quantile(q).unwrap();
            assert!((got / want - 1.0).abs() < 0.012, "q{q}: {got} vs {want}");
        }
        let mut other = Hist::default();
        other.add(1e6);
        h.merge(&other);
        assert!(h.quantile(1.0).unwrap() > 9.8e5);
        assert!(Hist::default().quantile(0.5).is_none());
        // Bins grow downwards as well as up, and the extremes are clamped, not lost.
        let mut wide = Hist::default();
        for v in [1e3, 1e-3, 1e300, 5e-300, 1e3] {
            wide.add(v);
        }
        assert_eq!(wide.count(), 5);
        assert!(wide.bins.len() <= 4001);
        assert!((wide.quantile(0.6).unwrap() / 1e3 - 1.0).abs() < 0.012);
        assert!(wide.quantile(0.2).unwrap() < 1.1e-20);
        assert!(wide.quantile(1.0).unwrap() > 0.9e20);
    }

    #[test]
    fn a_few_values_give_exact_quantiles_and_more_stay_within_them() {
        let mut one = Hist::default();
        one.add(781_000.0);
        assert_eq!(one.quantile(0.5), Some(781_000.0));
        assert_eq!(one.quantile(0.9), Some(781_000.0));
        // Merged from two: still exact (the lower median of two).
        let mut other = Hist::default();
        other.add(1_970_000.0);
        one.merge(&other);
        assert_eq!(one.quantile(0.5), Some(781_000.0));
        assert_eq!(one.quantile(1.0), Some(1_970_000.0));
        one.add_times(5.0, 3);
        assert_eq!(one.quantile(0.5), Some(5.0));
        // Past EXACT: from the bins, and never above the greatest value.
        let mut many = Hist::default();
        many.add_times(1.0005, 20);
        assert!(many.quantile(0.5).unwrap() <= 1.0005);
        assert!((many.quantile(0.5).unwrap() - 1.0005).abs() < 0.012);
        let mut merged = Hist::default();
        merged.merge(&many);
        merged.merge(&one);
        assert_eq!(merged.count(), 20 + 5);
        assert!(merged.quantile(1.0).unwrap() <= 1_970_000.0);
        assert!(merged.quantile(0.0).unwrap() >= 1.0005 * 0.999);
    }
}
