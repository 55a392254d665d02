//! The trace schema: every `args` key clxfer writes, in one table. The writer uses these names;
//! docs/TRACE.md is generated from the table (`clxfer doctor --trace-markdown`), and a test checks
//! that a real trace uses exactly these keys.

/// One key of `args`.
pub struct Field {
    pub key: &'static str,
    /// Which events carry it.
    pub on: &'static str,
    pub doc: &'static str,
}

/// An `args` key, with its JSON form (`"key":`) ready to copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub name: &'static str,
    pub quoted: &'static str,
    /// Its place in [`FIELDS`]: a writer's tables of keys are arrays, not maps.
    pub index: u16,
}

macro_rules! schema {
    ($($name:ident = $key:literal [$on:literal] $doc:literal,)*) => {
        /// The keys' places, in order.
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        enum Index { $($name,)* }
        $(pub const $name: Key = Key {
            name: $key,
            quoted: concat!("\"", $key, "\":"),
            index: Index::$name as u16,
        };)*
        pub const FIELDS: &[Field] = &[$(Field { key: $key, on: $on, doc: $doc },)*];
    };
}

schema! {
    CLASS = "class" ["host"] "The call's class: a number for what its calls of the same kind share (`api`, `queue`, `kernel`, `device_time`, the classification's members but `bytes` and `host_ptr`, the flags, `mem_objects`). The first host slice of a class carries those members; later ones carry `class` alone (see *Compact* above).",
    API = "api" ["host"] "The OpenCL entry point.",
    COMMAND = "command" ["host, device"] "The command's number in this process (user events are numbered in the same series); also the id of the arrow from the enqueue to the device slice.",
    WAITS = "waits" ["host"] "The commands (or user events) its wait list named, by number, in the list's order.",
    WAITS_UNKNOWN = "waits_unknown" ["host"] "Events of its wait list clxfer knows nothing of (made before it was loaded).",
    AFTER = "after" ["host"] "Out-of-order queues: the last barrier before it, which it waits for (on an in-order queue each command waits for the one before, which the track shows).",
    AFTER_ALL = "after_all" ["host"] "`true`: a marker or barrier without a wait list on an out-of-order queue, which waits for every earlier command of its queue.",
    WAITED_FOR = "waited_for" ["host"] "A host synchronisation point (`clWaitForEvents`, or a status query that saw `CL_COMPLETE`: a polling loop's end): the commands (or user events) it waited for or learnt were done, by number.",
    FINISHED_UP_TO = "finished_up_to" ["host"] "`clFinish`: the newest command of its queue (`queue`) when it returned; that command and every one before it on the queue are done (0: none was enqueued).",
    QUEUE = "queue" ["host"] "`device #D queue #Q`: the queue the command went to; `device #D` alone for the copy `CL_MEM_COPY_HOST_PTR` made at a buffer's or image's creation (`clCreateBuffer`'s or `clCreateImage`'s slice, which then carries a transfer's keys), on no queue.",
    DIRECTION = "direction" ["host, device"] "`H2D`, `D2H`, `D2D` or `H2H`.",
    PATH = "path" ["host, device"] "How the bytes moved: `pinned`, `staged`, `zero-copy`, `host-copy`, `device`, `peer`, `via-host`, `none`, `unknown`.",
    BYTES = "bytes" ["host, device, counters"] "Bytes the command moved (counters: the counter's value).",
    BLOCKING = "blocking" ["host"] "Whether the call was blocking.",
    RULES = "rules" ["host, device info"] "The vendor rule set that classified it (docs/RULES.md).",
    REASONS = "reasons" ["host"] "Each step of the classification, `[rule id] text`, in the order applied.",
    RULE_IDS = "rule_ids" ["host"] "The rule ids alone, for queries.",
    HOST_PTR = "host_ptr" ["host"] "The host pointer, as a hex string.",
    HOST_MEMORY = "host_memory" ["host"] "What the host pointer is: `pageable`, `mapped`, `use-host-ptr`, `svm`, `usm-host`, `usm-shared`, `usm-device`, `imported`.",
    HOST_PINNED = "host_pinned" ["host"] "Whether the host memory is pinned or registered.",
    PROVENANCE = "provenance" ["host"] "Which pinned or registered range the pointer is in, and where (absent for pageable memory).",
    HOST_SPAN = "host_span" ["host"] "Rect transfers: first to last host byte touched.",
    MEM_OBJECTS = "mem_objects" ["host"] "The memory objects named: `{id, kind, size, flags}` with the flags decoded; a kernel's also `access`, as its races are judged (the words of a race's `access`): `reads` (READ_ONLY, a `const` or `__constant` argument, or one the kernel's source only loads from), `writes` (WRITE_ONLY, or stored through in the source), `may write` (declared writable, its use not followed) or `may write (assumed)` (nothing to go by).",
    REGION = "region" ["host"] "Buffer maps: the region asked for, `{offset, size}` in bytes (`bytes` is what the map moved).",
    MAP_FLAGS = "map_flags" ["host"] "Map calls: the map flags, decoded (`READ`, `WRITE`, `WRITE_INVALIDATE_REGION`).",
    MOVED = "moved" ["host"] "Migrate calls: when the contents moved, by the memory model: `at the call`, `at first use` (the migration only marked the objects; the first command that uses them on the device moves them) or `not at all` (CONTENT_UNDEFINED, already there, nothing yet).",
    MIGRATION_FLAGS = "migration_flags" ["host"] "Migrate calls: the migration flags, decoded (`HOST`, `CONTENT_UNDEFINED`, `0`).",
    ERROR = "error" ["host"] "The driver's error code, when it refused the call.",
    KERNEL = "kernel" ["host"] "The kernel's function name (also in the device slice's name).",
    HOST_GBPS = "host_gbps" ["host"] "Blocking calls only: bytes over the call's host time, GB/s (10^9 bytes/s). A non-blocking call's time says nothing of its transfer, so it has none.",
    DEVICE_GBPS = "device_gbps" ["device"] "Bytes over the device time (start to end), GB/s. Absent under forced rules: this device's time is not the rules' devices' (the host slice's `projected_gbps` is).",
    PROJECTED_US = "projected_us" ["host"] "Under forced rules (`auto_rules` ≠ `rules`) with a cost model: the command's device time on the devices the rules describe, projected by their cost model (docs/RULES.md); `host_gbps` is then absent.",
    PROJECTED_GBPS = "projected_gbps" ["host"] "Bytes over `projected_us`, GB/s.",
    QUEUED_TO_SUBMIT = "queued_to_submit_us" ["device"] "CL_PROFILING_COMMAND_QUEUED to SUBMIT; asked of kernels, transfers of 1 MiB or more and one in 16 of the other commands, picked by a hash of `command` (two profiling queries fewer for the rest), absent on the others.",
    SUBMIT_TO_START = "submit_to_start_us" ["device"] "SUBMIT to START; present where `queued_to_submit_us` is.",
    ENQUEUE_TO_START = "enqueue_to_start_us" ["device"] "From the enqueue call's start on the host to the command's start.",
    DEVICE_TIME = "device_time" ["host, device"] "Device slices: `unavailable`, the profiling query failed or reported a zero duration (a failed query puts the slice, 0 long, at the completion); `untrusted`, the vendor's driver gives this kind of command another command's times or none (NVIDIA's migrations and maps that move nothing, `nvidia.borrowed-times` in docs/RULES.md), so the slice sits, 0 long, at the completion and the report counts it without device time. Host slices: `untimed`, no device slice comes (an untimed queue, device timing off, or a command without an event); `sampled`, sampled device timing left it untimed (the report extrapolates its row's device time from the timed ones).",
    STATUS = "status" ["device"] "Present only when the command failed: the negative execution status its completion callback got.",
    PROGRAM = "program" ["trace start"] "The program's name.",
    COMMAND_LINE = "command_line" ["trace start"] "The program's arguments.",
    PID = "pid" ["trace start"] "The process id.",
    RANK = "rank" ["trace start"] "In a parallel job, the process's rank, as its launcher's environment gives it (`OMPI_COMM_WORLD_RANK`, `MV2_COMM_WORLD_RANK`, `PMI_RANK`, `PMIX_RANK`, `SLURM_PROCID`, the first set); absent outside one.",
    RANKS = "ranks" ["trace start"] "In a parallel job, its number of ranks, where the launcher says (`OMPI_COMM_WORLD_SIZE`, `PMI_SIZE`, `SLURM_NTASKS`, …).",
    LAUNCHER = "launcher" ["trace start"] "In a parallel job, the launcher whose variables gave the rank: `Open MPI`, `MVAPICH2`, `PMI`, `PMIx` or `Slurm`.",
    HOST = "host" ["trace start"] "The host the process ran on (`SLURMD_NODENAME` under Slurm, else the kernel's host name).",
    START_TIME = "start_time" ["trace start"] "Wall-clock time of timestamp 0, RFC 3339.",
    VERSION = "clxfer_version" ["trace start"] "The clxfer version that wrote the trace.",
    MODE = "mode" ["trace start"] "CLXFER_MODE.",
    OPTIONS = "options" ["trace start"] "Every option (`CLXFER_*`; the testing-only ones when set): `{value, from}`, `from` being `default`, `environment` or the `clxfer run` flag that set it.",
    DEVICE_INDEX = "index" ["device info, trace end"] "The device's number (`device #N`).",
    NAME = "name" ["device info, trace end"] "The device's name.",
    VENDOR = "vendor" ["device info"] "The device's vendor string.",
    DEVICE_TYPE = "type" ["device info"] "CPU, GPU, accelerator.",
    AUTO_RULES = "auto_rules" ["device info"] "The rule set `auto` picks for this device; another than `rules` when CLXFER_RULES forced one (the run's bandwidths then say nothing of the forced vendor's devices).",
    GLOBAL_MEM = "global_mem_bytes" ["device info"] "CL_DEVICE_GLOBAL_MEM_SIZE.",
    HOST_IMPORT = "host_import" ["device info"] "A host-memory import extension the device reports (`cl_arm_import_memory`, `cl_qcom_ext_host_ptr`); absent: none.",
    MEMORY_GIVEN = "memory_given_bytes" ["device info"] "`CLXFER_DEVICE_MEMORY`: the device memory findings judge against, as the user gave it (absent: not given).",
    DEVICES = "devices" ["trace end"] "Per device: rules, clock mapping, corrections and commands without device time.",
    CLOCK = "clock_mapping" ["trace end"] "How device timestamps were placed on the host clock: `clGetDeviceAndHostTimer` or `queued-estimate` (see docs/TRACE.md).",
    CORRECTIONS = "clock_corrections" ["trace end"] "Commands that a calibrated mapping would have placed before their enqueue call, moved to start at it.",
    UNAVAILABLE = "device_time_unavailable" ["trace end"] "Commands whose device time was unavailable.",
    UNTIMED = "untimed_commands" ["trace end"] "Commands on queues the driver would not profile.",
    TIMED = "timed_commands" ["trace end"] "Per device: commands clxfer timed on the device.",
    OWN_EVENTS = "own_events" ["trace end"] "Per device: of `timed_commands`, those whose event clxfer made (the program passed none).",
    CALLBACKS = "callbacks" ["trace end"] "Per device: completion callbacks clxfer armed.",
    TOGGLES = "toggles" ["trace end"] "Per device: commands around which clxfer turned its queue's profiling on and off again (`toggle_profiling` rules).",
    TOGGLE_NS = "toggle_ns" ["trace end"] "Per device: the time those profiling switches took, measured on the calling threads, ns.",
    DRIVER_NS = "driver_ns" ["trace end"] "Per device: the time clxfer's own driver calls for device timing took (profiling and status queries, event releases, callbacks armed), measured on the threads that made them, ns.",
    SAMPLED = "sampled_commands" ["trace end"] "Per device: commands sampled device timing left untimed (`CLXFER_DEVICE_TIMING=on`); their host slices say `device_time: sampled`.",
    OWN_CALLS = "own_calls" ["trace end"] "Calls clxfer recorded on the program's threads (counted in steps of 64 per thread).",
    OWN_MEASURED = "own_measured" ["trace end"] "`[calls, ns]`: the calls whose time inside clxfer (outside the driver's call) was measured, one in 64 per thread, and that time.",
    WRITER_CPU = "writer_cpu_ns" ["trace end"] "The CPU time of clxfer's writer thread, ns.",
    WRITER_WAITED = "writer_waited_ns" ["trace end"] "How long, in all, the program's threads waited for the writer because its memory (`CLXFER_BUFFER_MIB`) was full, ns.",
    WRITER_WAITS = "writer_waits" ["trace end"] "How many times a thread of the program's waited for the writer.",
    RESIDENT_PEAK = "resident_peak_bytes" ["trace end"] "Per device: the most device memory its buffers and SVM/USM allocations took at once, by its vendor's rules (an SVM allocation in a context of several devices is counted on none).",
    AHP_PEAK = "alloc_host_ptr_peak_bytes" ["trace end"] "Per device: the part of `resident_peak_bytes` taken by ALLOC_HOST_PTR buffers.",
    AHP_BUFFERS = "alloc_host_ptr_buffers" ["trace end"] "Per device: the most ALLOC_HOST_PTR buffers that took its memory at once.",
    STAGED_REGION = "staged_region_bytes" ["trace end"] "Per device: the host bytes its staged transfers from pageable memory reached, each byte once (the union of their host ranges; past 4,096 separate ranges no more are added): the size of what a fix would pin, where the bytes moved count a block each time it moves.",
    SVM_PEAK = "svm_peak_bytes" ["trace end"] "Per device: the part of `resident_peak_bytes` taken by SVM and USM allocations the host also reaches (coarse-grain SVM on NVIDIA, USM host or shared where the rules place it on the device).",
    HOST_CALLS = "host_calls" ["trace end"] "The program's calls per entry point, most time first: `[name, calls, total_ns, wait_ns, median_ns, max_ns]`, and `[[code, calls], …]` last where some of them failed (`code` null for a call that returned no object and asked no error code); `wait_ns` the time of calls that waited for commands (blocking transfers, `clFinish`, `clWaitForEvents`); the median exact for three calls or fewer, else within 4.5%.",
    PINNED_PEAK = "pinned_host_peak_bytes" ["trace end"] "The most pinned or registered host memory at once.",
    SIGNAL = "signal" ["trace end"] "The signal that ended the run (`SIGTERM`, `SIGINT`, `SIGHUP` or `SIGQUIT`): clxfer finished on it, then let it end the process; absent when the run ended otherwise.",
    INCOMPLETE = "incomplete_at_exit" ["trace end"] "Commands enqueued but not complete when the trace ended (no device slice).",
    DROPPED = "dropped" ["trace end"] "Records dropped because the writer fell behind, by kind; all zero normally.",
    EVENTS = "events" ["trace end"] "Events in the file.",
    LEFT_OUT = "limit_left_out" ["trace end"] "Events not in the file because it reached `CLXFER_TRACE_LIMIT_MIB` (0 normally): left out after it (`CLXFER_TRACE_LIMIT_KEEP=first`), or dropped with its oldest chunks (`last`); the report stays whole.",
    MEM_OBJECT = "mem_object" ["race"] "The memory object both commands touch (its handle, as a hex string).",
    CONFIDENCE = "confidence" ["race"] "`known`: both uses are what the commands do (a kernel's, as the program's source shows it: stored through or only loaded from, or its qualifiers); `declared`: a kernel argument that is not `const`, `__constant` or in a READ_ONLY buffer, whose use clxfer could not follow in the source (passed to a function, copied), is taken as written (the kernel may only read it); `assumed`: a kernel of a program clxfer has no source for (a binary or IL) whose driver keeps no qualifiers is taken as written (not said on stderr; the report lists these last, as what clxfer could not judge).",
    FIRST = "first" ["race"] "The command enqueued first: `{command, api, queue, thread, access, bytes}`; `access` is `reads`, `writes`, `may write` or `may write (assumed)`, `bytes` is `[from, to]` (`to` absent: to the object's end).",
    SECOND = "second" ["race"] "The command enqueued second, as `first`; the instant sits at the start of its enqueue slice, and the arrow (`race`) joins the two enqueue slices.",
    FUNCTION = "function" ["function not found"] "The name the program asked `clGetExtensionFunctionAddress(ForPlatform)` for, which the driver did not give.",
    REPORT = "report" ["trace end"] "The run's summary report, as `clxfer report --format json` gives it (the viewer shows it).",
}

