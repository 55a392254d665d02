//! Vendor rules AS DATA: one [`RuleSet`] per driver family, each rule with the id that reasons
//! cite, what it says, and its source (a row of `../shared/docs/transfer-rules.md` or
//! `ground-truth-h200.md`; tags: \[X\] measured, \[S\] driver source, \[D\] vendor doc,
//! \[I\] inference).
//! `docs/RULES.md` is generated from these tables (`clxfer doctor --rules-markdown`).

use super::classification::{Direction, Path};
use super::cost::{Cost, Figure, Link};
use super::device::{DeviceKind, DeviceProfile};
use super::kinds::RangeKind;

/// One rule: what the classifier cites.
#[derive(Debug, Clone, Copy)]
pub struct Rule<T: 'static> {
    pub id: &'static str,
    pub value: T,
    pub says: &'static str,
    pub source: &'static str,
}

/// A vendor-independent rule (no value: the classifier's code is the rule).
pub type Row = Rule<()>;

/// How a transfer from or to pageable (`malloc`) memory moves, against device memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pageable {
    /// Through the driver's pinned bounce buffer.
    Staged,
    /// Staged up to this many bytes, the user's pages pinned on the fly above.
    PinnedAbove(u64),
    /// DMA straight from the user's pages (userptr); a blocking transfer to system memory with a
    /// pointer not aligned to `cpu_copy_align` bytes is done by the CPU instead.
    Direct { cpu_copy_align: u64 },
    /// The device works in host memory: one host memcpy.
    HostCopy,
}

/// Where a buffer's storage lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Device,
    Host,
}

/// What `CL_MEM_USE_HOST_PTR` does with the program's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UseHostPtr {
    /// The pages are registered and the buffer also gets device storage.
    DeviceCopy,
    /// The device uses the program's pages directly.
    ZeroCopy,
    /// Zero-copy when pointer and size are multiples of this many bytes (0: the device's
    /// `CL_DEVICE_MEM_BASE_ADDR_ALIGN`), else a device copy.
    ZeroCopyIfAligned(u64),
}

/// How data moves between two devices of one context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrossDevice {
    ViaHost,
    Peer,
    /// Both devices work in the same host memory: nothing moves.
    Shared,
}

/// When a migration to a device is only a marker (the data moves at first use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Never,
    WhenFlagsZero,
    Always,
}

/// What `clEnqueueMigrateMemObjects` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migrate {
    pub to_device_marker: Marker,
    /// Migration to the host is only a marker.
    pub to_host_marker: bool,
    /// CONTENT_UNDEFINED skips the copy.
    pub content_undefined_honoured: bool,
    /// How contents move between device memory and the host backing store, both ways.
    pub store: Path,
}

impl Migrate {
    /// Whether a migration with `flags` only marks the objects, moving nothing now.
    pub fn is_marker(&self, flags: u64) -> bool {
        if flags & opencl_sys::CL_MIGRATE_MEM_OBJECT_HOST != 0 {
            return self.to_host_marker;
        }
        match self.to_device_marker {
            Marker::Never => false,
            Marker::WhenFlagsZero => flags == 0,
            Marker::Always => true,
        }
    }
}

/// The rules for one driver family.
#[derive(Debug)]
pub struct RuleSet {
    /// The `CLXFER_RULES` word.
    pub name: &'static str,
    pub title: &'static str,
    /// Device memory is host memory: every buffer is host-resident.
    pub unified: Rule<bool>,
    pub pageable: Rule<Pageable>,
    /// A non-blocking transfer from pageable memory holds the host anyway.
    pub nonblocking_blocks: Rule<bool>,
    /// The host range of a live USE_HOST_PTR buffer counts as pinned for any transfer.
    pub registered: Rule<bool>,
    pub alloc_host_ptr: Rule<Placement>,
    pub use_host_ptr: Rule<UseHostPtr>,
    /// Where a coarse-grain SVM allocation's storage lives (fine-grain SVM is host memory).
    pub svm: Rule<Placement>,
    /// Mapping a device-resident buffer for WRITE copies device→host at map time.
    pub map_write_copies: Rule<bool>,
    pub migrate: Rule<Migrate>,
    pub between_devices: Rule<CrossDevice>,
    /// After a kernel on another device only read the contents, the copy where they were stays
    /// valid (and so does the reader's): a later use on either device moves nothing.
    pub read_copy: Rule<bool>,
    /// Pointer alignment the driver's fast path wants, if it cares.
    pub alignment: Rule<Option<u64>>,
    /// What transfers cost on this kind of device (`cost.rs`): the report projects a run onto it
    /// under forced rules, and estimates with it when a run measured no pinned transfer. `None`:
    /// no figures (host-memory devices, or none measured for the vendor: the generic set's
    /// pinned figure is used).
    pub cost: Option<Cost>,
    /// How to make a transfer's host side pinned on this kind of device (the report's fix).
    pub recipe: &'static str,
    /// Device timing: the least time, µs, between two completion callbacks clxfer arms on one
    /// queue (each collects every command completed by then). 0: whenever the last one has run.
    pub callback_gap_us: u32,
    /// Device timing: what timing one command costs the program on this driver, µs (its event,
    /// profiling queries and share of callbacks): the price sampled timing budgets with
    /// (`timing::sample`), and the report's estimate of what clxfer's timing cost the driver.
    pub timed_command_us: f64,
    /// The driver's own work for one timed command, µs: its event, profiling queries and
    /// release, as the program pays them when it times its commands itself (the storm's
    /// `events` mode against none). The own-cost line's driver share: what clxfer's own driver
    /// calls were measured to take, and this less that, estimated.
    pub driver_timed_us: f64,
    /// The driver's work for every command on a queue with profiling on, timed or not, µs (0
    /// where profiling is switched on only around the timed ones, `toggle_profiling`).
    pub driver_profiled_us: f64,
    /// Device timing: a queue with profiling on costs every command, timed or not, and the
    /// driver honours `clSetCommandQueueProperty`: sampled timing turns profiling on only around
    /// the commands it times.
    pub toggle_profiling: bool,
    /// Commands the driver gives no real device time (zero, or another command's): they are
    /// not drawn or counted as measured. `None`: every command's times are taken as measured.
    pub borrowed_times: Option<Rule<Commands>>,
    /// Commands that read `CL_COMPLETE` before what they wait for has completed: seeing one
    /// complete tells the host nothing of its wait list (the graph and the race check take no
    /// synchronisation from it). `None`: a status is as good as a wait.
    pub early_complete: Option<Rule<Commands>>,
}

/// Which commands a rule covers: migrations (those to the host too, or only those to a device),
/// and maps that move nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Commands {
    pub migrations: bool,
    pub to_host_too: bool,
    pub idle_maps: bool,
}

impl Commands {
    /// Whether a command of `verb` (`Api::verb`) classified as `class` is one of them.
    pub fn cover(&self, verb: &str, class: Option<(Direction, Path)>) -> bool {
        match verb {
            "Migrate" => {
                let to_host = class.is_some_and(|c| c.0 == Direction::D2H);
                self.migrations && (self.to_host_too || !to_host)
            }
            "Map" => self.idle_maps && class.is_some_and(|c| c.1 == Path::None),
            _ => false,
        }
    }
}

/// A figure of a cost model.
const fn fig(value: f64, source: &'static str) -> Option<Figure> {
    Some(Figure { value, source })
}

/// A link of a cost model: its floor, µs, and its bandwidth, GB/s, by size.
const fn link(floor_us: f64, gbps: &'static [(u64, f64)], source: &'static str) -> Option<Link> {
    Some(Link {
        floor_us,
        gbps,
        source,
    })
}

/// The H200 size sweep (docs/ground-truth.md "Size sweep": tests/programs/sizes.c, the median
/// of 7 runs, two runs averaged, 2026-12-01).
const SWEEP: &str = "docs/ground-truth.md size sweep (H200, 2026-12-01) [X]";

const MIB: u64 = 1 << 20;

