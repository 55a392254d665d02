//! The program's host time per entry point (calls, total, median, max; the time of calls that
//! waited for commands apart): every outermost call, in every mode, for the report's host-call
//! table. Summary mode records no call but enqueues and waits, so the figures are kept here, not
//! derived from records.
//!
//! Per thread, without locks: each thread owns a slot (taken on its first call, given back when
//! it ends, so slots number the most threads alive at once) with a table of per-entry-point
//! accumulators allocated on the entry point's first call in that slot. The slot's owner alone
//! writes it (plain loads and stores of relaxed atomics, no locked instruction); the end reads
//! every slot. A median of three calls or fewer is exact (from the least, the most and the
//! total); of more, it comes from a log-scale histogram, 8 bins per octave, within 4.5% and
//! never outside the least and the most.

use crate::report::{Failed, HostCall};
use crate::vocab::Api;
use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering::Relaxed};

/// Bins per octave, and octaves (1 ns to 2^40 ns, 18 minutes; longer calls count in the last).
const PER_OCTAVE: usize = 8;
const OCTAVES: usize = 40;
const BINS: usize = PER_OCTAVE * OCTAVES;

/// One entry point's figures in one slot.
struct Acc {
    calls: AtomicU64,
    total_ns: AtomicU64,
    wait_ns: AtomicU64,
    max_ns: AtomicU64,
    /// The least call's time (`u64::MAX` before the first).
    min_ns: AtomicU64,
    bins: [AtomicU32; BINS],
}

impl Acc {
    fn new() -> Acc {
        Acc {
            calls: AtomicU64::new(0),
            total_ns: AtomicU64::new(0),
            wait_ns: AtomicU64::new(0),
            max_ns: AtomicU64::new(0),
            min_ns: AtomicU64::new(u64::MAX),
            bins: [const { AtomicU32::new(0) }; BINS],
        }
    }
}

/// A thread's table: one accumulator per entry point, made on first use.
struct Slot {
    taken: AtomicBool,
    accs: [AtomicPtr<Acc>; Api::COUNT],
}

/// Every slot made so far (never freed: a slot outlives its thread for the next one).
static SLOTS: Mutex<Vec<&'static Slot>> = Mutex::new(Vec::new());

/// Gives the thread's slot back when the thread ends.
struct Owner(&'static Slot);

impl Drop for Owner {
    fn drop(&mut self) {
        // Calls made later in the thread's end count nowhere: the slot may be another's.
        let _ = MINE.try_with(|m| m.set(None));
        self.0.taken.store(false, Relaxed);
    }
}

thread_local! {
    static MINE: Cell<Option<&'static Slot>> = const { Cell::new(None) };
    static OWNER: std::cell::RefCell<Option<Owner>> = const { std::cell::RefCell::new(None) };
}

/// The bin of a duration: its octave, and the next three bits below the leading one.
fn bin(ns: u64) -> usize {
    if ns < 2 {
        return 0;
    }
    let octave = 63 - ns.leading_zeros() as usize;
    let sub = ((ns << (ns.leading_zeros() + 1)) >> (64 - 3)) as usize;
    (octave * PER_OCTAVE + sub).min(BINS - 1)
}

/// The middle of a bin, ns.
fn middle(bin: usize) -> u64 {
    let (octave, sub) = (bin / PER_OCTAVE, bin % PER_OCTAVE);
    let low = (1u64 << octave) as f64 * (1.0 + sub as f64 / PER_OCTAVE as f64);
    (low * (1.0 + 0.5 / PER_OCTAVE as f64)) as u64
}

/// This thread's slot: a free one, else a new one.
#[cold]
fn take() -> Option<&'static Slot> {
    // A thread already ending cannot keep a slot: it counts nothing more.
    OWNER
        .try_with(|o| o.borrow().is_none())
        .ok()?
        .then_some(())?;
    let mut slots = SLOTS.lock().ok()?;
    let slot = match slots
        .iter()
        .find(|s| (s.taken.compare_exchange(false, true, Relaxed, Relaxed)).is_ok())
    {
        Some(s) => *s,
        None => {
            let s: &'static Slot = Box::leak(Box::new(Slot {
                taken: AtomicBool::new(true),
                accs: [const { AtomicPtr::new(std::ptr::null_mut()) }; Api::COUNT],
            }));
            slots.push(s);
            s
        }
    };
    drop(slots);
    OWNER
        .try_with(|o| *o.borrow_mut() = Some(Owner(slot)))
        .ok()?;
    let _ = MINE.try_with(|m| m.set(Some(slot)));
    Some(slot)
}