/// `cat` of host slices of calls that enqueue nothing.
pub const CAT_CALL: &str = "call";
/// `cat` of enqueue slices on both sides and of their flows: catapult and DevTools bind a flow
/// only to slices of its own category, Perfetto keys flows by category.
pub const CAT_ENQUEUE: &str = "enqueue";
pub const CAT_CLXFER: &str = "clxfer";
pub const FLOW_NAME: &str = "enqueue";
/// The name of a dependency arrow's flow events: from a command's device slice to that of each
/// command whose wait list named it. Their category is the slices' own (`enqueue`), which DevTools
/// needs to bind them; the name keeps them apart (flows are keyed by category, name and id).
pub const WAIT_FLOW_NAME: &str = "wait";
/// A possible data race: an instant on the second command's enqueue thread, and an arrow of this
/// name from the first command's enqueue slice to the second's.
pub const RACE: &str = "possible data race";
pub const RACE_FLOW_NAME: &str = "race";
/// A function the program asked for and did not get: an instant on its thread.
pub const FUNCTION_NOT_FOUND: &str = "function not found";
pub const TRACE_START: &str = "clxfer trace start";
pub const TRACE_END: &str = "clxfer trace end";
pub const DEVICE_INFO: &str = "device info";
/// Counter names; each has one `args` key, [`BYTES`].
pub const PINNED_COUNTER: &str = "pinned host bytes";
pub const IN_FLIGHT_COUNTER: &str = "bytes in flight";
pub const RESIDENT_COUNTER: &str = "device-resident buffer bytes";