/// What timing a command costs on NVIDIA's OpenCL, µs: the H200 storm with every command timed,
/// less the storm with none (docs/PERFORMANCE.md, "NVIDIA H200").
const TIMED_NVIDIA: f64 = 7.0;
/// The same elsewhere, µs: PoCL's own price for profiling and an event per command on this
/// project's CPU (docs/PERFORMANCE.md); no GPU vendor's but NVIDIA's has been measured.
const TIMED_CPU: f64 = 1.0;
/// NVIDIA's driver alone for a timed command, µs: the H200 storm making its own event per
/// command and reading its four timestamps, less the storm without (paired medians of 15 rounds,
/// one thread, docs/PERFORMANCE.md "NVIDIA H200").
const DRIVER_TIMED_NVIDIA: f64 = 3.45;
/// PoCL alone, µs: its event, queries and release (208 instructions a command, callgrind, the
/// storm's `events` mode less `profiling`) and a command on a profiling queue (80 instructions,
/// `profiling` less none), at this project's VM's ~0.4 ns an instruction (docs/PERFORMANCE.md).
/// No other vendor's has been measured: theirs are PoCL's.
const DRIVER_TIMED_CPU: f64 = 0.08;
const DRIVER_PROFILED_CPU: f64 = 0.03;
const TR: &str = "transfer-rules.md";

impl RuleSet {
    /// (id, what it says, source) of every rule, in table order.
    pub fn rows(&self) -> [(&'static str, &'static str, &'static str); 12] {
        macro_rules! row {
            ($r:expr) => {
                ($r.id, $r.says, $r.source)
            };
        }
        [
            row!(self.unified),
            row!(self.pageable),
            row!(self.nonblocking_blocks),
            row!(self.registered),
            row!(self.alloc_host_ptr),
            row!(self.use_host_ptr),
            row!(self.svm),
            row!(self.map_write_copies),
            row!(self.migrate),
            row!(self.between_devices),
            row!(self.read_copy),
            row!(self.alignment),
        ]
    }

    /// Where a plain, ALLOC_HOST_PTR or USE_HOST_PTR buffer's storage lives, with the rule that says
    /// so. `host_ptr` and `size` decide the alignment-dependent USE_HOST_PTR cases.
    pub fn placement(
        &self,
        flags: u64,
        host_ptr: usize,
        size: u64,
        base_align: u64,
    ) -> (Placement, &'static str) {
        if self.unified.value {
            return (Placement::Host, self.unified.id);
        }
        self.own_placement(flags, host_ptr, size, base_align)
            .unwrap_or((Placement::Device, self.unified.id))
    }

    /// Where an SVM or USM allocation's storage lives: device memory (counted against the
    /// device, and the device side of a copy between allocations) or host memory only.
    pub fn allocation(&self, kind: RangeKind) -> Placement {
        match kind {
            _ if self.unified.value => Placement::Host,
            RangeKind::Svm { flags } if flags & opencl_sys::CL_MEM_SVM_FINE_GRAIN_BUFFER != 0 => {
                Placement::Host
            }
            RangeKind::Svm { .. } => self.svm.value,
            RangeKind::UsmDevice | RangeKind::UsmShared => Placement::Device,
            _ => Placement::Host,
        }
    }

    /// The placement the ALLOC_HOST_PTR or USE_HOST_PTR rule gives (`None` for other buffers),
    /// whatever the device's memory.
    pub fn own_placement(
        &self,
        flags: u64,
        host_ptr: usize,
        size: u64,
        base_align: u64,
    ) -> Option<(Placement, &'static str)> {
        use opencl_sys::{CL_MEM_ALLOC_HOST_PTR, CL_MEM_USE_HOST_PTR};
        if flags & CL_MEM_USE_HOST_PTR != 0 {
            let placement = match self.use_host_ptr.value {
                UseHostPtr::DeviceCopy => Placement::Device,
                UseHostPtr::ZeroCopy => Placement::Host,
                UseHostPtr::ZeroCopyIfAligned(n) => {
                    let n = if n == 0 { base_align.max(1) } else { n };
                    if (host_ptr as u64).is_multiple_of(n) && size.is_multiple_of(n) {
                        Placement::Host
                    } else {
                        Placement::Device
                    }
                }
            };
            return Some((placement, self.use_host_ptr.id));
        }
        if flags & CL_MEM_ALLOC_HOST_PTR != 0 {
            return Some((self.alloc_host_ptr.value, self.alloc_host_ptr.id));
        }
        None
    }
}

/// Every rule set, in the order `CLXFER_RULES` lists them.
pub const SETS: &[&RuleSet] = &[
    &NVIDIA,
    &AMD,
    &INTEL_IGPU,
    &INTEL_DGPU,
    &INTEL_CPU,
    &CPU,
    &GENERIC,
];

/// The `CLXFER_RULES` words: `auto`, then every set.
pub const CHOICES: &[&str] = &[
    "auto",
    "nvidia",
    "amd",
    "intel-igpu",
    "intel-dgpu",
    "intel-cpu",
    "cpu",
    "generic",
];

pub fn by_name(name: &str) -> Option<&'static RuleSet> {
    SETS.iter().copied().find(|s| s.name == name)
}

/// Whether `rules` were forced (CLXFER_RULES) on a device for which `auto` picks another set:
/// then its times say nothing of the devices the rules describe.
pub fn forced(rules: &str, auto: &str) -> bool {
    !auto.is_empty() && auto != rules
}

/// Where the rules were forced on a device, the cost model that projects its transfers in place
/// of its own times: `Some(None)` when the rules have none (then its transfers have no time or
/// bandwidth at all); `None` where the rules are the device's own.
pub fn projecting(rules: &str, auto: &str) -> Option<Option<&'static Cost>> {
    forced(rules, auto).then(|| by_name(rules).and_then(|s| s.cost.as_ref()))
}

/// The set `auto` picks for a device: by vendor id or name, then by type and unified memory.
pub fn for_device(dev: &DeviceProfile) -> &'static RuleSet {
    let vendor = dev.vendor.to_ascii_lowercase();
    let is = |id: u32, word: &str| dev.vendor_id == id || vendor.contains(word);
    match dev.kind {
        DeviceKind::Cpu if is(0x8086, "intel") && !dev.platform.contains("Portable") => &INTEL_CPU,
        DeviceKind::Cpu => &CPU,
        _ if is(0x10de, "nvidia") => &NVIDIA,
        _ if is(0x1002, "advanced micro devices") || vendor.contains("amd") => &AMD,
        _ if is(0x8086, "intel") && dev.host_unified => &INTEL_IGPU,
        _ if is(0x8086, "intel") => &INTEL_DGPU,
        _ => &GENERIC,
    }
}

const DISCRETE: &str = "device memory is separate from host memory";

