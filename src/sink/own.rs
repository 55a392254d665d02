//! clxfer's own time on the program's threads, measured on one recorded call in [`EVERY`] per
//! thread (two clock reads more on that call, none on the others) and scaled to all of them, for
//! the report's overhead line. The writer thread's CPU time is read once, at the end.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One call in this many is measured.
pub const EVERY: u32 = 64;

static CALLS: AtomicU64 = AtomicU64::new(0);
static MEASURED: AtomicU64 = AtomicU64::new(0);
static MEASURED_NS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static COUNT: Cell<u32> = const { Cell::new(0) };
}

/// A recorded call begins: whether to measure it.
#[inline]
pub fn tick() -> bool {
    COUNT
        .try_with(|c| {
            let n = c.get() + 1;
            if n < EVERY {
                c.set(n);
                return false;
            }
            c.set(0);
            CALLS.fetch_add(EVERY as u64, Relaxed);
            true
        })
        .unwrap_or(false)
}

/// A measured call took `ns` in clxfer, outside the driver's call.
pub fn add(ns: u64) {
    MEASURED.fetch_add(1, Relaxed);
    MEASURED_NS.fetch_add(ns, Relaxed);
}

/// What the end reports: (recorded calls, measured calls, their time in clxfer, ns). Calls
/// since a thread's last measured one are not counted (fewer than [`EVERY`] per thread).
pub fn totals() -> (u64, u64, u64) {
    (
        CALLS.load(Relaxed),
        MEASURED.load(Relaxed),
        MEASURED_NS.load(Relaxed),
    )
}

/// The CPU time of the calling thread, ns.
pub fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to write.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } != 0 {
        return 0;
    }
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}
