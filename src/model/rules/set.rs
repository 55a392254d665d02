//! The rule machinery: what a rule set says (its rules, each with the id reasons cite, what it
//! says and its source), how its rows are listed, and the figures its cost model and device
//! timing are given in. The data is in the vendors' files beside this one.

use crate::model::classification::{Direction, Path};
use crate::model::cost::Cost;
use crate::model::kinds::RangeKind;

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
