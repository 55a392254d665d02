//! Where a device's time went: how long it was busy, with transfers, with kernels, and with both
//! at once (the overlap a pipeline is built for), against the span from its first command's start
//! to its last one's end. A sweep over the commands' intervals, in bounded memory: the intervals
//! wait in a buffer, and when it is full the older half is swept and only its totals are kept
//! (an interval that comes later than a whole half-buffer of others counts from where the sweep
//! stopped).

use serde::Serialize;

/// Intervals held before the older half is swept.
const HELD: usize = 1 << 14;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Transfer,
    Kernel,
}

/// One device's figures, in ns.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Busy {
    /// From the first command's start to the last one's end.
    pub span_ns: u64,
    /// Some command running.
    pub busy_ns: u64,
    pub transfer_ns: u64,
    pub kernel_ns: u64,
    /// A transfer and a kernel running at once.
    pub overlap_ns: u64,
}

#[derive(Debug, Default)]
pub struct Timeline {
    held: Vec<(u64, u64, Class)>,
    totals: Busy,
    first: Option<u64>,
    last: u64,
    /// Where the last sweep stopped: later intervals count from here.
    swept_to: u64,
}

impl Timeline {
    pub fn add(&mut self, start: u64, end: u64, class: Class) {
        if end <= start {
            return;
        }
        self.first = Some(self.first.map_or(start, |f| f.min(start)));
        self.last = self.last.max(end);
        let start = start.max(self.swept_to);
        if end <= start {
            return;
        }
        self.held.push((start, end, class));
        if self.held.len() >= HELD {
            self.held.sort_unstable_by_key(|i| i.0);
            let until = self.held[HELD / 2].0;
            self.sweep(until);
        }
    }

    /// Sweeps everything before `until`; what runs past it is kept, from `until`.
    fn sweep(&mut self, until: u64) {
        let mut points: Vec<(u64, i32, Class)> = Vec::with_capacity(self.held.len() * 2);
        let mut kept = Vec::new();
        for &(s, e, c) in &self.held {
            if s >= until {
                kept.push((s, e, c));
                continue;
            }
            points.push((s, 1, c));
            points.push((e.min(until), -1, c));
            if e > until {
                kept.push((until, e, c));
            }
        }
        points.sort_unstable_by_key(|p| (p.0, p.1));
        let (mut transfers, mut kernels) = (0i32, 0i32);
        let mut at = points.first().map_or(0, |p| p.0);
        for (t, d, c) in points {
            let dt = t - at;
            if transfers > 0 || kernels > 0 {
                self.totals.busy_ns += dt;
            }
            if transfers > 0 {
                self.totals.transfer_ns += dt;
            }
            if kernels > 0 {
                self.totals.kernel_ns += dt;
            }
            if transfers > 0 && kernels > 0 {
                self.totals.overlap_ns += dt;
            }
            match c {
                Class::Transfer => transfers += d,
                Class::Kernel => kernels += d,
            }
            at = t;
        }
        self.held = kept;
        self.swept_to = self.swept_to.max(until);
    }

    /// The figures; `None` when no command had a time.
    pub fn busy(&mut self) -> Option<Busy> {
        let first = self.first?;
        self.sweep(u64::MAX);
        Some(Busy {
            span_ns: self.last - first,
            ..self.totals
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Class::*;

    #[test]
    fn busy_time_by_class_and_their_overlap() {
        // (what, intervals, busy, transfer, kernel, overlap, span)
        type Case = (&'static str, &'static [(u64, u64, Class)], [u64; 5]);
        let cases: &[Case] = &[
            ("one transfer", &[(10, 20, Transfer)], [10, 10, 0, 0, 10]),
            (
                "a transfer during a kernel, on two queues",
                &[(0, 100, Kernel), (20, 50, Transfer)],
                [100, 30, 100, 30, 100],
            ),
            (
                "serialised: no overlap, idle between",
                &[(0, 40, Kernel), (60, 90, Transfer)],
                [70, 30, 40, 0, 90],
            ),
            (
                "two transfers at once are one busy stretch",
                &[(0, 10, Transfer), (5, 15, Transfer)],
                [15, 15, 0, 0, 15],
            ),
            (
                "arrival out of order",
                &[(50, 60, Transfer), (0, 55, Kernel)],
                [60, 10, 55, 5, 60],
            ),
            (
                "empty intervals count nothing",
                &[(5, 5, Kernel)],
                [0, 0, 0, 0, 0],
            ),
        ];
        for (what, intervals, [busy, transfer, kernel, overlap, span]) in cases {
            let mut t = Timeline::default();
            for &(s, e, c) in *intervals {
                t.add(s, e, c);
            }
            let got = t.busy().unwrap_or_default();
            assert_eq!(
                [
                    got.busy_ns,
                    got.transfer_ns,
                    got.kernel_ns,
                    got.overlap_ns,
                    got.span_ns
                ],
                [*busy, *transfer, *kernel, *overlap, *span],
                "{what}"
            );
        }
    }

    #[test]
    fn a_long_run_is_swept_in_bounded_memory_with_the_same_totals() {
        let mut t = Timeline::default();
        // 100,000 kernels of 10 ns every 20 ns, each with a 5 ns transfer in its middle.
        for i in 0..100_000u64 {
            t.add(i * 20, i * 20 + 10, Kernel);
            t.add(i * 20 + 2, i * 20 + 7, Transfer);
            assert!(t.held.len() <= HELD);
        }
        let b = t.busy().unwrap();
        assert_eq!(
            (b.busy_ns, b.kernel_ns, b.transfer_ns, b.overlap_ns),
            (1_000_000, 1_000_000, 500_000, 500_000)
        );
        assert_eq!(b.span_ns, 99_999 * 20 + 10);
    }
}
