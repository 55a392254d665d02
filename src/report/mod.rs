//! The report: where the transfer time went and what to change. One [`Builder`] makes it from
//! facts, whether they come from the live records (summary mode, `sink/summary.rs`) or from a
//! saved trace (`from_trace.rs`), so the two give the same numbers for the same run.

mod acc;
mod bounds;
mod builder;
pub mod csv;
mod device_report;
pub mod export;
mod facts;
mod finding_kind;
mod findings;
pub mod from_trace;
mod hist;
mod host_calls;
pub mod job;
mod kernels;
mod overhead;
pub mod races;
mod render;
mod replay;
mod sampled;
mod timeline;
mod verdict;

pub use bounds::{Bounds, Contributor};
pub use builder::Builder;
pub use facts::{
    DeviceEndFacts, DeviceFacts, EndFacts, Enqueue, Fact, Folds, Kind, Link, On, Ran, Sync, Work,
    kind, kind_of, small_flags,
};
pub use finding_kind::FindingKind;
pub use host_calls::{Failed, FromSlices, HostCall};
pub use kernels::{KernelRow, KernelRun};
pub use overhead::{Overhead, OwnFacts, TimingFacts};
pub use races::{RaceFact, RaceSide};
pub use render::{Format, Output, WIDTH, wrapped};
pub use sampled::Sampled;
pub use timeline::Busy;
pub use verdict::{Moved, PathShare, Verdict};

/// docs/TRACE.md: the trace's layout and keys, then the CSV tables of `clxfer report`.
pub fn trace_doc() -> String {
    crate::vocab::schema::markdown() + &csv::markdown() + &export::markdown()
}
use serde::{Deserialize, Serialize};

/// The whole report (its JSON form is `clxfer report --format json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    pub program: String,
    pub pid: u32,
    /// Its rank in a parallel job and the host it ran on (absent in a report of a clxfer
    /// before them).
    #[serde(default, flatten)]
    pub job: JobPlace,
    /// Wall-clock time clxfer started, RFC 3339.
    pub start_time: String,
    /// From clxfer's start to the end of the report (of a trace cut short: to its last event).
    pub wall_ns: u64,
    /// The trace was cut short (no end event): the figures only its end gives are `null`, and
    /// commands whose completion lay beyond the cut count as without device time.
    pub cut_short: bool,
    /// The signal that ended the run (`SIGTERM`): clxfer finished on it, and the program's last
    /// moments may be missing (commands in flight, a last transfer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// What the first lines say: what to change first, how the bytes moved, where the time
    /// went (`verdict.rs`).
    #[serde(default)]
    pub verdict: Verdict,
    pub devices: Vec<DeviceReport>,
    /// What bounds the run: the largest contributors to an approximate critical path
    /// (`bounds.rs` says how it is walked); `null` when no command was seen.
    pub bounds: Option<Bounds>,
    /// `null`: not known (a trace cut short), here and below.
    pub pinned_host_peak_bytes: Option<u64>,
    /// Possible data races found (pairs of commands, each said once; those past the findings'
    /// first few are counted in one finding): what `clxfer check --require 'no race'` counts.
    /// `null` in a report of a clxfer before it (the guard then counts the race findings).
    #[serde(default)]
    pub races: Option<u64>,
    /// The program's calls per entry point, most time first (empty in a report of a clxfer
    /// before it).
    #[serde(default)]
    pub host_calls: Vec<HostCall>,
    /// What a saving is weighed against to be [`MINOR`].
    #[serde(default)]
    pub weighed_against: Scale,
    /// What the program does wrong first ([`FindingKind::misuse`]: possible data races in the order found,
    /// then the rest by their saving), then the rest ranked by the time they would save,
    /// largest first.
    pub findings: Vec<Finding>,
    /// Commands not complete when the run ended (no device time).
    pub incomplete_at_exit: Option<u64>,
    /// Records lost because the writer fell behind (0 normally).
    pub dropped_records: Option<u64>,
    /// What clxfer itself cost the run; `null` when not known (a trace cut short).
    pub overhead: Option<Overhead>,
}

