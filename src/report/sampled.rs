//! Figures for calls that sampled device timing left untimed (`timing::sample`): a row's untimed
//! calls are estimated from its timed calls that the sampler chose among (those under
//! [`ALWAYS_BYTES`] for transfers; every launch for kernels), per call, since a sampled
//! command's time is mostly the enqueue's floor, the same for every one of its size. Where the
//! device's times are projected (forced rules), an untimed call's time is its projection, known
//! from its size like every other call's: it is summed, not extrapolated from this device's.

use crate::model::classification::{Direction, Path};
use crate::timing::sample::ALWAYS_BYTES;
use crate::units::duration;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// How a row's untimed calls were extrapolated.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Sampled {
    /// Calls sampling left untimed.
    pub calls: u64,
    /// The timed calls they are extrapolated from (0: none, and no estimate).
    pub sample: u64,
    /// The sample's mean and standard deviation per call, ns.
    pub mean_ns: f64,
    pub sd_ns: f64,
    /// The untimed calls' device time: `calls × mean_ns`; `null` without a sample.
    pub estimated_ns: Option<u64>,
    /// Their time is the cost model's for their sizes (the device's times are projected), not
    /// extrapolated from a sample.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub projected: bool,
}

impl Sampled {
    /// The estimate's 95% margin, relative to it (the sample mean's standard error).
    pub fn margin(&self) -> Option<f64> {
        (self.sample >= 2 && self.mean_ns > 0.0)
            .then(|| 1.96 * self.sd_ns / (self.sample as f64).sqrt() / self.mean_ns)
    }

    /// `~4.10 ms more for 800 untimed calls, from 20 timed: 5.12 µs each (sd 0.80 µs, ±3%)`.
    pub fn line(&self) -> String {
        let Some(ns) = self.estimated_ns else {
            return format!(
                "{} untimed by sampling, none of its size timed: not estimated",
                self.calls
            );
        };
        if self.projected {
            // The row's projected time already holds them: said as part of it, not on top.
            return format!(
                "~{} of the projected time is {} untimed calls', projected for their sizes",
                duration(ns),
                self.calls
            );
        }
        let margin = self.margin().map_or(String::new(), |m| {
            format!(", ±{:.0}%", (m * 100.0).max(1.0).round())
        });
        format!(
            "~{} more for {} untimed calls, from {} timed: {} each (sd {}{margin})",
            duration(ns),
            self.calls,
            self.sample,
            duration(self.mean_ns.round() as u64),
            duration(self.sd_ns.round() as u64)
        )
    }
}

/// A row of the device's tables: a transfer's direction and path, or a kernel's name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum RowKey {
    Transfer(Direction, Path),
    Kernel(Arc<str>),
}

/// The calls sampling left untimed, per queue and row, so that each queue's busy line takes its
/// part of the device's estimate: (calls, their projected time where the device is projected).
/// Bounded: past [`KEYS`] pairs, later ones count for the device only.
#[derive(Debug, Default)]
pub struct ByQueue(BTreeMap<(u32, RowKey), (u64, u64)>);

/// Queue and row pairs kept at most per device.
pub const KEYS: usize = 4096;

impl ByQueue {
    pub fn add(&mut self, queue: u32, key: RowKey, calls: u64, projected_ns: u64) {
        let len = self.0.len();
        let entry = match self.0.entry((queue, key)) {
            std::collections::btree_map::Entry::Vacant(_) if len >= KEYS => return,
            e => e.or_default(),
        };
        entry.0 += calls;
        entry.1 = entry.1.saturating_add(projected_ns);
    }

    /// Each queue's estimate, (transfers, kernels) ns, by its calls' share of their rows'
    /// estimates (`sampled` gives a row's): its projected time where the row's is projected.
    /// Not rounded: the caller rounds each queue's part once.
    pub fn estimates(
        &self,
        sampled: impl Fn(&RowKey) -> Option<Sampled>,
    ) -> BTreeMap<u32, (f64, f64)> {
        let mut out: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
        for ((queue, key), &(calls, projected_ns)) in &self.0 {
            let Some(s) = sampled(key) else { continue };
            let Some(row_ns) = s.estimated_ns else {
                continue;
            };
            let ns = match s.projected {
                true => projected_ns as f64,
                false => row_ns as f64 * calls as f64 / s.calls.max(1) as f64,
            };
            let e = out.entry(*queue).or_default();
            match key {
                RowKey::Transfer(..) => e.0 += ns,
                RowKey::Kernel(_) => e.1 += ns,
            }
        }
        out
    }
}

/// What a row gathers for [`Sampled`].
#[derive(Debug, Default, Clone, Copy)]
pub struct Moments {
    untimed: u64,
    n: u64,
    sum: f64,
    sum_sq: f64,
    /// Of the untimed calls, those whose projected time stands in, and that time.
    projected_calls: u64,
    projected_ns: u64,
}

impl Moments {
    /// A timed transfer of `bytes` that took `ns`: part of the sample when sampling chose it.
    pub fn timed(&mut self, bytes: u64, ns: u64) {
        if bytes < ALWAYS_BYTES {
            self.launch(ns);
        }
    }