/// The keys of the trace end's `dropped` object: the kinds of record the writer may drop.
pub const DROPPED_KINDS: [&str; 8] = [
    "calls", "commands", "counters", "devices", "queues", "threads", "races", "lookups",
];

/// The largest integer a JSON reader holds exactly as a double (2^53); beyond it clxfer writes
/// decimal strings.
pub const EXACT: u64 = 1 << 53;

/// Device processes get synthetic pids above every real pid (Linux pids are below 2^22).
pub const DEVICE_PID_BASE: u32 = 1 << 31;

/// A process's newest classes that a compact trace may name (`args.class`): its writer says a
/// class again, under a new number, once this many newer ones have been said, so a reader need
/// keep no more.
pub const CLASSES: u64 = 4096;

pub fn device_pid(host_pid: u32, device: u32) -> u32 {
    DEVICE_PID_BASE | ((host_pid & 0x3f_ffff) << 8) | (device & 0xff)
}

/// A queue's track ids: lane 0 is the queue's own; more lanes when its commands overlap.
pub const LANES: u32 = 1 << 10;

pub fn queue_tid(queue: u32, lane: u32) -> u32 {
    queue * LANES + lane
}

/// docs/TRACE.md: the layout in words, then the table of keys.
pub fn markdown() -> String {
    let mut out = String::from(TRACE_DOC);
    out.push_str("\n## `args` keys\n\n| key | on | meaning |\n|---|---|---|\n");
    for f in FIELDS {
        out.push_str(&format!("| `{}` | {} | {} |\n", f.key, f.on, f.doc));
    }
    out
}