/// A process's place in a parallel job, as its launcher said (`crate::job`), and its host.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct JobPlace {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl JobPlace {
    /// `rank 3 of 4 on node7`; empty outside a job (the host alone says little there).
    pub fn describe(&self) -> String {
        let Some(r) = self.rank else {
            return String::new();
        };
        let of = self.ranks.map(|n| format!(" of {n}")).unwrap_or_default();
        let on = self
            .host
            .as_ref()
            .map(|h| format!(" on {h}"))
            .unwrap_or_default();
        format!("rank {r}{of}{on}")
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeviceReport {
    pub index: u32,
    pub name: String,
    /// The vendor rule set that classified its transfers.
    pub rules: String,
    /// The set `auto` would have picked: another than `rules` when CLXFER_RULES forced one, and
    /// then the times are this device's, not those of a device the rules describe.
    pub auto_rules: String,
    pub global_mem_bytes: u64,
    /// The device memory the findings judge against where it is not this device's own (the
    /// size the user gave, or the forced rules' card), and whose it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged_memory: Option<(u64, String)>,
    /// Whose cost model projects its transfers, and whether the projection stands in for the
    /// measured figures (forced rules) or sits beside them (`clxfer report --project`); `null`:
    /// every figure is this device's own.
    pub projection: Option<Projection>,
    /// By direction × path, all kinds of command together.
    pub transfers: Vec<Row>,
    /// Map, unmap, migrate, fill and copy commands, by kind × direction × path.
    pub operations: Vec<Row>,
    /// Kernel launches by name, most device time first.
    pub kernels: Vec<KernelRow>,
    /// How long the device was busy with the transfers and kernels timed, and with both at once;
    /// `null` when none was.
    pub busy: Option<Busy>,
    /// The same per queue (the first 64 queues of the device).
    pub queues: Vec<QueueBusy>,
    /// `busy` and `queues` are of the run as the cost model projects it (the device's rules were
    /// forced): its commands replayed with the projected transfer times, kernels as measured.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub busy_projected: bool,
    /// Per direction, the best device bandwidth of a pinned transfer of at least 1 MiB.
    pub best_pinned_gbps: Vec<(String, f64)>,
    /// The most device memory its buffers and SVM/USM allocations took at once, by its rules.
    pub resident_peak_bytes: Option<u64>,
    pub alloc_host_ptr_peak_bytes: Option<u64>,
    /// Transfers whose device time was unavailable (failed query, 0 duration, untimed queue,
    /// device timing off, or not complete at the end).
    pub without_device_time: u64,
    /// Transfers sampled device timing left untimed: each table row says how it extrapolated
    /// them (`sampled`).
    pub sampled_out: u64,
    /// Commands that failed (their completion's status was an error): they moved nothing and
    /// are in no row.
    #[serde(default)]
    pub failed: u64,
    /// The migrations by when their bytes moved, where there were some.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub migrations: Vec<Migrations>,
    pub clock_mapping: Option<String>,
}

/// Migrations whose bytes moved at one time: `at the call`, `at first use`, `not at all`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Migrations {
    pub moved: String,
    pub calls: u64,
    pub bytes: u64,
}

/// One queue's busy time.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct QueueBusy {
    pub queue: u32,
    pub busy: Busy,
}

/// One line of a table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// `Map`, `Unmap`, `Migrate`, `Fill`, `Copy` (operations); absent in the transfers table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub direction: String,
    pub path: String,
    pub calls: u64,
    pub bytes: u64,
    /// Summed device time of the calls that have one.
    pub device_ns: u64,
    /// Summed time the program's threads spent inside the calls.
    pub host_ns: u64,
    /// Of `host_ns`, the time blocking calls waited for the commands ahead of theirs (from the
    /// call's start to its own command's start on the device).
    pub waited_ns: u64,
    /// Bandwidth over the calls with a time (device time; host time for blocking calls without
    /// one) and bytes; within 1.2% (a log histogram keeps memory constant).
    pub median_gbps: Option<f64>,
    /// The 10th and 90th percentiles of the same (the calls' spread: what `clxfer diff` calls
    /// noise).
    pub p10_gbps: Option<f64>,
    pub p90_gbps: Option<f64>,
    /// Summed projected device time of the calls the cost model has a figure for; `null` when
    /// the device is not projected. Under forced rules the bandwidths above are projected too.
    pub projected_ns: Option<u64>,
    /// Projected against measured device time, over the calls of 1 MiB or more that have both;
    /// `null` when none has.
    pub compared: Option<Compared>,
    /// Its device time whole, what every total adds up: the projection where the device's
    /// times are projected, else `device_ns` with the estimate for the calls sampling left
    /// untimed ([`Row::time_ns`]).
    #[serde(default)]
    pub total_ns: u64,
    /// Calls with a device time (of `device_ns`).
    pub timed: u64,
    /// How the calls sampled device timing left untimed were extrapolated; `null` when it left
    /// none.
    pub sampled: Option<Sampled>,
}

impl Row {
    /// Its device time: the cost model's where the device's times are projected, else the
    /// measured one with the sampled-out calls' estimate.
    pub fn time_ns(&self, projected: bool) -> u64 {
        if projected {
            return self.projected_ns.unwrap_or(0);
        }
        let estimated = self.sampled.and_then(|s| s.estimated_ns).unwrap_or(0);
        self.device_ns.saturating_add(estimated)
    }
}

