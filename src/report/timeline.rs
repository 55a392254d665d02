//! Where a device's time went: how long it was busy, with transfers, with kernels, and with both
//! at once (the overlap a pipeline is built for), against the span from its first command's start
//! to its last one's end. In bounded memory: the intervals wait in a buffer, and when it is full
//! all but the newest [`LATE`] (by start) are swept into running unions and only their totals
//! are kept; an interval that comes later than [`LATE`] others that started after it counts from
//! where the sweep stopped. (Completions come nearly in order of start: a queue's in order, but
//! several threads hand them to the writer in turn, in runs [`Timeline`] keeps apart.)
//!
//! A union of intervals taken in order of start is one running end (a [`Front`]): what lies past
//! it is new. The device keeps three, of its transfers, its kernels and both; the overlap is what
//! the first two count twice (|T| + |K| − |T ∪ K|). Each queue keeps its own three.

use serde::{Deserialize, Serialize};

/// Intervals held before all but the newest [`LATE`] are swept.
const HELD: usize = 1 << 12;
/// How late an interval may come (in intervals that started after it) and still count whole.
const LATE: usize = 1 << 10;
/// Queues with figures of their own, at most (later queues count for the device only).
pub const QUEUES: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Transfer,
    Kernel,
}

/// One device's figures, in ns.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Busy {
    /// From the first command's start to the last one's end.
    pub span_ns: u64,
    /// Some command running.
    pub busy_ns: u64,
    pub transfer_ns: u64,
    pub kernel_ns: u64,
    /// A transfer and a kernel running at once.
    pub overlap_ns: u64,
    /// Of `busy_ns` (and of `transfer_ns` and `kernel_ns`), the estimate for the commands
    /// sampled device timing left untimed, taken as running alone (they have no times to
    /// overlap by); a queue's, its part of its device's.
    #[serde(default)]
    pub estimated_ns: u64,
    /// Of `estimated_ns`, the kernels' part (the rest is the transfers').
    #[serde(default)]
    pub estimated_kernel_ns: u64,
}

impl Busy {
    /// With the estimates for the transfers and kernels sampling left untimed, within the span:
    /// the transfers' first.
    pub fn with_estimate(self, transfer_ns: u64, kernel_ns: u64) -> Busy {
        let room = self.span_ns.saturating_sub(self.busy_ns);
        let estimated = transfer_ns.saturating_add(kernel_ns).min(room);
        let transfer = transfer_ns.min(estimated);
        self.plus_estimate(transfer, estimated - transfer)
    }

    /// With these estimates as they are (a queue's part of its device's, already within the
    /// device's span).
    pub fn plus_estimate(self, transfer_ns: u64, kernel_ns: u64) -> Busy {
        let estimated = transfer_ns.saturating_add(kernel_ns);
        Busy {
            busy_ns: self.busy_ns.saturating_add(estimated),
            transfer_ns: self.transfer_ns.saturating_add(transfer_ns),
            kernel_ns: self.kernel_ns.saturating_add(kernel_ns),
            estimated_ns: estimated,
            estimated_kernel_ns: kernel_ns,
            ..self
        }
    }
}

/// The union of intervals taken in order of start: its length so far, and where it ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Front {
    ns: u64,
    to: u64,
}

impl Front {
    fn add(&mut self, start: u64, end: u64) {
        if end > self.to {
            self.ns += end - start.max(self.to);
            self.to = end;
        }
    }
}

/// The unions of one device or queue: transfers, kernels, both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Unions([Front; 3]);

impl Unions {
    fn add(&mut self, start: u64, end: u64, class: Class) {
        self.0[class as usize].add(start, end);
        self.0[2].add(start, end);
    }

    fn busy(&self) -> Busy {
        let [t, k, both] = self.0;
        Busy {
            span_ns: 0,
            busy_ns: both.ns,
            transfer_ns: t.ns,
            kernel_ns: k.ns,
            overlap_ns: (t.ns + k.ns).saturating_sub(both.ns),
            estimated_ns: 0,
            estimated_kernel_ns: 0,
        }
    }
}

