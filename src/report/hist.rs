//! A log-scale histogram: quantiles in constant memory, however many values. Bins are
//! 1/100 of a decade wide, so a quantile is reported within 1.2% of the true one.

use std::collections::BTreeMap;

const PER_DECADE: f64 = 100.0;

#[derive(Debug, Clone, Default)]
pub struct Hist {
    bins: BTreeMap<i32, u64>,
    count: u64,
}

impl Hist {
    /// Adds a positive, finite value (others are ignored).
    pub fn add(&mut self, v: f64) {
        if v > 0.0 && v.is_finite() {
            let bin = (v.log10() * PER_DECADE).floor().clamp(-2000.0, 2000.0) as i32;
            *self.bins.entry(bin).or_default() += 1;
            self.count += 1;
        }
    }

    pub fn merge(&mut self, other: &Hist) {
        for (&b, &n) in &other.bins {
            *self.bins.entry(b).or_default() += n;
        }
        self.count += other.count;
    }

    #[cfg(test)]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The `q` quantile (0..=1): the geometric middle of the bin holding it.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (&b, &n) in &self.bins {
            seen += n;
            if seen >= rank {
                return Some(10f64.powf((b as f64 + 0.5) / PER_DECADE));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::Hist;

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
    }
}