const TRACE_DOC: &str = r#"# The clxfer trace

<!-- Generated by `clxfer doctor --trace-markdown` from src/vocab/schema.rs and src/report/csv.rs; a test keeps it in step. -->

One file per process, `clxfer-<program>-<pid>.json` in `CLXFER_DIR` (or as `CLXFER_OUTPUT` names
it), in Chrome's JSON trace format
as Perfetto imports it (ui.perfetto.dev opens it; so do `chrome://tracing` and DevTools).
With `CLXFER_FORMAT=perfetto`, `clxfer-<program>-<pid>.pftrace` holds the same events as
Perfetto's protobuf: `TrackEvent` packets, each track's on a sequence of its own (the arrows' on
one more, the track descriptors on sequence 1), timestamps in nanoseconds on a clock of clxfer's
own mapped onto `CLOCK_MONOTONIC` by each sequence's first packet and written as deltas on its
incremental twin (a packet earlier than its sequence's last names the absolute clock), event names, categories,
annotation names and short strings interned, a track descriptor per process, thread, queue lane
(the names below) and counter; a slice is a begin and an end packet, an arrow's two ends are
instants carrying its flow id (an enqueue arrow's is the command's number; a `wait` arrow's its
own with bit 62 set, a `race` arrow's with bit 61), and `args` are debug annotations (pointers as
pointer values, the report as JSON text). `clxfer convert` turns either form into the other;
every `clxfer` command reads both.

- **Streamed**: a bare array, one event per line, written as the program runs (every 20 ms at
  most). A program that is killed leaves a file Perfetto loads (the array may lack its closing
  `]`; the last event may be cut short and is ignored). At a normal exit the array is closed.
- **Integers** in `args` are numbers up to 2^53 and decimal strings beyond (only sizes a driver
  accepted from a hostile call get there; JSON readers hold numbers as doubles). Pointers and
  handles are hex strings.
- **Time**: `ts` and `dur` in microseconds from the moment clxfer started, to the nanosecond
  without needless digits (`12.345`, `12.3`, `12`). The wall-clock time of `ts` 0 is
  `start_time` in the first event.
- **Compact**: what repeats is said once. An enqueue's host slice carries what varies per call
  (`command`, `bytes`, `host_ptr`, waits, timings) and a `class` number; the first slice of each
  class also carries the class's members (`api`, `queue`, `device_time`, the classification and
  its reasons, flags, `mem_objects`), later ones do not. A device slice joined to its host slice by an arrow
  carries its `command`, its own timings and `device_gbps`; its direction, path, bytes and
  (measured: no `device_time`) `enqueue_to_start_us` are its host slice's. `clxfer report`, `check`, `merge`, `view` and
  `report --format csv` read the members back onto every slice (`clxfer::trace::compact`); in
  Perfetto's SQL, join on `args.class` (and on `args.command` for device slices). The pointer's
  alignment is `host_ptr` modulo 4096 or 64.
