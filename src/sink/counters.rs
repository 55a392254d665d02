//! The trace's counters (pinned host bytes, bytes in flight, device-resident bytes per device).
//! The call path updates them with atomics and emits a sample at most every [`MIN_GAP_NS`] per
//! counter; the writer samples the current values every tick, so the last change always shows.

use super::buffer;
use super::record::{Counter, Record};
use std::sync::atomic::{AtomicU64, Ordering};

pub const MIN_GAP_NS: u64 = 100_000;
/// Devices beyond this many have no resident-bytes counter.
pub const MAX_DEVICES: usize = 16;

#[repr(align(64))]
struct Gauge {
    value: AtomicU64,
    sampled_at: AtomicU64,
}

/// Bytes in flight as two running totals, each on its own cache line: the enqueuing threads add to
/// one and the completion callbacks (driver threads) to the other, so neither waits for the other.
#[repr(align(64))]
struct Total(AtomicU64);

static ENQUEUED: Total = Total(AtomicU64::new(0));
static COMPLETED: Total = Total(AtomicU64::new(0));

fn in_flight() -> u64 {
    let done = COMPLETED.0.load(Ordering::Relaxed);
    ENQUEUED.0.load(Ordering::Relaxed).saturating_sub(done)
}

impl Gauge {
    const fn new() -> Gauge {
        Gauge {
            value: AtomicU64::new(0),
            sampled_at: AtomicU64::new(0),
        }
    }
}

static PINNED: Gauge = Gauge::new();
static IN_FLIGHT: Gauge = Gauge::new();
static RESIDENT: [Gauge; MAX_DEVICES] = [const { Gauge::new() }; MAX_DEVICES];

fn gauge(c: Counter) -> Option<&'static Gauge> {
    match c {
        Counter::PinnedHost => Some(&PINNED),
        Counter::InFlight => Some(&IN_FLIGHT),
        Counter::DeviceResident(d) => RESIDENT.get((d as usize).checked_sub(1)?),
    }
}

/// Emits a sample of `c` (its value read only then) unless one was emitted within the gap.
fn maybe_sample(c: Counter, g: &Gauge, value: impl FnOnce() -> u64, now: u64) {
    let last = g.sampled_at.load(Ordering::Relaxed);
    if now.saturating_sub(last) >= MIN_GAP_NS
        && g.sampled_at
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    {
        let value = value();
        buffer::push_with(|_| Record::Counter {
            ts: now,
            counter: c,
            value,
        });
    }
}

/// Sets a counter (a value read from the memory model).
pub fn set(c: Counter, value: u64, now: u64) {
    if !super::recording().counters {
        return;
    }
    // Read before written: most calls change nothing, and a store (or a swap) would take the
    // cache line from every other enqueuing thread.
    if let Some(g) = gauge(c)
        && g.value.load(Ordering::Relaxed) != value
    {
        g.value.store(value, Ordering::Relaxed);
        maybe_sample(c, g, || value, now);
    }
}

/// Bytes enqueued (`delta` > 0) or completed (`delta` < 0) for the bytes-in-flight counter;
/// `now` is asked only when the counter is kept (trace mode).
pub fn in_flight_add(delta: i64, now: impl FnOnce() -> u64) {
    if !super::recording().counters {
        return;
    }
    let now = now();
    let total = if delta >= 0 { &ENQUEUED } else { &COMPLETED };
    total.0.fetch_add(delta.unsigned_abs(), Ordering::Relaxed);
    maybe_sample(Counter::InFlight, &IN_FLIGHT, in_flight, now);
}

/// Every counter's current value (the writer's tick).
pub fn current() -> Vec<(Counter, u64)> {
    let mut all = vec![
        (Counter::PinnedHost, PINNED.value.load(Ordering::Relaxed)),
        (Counter::InFlight, in_flight()),
    ];
    for (i, g) in RESIDENT.iter().enumerate() {
        all.push((
            Counter::DeviceResident(i as u32 + 1),
            g.value.load(Ordering::Relaxed),
        ));
    }
    all
}

/// In a forked child: the parent's commands in flight never complete here.
pub fn reset_after_fork() {
    COMPLETED
        .0
        .store(ENQUEUED.0.load(Ordering::Relaxed), Ordering::Relaxed);
}