impl DeviceReport {
    /// Its times are the cost model's (its rules were forced on it).
    pub fn times_projected(&self) -> bool {
        self.projection.as_ref().is_some_and(|p| p.replaces)
    }
}

/// A projection onto a rule set's cost model (`model/cost.rs`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Projection {
    /// The rule set whose figures project.
    pub rules: String,
    /// The device its figures were measured on.
    pub on: String,
    /// The projection stands in for this device's times (the rules were forced on it).
    pub replaces: bool,
}

/// Measured and projected device time of the same calls.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Compared {
    pub calls: u64,
    pub bytes: u64,
    pub measured_ns: u64,
    pub projected_ns: u64,
}

impl Compared {
    pub(crate) fn add(&mut self, bytes: u64, measured: u64, projected: u64) {
        self.calls += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        self.measured_ns = self.measured_ns.saturating_add(measured);
        self.projected_ns = self.projected_ns.saturating_add(projected);
    }

    pub(crate) fn merge(&mut self, o: &Compared) {
        self.calls += o.calls;
        self.bytes = self.bytes.saturating_add(o.bytes);
        self.measured_ns = self.measured_ns.saturating_add(o.measured_ns);
        self.projected_ns = self.projected_ns.saturating_add(o.projected_ns);
    }

    /// Projected over measured time: 1.0 is a perfect model.
    pub fn ratio(&self) -> f64 {
        self.projected_ns as f64 / self.measured_ns.max(1) as f64
    }
}

/// Something to change, with its evidence and what it would save.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    /// A stable name: `staged-pageable`, `nonblocking-held-host`, …
    pub kind: FindingKind,
    pub device: u32,
    pub title: String,
    pub evidence: Vec<String>,
    /// The change, as an API change.
    pub fix: String,
    /// Estimated time saved; 0 for findings about memory or accuracy.
    pub saving_ns: u64,
    /// How the saving was estimated.
    pub estimate: String,
    /// Device memory its first fix frees, bytes (findings about memory); 0 for the others.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub saving_bytes: u64,
    /// The saving as the report shows it: `~8.10 ms, at this run's …` (or the estimate alone).
    pub saves: String,
    /// A race's: `known` or `declared` (`races.rs`); absent for the other findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<String>,
    /// It says the program does something wrong ([`FindingKind::misuse`]): it ranks above the time
    /// findings and is never minor.
    pub misuse: bool,
    /// It would save under [`MINOR`] of the run ([`Scale`]): the text report, Markdown and the
    /// viewer count it in one line instead of showing it (JSON and CSV keep it whole).
    pub minor: bool,
    /// Its saving is an estimate of time, however small (0 included: a transfer off the
    /// critical path, a call that costs only the enqueue's own time), not a finding about
    /// results, memory or accuracy.
    #[serde(skip)]
    pub weighed: bool,
}

/// What findings' savings are weighed against: the run's wall time; or, where the device times
/// are projected (forced rules), the device time the projection describes (transfers projected,
/// kernels as measured), since this machine's host, slow or busy, says nothing of the run the
/// figures describe.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Scale {
    pub ns: u64,
    /// `the run's wall time` or `the projected device time`.
    pub of: String,
}

impl Scale {
    pub fn of_run(wall_ns: u64, devices: &[DeviceReport]) -> Scale {
        if !devices.iter().any(DeviceReport::times_projected) {
            return Scale {
                ns: wall_ns,
                of: "the run's wall time".into(),
            };
        }
        let ns = devices.iter().map(DeviceReport::device_ns).sum();
        Scale {
            ns,
            of: "the projected device time".into(),
        }
    }
}

impl DeviceReport {
    /// Its transfers' and kernels' device time.
    pub fn device_ns(&self) -> u64 {
        self.transfer_ns().saturating_add(self.kernel_ns())
    }

    /// Its transfers' device time: projected where its rules were forced, else measured with the
    /// estimate for what sampling left untimed.
    pub fn transfer_ns(&self) -> u64 {
        let projected = self.times_projected();
        self.transfers.iter().map(|r| r.time_ns(projected)).sum()
    }

    /// Its kernels' device time, with the estimate for launches sampling left untimed.
    pub fn kernel_ns(&self) -> u64 {
        self.kernels.iter().map(KernelRow::time_ns).sum()
    }
}

/// The share of the run's wall time under which a finding that saves time is minor: below it
/// the change is not worth the reader's attention first (and an estimate that small is within
/// the run's own noise). Findings about results, memory or accuracy are never minor.
pub const MINOR: f64 = 0.01;

fn is_zero(n: &u64) -> bool {
    *n == 0
}