/// An interval: start, end, class, and its queue's slot in [`Timeline::queues`].
type Interval = (u64, u64, Class, u16);

#[derive(Debug, Default)]
pub struct Timeline {
    /// The intervals not yet swept, in two runs by start: `held` takes each that starts at or
    /// after its last, `late` the others. Two threads that hand over completions in turn (a
    /// driver's callback thread and the program's) make one run each: nothing to sort.
    held: Vec<Interval>,
    late: Vec<Interval>,
    /// `late` is out of order (a third source): it is sorted before a sweep.
    unsorted: bool,
    device: Unions,
    /// Per queue (by number, in the order first seen).
    queues: Vec<(u32, Unions)>,
    first: Option<u64>,
    last: u64,
    /// Where the last sweep stopped: later intervals count from here.
    swept_to: u64,
    /// Each queue's unions are kept apart (a second queue was seen).
    apart: bool,
}

impl Timeline {
    /// A command of `queue` ran from `start` to `end`.
    #[inline]
    pub fn add(&mut self, queue: u32, start: u64, end: u64, class: Class) {
        if end <= start {
            return;
        }
        let slot = match self.queues.iter().position(|q| q.0 == queue) {
            Some(slot) => slot,
            None if self.queues.len() < QUEUES => {
                self.queues.push((queue, Unions::default()));
                self.queues.len() - 1
            }
            None => QUEUES,
        } as u16;
        self.first = Some(self.first.map_or(start, |f| f.min(start)));
        self.last = self.last.max(end);
        let start = start.max(self.swept_to);
        if end <= start {
            return;
        }
        let i = (start, end, class, slot);
        if self.held.last().is_none_or(|l| l.0 <= start) {
            self.held.push(i);
        } else {
            self.unsorted |= self.late.last().is_some_and(|l| l.0 > start);
            self.late.push(i);
        }
        if self.held.len() + self.late.len() >= HELD {
            self.sweep(LATE);
        }
    }

    /// Sweeps the intervals not yet swept into the unions, in order of start, all but the `keep`
    /// that start last. While the device has one queue, that queue's unions are the device's:
    /// they are kept apart only once a second queue is seen (everything swept before was the
    /// first queue's).
    fn sweep(&mut self, keep: usize) {
        if self.unsorted {
            self.late.sort_by_key(|i| i.0);
            self.unsorted = false;
        }
        if self.queues.len() > 1 && !self.apart {
            self.queues[0].1 = self.device;
            self.apart = true;
        }
        let n = (self.held.len() + self.late.len()).saturating_sub(keep);
        let (mut h, mut l) = (0, 0);
        while h + l < n {
            // The next interval by start, and those after it in its run up to the other run's
            // next, taken in one go (the runs are long; with one, all of it).
            let left = n - h - l;
            let (late, take) = match (self.held.get(h), self.late.get(l)) {
                (Some(a), Some(b)) if b.0 < a.0 => (true, run_up_to(&self.late[l..], a.0, left)),
                (Some(_), Some(b)) => (false, run_up_to(&self.held[h..], b.0, left)),
                (Some(_), None) => (false, left),
                (None, _) => (true, left),
            };
            let run = match late {
                true => &self.late[l..l + take],
                false => &self.held[h..h + take],
            };
            for &(s, e, c, q) in run {
                self.device.add(s, e, c);
                if self.apart
                    && let Some(u) = self.queues.get_mut(q as usize)
                {
                    u.1.add(s, e, c);
                }
            }
            match late {
                true => l += take,
                false => h += take,
            }
        }
        // What comes later than the first interval kept counts from its start.
        let until = match (self.held.get(h), self.late.get(l)) {
            (Some(a), Some(b)) => a.0.min(b.0),
            (Some(a), None) | (None, Some(a)) => a.0,
            (None, None) => u64::MAX,
        };
        self.held.drain(..h);
        self.late.drain(..l);
        self.swept_to = self.swept_to.max(until);
    }

    /// The figures; `None` when no command had a time.
    pub fn busy(&mut self) -> Option<Busy> {
        let first = self.first?;
        self.sweep(0);
        Some(Busy {
            span_ns: self.last - first,
            ..self.device.busy()
        })
    }