pub static NVIDIA: RuleSet = RuleSet {
    name: "nvidia",
    title: "NVIDIA discrete GPU",
    unified: Rule {
        id: "nvidia.memory",
        value: false,
        says: DISCRETE,
        source: "ground-truth-h200.md",
    },
    pageable: Rule {
        id: "nvidia.pageable",
        value: Pageable::Staged,
        says: "pageable memory is staged through the driver's pinned bounce buffer (8.5 GB/s write, \
               15.2 read against 55.4 pinned on an H200); alignment and mlock do not help",
        source: "transfer-rules.md NVIDIA Q1 [X]; ground-truth-h200.md rows 1-4",
    },
    nonblocking_blocks: Rule {
        id: "nvidia.nonblocking",
        value: true,
        says: "a non-blocking write from pageable memory spends most of its time inside the call \
               (96% at 256 MiB): it is effectively synchronous",
        source: "transfer-rules.md NVIDIA Q1 [X]",
    },
    registered: Rule {
        id: "nvidia.registered",
        value: true,
        says: "the host range of a live USE_HOST_PTR buffer is registered (pinned) for any transfer",
        source: "transfer-rules.md NVIDIA Q3, Pitfall 2 [X]",
    },
    alloc_host_ptr: Rule {
        id: "nvidia.alloc-host-ptr",
        value: Placement::Device,
        says: "an ALLOC_HOST_PTR buffer has device storage (+256 MiB after map and use) and a \
               pinned host mirror; map its pointer and use that for transfers",
        source: "transfer-rules.md NVIDIA Q2 [X]",
    },
    use_host_ptr: Rule {
        id: "nvidia.use-host-ptr",
        value: UseHostPtr::DeviceCopy,
        says: "USE_HOST_PTR registers the program's pages and also gives the buffer device storage",
        source: "transfer-rules.md NVIDIA Q3 [X]",
    },
    svm: Rule {
        id: "nvidia.svm",
        value: Placement::Device,
        says: "a coarse-grain clSVMAlloc allocation takes device memory of its size at once (and its pointer is pinned for transfers, 55.4 GB/s): a copy between two allocations stays on the device",
        source: "docs/ground-truth.md SVM and device memory (two 1 GiB allocations: +2,052 MiB at clSVMAlloc, back at clSVMFree); ground-truth-h200.md row 7 (pinned) [X]",
    },
    map_write_copies: Rule {
        id: "nvidia.map",
        value: true,
        says: "mapping a device buffer copies device→host at map for READ and for WRITE, and unmap \
               after WRITE copies back (27.6 GB/s effective); an ALLOC_HOST_PTR buffer too",
        source: "transfer-rules.md NVIDIA Q4 [X]",
    },
    migrate: Rule {
        id: "nvidia.migrate",
        value: Migrate {
            to_device_marker: Marker::Never,
            to_host_marker: false,
            content_undefined_honoured: true,
            store: Path::Pinned,
        },
        says: "migration copies at once, by DMA between device memory and the driver's pinned \
               backing store (64 MiB: 55.3-55.5 GB/s device time both ways), though the call holds \
               the host far longer (1.0-1.3 GB/s wall; 1 GiB to the host in ~700 ms) and device \
               profiling may report 0; CONTENT_UNDEFINED is honoured",
        source: "transfer-rules.md NVIDIA Q5 [X]; ground-truth-h200.md migrate rows; \
                 docs/ground-truth.md migrate rows (H200, 2026-11-30) [X]",
    },
    between_devices: Rule {
        id: "nvidia.between-devices",
        value: CrossDevice::ViaHost,
        says: "data moves between two GPUs through the host, whatever the flags (NVLink-connected \
               H200s: 0.58 GB/s at 64 MiB, 0.8-1.3 at 16 and 256 MiB), as the two legs of a \
               migration to the host and back cost",
        source: "transfer-rules.md NVIDIA Q5 [X]; docs/ground-truth.md migrate-between-devices [X]",
    },
    read_copy: Rule {
        id: "nvidia.read-copy",
        value: true,
        says: "a buffer a kernel on another GPU only read stays valid on the GPU that had it: a later use there moves nothing",
        source: "[I] not yet measured (docs/ground-truth.md has no two-GPU kernel read); a migration moves the allocation instead (transfer-rules.md NVIDIA Q5 [X])",
    },
    alignment: Rule {
        id: "nvidia.alignment",
        value: None,
        says: "pointer alignment does not change the path (pinned +1 byte: 55.1 GB/s)",
        source: "ground-truth-h200.md rows 2, 6 [X]",
    },
    cost: Some(Cost {
        on: "an NVIDIA H200 on PCIe Gen5 x16, driver 580.159.04",
        pinned: [
            link(2.5, &[(MIB, 54.0)], SWEEP),
            link(2.0, &[(MIB, 55.2)], SWEEP),
        ],
        // Pageable memory is staged; up to 1 MiB the copy into the bounce buffer hides behind
        // the DMA, beyond it the bandwidth falls with the size (the host's memcpy).
        staged: [
            link(
                2.5,
                &[
                    (MIB, 47.6),
                    (2 * MIB, 22.1),
                    (4 * MIB, 15.6),
                    (8 * MIB, 14.3),
                    (16 * MIB, 11.4),
                    (32 * MIB, 6.5),
                    (64 * MIB, 5.8),
                    (256 * MIB, 6.2),
                ],
                SWEEP,
            ),
            link(
                2.0,
                &[
                    (MIB, 41.3),
                    (2 * MIB, 28.2),
                    (4 * MIB, 15.7),
                    (8 * MIB, 14.3),
                    (16 * MIB, 13.2),
                    (32 * MIB, 10.0),
                    (64 * MIB, 9.6),
                    (256 * MIB, 10.2),
                ],
                SWEEP,
            ),
        ],
        // Copies (2040 GB/s at 256 MiB) and fills (1640) together.
        device: link(5.5, &[(MIB, 1900.0)], SWEEP),
        // The wall time of migrations (their device times are not their own): 64 MiB to the
        // host 1.13-1.17 GB/s, back 1.08-1.18 (two visits), 1 GiB to the host in 670-730 ms,
        // back in 150-165. Both legs at 64 MiB come to 0.57 GB/s, as the two-GPU move measured
        // (0.58 at 64 MiB; 0.8-1.3 at 16 and 256 MiB, where the legs give 0.6 and 1.0).
        legs: [
            link(
                0.0,
                &[(64 * MIB, 1.13), (1024 * MIB, 6.7)],
                "docs/ground-truth.md migrate-back-flags-0 host GB/s (64 MiB, two visits); ground-truth-h200.md migrate back (1 GiB) [X]",
            ),
            link(
                0.0,
                &[(64 * MIB, 1.15), (1024 * MIB, 1.5)],
                "docs/ground-truth.md migrate-to-host host GB/s (64 MiB, two visits); ground-truth-h200.md migrate to host (1 GiB) [X]",
            ),
        ],
        enqueue_us: fig(
            9.4,
            "docs/PERFORMANCE.md NVIDIA H200: the 4 KiB storm with no tool, 9.42 µs per enqueue [X]",
        ),
    }),
    recipe: "create one CL_MEM_ALLOC_HOST_PTR buffer, map it once with clEnqueueMapBuffer and pass the mapped pointer (or one inside it) to clEnqueueWriteBuffer/clEnqueueReadBuffer on the device buffer (NVIDIA's oclBandwidthTest recipe)",
    // A completion callback armed on NVIDIA's OpenCL slows every enqueue while it waits: one per
    // queue per millisecond cost the H200 storm +5 µs per enqueue, none +0 (docs/PERFORMANCE.md),
    // and a thread polling an event's status every millisecond +2 µs. So the program's waits
    // collect, and a callback comes at most every 100 ms, for programs that never wait (none
    // within 100 ms of a wait on the queue: with four threads, callbacks every 100 ms per queue
    // still cost every enqueue about 2 µs).
    callback_gap_us: 100_000,
    timed_command_us: TIMED_NVIDIA,
    driver_timed_us: DRIVER_TIMED_NVIDIA,
    driver_profiled_us: 0.0,
    toggle_profiling: true,
    borrowed_times: Some(Rule {
        id: "nvidia.borrowed-times",
        value: Commands {
            migrations: true,
            to_host_too: true,
            idle_maps: true,
        },
        says: "the driver's profiling times of a migration (any flags, moving bytes or not) and \
               of a map that moves nothing (WRITE_INVALIDATE_REGION) are another command's: each \
               starts ~1.9 ms before the kernel it waits for ends and lasts as long as that \
               kernel (15 of 15 runs of each), or reads 0 ms for a 1 GiB migration that held the \
               host 670-730 ms; they are marked untrusted and not used. Unmaps, maps that copy, \
               writes, copies and fills keep their own",
        source: "docs/ground-truth.md borrowed times (tests/programs/borrowed.c, H200, \
                 2026-12-03); ground-truth-h200.md (migrate rows) [X]",
    }),
    early_complete: Some(Rule {
        id: "nvidia.early-complete",
        value: Commands {
            migrations: true,
            to_host_too: false,
            idle_maps: true,
        },
        says: "a migration to a device (flags 0, CONTENT_UNDEFINED, or back from the host: 45 of \
               45 runs) and a map that moves nothing (12 of 15) read CL_COMPLETE while the \
               kernel they wait for is still running, so their status says nothing of what they \
               waited for; a HOST migration did not (0 of 15)",
        source: "docs/ground-truth.md borrowed times (tests/programs/borrowed.c, H200, \
                 2026-12-03); the hand-off probe, 12 of 12 and 6 of 6 [X]",
    }),
};