- **Host tracks**: `pid` is the process, `tid` the OS thread. Every OpenCL call the program makes is
  one slice (`X`), from just before clxfer calls the driver to just after it returns; calls that
  enqueue nothing have category `call`. An enqueue's slice is named `<entry point> <direction>
  <path>` (`clEnqueueWriteBuffer H2D staged`) and carries the whole classification in `args`.
- **Device tracks**: one process per device, `pid` = 2^31 | host pid << 8 | device number, named
  `device #D · <device name>` (two GPUs of one model are told apart) and sorted under the program.
  One thread per queue (`tid` = queue number × 1024), named `queue #N (in-order|out-of-order) ·
  profiling forced|profiling by the program|untimed`.
  Commands that overlap on a queue go to extra lanes (`tid` + 1, + 2, …, named `… · lane 2`), so no
  slice is ever dropped or mis-nested. A device slice spans the command's `CL_PROFILING_COMMAND_START`
  to `END`, placed on the host clock, and is named `<verb> <direction> <path>` (`Write H2D pinned`,
  `Map D2H pinned`, `Migrate D2D via-host`, `Kernel scale`): Perfetto colours slices by name, so each
  class has one colour.
- **Arrows**: one flow per timed command, `s` at the enqueue slice's `ts` on its thread and `f`
  (`bp: "e"`) at the device slice's `ts` on its lane, both of category `enqueue` like the two slices
  (what Perfetto, catapult and DevTools need to draw it); the id is the command's number (`command`
  in both slices' `args`), unique in the file. **Dependency arrows** (flows named `wait`, category
  `enqueue`, ids 1, 2, … of their own): from the device slice of each command a wait list named to
  the device slice of the command that waited, when both were timed; the host slice's `waits` lists
  them all. An in-order queue's own order is its track, and gets no arrows.