    /// Each queue's figures (their `span_ns` is 0), after [`Timeline::busy`].
    pub fn queues(&self) -> Vec<(u32, Busy)> {
        let of = |u: &Unions| {
            if self.apart {
                u.busy()
            } else {
                self.device.busy()
            }
        };
        self.queues.iter().map(|(q, u)| (*q, of(u))).collect()
    }
}

/// How many of `run`'s first `most` start at or before `other` (at least one).
fn run_up_to(run: &[Interval], other: u64, most: usize) -> usize {
    (run.iter().take(most))
        .take_while(|i| i.0 <= other)
        .count()
        .max(1)
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
                "three sources in turn",
                &[
                    (20, 30, Transfer),
                    (0, 5, Transfer),
                    (10, 15, Kernel),
                    (2, 8, Transfer),
                ],
                [23, 18, 5, 0, 30],
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
                t.add(1, s, e, c);
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
        // In order of start, and with each transfer arriving before its kernel (then the held
        // intervals must be sorted before each sweep).
        for transfer_first in [false, true] {
            long_run(transfer_first);
        }
    }

    fn long_run(transfer_first: bool) {
        let mut t = Timeline::default();
        // 100,000 kernels of 10 ns every 20 ns, each with a 5 ns transfer in its middle.
        for i in 0..100_000u64 {
            if transfer_first {
                t.add(2, i * 20 + 2, i * 20 + 7, Transfer);
            }
            t.add(1, i * 20, i * 20 + 10, Kernel);
            if !transfer_first {
                t.add(2, i * 20 + 2, i * 20 + 7, Transfer);
            }
            assert!(t.held.len() + t.late.len() <= HELD);
        }
        let b = t.busy().unwrap();
        assert_eq!(
            (b.busy_ns, b.kernel_ns, b.transfer_ns, b.overlap_ns),
            (1_000_000, 1_000_000, 500_000, 500_000)
        );
        assert_eq!(b.span_ns, 99_999 * 20 + 10);
        // Each queue's own: the kernels' and the transfers'.
        let q = t.queues();
        let of = |n: u32| q.iter().find(|q| q.0 == n).unwrap().1;
        assert_eq!((of(1).kernel_ns, of(1).transfer_ns), (1_000_000, 0));
        assert_eq!((of(2).transfer_ns, of(2).overlap_ns), (500_000, 0));
    }

    #[test]
    fn an_interval_that_comes_late_counts_whole_within_the_bound() {
        let mut t = Timeline::default();
        let n = 2 * HELD as u64;
        for i in 0..n {
            t.add(1, i * 20, i * 20 + 10, Kernel);
        }
        // In the gap after a kernel that started LATE / 2 kernels before the last one: whole.
        let x = n - LATE as u64 / 2;
        t.add(1, x * 20 + 12, x * 20 + 15, Transfer);
        // After one long swept: from where the sweep stopped, which is past it.
        t.add(1, 5 * 20 + 12, 5 * 20 + 15, Transfer);
        let b = t.busy().unwrap();
        assert_eq!((b.busy_ns, b.transfer_ns), (n * 10 + 3, 3));
    }

    #[test]
    fn a_second_queue_late_in_the_run_leaves_the_first_ones_figures_whole() {
        let mut t = Timeline::default();
        // Sweeps while queue 1 is the only one, then queue 2 appears.
        for i in 0..(3 * HELD as u64) {
            t.add(1, i * 20, i * 20 + 10, Kernel);
        }
        let after = 3 * HELD as u64 * 20;
        for i in 0..10u64 {
            t.add(2, after + i * 20, after + i * 20 + 5, Transfer);
        }
        let b = t.busy().unwrap();
        let q = t.queues();
        assert_eq!((q[0].0, q[0].1.kernel_ns), (1, 3 * HELD as u64 * 10));
        assert_eq!((q[1].0, q[1].1.transfer_ns, q[1].1.kernel_ns), (2, 50, 0));
        assert_eq!(b.busy_ns, 3 * HELD as u64 * 10 + 50);
    }
}