pub static AMD: RuleSet = RuleSet {
    name: "amd",
    title: "AMD GPU (ROCm)",
    unified: Rule {
        id: "amd.memory",
        value: false,
        says: DISCRETE,
        source: TR,
    },
    pageable: Rule {
        id: "amd.pageable",
        value: Pageable::PinnedAbove(MIB),
        says: "pageable transfers of 1 MiB or less are staged; larger ones pin the pages on the fly \
               (about 2/3 of peak, pinning costs time)",
        source: "transfer-rules.md AMD Q1 [S] rocsettings.cpp, rocblit.cpp; [D] guide 1.4.2.4",
    },
    nonblocking_blocks: Rule {
        id: "amd.nonblocking",
        value: false,
        says: "staging presumably runs on a worker thread (AMD_DIRECT_DISPATCH=false)",
        source: "transfer-rules.md Pitfall 6 [I]",
    },
    registered: Rule {
        id: "amd.registered",
        value: true,
        says: "a live USE_HOST_PTR range is locked in place (hsa_amd_memory_lock_to_pool)",
        source: "transfer-rules.md AMD Q3 [S]",
    },
    alloc_host_ptr: Rule {
        id: "amd.alloc-host-ptr",
        value: Placement::Host,
        says: "an ALLOC_HOST_PTR buffer lives in system memory and uses no device memory; kernels \
               reach it over PCIe",
        source: "transfer-rules.md AMD Q2 [S] rocmemory.cpp",
    },
    use_host_ptr: Rule {
        id: "amd.use-host-ptr",
        value: UseHostPtr::ZeroCopy,
        says: "USE_HOST_PTR is locked in place: zero-copy, no device copy",
        source: "transfer-rules.md AMD Q3 [S]",
    },
    svm: Rule {
        id: "amd.svm",
        value: Placement::Device,
        says: "a coarse-grain SVM allocation is device memory the host reaches by map (fine-grain SVM is host memory)",
        source: "[I] ROCm/clr: coarse-grain SVM is allocated as device memory, fine-grain in host memory; not measured",
    },
    map_write_copies: Rule {
        id: "amd.map",
        value: false,
        says: "map READ of a device buffer copies device→host; map WRITE copies nothing at map and \
               host→device at unmap; host-resident buffers map for free",
        source: "transfer-rules.md AMD Q4 [D][S] rocvirtual.cpp",
    },
    migrate: Rule {
        id: "amd.migrate",
        value: Migrate {
            to_device_marker: Marker::WhenFlagsZero,
            to_host_marker: false,
            content_undefined_honoured: false,
            store: Path::Staged,
        },
        says: "migration with flags 0 moves nothing (it happens at first use); CONTENT_UNDEFINED \
               still syncs the data",
        source: "transfer-rules.md AMD Q5 [S] rocvirtual.cpp",
    },
    between_devices: Rule {
        id: "amd.between-devices",
        value: CrossDevice::ViaHost,
        says: "multi-GPU data goes device → host backing store → device",
        source: "transfer-rules.md AMD Q5 [S] rocmemory.cpp",
    },
    read_copy: Rule {
        id: "amd.read-copy",
        value: true,
        says: "a device syncs a buffer only when its copy is older than the last write, so the copy of a device that only read it stays valid",
        source: "ROCm/clr rocclr/device/rocm/rocmemory.cpp `syncCacheFromHost` (version check), rocclr/platform/memory.cpp `signalWrite` (only a write bumps the version) [S]",
    },
    alignment: Rule {
        id: "amd.alignment",
        value: None,
        says: "pinning aligns down to 4 KiB itself: pointer alignment does not change the path",
        source: "transfer-rules.md AMD Q1 [S] rocblit.cpp",
    },
    cost: None,
    recipe: "put the host side in a CL_MEM_ALLOC_HOST_PTR buffer and map it (host memory the GPU reaches directly on ROCm), or allocate it with clSVMAlloc; ROCm pins only transfers above 1 MiB on the fly",
    callback_gap_us: 0,
    timed_command_us: TIMED_CPU,
    driver_timed_us: DRIVER_TIMED_CPU,
    driver_profiled_us: DRIVER_PROFILED_CPU,
    toggle_profiling: false,
    borrowed_times: None,
    early_complete: None,
};

const INTEL_PAGEABLE: &str = "pageable memory is not bounced: the range becomes a userptr object \
    and the GPU copies directly (Xe2 and later stage first-seen pointers under 512 MB); a blocking \
    transfer to system memory with a pointer not 64 B aligned is a CPU memcpy";
const INTEL_PAGEABLE_SRC: &str = "transfer-rules.md Intel GPU Q1 [S] enqueue_read_buffer.h, \
    staging_buffer_manager.cpp, command_queue.cpp";
const INTEL_ALIGN: &str =
    "pointers should be 64 B aligned (4 KiB advised): unaligned reads ran at 1.6-8 GB/s against 21";
const INTEL_MIGRATE: &str = "clEnqueueMigrateMemObjects is only a marker; buffers move at kernel \
    launch, through host memory";

pub static INTEL_IGPU: RuleSet = RuleSet {
    name: "intel-igpu",
    title: "Intel integrated GPU",
    unified: Rule {
        id: "intel-igpu.memory",
        value: true,
        says: "device memory is system memory: buffers are host-resident and map without a copy",
        source: "transfer-rules.md Intel GPU Q4 [S] mem_obj.cpp",
    },
    pageable: Rule {
        id: "intel-igpu.pageable",
        value: Pageable::Direct { cpu_copy_align: 64 },
        says: INTEL_PAGEABLE,
        source: INTEL_PAGEABLE_SRC,
    },
    nonblocking_blocks: Rule {
        id: "intel-igpu.nonblocking",
        value: false,
        says: "a non-blocking transfer never uses the CPU copy",
        source: "transfer-rules.md Intel GPU Q1 [S]",
    },
    registered: Rule {
        id: "intel-igpu.registered",
        value: true,
        says: "pointers into mapped regions and USM/SVM are used as they are",
        source: "transfer-rules.md Intel GPU Q1 [S] context.cpp",
    },
    alloc_host_ptr: Rule {
        id: "intel-igpu.alloc-host-ptr",
        value: Placement::Host,
        says: "every buffer lives in system memory",
        source: "transfer-rules.md Intel GPU Q2-Q3 [S]",
    },
    use_host_ptr: Rule {
        id: "intel-igpu.use-host-ptr",
        value: UseHostPtr::ZeroCopyIfAligned(64),
        says: "USE_HOST_PTR is zero-copy only when pointer and size are multiples of 64 B",
        source: "transfer-rules.md Intel GPU Q3 [S] buffer.cpp",
    },
    svm: Rule {
        id: "intel-igpu.svm",
        value: Placement::Host,
        says: "one memory: an SVM allocation is host memory the GPU shares",
        source: "transfer-rules.md Intel GPU [D]",
    },
    map_write_copies: Rule {
        id: "intel-igpu.map",
        value: true,
        says: "system-memory buffers map on the CPU without a copy",
        source: "transfer-rules.md Intel GPU Q4 [S]",
    },
    migrate: Rule {
        id: "intel-igpu.migrate",
        value: Migrate {
            to_device_marker: Marker::Always,
            to_host_marker: true,
            content_undefined_honoured: true,
            store: Path::Staged,
        },
        says: INTEL_MIGRATE,
        source: "transfer-rules.md Intel GPU Q5 [S]",
    },
    between_devices: Rule {
        id: "intel-igpu.between-devices",
        value: CrossDevice::ViaHost,
        says: "buffers move between root devices through host memory",
        source: "transfer-rules.md Intel GPU Q5 [S] migration_controller.cpp",
    },
    read_copy: Rule {
        id: "intel-igpu.read-copy",
        value: false,
        says: "a buffer has one current location: a kernel on another root device moves it there",
        source: "intel/compute-runtime@e37c60b shared/source/memory_manager/migration_controller.cpp `migrateMemory` (one current location per allocation: source to host to target) [S]",
    },
    alignment: Rule {
        id: "intel-igpu.alignment",
        value: Some(64),
        says: INTEL_ALIGN,
        source: "transfer-rules.md Intel GPU Q1 [M] compute-runtime#20, #775",
    },
    cost: None,
    recipe: "skip the copy: map the buffer (CL_MEM_ALLOC_HOST_PTR, or USE_HOST_PTR with 4096-byte aligned memory and size) and work in the mapped memory",
    callback_gap_us: 0,
    timed_command_us: TIMED_CPU,
    driver_timed_us: DRIVER_TIMED_CPU,
    driver_profiled_us: DRIVER_PROFILED_CPU,
    toggle_profiling: false,
    borrowed_times: None,
    early_complete: None,
};

