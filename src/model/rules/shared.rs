//! What several vendors' rules share: the helpers their cost models are written with, the sources
//! they cite, and the measured prices of timing a command.

use crate::model::cost::{Figure, Link};

/// A figure of a cost model.
pub(super) const fn fig(value: f64, source: &'static str) -> Option<Figure> {
    Some(Figure { value, source })
}

/// A link of a cost model: its floor, µs, and its bandwidth, GB/s, by size.
pub(super) const fn link(
    floor_us: f64,
    gbps: &'static [(u64, f64)],
    source: &'static str,
) -> Option<Link> {
    Some(Link {
        floor_us,
        gbps,
        source,
    })
}

/// The H200 size sweep (docs/ground-truth.md "Size sweep": tests/programs/sizes.c, the median
/// of 7 runs, two runs averaged, 2026-12-01).
pub(super) const SWEEP: &str = "docs/ground-truth.md size sweep (H200, 2026-12-01) [X]";

pub(super) const MIB: u64 = 1 << 20;

/// What timing a command costs on NVIDIA's OpenCL, µs: the H200 storm with every command timed,
/// less the storm with none (docs/PERFORMANCE.md, "NVIDIA H200").
pub(super) const TIMED_NVIDIA: f64 = 7.0;
/// The same elsewhere, µs: PoCL's own price for profiling and an event per command on this
/// project's CPU (docs/PERFORMANCE.md); no GPU vendor's but NVIDIA's has been measured.
pub(super) const TIMED_CPU: f64 = 1.0;
/// NVIDIA's driver alone for a timed command, µs: the H200 storm making its own event per
/// command and reading its four timestamps, less the storm without (paired medians of 15 rounds,
/// one thread, docs/PERFORMANCE.md "NVIDIA H200").
pub(super) const DRIVER_TIMED_NVIDIA: f64 = 3.45;
/// PoCL alone, µs: its event, queries and release (208 instructions a command, callgrind, the
/// storm's `events` mode less `profiling`) and a command on a profiling queue (80 instructions,
/// `profiling` less none), at this project's VM's ~0.4 ns an instruction (docs/PERFORMANCE.md).
/// No other vendor's has been measured: theirs are PoCL's.
pub(super) const DRIVER_TIMED_CPU: f64 = 0.08;
pub(super) const DRIVER_PROFILED_CPU: f64 = 0.03;
pub(super) const TR: &str = "docs/sources/transfer-rules.md";

pub(super) const DISCRETE: &str = "device memory is separate from host memory";

pub(super) const HOST_COPY: &str = "the device works in host memory: a read or write is one host memcpy \
    (7-12 GB/s on PoCL whatever the memory kind) and map/unmap move nothing";