/// One outermost call of `api` took `ns` on the program's thread; `waited`: it waited for
/// commands (a blocking call, a wait), so its time is the device's as much as the host's.
#[inline]
pub fn add(api: Api, ns: u64, waited: bool) {
    let slot = match MINE.try_with(Cell::get) {
        Ok(Some(s)) => s,
        Ok(None) => match take() {
            Some(s) => s,
            None => return,
        },
        Err(_) => return,
    };
    let cell = &slot.accs[api as usize];
    let mut acc = cell.load(Relaxed);
    if acc.is_null() {
        acc = Box::into_raw(Box::new(Acc::new()));
        cell.store(acc, std::sync::atomic::Ordering::Release);
    }
    // SAFETY: made above or earlier by this thread, never freed.
    let a = unsafe { &*acc };
    // The slot's owner alone writes it: load and store, no locked add.
    let bump = |x: &AtomicU64, by: u64| x.store(x.load(Relaxed).wrapping_add(by), Relaxed);
    bump(&a.calls, 1);
    bump(&a.total_ns, ns);
    if waited {
        bump(&a.wait_ns, ns);
    }
    if ns > a.max_ns.load(Relaxed) {
        a.max_ns.store(ns, Relaxed);
    }
    if ns < a.min_ns.load(Relaxed) {
        a.min_ns.store(ns, Relaxed);
    }
    let b = &a.bins[bin(ns)];
    b.store(b.load(Relaxed).saturating_add(1), Relaxed);
}

/// Calls that failed, by entry point and error: rare, so one list under a lock, not per thread.
/// Bounded: a program failing in a loop in many ways keeps the first [`FAILED_KINDS`].
static FAILED: Mutex<Vec<(Api, Option<i32>, u64)>> = Mutex::new(Vec::new());
const FAILED_KINDS: usize = 64;

/// One outermost call of `api` failed with `code` (`None`: it returned no object, and the
/// program asked no error code).
#[cold]
pub fn failed(api: Api, code: Option<i32>) {
    let Ok(mut list) = FAILED.lock() else { return };
    if let Some((_, _, n)) = list.iter_mut().find(|(a, c, _)| *a == api && *c == code) {
        *n += 1;
    } else if list.len() < FAILED_KINDS {
        list.push((api, code, 1));
    }
}

/// Every entry point called so far, summed over the slots, most total time first.
pub fn snapshot() -> Vec<HostCall> {
    let Ok(slots) = SLOTS.lock() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for &api in Api::ALL {
        let (mut calls, mut total, mut wait, mut max) = (0u64, 0u64, 0u64, 0u64);
        let mut min = u64::MAX;
        let mut bins = [0u64; BINS];
        for s in slots.iter() {
            let p = s.accs[api as usize].load(std::sync::atomic::Ordering::Acquire);
            if p.is_null() {
                continue;
            }
            // SAFETY: published with Release by its maker, never freed.
            let a = unsafe { &*p };
            calls += a.calls.load(Relaxed);
            total += a.total_ns.load(Relaxed);
            wait += a.wait_ns.load(Relaxed);
            max = max.max(a.max_ns.load(Relaxed));
            min = min.min(a.min_ns.load(Relaxed));
            for (b, x) in bins.iter_mut().zip(&a.bins) {
                *b += u64::from(x.load(Relaxed));
            }
        }
        if calls == 0 {
            continue;
        }
        out.push(HostCall {
            api: api.name().to_string(),
            calls,
            total_ns: total,
            wait_ns: wait,
            median_ns: median(&bins, calls, (min, max, total)),
            max_ns: max,
            failed: failed_of(api),
        });
    }
    HostCall::sort(&mut out);
    out
}

/// The failed calls of `api`, most first.
fn failed_of(api: Api) -> Vec<Failed> {
    let Ok(list) = FAILED.lock() else {
        return Vec::new();
    };
    let mut out: Vec<Failed> = (list.iter())
        .filter(|(a, ..)| *a == api)
        .map(|&(_, code, calls)| Failed { code, calls })
        .collect();
    out.sort_by_key(|f| std::cmp::Reverse(f.calls));
    out
}

