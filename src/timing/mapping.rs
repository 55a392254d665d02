//! Placing device profiling timestamps on the host clock.
//!
//! A device's profiling clock is its own. clxfer maps it with one offset per device (host ns −
//! device ns), found one of two ways, and named in the trace:
//! - `clGetDeviceAndHostTimer` (OpenCL ≥ 2.1): clxfer reads its clock just before and just after the
//!   call and takes the midpoint as the host time of the device timestamp (error ≤ half the call).
//! - `queued-estimate` otherwise: `CL_PROFILING_COMMAND_QUEUED` is stamped by the driver while the
//!   enqueue call runs, so `host_begin − queued` is a lower bound of the offset for every command;
//!   clxfer uses the largest bound seen so far, which converges on the true offset from below.
//!
//! Either way the lower bound is enforced for every command, so a device slice never starts before
//! its enqueue call began; when that moves a calibrated offset, it counts as a correction.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

/// How a device's clock is mapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    DeviceAndHostTimer,
    QueuedEstimate,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::DeviceAndHostTimer => "clGetDeviceAndHostTimer",
            Method::QueuedEstimate => "queued-estimate",
        }
    }
}

/// One device's clock mapping. Shared by every thread that completes the device's commands, and
/// lock-free: the offset only ever rises (a compare-and-swap), so each command's placing costs an
/// atomic read where the offset stands.
#[derive(Debug)]
pub struct ClockMap {
    pub method: Method,
    /// Host ns − device ns; [`NONE`] until the first command (estimate only).
    offset: AtomicI64,
    /// Times the lower bound moved the offset of a calibrated mapping.
    corrections: AtomicU64,
}

/// No offset yet.
const NONE: i64 = i64::MIN;

impl ClockMap {
    /// From one `clGetDeviceAndHostTimer` reading bracketed by host readings.
    pub fn calibrated(host_before: u64, device: u64, host_after: u64) -> ClockMap {
        let mid = host_before / 2 + host_after / 2 + (host_before % 2 + host_after % 2) / 2;
        ClockMap {
            method: Method::DeviceAndHostTimer,
            offset: AtomicI64::new((mid as i64).wrapping_sub(device as i64).max(NONE + 1)),
            corrections: AtomicU64::new(0),
        }
    }

    pub fn estimate() -> ClockMap {
        ClockMap {
            method: Method::QueuedEstimate,
            offset: AtomicI64::new(NONE),
            corrections: AtomicU64::new(0),
        }
    }

    /// Takes in one command (its enqueue call began at `host_begin`, the driver queued it, or it
    /// started, at device time `queued`) and returns the offset to place it with.
    pub fn place(&self, host_begin: u64, queued: u64) -> i64 {
        // QUEUED is stamped during the call, so at least a nanosecond after it began: a command
        // never starts at its enqueue's very timestamp, where an arrow's two ends would be one
        // (DevTools' engine keys them by timestamp).
        let bound = (host_begin as i64 + 1 - queued as i64).max(NONE + 1);
        let mut now = self.offset.load(Relaxed);
        loop {
            if now != NONE && now >= bound {
                return now;
            }
            match self
                .offset
                .compare_exchange_weak(now, bound, Relaxed, Relaxed)
            {
                Ok(_) => {
                    if now != NONE && self.method == Method::DeviceAndHostTimer {
                        self.corrections.fetch_add(1, Relaxed);
                    }
                    return bound;
                }
                Err(seen) => now = seen,
            }
        }
    }

    pub fn offset(&self) -> Option<i64> {
        Some(self.offset.load(Relaxed)).filter(|&o| o != NONE)
    }

    pub fn corrections(&self) -> u64 {
        self.corrections.load(Relaxed)
    }
}

/// A device timestamp on the host clock (never below zero).
pub fn to_host(device_ns: u64, offset: i64) -> u64 {
    (device_ns as i64).saturating_add(offset).max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_converges_from_below_and_never_places_before_the_call() {
        // True offset 1000: the driver stamps `queued` 50..300 ns into each call.
        let m = ClockMap::estimate();
        let calls = [(10_000u64, 300u64), (20_000, 50), (30_000, 200)];
        let mut offsets = vec![];
        for (begin, into) in calls {
            let queued = begin + into - 1000;
            let o = m.place(begin, queued);
            assert!(
                to_host(queued, o) > begin,
                "never before the call, nor at its start"
            );
            offsets.push(o);
        }
        assert_eq!(offsets, [701, 951, 951]);
        assert!(offsets.iter().all(|&o| o <= 1000), "a lower bound");
        assert_eq!(m.corrections(), 0, "estimates are not corrections");
    }

    #[test]
    fn calibrated_offset_is_kept_unless_it_would_place_a_command_early() {
        let m = ClockMap::calibrated(5_000, 100, 5_010);
        assert_eq!(m.offset(), Some(4_905));
        // Consistent command: queued after the call began.
        assert_eq!(m.place(6_000, 1_200), 4_905);
        // Calibration a little off: this command would be queued 15 ns before its call began; it
        // is placed 1 ns after.
        assert_eq!(m.place(7_000, 2_080), 4_921);
        assert_eq!(m.corrections(), 1);
        assert_eq!(to_host(2_080, 4_921), 7_001);
        assert_eq!(m.method.as_str(), "clGetDeviceAndHostTimer");
    }

    #[test]
    fn extreme_values_do_not_overflow() {
        let m = ClockMap::calibrated(0, u64::MAX, 1);
        let _ = m.place(1 << 62, 0);
        assert_eq!(to_host(5, i64::MIN), 0);
        assert_eq!(to_host(1 << 62, 1 << 62), i64::MAX as u64);
    }
}
