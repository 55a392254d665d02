//! What the builder accumulates per device, from the facts (`facts.rs`): sums and histograms by
//! (kind, direction, path), what projects them, the small transfers' sizes. Here, below the
//! builder, because the findings read it too.

use super::facts::*;
use super::hist::Hist;
use super::kernels::Kernels;
use super::sampled::Moments;
use super::timeline::Timeline;
use crate::model::classification::{Direction, Path};
use crate::model::cost::Cost;
use crate::model::rules::RuleSet;
use std::collections::BTreeMap;

/// Pinned transfers this big are bandwidth-bound: the best of them is the run's pinned figure.
pub const BANDWIDTH_BOUND: u64 = 1 << 20;
/// Distinct small-transfer sizes remembered.
const SIZES: usize = 4096;
/// Transfers smaller than this are latency-bound.
pub const SMALL: u64 = 64 << 10;

/// Count, bytes and time of some transfers.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Sum {
    pub count: u64,
    pub bytes: u64,
    /// Time of those with one (device time, else host time for blocking calls).
    pub ns: u64,
    /// Bytes of those with a time.
    pub timed_bytes: u64,
    /// How many have a time.
    pub timed: u64,
    /// Those without one because sampled device timing left them untimed.
    pub sampled: u64,
    /// Calls sampled device timing left untimed, whether or not a time stands in (projected,
    /// or a blocking call's host time): the command graph lacks them.
    pub ungraphed: u64,
    pub host_ns: u64,
    /// Under projection: the same calls' projected time over the pinned link (what making the
    /// host side pinned leaves), where the cost model has one.
    pub pinned_ns: u64,
}

impl Sum {
    pub(super) fn merge(&mut self, o: &Sum) {
        self.count += o.count;
        self.bytes = self.bytes.saturating_add(o.bytes);
        self.ns = self.ns.saturating_add(o.ns);
        self.timed_bytes = self.timed_bytes.saturating_add(o.timed_bytes);
        self.timed += o.timed;
        self.sampled += o.sampled;
        self.ungraphed += o.ungraphed;
        self.host_ns = self.host_ns.saturating_add(o.host_ns);
        self.pinned_ns = self.pinned_ns.saturating_add(o.pinned_ns);
    }

    pub(super) fn add(&mut self, e: &Enqueue, time: Option<u64>) {
        self.add_pinned(e, time, None);
    }

    /// [`Sum::add`], with the call's projected time had its host side been pinned.
    /// `time` and `pinned` are per call: `e` may stand for several ([`Enqueue::calls`]).
    pub(super) fn add_pinned(&mut self, e: &Enqueue, time: Option<u64>, pinned: Option<u64>) {
        let n = u64::from(e.calls);
        let per = |t: u64| t.saturating_mul(n);
        self.pinned_ns = self.pinned_ns.saturating_add(per(pinned.unwrap_or(0)));
        self.count += n;
        self.bytes = self.bytes.saturating_add(e.total_bytes());
        self.host_ns = self.host_ns.saturating_add(e.host_ns);
        self.ungraphed += per(u64::from(e.sampled));
        match time {
            Some(t) => {
                self.ns = self.ns.saturating_add(per(t));
                self.timed_bytes = self.timed_bytes.saturating_add(e.total_bytes());
                self.timed += n;
            }
            None if e.sampled => self.sampled += n,
            None => {}
        }
    }

    /// `timed` of its calls' figure, scaled to all of them where sampling left some untimed.
    pub(super) fn extrapolated(&self, timed: u64) -> u64 {
        if self.sampled == 0 || self.timed == 0 {
            return timed;
        }
        (timed as f64 * (self.timed + self.sampled) as f64 / self.timed as f64) as u64
    }
}

#[derive(Debug, Default)]
pub(super) struct Acc {
    pub(super) calls: u64,
    pub(super) bytes: u64,
    pub(super) device_ns: u64,
    pub(super) host_ns: u64,
    /// Of `host_ns`, the time blocking calls waited for the commands ahead of theirs.
    pub(super) waited_ns: u64,
    pub(super) gbps: Hist,
    /// Projected device time of the calls the cost model has a figure for.
    pub(super) projected_ns: u64,
    /// The projection against the measurement, over the calls of 1 MiB or more with both.
    pub(super) compared: super::Compared,
    /// Calls with a device time.
    pub(super) timed: u64,
    /// For the calls sampling left untimed.
    pub(super) sample: Moments,
}