/// The median of `calls` calls (the lower one of an even count): exact for three or fewer, from
/// the least, the most and the `total` (a table of a few calls shows them, and the middle of
/// a bin would not add up); else the middle of the histogram's bin that holds it, kept within
/// the least and the most.
fn median(bins: &[u64; BINS], calls: u64, (min, max, total): (u64, u64, u64)) -> u64 {
    match calls {
        0 => 0,
        1 => total,
        2 => min,
        3 => total
            .saturating_sub(min)
            .saturating_sub(max)
            .clamp(min, max),
        _ => {
            let half = bins.iter().sum::<u64>().div_ceil(2);
            let mut seen = 0;
            let bin = bins.iter().position(|&n| {
                seen += n;
                seen >= half
            });
            bin.map_or(0, |b| middle(b).clamp(min.min(max), max))
        }
    }
}

/// Forget everything (in a forked child: the parent's calls are the parent's, and its other
/// threads, which held slots, are not in the child).
pub fn reset() {
    if let Ok(mut list) = FAILED.lock() {
        list.clear();
    }
    let Ok(slots) = SLOTS.lock() else {
        return;
    };
    let mine = MINE.try_with(Cell::get).ok().flatten();
    for s in slots.iter() {
        if !mine.is_some_and(|m| std::ptr::eq(m, *s)) {
            s.taken.store(false, Relaxed);
        }
        for p in &s.accs {
            let p = p.load(Relaxed);
            if p.is_null() {
                continue;
            }
            // SAFETY: as in `snapshot`.
            let a = unsafe { &*p };
            for x in [&a.calls, &a.total_ns, &a.wait_ns, &a.max_ns] {
                x.store(0, Relaxed);
            }
            a.min_ns.store(u64::MAX, Relaxed);
            a.bins.iter().for_each(|b| b.store(0, Relaxed));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_hold_a_duration_within_their_width() {
        for ns in [1u64, 2, 3, 7, 100, 999, 1_000_000, 88_600_000, 1 << 39] {
            let m = middle(bin(ns)) as f64;
            assert!(
                (m - ns as f64).abs() <= ns as f64 * 0.07 + 1.0,
                "{ns}: bin {} middle {m}",
                bin(ns)
            );
        }
        assert!(bin(u64::MAX) == BINS - 1);
    }

    #[test]
    fn calls_on_several_threads_sum_and_give_a_median() {
        let api = Api::ALL[0];
        let before = snapshot()
            .into_iter()
            .find(|c| c.api == api.name())
            .map_or(0, |c| c.calls);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                std::thread::spawn(move || {
                    for i in 0..100u64 {
                        add(api, 1_000 + i + t, i % 10 == 0);
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let c = snapshot()
            .into_iter()
            .find(|c| c.api == api.name())
            .unwrap();
        assert_eq!(c.calls - before, 400);
        assert!(c.max_ns >= 1_102);
        assert!((950..=1_150).contains(&c.median_ns), "{c:?}");
    }

    #[test]
    fn a_median_of_a_few_calls_is_exact_and_never_outside_them() {
        let mut bins = [0u64; BINS];
        // One call of 37.1 ms: its bin's middle is 3.8% off; the median is the call.
        bins[bin(37_100_000)] += 1;
        assert_ne!(middle(bin(37_100_000)), 37_100_000);
        assert_eq!(
            median(&bins, 1, (37_100_000, 37_100_000, 37_100_000)),
            37_100_000
        );
        bins[bin(20_000_000)] += 1;
        assert_eq!(
            median(&bins, 2, (20_000_000, 37_100_000, 57_100_000)),
            20_000_000
        );
        // Three calls (676, 1, 714 µs, total 1.391 ms): the middle one, not a bin's 696 µs.
        assert_eq!(median(&[0; BINS], 3, (1_000, 714_000, 1_391_000)), 676_000);
        // Many alike: a bin's middle above the most is the most.
        let mut many = [0u64; BINS];
        many[bin(1_000_000)] = 5;
        assert_eq!(
            median(&many, 5, (1_000_000, 1_000_000, 5_000_000)),
            1_000_000
        );
    }
}
