//! What the call path hands to the writer: small records, stamped on the monotonic clock
//! (`timing::clock`), rendered into the trace only on the writer thread.

use crate::model::classification::{Classification, Direction, ObjRef, Path};
use crate::vocab::Api;
use smallvec::SmallVec;

/// One record. Small, so that the plain calls (most of them) move few bytes; an enqueue's details
/// are boxed, in boxes recycled through [`crate::sink::buffer::boxed`] (a box allocated on the
/// calling thread and freed on the writer's costs more than the rest of the call path, through
/// malloc's arena locks). Batches of records are recycled too.
pub enum Record {
    /// One OpenCL call on a host thread: a slice on the thread's track.
    Call(Call),
    /// One command on a device queue, from its completion callback: a device slice and the flow
    /// arrow from the enqueue call.
    Command(Command),
    /// A sample of one counter.
    Counter {
        ts: u64,
        counter: Counter,
        value: u64,
    },
    /// A device seen for the first time.
    Device(Box<DeviceTrack>),
    /// A queue created (or first seen).
    Queue(QueueTrack),
    /// A host thread's first record: its name.
    Thread { tid: u32, name: [u8; 16] },
    /// Summary mode: a classified enqueue or a kernel launch as the report needs it, with its
    /// completion (`None`: unavailable or not timed), instead of the call, its classification and
    /// its command. Sent when the command completes, or from the call when it is not timed.
    Fact(crate::report::Fact, Option<crate::report::Ran>),
    /// Summary mode: command `id` failed (its completion's status was an error), sent before its
    /// fact: it moved nothing.
    Failed(u64),
    /// A possible data race between two commands, found as the second was enqueued; sent after
    /// that enqueue's own record. In the report (a finding) and the trace (an instant and an
    /// arrow between the two enqueue slices) alike.
    Race(Box<Race>),
    /// The program asked `clGetExtensionFunctionAddress(ForPlatform)` for a function and got
    /// none: its name, the thread, when.
    Missing(Box<Missing>),
}

pub struct Missing {
    pub name: String,
    pub tid: u32,
    pub at: u64,
}

/// A race's report fact, and where its two enqueue calls' host slices start, for the arrow.
pub struct Race {
    pub fact: crate::report::RaceFact,
    /// Of the first and second command: the call's start (monotonic ns) and whether the
    /// command is timed (its host slice's category).
    pub calls: [(u64, bool); 2],
}

/// One host call. `begin`/`end` bracket the call down to the driver.
pub struct Call {
    pub api: Api,
    pub tid: u32,
    pub begin: u64,
    pub end: u64,
    /// For enqueues: what the command does.
    pub command: Option<Box<Enqueued>>,
    /// For calls about a user event: its number (0: none).
    pub node: u64,
    /// For calls after which the host knows commands are done (`clFinish`, `clWaitForEvents`,
    /// a status query that saw `CL_COMPLETE`): which, as the report's graph takes it.
    pub waited: Option<crate::report::On>,
}

/// What an enqueue call put on a queue.
#[derive(Default)]
pub struct Enqueued {
    /// The command's number (`graph::Id`); also the flow id joining host and device slices.
    pub id: u64,
    /// Timed on the device: a device slice will come.
    pub timed: bool,
    /// Sampled device timing left it untimed.
    pub sampled: bool,
    /// What it waits for (`graph`).
    pub deps: crate::graph::Deps,
    pub queue: QueueRef,
    /// `None` for commands that are not transfers (markers, barriers, kernels that move nothing).
    pub class: Option<Classification>,
    /// The memory objects the command names.
    pub mems: SmallVec<[ObjRef; 2]>,
    /// A kernel's uses of `mems`, as judged for races: what the trace labels each with.
    pub uses: crate::graph::race::Uses,
    /// The kernel's function name, for kernel launches.
    pub kernel: Option<std::sync::Arc<str>>,
    pub flags: CallFlags,
    /// A buffer map's requested region: (offset, size), beside the bytes it moved.
    pub region: Option<(u64, u64)>,
}

/// The flags of a map or migrate call (what it asked to move).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CallFlags {
    #[default]
    None,
    Map(u64),
    Migrate(u64),
}

/// Which device and queue (both numbered from 1 in the order clxfer saw them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct QueueRef {
    pub device: u32,
    pub queue: u32,
}

/// Whether device time was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceTime {
    Measured,
    /// The profiling query failed or reported a zero duration (NVIDIA does for migrations).
    Unavailable,
    /// The driver's times are not the command's own (NVIDIA's migrations and idle maps: `borrowed_times` in
    /// the vendor rules): placed, 0 long, where its completion was seen.
    Untrusted,
}