    /// A timed kernel launch (every launch is sampled).
    pub fn launch(&mut self, ns: u64) {
        let x = ns as f64;
        self.n += 1;
        self.sum += x;
        self.sum_sq += x * x;
    }

    /// `n` calls sampling left untimed.
    pub fn untimed(&mut self, n: u64) {
        self.untimed += n;
    }

    /// `n` calls sampling left untimed whose projected time, `ns` for them all, stands in for
    /// the device's.
    pub fn projected(&mut self, n: u64, ns: u64) {
        self.untimed += n;
        self.projected_calls += n;
        self.projected_ns = self.projected_ns.saturating_add(ns);
    }

    pub fn merge(&mut self, o: &Moments) {
        self.untimed += o.untimed;
        self.projected_calls += o.projected_calls;
        self.projected_ns = self.projected_ns.saturating_add(o.projected_ns);
        self.n += o.n;
        self.sum += o.sum;
        self.sum_sq += o.sum_sq;
    }

    /// `None` when sampling left no call untimed.
    pub fn result(&self) -> Option<Sampled> {
        if self.untimed == 0 {
            return None;
        }
        if self.projected_calls == self.untimed {
            return Some(Sampled {
                calls: self.untimed,
                sample: 0,
                mean_ns: self.projected_ns as f64 / self.untimed as f64,
                sd_ns: 0.0,
                estimated_ns: Some(self.projected_ns),
                projected: true,
            });
        }
        let n = self.n as f64;
        let mean = if self.n > 0 { self.sum / n } else { 0.0 };
        let var = if self.n > 1 {
            ((self.sum_sq - n * mean * mean) / (n - 1.0)).max(0.0)
        } else {
            0.0
        };
        Some(Sampled {
            calls: self.untimed,
            sample: self.n,
            mean_ns: mean,
            sd_ns: var.sqrt(),
            // Calls with a projection count it; the rest the sample's mean.
            estimated_ns: (self.n > 0).then(|| {
                let rest = (self.untimed - self.projected_calls) as f64;
                self.projected_ns + (mean * rest).round() as u64
            }),
            projected: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untimed_calls_are_estimated_from_the_sampled_sizes_only() {
        // (timed (bytes, ns), untimed calls) → (sample, mean, estimate)
        type Case<'a> = (&'a [(u64, u64)], u64, Option<(u64, f64, u64)>);
        let table: &[Case] = &[
            // Nothing sampled out: no estimate at all.
            (&[(4096, 10_000)], 0, None),
            (
                &[(4096, 10_000), (4096, 14_000)],
                8,
                Some((2, 12_000.0, 96_000)),
            ),
            // A large transfer is always timed: it says nothing of the sampled ones.
            (
                &[(4096, 10_000), (ALWAYS_BYTES, 900_000)],
                3,
                Some((1, 10_000.0, 30_000)),
            ),
        ];
        for (timed, untimed, want) in table {
            let mut m = Moments::default();
            for &(b, ns) in *timed {
                m.timed(b, ns);
            }
            for _ in 0..*untimed {
                m.untimed(1);
            }
            let got = m
                .result()
                .map(|s| (s.sample, s.mean_ns, s.estimated_ns.unwrap()));
            assert_eq!(got, *want, "{timed:?}");
        }
        // Untimed calls and no sample of their size: counted, not estimated.
        let mut m = Moments::default();
        m.timed(ALWAYS_BYTES, 1);
        m.untimed(1);
        let s = m.result().unwrap();
        assert_eq!((s.calls, s.sample, s.estimated_ns), (1, 0, None));
        assert!(s.line().contains("not estimated"), "{}", s.line());
    }

    #[test]
    fn the_spread_and_margin_are_the_samples() {
        let mut m = Moments::default();
        for ns in [9_000, 10_000, 11_000, 10_000] {
            m.launch(ns);
        }
        m.untimed(1);
        let s = m.result().unwrap();
        assert_eq!(s.mean_ns, 10_000.0);
        assert!((s.sd_ns - 816.5).abs() < 0.1, "{}", s.sd_ns);
        // 1.96 × 816.5 / √4 / 10000 = 8%.
        assert!((s.margin().unwrap() - 0.080).abs() < 0.001);
        assert!(s.line().contains("±8%"), "{}", s.line());
    }

    #[test]
    fn projected_untimed_calls_are_summed_not_extrapolated() {
        let mut m = Moments::default();
        // This device's sample (PoCL's 1.5 µs) says nothing of the projected calls.
        m.timed(4096, 1_500);
        m.projected(200, 200 * 2_590);
        let s = m.result().unwrap();
        assert_eq!(
            (s.calls, s.estimated_ns, s.projected),
            (200, Some(518_000), true)
        );
        assert!(
            s.line().ends_with("projected for their sizes"),
            "{}",
            s.line()
        );
        // Merged with an unprojected row's calls: the projection where there is one.
        let mut other = Moments::default();
        other.timed(4096, 1_000);
        other.untimed(3);
        m.merge(&other);
        let s = m.result().unwrap();
        assert!(!s.projected);
        assert_eq!(s.estimated_ns, Some(518_000 + 3 * 1_250));
    }
}
