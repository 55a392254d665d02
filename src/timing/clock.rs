//! The one host clock: `CLOCK_MONOTONIC` in nanoseconds (a vDSO call, ~20 ns). Trace timestamps are
//! offsets from the moment clxfer started; the wall-clock time of that moment (RFC 3339) goes into
//! the trace so traces of several processes can be aligned.

use std::sync::OnceLock;

/// Nanoseconds on the monotonic clock.
#[inline]
pub fn now_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The moment the trace starts, on both clocks.
#[derive(Debug, Clone)]
pub struct Start {
    pub mono_ns: u64,
    pub wall: chrono::DateTime<chrono::Utc>,
}

impl Start {
    /// The wall-clock time, RFC 3339 in microseconds, as traces and reports give it.
    pub fn rfc3339(&self) -> String {
        self.wall
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
    }
}

static START: OnceLock<Start> = OnceLock::new();

/// The start of the trace, fixed by the first call.
pub fn start() -> &'static Start {
    START.get_or_init(|| Start {
        mono_ns: now_ns(),
        wall: chrono::Utc::now(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_from_the_start() {
        let s = start();
        let (a, b) = (now_ns(), now_ns());
        assert!(s.mono_ns <= a && a <= b);
    }
}