pub static INTEL_DGPU: RuleSet = RuleSet {
    name: "intel-dgpu",
    title: "Intel discrete GPU",
    unified: Rule {
        id: "intel-dgpu.memory",
        value: false,
        says: DISCRETE,
        source: TR,
    },
    pageable: Rule {
        id: "intel-dgpu.pageable",
        value: Pageable::Direct { cpu_copy_align: 64 },
        says: INTEL_PAGEABLE,
        source: INTEL_PAGEABLE_SRC,
    },
    nonblocking_blocks: Rule {
        id: "intel-dgpu.nonblocking",
        value: false,
        says: "a non-blocking transfer never uses the CPU copy",
        source: "transfer-rules.md Intel GPU Q1 [S]",
    },
    registered: Rule {
        id: "intel-dgpu.registered",
        value: true,
        says: "pointers into mapped regions and USM/SVM are used as they are",
        source: "transfer-rules.md Intel GPU Q1 [S] context.cpp",
    },
    alloc_host_ptr: Rule {
        id: "intel-dgpu.alloc-host-ptr",
        value: Placement::Device,
        says: "ALLOC_HOST_PTR is ignored for placement: the buffer lives in device memory (use \
               CL_MEM_FORCE_HOST_MEMORY_INTEL or clHostMemAllocINTEL for host memory)",
        source: "transfer-rules.md Intel GPU Q2 [S] buffer.cpp",
    },
    use_host_ptr: Rule {
        id: "intel-dgpu.use-host-ptr",
        value: UseHostPtr::DeviceCopy,
        says: "on discrete GPUs USE_HOST_PTR gets device storage",
        source: "transfer-rules.md Intel GPU Q3 [S]",
    },
    svm: Rule {
        id: "intel-dgpu.svm",
        value: Placement::Device,
        says: "an SVM allocation is a USM shared allocation, resident on the device once used there",
        source: "[I] intel/compute-runtime: clSVMAlloc allocates USM shared memory; not measured",
    },
    map_write_copies: Rule {
        id: "intel-dgpu.map",
        value: true,
        says: "mapping a device-memory buffer reads it into a map allocation (skipped for \
               WRITE_INVALIDATE_REGION); unmap writes it back",
        source: "transfer-rules.md Intel GPU Q4 [S] command_queue.cpp",
    },
    migrate: Rule {
        id: "intel-dgpu.migrate",
        value: Migrate {
            to_device_marker: Marker::Always,
            to_host_marker: true,
            content_undefined_honoured: true,
            store: Path::Staged,
        },
        says: INTEL_MIGRATE,
        source: "transfer-rules.md Intel GPU Q5 [S]",
    },
    between_devices: Rule {
        id: "intel-dgpu.between-devices",
        value: CrossDevice::ViaHost,
        says: "buffers move between root devices through host memory",
        source: "transfer-rules.md Intel GPU Q5 [S] migration_controller.cpp",
    },
    read_copy: Rule {
        id: "intel-dgpu.read-copy",
        value: false,
        says: "a buffer has one current location: a kernel on another root device moves it there",
        source: "intel/compute-runtime@e37c60b shared/source/memory_manager/migration_controller.cpp `migrateMemory` (one current location per allocation: source to host to target) [S]",
    },
    alignment: Rule {
        id: "intel-dgpu.alignment",
        value: Some(64),
        says: INTEL_ALIGN,
        source: "transfer-rules.md Intel GPU Q1 [M] compute-runtime#20, #775",
    },
    cost: Some(Cost {
        on: "an Intel Arc A770 on PCIe Gen4 x16",
        pinned: [
            link(
                0.0,
                &[(MIB, 22.0)],
                "[I] taken as the D2H figure: no H2D measurement; no floor measured",
            ),
            link(
                0.0,
                &[(MIB, 22.0)],
                "transfer-rules.md §7: ReadBuffer with USM or a mapped pointer 22.1-22.3, compute-runtime#618 [M]; no floor measured",
            ),
        ],
        staged: [
            None,
            link(
                0.0,
                &[(MIB, 9.0)],
                "transfer-rules.md §7: ReadBuffer from malloc 8.9-9.1, compute-runtime#618 [M]; no floor measured",
            ),
        ],
        device: None,
        legs: [None, None],
        enqueue_us: None,
    }),
    recipe: "allocate the host side with clHostMemAllocINTEL (USM host memory) and transfer from that pointer, or map a buffer made with CL_MEM_FORCE_HOST_MEMORY_INTEL",
    callback_gap_us: 0,
    timed_command_us: TIMED_CPU,
    driver_timed_us: DRIVER_TIMED_CPU,
    driver_profiled_us: DRIVER_PROFILED_CPU,
    toggle_profiling: false,
    borrowed_times: None,
    early_complete: None,
};

const HOST_COPY: &str = "the device works in host memory: a read or write is one host memcpy \
    (7-12 GB/s on PoCL whatever the memory kind) and map/unmap move nothing";

pub static INTEL_CPU: RuleSet = RuleSet {
    name: "intel-cpu",
    title: "Intel CPU runtime",
    unified: Rule {
        id: "intel-cpu.memory",
        value: true,
        says: HOST_COPY,
        source: "transfer-rules.md Intel CPU [D]",
    },
    pageable: Rule {
        id: "intel-cpu.pageable",
        value: Pageable::HostCopy,
        says: HOST_COPY,
        source: "transfer-rules.md Intel CPU [D]",
    },
    nonblocking_blocks: Rule {
        id: "intel-cpu.nonblocking",
        value: false,
        says: "the copy runs on the runtime's worker threads",
        source: "[I]",
    },
    registered: Rule {
        id: "intel-cpu.registered",
        value: true,
        says: "all memory is host memory",
        source: "[I]",
    },
    alloc_host_ptr: Rule {
        id: "intel-cpu.alloc-host-ptr",
        value: Placement::Host,
        says: "all memory is host memory",
        source: "[I]",
    },
    use_host_ptr: Rule {
        id: "intel-cpu.use-host-ptr",
        value: UseHostPtr::ZeroCopyIfAligned(0),
        says: "USE_HOST_PTR is zero-copy if aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN, else the \
               framework may copy; prefer map/unmap over read/write",
        source: "transfer-rules.md Intel CPU [D]",
    },
    svm: Rule {
        id: "intel-cpu.svm",
        value: Placement::Host,
        says: "one memory: an SVM allocation is host memory",
        source: "transfer-rules.md Intel CPU [D]",
    },
    map_write_copies: Rule {
        id: "intel-cpu.map",
        value: false,
        says: "map returns host memory",
        source: "transfer-rules.md Intel CPU [D]",
    },
    migrate: Rule {
        id: "intel-cpu.migrate",
        value: Migrate {
            to_device_marker: Marker::Never,
            to_host_marker: false,
            content_undefined_honoured: true,
            store: Path::Staged,
        },
        says: "a CPU device's memory is host memory: migration has nothing to move",
        source: "[I]",
    },
    between_devices: Rule {
        id: "intel-cpu.between-devices",
        value: CrossDevice::Shared,
        says: "CPU devices share host memory",
        source: "[I]",
    },
    read_copy: Rule {
        id: "intel-cpu.read-copy",
        value: false,
        says: "one memory: there is no copy to keep",
        source: "transfer-rules.md Intel CPU runtime [D]",
    },
    alignment: Rule {
        id: "intel-cpu.alignment",
        value: None,
        says: "alignment matters only for USE_HOST_PTR zero-copy",
        source: "transfer-rules.md Intel CPU [D]",
    },
    cost: None,
    recipe: "skip the copy: map the buffer (CL_MEM_ALLOC_HOST_PTR, or USE_HOST_PTR with aligned memory) and work in the mapped memory",
    callback_gap_us: 0,
    timed_command_us: TIMED_CPU,
    driver_timed_us: DRIVER_TIMED_CPU,
    driver_profiled_us: DRIVER_PROFILED_CPU,
    toggle_profiling: false,
    borrowed_times: None,
    early_complete: None,
};