/// How a device's transfers are projected onto the devices a rule set describes (issue #26).
#[derive(Debug, Clone, Copy)]
pub(super) struct Projecting {
    pub set: &'static RuleSet,
    /// `None`: forced rules without a cost model; the device's transfers then have no time.
    pub cost: Option<&'static Cost>,
    /// The rules were forced on this device: its own times say nothing of the set's devices, so
    /// the projection stands in for them in every bandwidth, saving and finding. Otherwise it is
    /// shown beside the measured figures (`clxfer report --project`).
    pub replaces: bool,
}

impl Projecting {
    /// The transfer's device time by the cost model, where it has a figure for its path: a
    /// migration's move, and the one a kernel makes at its launch, by the model's legs through
    /// the host (`Cost::command_ns`).
    pub fn time(&self, e: &Enqueue) -> Option<u64> {
        let migration = matches!(e.kind, Kind::Migrate | Kind::Kernel);
        self.cost?
            .command_ns(migration, e.direction, e.path, e.bytes)
    }
}

/// An [`Acc`] per (kind, direction, path) that occurred, by a small integer key (the writer adds
/// to one per transfer), listed in that order. Sparse: a device read from a trace costs only the
/// rows it has.
#[derive(Debug, Default)]
pub(super) struct Rows {
    /// By key: the row's place in `accs`, or `NONE` (the keys are few: an index, not a hash,
    /// per transfer).
    pub(super) at: Vec<u16>,
    pub(super) accs: Vec<(u16, Acc)>,
}

impl Rows {
    const DIRECTIONS: usize = Direction::ALL.len();
    const PATHS: usize = Path::ALL.len();
    const KEYS: usize = Kind::ALL.len() * Self::DIRECTIONS * Self::PATHS;
    const NONE: u16 = u16::MAX;

