//! Sampled device timing (`CLXFER_DEVICE_TIMING=on`, the default): which commands get an event
//! and their profiling timestamps read. Timing a command costs the driver an event, profiling
//! queries and a share of a completion callback (on NVIDIA's OpenCL about as much as the enqueue
//! itself, docs/PERFORMANCE.md), so only some are timed; what each command is (its classification)
//! comes from the API state and is never sampled.
//!
//! - A transfer of [`ALWAYS_BYTES`] or more, and a command whose size the arguments do not give
//!   (rect and image transfers, migrations), is always timed: there the transfer's own time, not
//!   the enqueue's floor, is what varies by memory kind.
//! - Every other command is timed while the budget allows: it earns credit at 1/[`BUDGET_DIV`]
//!   of the time that passes between enqueues, up to [`CAP_NS`], and a timed command spends its
//!   driver's price (`timed_command_us` in the vendor rules). So the timing of small commands
//!   costs at most ~1.6% of the run's time, whatever its enqueue rate: a program that enqueues
//!   one command a millisecond has all of them timed, a storm one in tens. The layer keeps one
//!   budget for the process, not one per queue: threads enqueuing at once slow each other, and
//!   a budget per queue earned as if each had the time to itself (on the H200, 4 threads with a
//!   queue each paid +4.4 µs per enqueue against +1.2 for one thread).
//! - Kernels come first: one may overdraw the credit by up to [`CAP_NS`], so small transfers are
//!   sampled away before kernels are.
//!
//! The state is a few atomics, updated without a lock: threads deciding at once may lose an
//! update between them, which moves the budget by one command's price, never more.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

/// A transfer this large or larger is always timed: the size where a transfer's own time passes
/// the enqueue's floor on the H200 (54 GB/s × 9.4 µs ≈ 0.5 MB, docs/ground-truth.md size sweep),
/// rounded up to a power of two.
pub const ALWAYS_BYTES: u64 = 1 << 20;

/// Credit is earned at one part in this many of the queue's elapsed time.
pub const BUDGET_DIV: u64 = 64;

/// The most credit a queue saves up, ns, and the most a kernel may overdraw it: after a quiet
/// spell, a burst of this much timing (about 28 commands at NVIDIA's price) is timed in full.
pub const CAP_NS: i64 = 200_000;

/// How far the host time the budget has seen may lag the newest enqueue's end, ns.
pub const SEEN_GRAIN_NS: u64 = 16_000;

/// What a command is to the sampler, as its arguments say before the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sample {
    /// A transfer of this many bytes.
    Bytes(u64),
    Kernel,
    /// A command whose size is not known before the call: always timed.
    Always,
    /// A command that moves nothing (a marker, a barrier): sampled like a small transfer.
    Other,
}

/// One queue's budget.
#[derive(Debug)]
pub struct Sampler {
    credit: AtomicI64,
    /// The host time credit has been earned up to, ns.
    earned_to: AtomicU64,
    /// When the queue's last enqueue ended, ns.
    seen: AtomicU64,
    /// Small commands decided, for a fixed rate (`decide_every`).
    count: AtomicU64,
}

impl Default for Sampler {
    fn default() -> Sampler {
        Sampler::new()
    }
}

impl Sampler {
    /// A budget starts with full credit: the first commands are timed.
    pub const fn new() -> Sampler {
        Sampler {
            credit: AtomicI64::new(CAP_NS),
            earned_to: AtomicU64::new(0),
            seen: AtomicU64::new(0),
            count: AtomicU64::new(0),
        }
    }
}

impl Sampler {
    /// An enqueue on the queue ended at `end` (host clock, ns). Kept to [`SEEN_GRAIN_NS`]: every
    /// enqueuing thread calls this, and a write each time would move the budget's cache line
    /// between their cores at every enqueue; credit then lags by at most 1/[`BUDGET_DIV`] of the
    /// grain.
    #[inline]
    pub fn seen(&self, end: u64) {
        let last = self.seen.load(Relaxed);
        // The first end is taken whatever it is: credit is earned from it on.
        if last == 0 || end > last + SEEN_GRAIN_NS {
            self.seen.fetch_max(end, Relaxed);
        }
    }

    /// Whether to time a command of kind `s`, whose timing costs `price_ns`; a timed one spends
    /// its price.
    #[inline]
    pub fn decide(&self, s: Sample, price_ns: i64) -> bool {
        // Read first, written only when something changed: most decisions of a storm (no time
        // earned since the last, and not timed) leave the shared line alone.
        let seen = self.seen.load(Relaxed);
        let earned = if self.earned_to.load(Relaxed) == seen {
            0
        } else {
            match self.earned_to.swap(seen, Relaxed) {
                0 => 0,
                from => (seen.saturating_sub(from) / BUDGET_DIV).min(2 * CAP_NS as u64) as i64,
            }
        };
        let had = self.credit.load(Relaxed);
        let credit = (had + earned).min(CAP_NS);
        let after = credit - price_ns;
        let timed = match s {
            Sample::Always => true,
            Sample::Bytes(b) if b >= ALWAYS_BYTES => true,
            Sample::Kernel => after >= -CAP_NS,
            Sample::Bytes(_) | Sample::Other => after >= 0,
        };
        let left = if timed { after.max(-CAP_NS) } else { credit };
        if left != had {
            self.credit.store(left, Relaxed);
        }
        timed
    }