pub static CPU: RuleSet = RuleSet {
    name: "cpu",
    title: "PoCL and other CPU devices",
    unified: Rule {
        id: "cpu.memory",
        value: true,
        says: HOST_COPY,
        source: "ground-truth-h200.md PoCL CPU [X]; transfer-rules.md PoCL [S] common_driver.c",
    },
    pageable: Rule {
        id: "cpu.pageable",
        value: Pageable::HostCopy,
        says: HOST_COPY,
        source: "ground-truth-h200.md PoCL CPU [X]",
    },
    nonblocking_blocks: Rule {
        id: "cpu.nonblocking",
        value: false,
        says: "commands run on the driver's worker threads",
        source: "[I]",
    },
    registered: Rule {
        id: "cpu.registered",
        value: true,
        says: "all memory is host memory",
        source: "transfer-rules.md PoCL [S]",
    },
    alloc_host_ptr: Rule {
        id: "cpu.alloc-host-ptr",
        value: Placement::Host,
        says: "all memory is host memory",
        source: "transfer-rules.md PoCL [S]",
    },
    use_host_ptr: Rule {
        id: "cpu.use-host-ptr",
        value: UseHostPtr::ZeroCopy,
        says: "the device uses the program's pages directly",
        source: "transfer-rules.md PoCL [S] common_driver.c",
    },
    svm: Rule {
        id: "cpu.svm",
        value: Placement::Host,
        says: "one memory: an SVM allocation is host memory",
        source: "transfer-rules.md PoCL [S]",
    },
    map_write_copies: Rule {
        id: "cpu.map",
        value: false,
        says: "map/unmap move nothing",
        source: "ground-truth-h200.md PoCL CPU [X]",
    },
    migrate: Rule {
        id: "cpu.migrate",
        value: Migrate {
            to_device_marker: Marker::Never,
            to_host_marker: false,
            content_undefined_honoured: true,
            store: Path::Staged,
        },
        says: "PoCL migrates at once; CONTENT_UNDEFINED is honoured",
        source: "transfer-rules.md PoCL [S] pocl_mem_management.c",
    },
    between_devices: Rule {
        id: "cpu.between-devices",
        value: CrossDevice::Shared,
        says: "CPU devices use the same host allocation: nothing moves between them",
        source: "transfer-rules.md PoCL [S] common_driver.c",
    },
    read_copy: Rule {
        id: "cpu.read-copy",
        value: false,
        says: "one memory: there is no copy to keep",
        source: "transfer-rules.md PoCL [S]",
    },
    alignment: Rule {
        id: "cpu.alignment",
        value: None,
        says: "alignment does not change the path",
        source: "ground-truth-h200.md PoCL CPU [X]",
    },
    cost: None,
    recipe: "skip the copy: map the buffer (CL_MEM_ALLOC_HOST_PTR or USE_HOST_PTR) and work in the mapped memory",
    // PoCL: an event per command is free (the storm's own events +0.0 µs an enqueue) but a
    // callback per command is not (+0.35 µs, and clxfer's collector then runs on PoCL's
    // threads: docs/PERFORMANCE.md). So the program's waits collect, and a callback comes at
    // most every 10 ms, for programs that never wait.
    callback_gap_us: 10_000,
    timed_command_us: TIMED_CPU,
    driver_timed_us: DRIVER_TIMED_CPU,
    driver_profiled_us: DRIVER_PROFILED_CPU,
    toggle_profiling: false,
    borrowed_times: None,
    early_complete: None,
};

pub static GENERIC: RuleSet = RuleSet {
    name: "generic",
    title: "other GPU (conservative)",
    unified: Rule {
        id: "generic.memory",
        value: false,
        says: DISCRETE,
        source: "[I]",
    },
    pageable: Rule {
        id: "generic.pageable",
        value: Pageable::Staged,
        says: "pageable memory is assumed staged: no vendor promises DMA from malloc'd memory",
        source: "transfer-rules.md spec baseline [D], section 7 [I]",
    },
    nonblocking_blocks: Rule {
        id: "generic.nonblocking",
        value: true,
        says: "a non-blocking transfer from pageable memory may hold the host while it is staged",
        source: "transfer-rules.md Pitfall 6 [I]",
    },
    registered: Rule {
        id: "generic.registered",
        value: true,
        says: "a live USE_HOST_PTR range is registered on every driver measured or read",
        source: "transfer-rules.md section 6 [X][S]",
    },
    alloc_host_ptr: Rule {
        id: "generic.alloc-host-ptr",
        value: Placement::Device,
        says: "an ALLOC_HOST_PTR buffer is assumed to take device memory (as on NVIDIA and Intel \
               discrete)",
        source: "transfer-rules.md Pitfall 3 [I]",
    },
    use_host_ptr: Rule {
        id: "generic.use-host-ptr",
        value: UseHostPtr::DeviceCopy,
        says: "the spec lets the runtime cache USE_HOST_PTR contents in device memory",
        source: "transfer-rules.md spec baseline [D]",
    },
    svm: Rule {
        id: "generic.svm",
        value: Placement::Device,
        says: "a coarse-grain SVM allocation is taken to have device storage",
        source: "[I]",
    },
    map_write_copies: Rule {
        id: "generic.map",
        value: true,
        says: "mapping a device buffer is assumed to copy at map (READ, WRITE) and at unmap (WRITE)",
        source: "transfer-rules.md Q4 rows [I]",
    },
    migrate: Rule {
        id: "generic.migrate",
        value: Migrate {
            to_device_marker: Marker::Never,
            to_host_marker: false,
            content_undefined_honoured: true,
            store: Path::Staged,
        },
        says: "migration is assumed to copy at once; CONTENT_UNDEFINED skips the copy (spec)",
        source: "transfer-rules.md spec baseline [D]",
    },
    between_devices: Rule {
        id: "generic.between-devices",
        value: CrossDevice::ViaHost,
        says: "no driver measured moves buffers peer-to-peer: assumed through the host",
        source: "transfer-rules.md Q5 rows [I]",
    },
    read_copy: Rule {
        id: "generic.read-copy",
        value: false,
        says: "no copy is assumed to stay behind: a later use moves the buffer again",
        source: "[I]",
    },
    alignment: Rule {
        id: "generic.alignment",
        value: Some(64),
        says: "pointers not 64 B aligned are slow on some drivers",
        source: "transfer-rules.md Intel GPU Q1 [I]",
    },
    cost: Some(Cost {
        on: "a PCIe Gen3 x16 GPU",
        pinned: [
            link(
                0.0,
                &[(MIB, 12.0)],
                "transfer-rules.md §7: about 12 GB/s, CUDA Best Practices §9.1.1 [D]; no floor measured",
            ),
            link(
                0.0,
                &[(MIB, 12.0)],
                "transfer-rules.md §7: about 12 GB/s, CUDA Best Practices §9.1.1 [D]; no floor measured",
            ),
        ],
        staged: [None, None],
        device: None,
        legs: [None, None],
        enqueue_us: None,
    }),
    recipe: "map a CL_MEM_ALLOC_HOST_PTR buffer and use the mapped pointer as the host side of the transfer, or allocate it with clSVMAlloc",
    callback_gap_us: 0,
    timed_command_us: TIMED_CPU,
    driver_timed_us: DRIVER_TIMED_CPU,
    driver_profiled_us: DRIVER_PROFILED_CPU,
    toggle_profiling: false,
    borrowed_times: None,
    early_complete: None,
};