/// A completed command. Times are on the host clock, already mapped (`timing::mapping`).
pub struct Command {
    pub id: u64,
    pub api: Api,
    pub queue: QueueRef,
    /// The enqueue call: thread and times (the flow starts at `host_begin`).
    pub host_tid: u32,
    pub host_begin: u64,
    pub host_end: u64,
    /// QUEUED and SUBMIT on the host clock, where the driver was asked them (a sample of the
    /// small commands: `finish::phases`).
    pub phases: Option<(u64, u64)>,
    pub start: u64,
    pub end: u64,
    pub time: DeviceTime,
    /// The execution status the callback got (`CL_COMPLETE` = 0, negative: an error).
    pub status: i32,
    /// What the slice is named after: (direction, path) of a transfer.
    pub class: Option<(Direction, Path)>,
    pub bytes: u64,
    pub blocking: bool,
    pub kernel: Option<std::sync::Arc<str>>,
    /// The commands of its wait list (for the dependency arrows); empty allocates nothing.
    pub waits: Box<[u64]>,
    /// Its event is the program's: a later command may wait on it.
    pub held: bool,
}

/// A device's track.
#[derive(Clone)]
pub struct DeviceTrack {
    pub index: u32,
    pub name: String,
    pub vendor: String,
    pub kind: &'static str,
    pub rules: &'static str,
    /// The set `auto` picks for it: another than `rules` when CLXFER_RULES forced one.
    pub auto_rules: &'static str,
    pub global_mem: u64,
    /// `CLXFER_DEVICE_MEMORY` (0: not given).
    pub memory_given: u64,
    /// [`crate::model::device::DeviceProfile::host_import`].
    pub host_import: &'static str,
}

/// How a queue's commands are timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// clxfer added `CL_QUEUE_PROFILING_ENABLE`.
    Forced,
    /// clxfer turns `CL_QUEUE_PROFILING_ENABLE` on around each command it times, and off again
    /// (sampled timing where the driver's profiling costs every command, `toggle_profiling` in
    /// the vendor rules).
    Toggled,
    /// The program asked for profiling itself.
    Program,
    /// The driver refused profiling: no device slices.
    Untimed,
}

impl Timing {
    pub fn as_str(self) -> &'static str {
        match self {
            Timing::Forced => "profiling forced",
            Timing::Toggled => "profiling per timed command",
            Timing::Program => "profiling by the program",
            Timing::Untimed => "untimed",
        }
    }
}

pub struct QueueTrack {
    pub queue: QueueRef,
    pub out_of_order: bool,
    pub timing: Timing,
}

/// The counters in the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Counter {
    /// Pinned or registered host memory (mappings, USE_HOST_PTR, SVM, USM host), bytes.
    PinnedHost,
    /// Bytes of transfers enqueued and not yet complete.
    InFlight,
    /// Device memory the device's buffers occupy, by its vendor's rules (device index).
    DeviceResident(u32),
}

/// Which of [`Record`]'s kinds a dropped record was, for the counts in the trace.
pub use crate::vocab::schema::DROPPED_KINDS as KINDS;

impl Record {
    /// How many records of its kind it stands for: a folded fact, its calls.
    pub fn count(&self) -> u64 {
        match self {
            Record::Fact(f, _) => f.calls(),
            _ => 1,
        }
    }

    pub fn kind(&self) -> usize {
        match self {
            Record::Call(_) | Record::Fact(..) | Record::Failed(_) => 0,
            Record::Command(_) => 1,
            Record::Counter { .. } => 2,
            Record::Device(_) => 3,
            Record::Queue(_) => 4,
            Record::Thread { .. } => 5,
            Record::Race(_) => 6,
            Record::Missing(_) => 7,
        }
    }
}

/// What only the layer knows at the end, for the trace's last event.
#[derive(Debug, Default)]
pub struct End {
    /// When the end came, on the monotonic clock.
    pub at: u64,
    pub devices: Vec<DeviceEnd>,
    /// Commands whose completion never arrived.
    pub incomplete: u64,
    /// The most pinned or registered host memory at once.
    pub pinned_peak: u64,
    /// clxfer's own cost on the program's threads and its writer's.
    pub own: crate::report::OwnFacts,
    /// The signal that ended the run (`SIGTERM`): clxfer finished on it (`layer/signals.rs`).
    pub signal: Option<String>,
    /// The program's calls per entry point (`host_calls.rs`).
    pub host_calls: Vec<crate::report::HostCall>,
}

#[derive(Debug)]
pub struct DeviceEnd {
    pub index: u32,
    pub name: String,
    pub rules: &'static str,
    pub clock: &'static str,
    pub corrections: u64,
    pub unavailable: u64,
    pub untimed: u64,
    /// What device timing added.
    pub timing: crate::report::TimingFacts,
    /// The most device memory the device's buffers took at once, by its vendor's rules, and
    /// the part of it that ALLOC_HOST_PTR buffers took.
    pub resident_peak: u64,
    pub alloc_host_ptr_peak: u64,
    /// The most ALLOC_HOST_PTR buffers that took its memory at once.
    pub alloc_host_ptr_buffers: u64,
    /// The part SVM and USM allocations took.
    pub svm_peak: u64,
    /// The host bytes its staged transfers from pageable memory reached, each once.
    pub staged_region: u64,
}

#[cfg(test)]
mod tests {
    #[test]
    fn records_stay_small() {
        // Every record is moved through the buffer: the largest are summary mode's fact (with
        // its place in the graph) and a completed command.
        use std::mem::size_of;
        assert!(
            size_of::<super::Record>() <= 136,
            "{}",
            size_of::<super::Record>()
        );
        assert!(size_of::<super::Command>() <= 128);
    }
}