    /// A timed command cost `ns` more than the price [`Sampler::decide`] spent (measured after
    /// the call); the credit may go below 0 by up to [`CAP_NS`], to be earned back.
    #[inline]
    pub fn spend(&self, ns: u64) {
        let ns = i64::try_from(ns).unwrap_or(i64::MAX).min(2 * CAP_NS);
        let left = (self.credit.load(Relaxed) - ns).max(-CAP_NS);
        self.credit.store(left, Relaxed);
    }

    /// [`Sampler::decide`] at a fixed rate instead of the budget (`CLXFER_TEST_SAMPLE_EVERY`):
    /// one small command or kernel in `every`, the first included.
    pub fn decide_every(&self, s: Sample, every: u64) -> bool {
        match s {
            Sample::Always => true,
            Sample::Bytes(b) if b >= ALWAYS_BYTES => true,
            _ => self.count.fetch_add(1, Relaxed).is_multiple_of(every),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRICE: i64 = 10_000;

    /// Runs `steps` of (ns since the last enqueue, command), returning how many were timed.
    fn timed(s: &Sampler, start: u64, steps: impl IntoIterator<Item = (u64, Sample)>) -> usize {
        let mut t = start;
        let mut n = 0;
        for (gap, kind) in steps {
            t += gap;
            n += usize::from(s.decide(kind, PRICE));
            s.seen(t);
        }
        n
    }

    #[test]
    fn large_and_unsized_transfers_are_always_timed_small_ones_within_the_budget() {
        let table = [
            (Sample::Bytes(ALWAYS_BYTES), 1000),
            (Sample::Bytes(64 << 20), 1000),
            (Sample::Always, 1000),
            // 1000 small commands 1 µs apart: the 200 µs of credit a queue starts with times 20
            // of them, and the 15.6 µs they earn (1000 × 1000 / 64 ns) one more.
            (Sample::Bytes(4096), 21),
            (Sample::Other, 21),
            (Sample::Bytes(ALWAYS_BYTES - 1), 21),
        ];
        for (kind, want) in table {
            let s = Sampler::default();
            let got = timed(&s, 1, (0..1000).map(|_| (1000, kind)));
            assert_eq!(got, want, "{kind:?}");
        }
    }

    #[test]
    fn the_share_timed_follows_the_enqueue_rate() {
        // After the saved-up credit is spent: one in PRICE × 64 / gap commands is timed.
        for gap in [1_000, 10_000, 100_000, 640_000, 5_000_000] {
            let s = Sampler::default();
            timed(&s, 1, (0..100).map(|_| (gap, Sample::Bytes(4096))));
            let got = timed(
                &s,
                100 * gap + 1,
                (0..1000).map(|_| (gap, Sample::Bytes(4096))),
            );
            let want = ((gap / BUDGET_DIV) as usize * 1000 / PRICE as usize).min(1000);
            assert!(
                got.abs_diff(want) <= 1,
                "gap {gap}: {got} timed, want {want}"
            );
        }
    }

    #[test]
    fn what_a_timed_command_cost_beyond_its_price_is_spent_too() {
        // 1000 small commands 1 µs apart: the price alone times 21 (above); each timed one
        // costing as much again times about half as many, and ten times as much about a tenth.
        for (extra, want) in [(0, 21), (PRICE as u64, 11), (9 * PRICE as u64, 3)] {
            let s = Sampler::default();
            let mut t = 1;
            let mut n = 0;
            for _ in 0..1000 {
                t += 1000;
                if s.decide(Sample::Bytes(4096), PRICE) {
                    n += 1;
                    s.spend(extra);
                }
                s.seen(t);
            }
            assert_eq!(n, want, "extra {extra}");
        }
    }

    #[test]
    fn kernels_are_timed_before_small_transfers_and_always_timed_ones_cannot_starve_forever() {
        let s = Sampler::default();
        // The credit spent, 4 KiB transfers are no longer timed; kernels still are, for one
        // more cap's worth.
        assert_eq!(timed(&s, 1, (0..20).map(|_| (1, Sample::Bytes(4096)))), 20);
        assert_eq!(timed(&s, 100, [(1, Sample::Bytes(4096))]), 0);
        assert_eq!(timed(&s, 200, (0..30).map(|_| (1, Sample::Kernel))), 20);
        // A run of large transfers overdraws the credit at most by the cap: a quiet spell that
        // earns one cap brings it back to 0, a second one to full.
        timed(&s, 300, (0..100).map(|_| (1, Sample::Bytes(8 << 20))));
        // (A quiet spell is earned by the enqueue after the one that ends it.)
        let half = CAP_NS as u64 * BUDGET_DIV;
        assert_eq!(
            timed(&s, 400, [(half, Sample::Other), (1, Sample::Other)]),
            0
        );
        assert_eq!(
            timed(&s, 500 + half, [(half, Sample::Other), (1, Sample::Other)]),
            1
        );
    }

    #[test]
    fn a_fixed_rate_times_one_in_n_small_commands_and_every_large_one() {
        let s = Sampler::default();
        let small: Vec<bool> = (0..8)
            .map(|_| s.decide_every(Sample::Bytes(4096), 4))
            .collect();
        assert_eq!(
            small,
            [true, false, false, false, true, false, false, false]
        );
        assert!((0..5).all(|_| s.decide_every(Sample::Bytes(ALWAYS_BYTES), 4)));
        assert!((0..5).all(|_| s.decide_every(Sample::Always, 4)));
    }
}