/// Rules every set shares: the classifier's own logic, cited like the vendor rules.
pub mod common {
    use super::Row;

    macro_rules! rows {
        ($($name:ident = $id:literal, $says:literal, $source:literal;)*) => {
            $(pub const $name: Row = Row { id: $id, value: (), says: $says, source: $source };)*
            pub const ALL: &[Row] = &[$($name),*];
        };
    }

    rows! {
        MAPPED = "any.mapped", "a pointer inside the live mapping of any buffer (at any offset) is pinned; after unmap it is not", "transfer-rules.md Pitfall 1 [X][S]";
        SVM = "any.svm", "clSVMAlloc memory is pinned and device-accessible (55.4 GB/s)", "ground-truth-h200.md SVM row [X]";
        USM_HOST = "any.usm-host", "USM host memory (clHostMemAllocINTEL) is pinned", "transfer-rules.md section 6 [D]";
        USM_SHARED = "any.usm-shared", "USM shared memory is driver-managed and migrates on demand", "transfer-rules.md section 6 [D][I]";
        USM_DEVICE = "any.usm-device", "USM device memory (clDeviceMemAllocINTEL) is device memory", "cl_intel_unified_shared_memory [D]";
        IMPORTED = "any.imported", "clImportMemoryARM host imports are committed and pinned", "transfer-rules.md section 6 [D]";
        PAGEABLE = "any.pageable", "a pointer outside every pinned or registered range clxfer saw is pageable; mlock does not pin", "transfer-rules.md section 6, Pitfall 10 [X]";
        PARTIAL = "any.partial", "the host span starts in a pinned range but runs past its end: the driver cannot DMA it whole", "[I]";
        HOST_RESIDENT = "any.host-resident", "the buffer's storage is host memory: the call is a host memcpy and nothing crosses the bus now", "transfer-rules.md AMD Q2, PoCL [S]";
        SUB_BUFFER = "any.sub-buffer", "a sub-buffer takes its parent's placement", "transfer-rules.md Pitfall 4 [S]";
        RECT = "any.rect", "a rect transfer moves the region's bytes but touches the whole host span", "transfer-rules.md Pitfall 5 [S]";
        DEVICE_COPY = "any.device-copy", "a copy between buffers on one device stays on the device (2.0 TB/s on an H200)", "transfer-rules.md NVIDIA Q2 [X]";
        FILL = "any.fill", "a fill is written by the device; only the pattern comes from the host", "OpenCL spec [D]";
        INVALIDATE = "any.invalidate", "WRITE_INVALIDATE_REGION discards the contents: nothing is copied at map", "transfer-rules.md spec baseline, NVIDIA Q4 [D][X]";
        READ_ONLY_UNMAP = "any.read-only-unmap", "unmapping a READ-only mapping writes nothing back", "OpenCL spec [D]";
        ALREADY_THERE = "any.already-there", "the contents are already where the command moves them", "[I]";
        NO_CONTENTS = "any.no-contents", "the buffer has held no data yet: nothing to move (allocation is deferred to first use)", "transfer-rules.md Pitfall 8 [D][X]";
        CONTENT_UNDEFINED = "any.content-undefined", "CONTENT_UNDEFINED: the object moves without its contents", "transfer-rules.md spec baseline [D]";
        FIRST_USE = "any.first-use", "the kernel uses a buffer whose contents are on another device: it moves now, at first use", "transfer-rules.md Pitfall 9 [S]";
        ONLY_ON_HOST = "any.only-on-host", "the kernel uses a buffer whose contents are valid only on the host (a HOST migration, or host data not yet on any device): they are copied to the device at its launch", "transfer-rules.md spec baseline, Pitfall 9 [D][S]";
        HOST_HOP = "any.host-hop", "a HOST migration took the contents off another device and this command brings them to its own: two hops through the host, where one migration with flags 0 on this device's queue would do", "transfer-rules.md spec baseline [D]";
        IDLE_MIGRATION = "any.idle-migration", "the last migration was enqueued on a queue of the device that already held the contents, so it moved nothing, and this command on another device pulls them", "transfer-rules.md spec baseline [D]";
        WRITTEN_TWICE = "any.written-twice", "the whole object was written on another device and not used since: this write makes that one wasted", "[I]";
        MLOCKED = "any.mlocked", "memory locked with mlock is still pageable to the driver, which is not told of it: a transfer from it is staged like any other (8.8 GB/s H2D after mlock on an H200, against 55 pinned)", "ground-truth-h200.md mlock row; transfer-rules.md section 6, Pitfall 10 [X]";
        HOST_COPY = "any.host-copy", "both sides are host memory: a host memcpy", "[I]";
        UNKNOWN_OBJECT = "any.unknown-object", "clxfer does not know this object (created before clxfer loaded, released, or invalid)", "-";
        UNKNOWN_MAPPING = "any.unknown-mapping", "clxfer saw no live mapping of this object at this pointer", "-";
        DRIVER_ERROR = "any.driver-error", "the driver refused the call: nothing was enqueued", "-";
    }
}

/// Entry points programs are told to call that no OpenCL implementation has, with why
/// (transfer-rules.md section 6).
pub const NO_SUCH_FUNCTIONS: &[(&str, &str)] = &[(
    "clEnqueueMemObjectRegisterKHR",
    "cl_khr_host_register does not exist: no such entry point in the Khronos registry's cl.xml \
     or in CL/cl_ext.h (transfer-rules.md section 6 [S])",
)];

/// What registers host memory with an OpenCL driver in fact (transfer-rules.md section 6).
pub const HOST_REGISTRATION: &str = "a CL_MEM_ALLOC_HOST_PTR buffer mapped once and used as the \
    host side of transfers, CL_MEM_USE_HOST_PTR over the program's own memory (registered by \
    NVIDIA, ROCm and PoCL-CUDA), SVM or USM host allocations (clSVMAlloc, clHostMemAllocINTEL), \
    or clImportMemoryARM on ARM";

/// Why `name` exists nowhere, if it is one of [`NO_SUCH_FUNCTIONS`].
pub fn no_such_function(name: &str) -> Option<&'static str> {
    NO_SUCH_FUNCTIONS.iter().find(|f| f.0 == name).map(|f| f.1)
}

/// Looks up a rule by id across every set and the common rules (for docs and tests).
pub fn find(id: &str) -> Option<(&'static str, &'static str)> {
    common::ALL
        .iter()
        .map(|r| (r.id, r.says))
        .chain(
            SETS.iter()
                .flat_map(|s| s.rows().map(|(id, says, _)| (id, says))),
        )
        .find(|(rid, _)| *rid == id)
}