- **Functions not found**: an instant (thread scope, category `clxfer`) named `function not
  found` where the program asked `clGetExtensionFunctionAddress(ForPlatform)` for a function the
  driver did not give (`function` in `args`); once per name.
- **Possible data races**: an instant (`i`, thread scope, category `clxfer`) named `possible data
  race` at the start of the second command's enqueue slice, with `mem_object`, `confidence`,
  `first` and `second` in `args`, and an arrow (flows named `race`, ids 1, 2, … of their own) from
  the first command's enqueue slice to the second's, when both are of one category. One per pair
  of call sites (entry point and queue), as on stderr.
- **Counters** (`C`): `pinned host bytes` and `bytes in flight` (transfers enqueued, not yet
  complete) in the program's process, `device-resident buffer bytes` in each device's process; one
  `args` key, `bytes`. Sampled: at most one sample per counter per 100 µs from the program's
  threads, plus the current value every 20 ms.
- **Metadata**: `clxfer trace start` (instant, global) with the program, its command line, pid,
  start time, clxfer version and every option with where it came from; `device info` (instant, in each device's process) with the name,
  vendor, type, memory and the vendor rule set; `clxfer trace end` (instant, global, the last
  event) with, per device, the clock mapping used and its corrections, the commands whose device
  time was unavailable or whose queue was untimed; the commands still incomplete at exit; and the
  records dropped, by kind, if the writer ever fell behind.

## Device time on the host clock

Each device's profiling clock is mapped onto the host clock with one offset (host ns − device ns):

- `clGetDeviceAndHostTimer` (devices of OpenCL 2.1 and later that answer it): clxfer reads its own
  clock just before and just after the call and takes the midpoint (error at most half the call).
- `queued-estimate` otherwise: the driver stamps `CL_PROFILING_COMMAND_QUEUED` while the enqueue
  call runs, so `call start − QUEUED` is a lower bound of the offset; clxfer keeps the largest bound
  seen, which approaches the true offset from below (error at most the shortest enqueue call).

Either way the bound is enforced for every command, so a device slice never starts before its
enqueue call began, nor at the same nanosecond (where the arrow's two ends would be one for
DevTools); when that moves a `clGetDeviceAndHostTimer` offset it counts as a correction.
A command whose profiling query fails, or whose duration is 0 (NVIDIA reports 0 for migrations),
is marked `device_time: unavailable`; a failed query places its slice, 0 long, at the moment the
completion arrived.

## How device times are collected

clxfer turns on `CL_QUEUE_PROFILING_ENABLE` for every queue (in a copy of the program's properties;
if the driver refuses, the queue is created with the program's own and marked untimed). Each
enqueue gets an event — clxfer's own when the program passes none, the program's (retained)
otherwise — and waits in its queue's list. One completion callback per queue is armed at a time, on
the newest command waiting: when it runs it takes every command that has completed (in an
in-order queue, all those enqueued before it; in an out-of-order queue, those whose status says
so), reads their four timestamps, releases their events, hands their device slices to the writer
and arms itself again on the newest command still waiting. Device slices stream out as commands
finish, and no events pile up. The writer draws a device slice and its arrow once the enqueue's
own slice is written.
"#;