    pub(super) fn get(&mut self, kind: Kind, dir: Direction, path: Path) -> &mut Acc {
        let i = (kind as usize * Self::DIRECTIONS + dir as usize) * Self::PATHS + path as usize;
        if self.at.is_empty() {
            self.at = vec![Self::NONE; Self::KEYS];
        }
        if self.at[i] == Self::NONE {
            self.at[i] = self.accs.len() as u16;
            self.accs.push((i as u16, Acc::default()));
        }
        &mut self.accs[self.at[i] as usize].1
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = ((Kind, Direction, Path), &Acc)> {
        let mut rows: Vec<&(u16, Acc)> = self.accs.iter().collect();
        rows.sort_unstable_by_key(|r| r.0);
        rows.into_iter().map(|(key, acc)| {
            let i = *key as usize;
            let kind = Kind::ALL[i / (Self::DIRECTIONS * Self::PATHS)];
            let dir = Direction::ALL[i / Self::PATHS % Self::DIRECTIONS];
            ((kind, dir, Path::ALL[i % Self::PATHS]), acc)
        })
    }
}

/// Everything the findings need, per device.
#[derive(Debug, Default)]
pub(super) struct DeviceAcc {
    pub facts: DeviceFacts,
    /// `None`: the figures are this device's own, as measured.
    pub projecting: Option<Projecting>,
    /// Its rule set (looked up once).
    pub set: Option<&'static RuleSet>,
    /// Its rules were forced (`DeviceFacts::forced`, kept: every enqueue asks).
    pub forced: bool,
    /// `None` when the trace was cut short before its end event.
    pub end: Option<DeviceEndFacts>,
    /// By (kind, direction, path), [`Rows`].
    pub(super) rows: Rows,
    /// Best pinned GB/s per direction (index: `Direction as usize`).
    pub best_pinned: [Option<f64>; 4],
    /// Best GB/s of a transfer of any path, for devices without a bus (no pinned path).
    pub best_any: [Option<f64>; 4],
    pub staged_pageable: [Sum; 4],
    /// Of those, the ones from memory locked with mlock.
    pub staged_locked: [Sum; 4],
    /// Transfers whose host side was a mapped pointer: the program's staging block.
    pub from_mapped: Sum,
    pub held_host: Sum,
    /// Non-blocking calls that stage nothing: their time inside the call is the enqueue's own.
    pub enqueue_floor: Sum,
    pub map_write: Sum,
    pub via_host_migrations: Sum,
    pub empty_migrations: Sum,
    /// Migrations to the host that moved the contents, and the hand-offs gone wrong.
    pub to_host_migrations: Sum,
    pub hand_offs: [Sum; 3],
    pub small: Sum,
    /// Sizes of the small transfers: exact, for the first [`SIZES`] distinct sizes.
    pub small_sizes: BTreeMap<u64, u64>,
    /// The last small size seen and how many times in a row since it was counted there (a
    /// program repeats one size: one comparison instead of a tree search per transfer).
    pub(super) small_run: (u64, u64),
    pub misaligned: Sum,
    pub kernels: Kernels,
    /// Its busy time, and each queue's.
    pub timeline: Timeline,
    pub without_device_time: u64,
    /// Transfers sampled device timing left untimed (not among those without a device time).
    pub sampled: u64,
    /// The calls sampling left untimed by queue and row, for the queues' busy lines.
    pub untimed: super::sampled::ByQueue,
    /// Of those without a device time, blocking calls whose host time stood in.
    pub host_time_used: u64,
    /// Device times no device can take, set aside (`model::device::implausible`).
    pub implausible: Implausible,
    /// Commands that failed (an error status): they moved nothing and are in no row.
    pub failed: u64,
    /// Migrations by when their bytes moved (`When` order): calls and bytes.
    pub migrations: [(u64, u64); 3],
    /// The program's transfers from its host region (staged from pageable memory, or from a
    /// mapping or SVM), by direction (H2D, D2H): where they ran on the device, the first
    /// [`FLIGHTS`]: how many ran at once sizes a staging ring (issue #57).
    pub flights: [Vec<(u64, u64)>; 2],
}

/// Transfers kept per direction to count how many the program keeps in flight.
pub const FLIGHTS: usize = 4096;

/// The most intervals that overlap at once (an end at the very time another begins is not an
/// overlap).
pub fn most_at_once(spans: &[(u64, u64)]) -> u64 {
    let mut edges: Vec<(u64, i8)> = (spans.iter())
        .flat_map(|&(b, e)| [(b, 1), (e.max(b), -1)])
        .collect();
    edges.sort_unstable();
    let (mut now, mut most) = (0i64, 0i64);
    for (_, d) in edges {
        now += i64::from(d);
        most = most.max(now);
    }
    most as u64
}

/// The device times a device reported that cannot be measurements.
#[derive(Debug, Default)]
pub struct Implausible {
    pub commands: u64,
    /// Of them transfers (counted among those without a device time).
    pub transfers: u64,
    /// Of them a nanosecond or less.
    pub instant: u64,
    /// The fastest bandwidth one implied, with its bytes and time.
    pub fastest: Option<(f64, u64, u64)>,
}

impl DeviceAcc {
    /// How many of the program's transfers from its host region ran at once, per direction
    /// (H2D, D2H): what sizes a staging ring.
    pub(super) fn most_in_flight(&self) -> [u64; 2] {
        [0, 1].map(|i| most_at_once(&self.flights[i]))
    }

    /// A kernel launch with its device time, if it ran timed: in its kernel's row, and among
    /// its queue's untimed ones where sampling left it untimed.
    pub(super) fn kernel(&mut self, k: &super::KernelRun, ran: Option<super::Ran>) {
        let row = self.kernels.add(k, ran.map(|r| r.ns));
        if ran.is_none() && k.sampled {
            let key = super::sampled::RowKey::Kernel(row);
            self.untimed.add(k.queue, key, 1, 0);
        }
    }

    /// The run of one small size into `small_sizes`.
    pub(super) fn count_small_run(&mut self) {
        let (size, n) = std::mem::take(&mut self.small_run);
        if n == 0 {
            return;
        }
        if let Some(count) = self.small_sizes.get_mut(&size) {
            *count += n;
        } else if self.small_sizes.len() < SIZES {
            self.small_sizes.insert(size, n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::most_at_once;

    #[test]
    fn most_at_once_counts_overlaps_not_touches() {
        assert_eq!(most_at_once(&[]), 0);
        // One after another (an end at another's start): one at a time.
        assert_eq!(most_at_once(&[(0, 10), (10, 20), (20, 30)]), 1);
        // Two queues: two at once, whatever the order they come in.
        assert_eq!(most_at_once(&[(15, 40), (0, 20), (5, 10), (30, 50)]), 2);
        assert_eq!(most_at_once(&[(0, 100), (10, 20), (15, 30), (18, 19)]), 4);
    }
}