/// `docs/RULES.md`, generated from the tables above (a test checks the file matches).
pub fn markdown() -> String {
    use std::fmt::Write as _;
    let clean = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::from(
        "# Transfer rules\n\nGenerated from `src/model/rules.rs` by `clxfer doctor --rules-markdown`; \
         do not edit. Every reason clxfer gives names one of these ids. Sources are rows of \
         `transfer-rules.md` and `ground-truth-h200.md` (tags: [X] measured, [S] driver source, \
         [D] vendor doc, [M] maintainer, [I] inference).\n\n## Paths and directions\n\n\
         | Word | Meaning |\n|---|---|\n",
    );
    use super::classification::{Direction, Path};
    for (word, meaning) in Path::DOCS.iter().chain(Direction::DOCS) {
        let _ = writeln!(out, "| `{word}` | {meaning} |");
    }
    out.push_str(
        "\n## Rules every set shares\n\n| Rule | What it says | Source |\n|---|---|---|\n",
    );
    for r in common::ALL {
        let _ = writeln!(out, "| `{}` | {} | {} |", r.id, clean(r.says), r.source);
    }
    for set in SETS {
        let _ = write!(
            out,
            "\n## `{}`: {}\n\n| Rule | What it says | Source |\n|---|---|---|\n",
            set.name, set.title
        );
        let extra = (set.borrowed_times.iter().chain(&set.early_complete))
            .map(|r| (r.id, r.says, r.source));
        for (id, says, source) in set.rows().into_iter().chain(extra) {
            let _ = writeln!(out, "| `{id}` | {} | {} |", clean(says), clean(source));
        }
        let _ = writeln!(
            out,
            "\nPinned recipe (the report's fix for staged transfers): {}.",
            set.recipe
        );
        if set.callback_gap_us > 0 {
            let _ = writeln!(
                out,
                "Device timing: at most one completion callback per queue every {} µs, and \
                 none within that of the program's last wait on the queue (its waits collect); \
                 each collects every command completed by then (callbacks are dear on this \
                 driver: docs/PERFORMANCE.md).",
                set.callback_gap_us
            );
        }
        if let Some(c) = set.cost {
            let _ = writeln!(
                out,
                "\nCost model (the report's projections under forced rules, and its estimates \
                 when a run measured no pinned transfer), measured on {}: a command takes the \
                 floor plus its bytes at the link's bandwidth for its size (interpolated between the sizes \
                 listed, on a log scale).\n\n| figure | value | \
                 source |\n|---|---|---|",
                c.on
            );
            for (name, l) in c.links() {
                let _ = writeln!(out, "| {name} | {} | {} |", l.describe(), l.source);
            }
            if let Some(f) = c.enqueue_us {
                let _ = writeln!(
                    out,
                    "| a non-blocking enqueue's time in the call | {} µs | {} |",
                    f.value, f.source
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_prefixed() {
        let mut seen = HashSet::new();
        for r in common::ALL {
            assert!(r.id.starts_with("any."), "{}", r.id);
            assert!(seen.insert(r.id), "duplicate {}", r.id);
        }
        for set in SETS {
            for (id, says, source) in set.rows() {
                assert!(
                    id.starts_with(&format!("{}.", set.name)),
                    "{id} in {}",
                    set.name
                );
                assert!(seen.insert(id), "duplicate {id}");
                assert!(!says.is_empty() && !source.is_empty(), "{id}");
            }
        }
    }

    #[test]
    fn choices_cover_every_set() {
        assert_eq!(CHOICES[0], "auto");
        let names: Vec<_> = SETS.iter().map(|s| s.name).collect();
        assert_eq!(&CHOICES[1..], names.as_slice());
        for name in names {
            assert_eq!(by_name(name).unwrap().name, name);
        }
        assert!(by_name("auto").is_none());
    }

    #[test]
    fn auto_picks_by_vendor_and_type() {
        let dev = |vendor: &str, id: u32, kind: DeviceKind, unified: bool, platform: &str| {
            DeviceProfile {
                vendor: vendor.into(),
                vendor_id: id,
                kind,
                host_unified: unified,
                platform: platform.into(),
                ..DeviceProfile::unknown(1)
            }
        };
        let pocl = "Portable Computing Language";
        let cases = [
            (
                dev(
                    "NVIDIA Corporation",
                    0x10de,
                    DeviceKind::Gpu,
                    false,
                    "NVIDIA CUDA",
                ),
                "nvidia",
            ),
            (
                dev(
                    "Advanced Micro Devices, Inc.",
                    0x1002,
                    DeviceKind::Gpu,
                    false,
                    "AMD",
                ),
                "amd",
            ),
            (
                dev("AuthenticAMD", 0x1002, DeviceKind::Gpu, false, "AMD"),
                "amd",
            ),
            (
                dev(
                    "Intel(R) Corporation",
                    0x8086,
                    DeviceKind::Gpu,
                    true,
                    "Intel",
                ),
                "intel-igpu",
            ),
            (
                dev(
                    "Intel(R) Corporation",
                    0x8086,
                    DeviceKind::Gpu,
                    false,
                    "Intel",
                ),
                "intel-dgpu",
            ),
            (
                dev(
                    "Intel(R) Corporation",
                    0x8086,
                    DeviceKind::Cpu,
                    true,
                    "Intel(R) OpenCL",
                ),
                "intel-cpu",
            ),
            (
                dev("GenuineIntel", 0x8086, DeviceKind::Cpu, true, pocl),
                "cpu",
            ),
            (
                dev("AuthenticAMD", 0x1022, DeviceKind::Cpu, true, pocl),
                "cpu",
            ),
            (
                dev("ARM", 0x13b5, DeviceKind::Gpu, true, "ARM Platform"),
                "generic",
            ),
            (dev("", 0, DeviceKind::Other, false, ""), "generic"),
        ];
        for (d, want) in cases {
            assert_eq!(for_device(&d).name, want, "{d:?}");
        }
    }

    #[test]
    fn placement_follows_flags_and_alignment() {
        use Placement::{Device, Host};
        use opencl_sys::{CL_MEM_ALLOC_HOST_PTR as AHP, CL_MEM_USE_HOST_PTR as UHP};
        let cases: &[(&RuleSet, u64, usize, u64, Placement)] = &[
            (&NVIDIA, 0, 0, 4096, Device),
            (&NVIDIA, AHP, 0, 4096, Device),
            (&NVIDIA, UHP, 4096, 4096, Device),
            (&AMD, AHP, 0, 4096, Host),
            (&AMD, UHP, 4097, 100, Host),
            (&AMD, 0, 0, 4096, Device),
            (&INTEL_DGPU, AHP, 0, 4096, Device),
            (&INTEL_IGPU, 0, 0, 4096, Host),
            (&INTEL_CPU, UHP, 128, 256, Host),
            (&CPU, 0, 0, 1, Host),
            (&GENERIC, AHP, 0, 4096, Device),
        ];
        for &(set, flags, ptr, size, want) in cases {
            assert_eq!(
                set.placement(flags, ptr, size, 128).0,
                want,
                "{} {flags:#x}",
                set.name
            );
        }
        // USE_HOST_PTR zero-copy only when aligned (Intel); the device's base alignment when 0.
        let mut odd = INTEL_DGPU.use_host_ptr;
        odd.value = UseHostPtr::ZeroCopyIfAligned(64);
        let set = RuleSet {
            use_host_ptr: odd,
            ..clone_of(&INTEL_DGPU)
        };
        assert_eq!(set.placement(UHP, 64, 128, 0).0, Host);
        assert_eq!(set.placement(UHP, 65, 128, 0).0, Device);
        assert_eq!(set.placement(UHP, 64, 100, 0).0, Device);
        let mut base = odd;
        base.value = UseHostPtr::ZeroCopyIfAligned(0);
        let set = RuleSet {
            use_host_ptr: base,
            ..clone_of(&INTEL_DGPU)
        };
        assert_eq!(set.placement(UHP, 128, 256, 128).0, Host);
        assert_eq!(set.placement(UHP, 64, 256, 128).0, Device);
    }

    fn clone_of(s: &RuleSet) -> RuleSet {
        RuleSet { ..*s }
    }

    #[test]
    fn markdown_lists_every_rule() {
        let md = markdown();
        for set in SETS {
            for (id, ..) in set.rows() {
                assert!(md.contains(&format!("`{id}`")));
            }
        }
        assert!(find("nvidia.pageable").is_some());
        assert!(find("any.mapped").is_some());
        assert!(find("nope").is_none());
    }
}
