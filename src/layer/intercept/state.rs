//! The intercept room's shared state, below its hooks: the devices, queues, contexts, kernels,
//! programs and events clxfer knows, and the memory model, each behind a short lock. clxfer
//! never calls the driver while holding one (a driver callback, such as a destructor, may take
//! them).

use super::pending::Waiting;
use crate::model::device::DeviceProfile;
use crate::model::kernel_source::{Access, Kernel};
use crate::model::memory::Registry;
use crate::model::rules;
use crate::sink::record::{QueueRef, Timing};
use crate::sync::{Mutex, Padded, RwLock};
use crate::timing::mapping::ClockMap;
use opencl_sys::*;
use rustc_hash::FxBuildHasher;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

/// A device clxfer has profiled, with the rules that classify its commands and the mapping of
/// its clock.
pub struct Device {
    pub handle: usize,
    pub profile: DeviceProfile,
    pub rules: &'static rules::RuleSet,
    pub clock: ClockMap,
    /// Commands whose device time was unavailable.
    pub unavailable: Padded<AtomicU64>,
    /// Commands on queues that are not timed.
    pub untimed: Padded<AtomicU64>,
    /// Commands sampled device timing left untimed on queues clxfer has forgotten (a live
    /// queue keeps its own count, `QueueInfo::sampled`).
    pub sampled: AtomicU64,
    /// What timing its commands added.
    pub own: Padded<OwnCounts>,
    /// Whether the driver answers profiling queries for queues made without profiling
    /// (`hidden.rs`), learned at the first such query.
    pub answers_unprofiled: std::sync::OnceLock<bool>,
}

/// What device timing added on one device: the commands it timed, of them those whose event was
/// clxfer's own, the completion callbacks it armed, and the profiling switches around timed
/// commands (pairs, and the time they took).
#[derive(Default)]
pub struct OwnCounts {
    pub timed: AtomicU64,
    pub supplied: AtomicU64,
    pub callbacks: AtomicU64,
    pub toggles: AtomicU64,
    pub toggle_ns: AtomicU64,
    /// The time clxfer's own driver calls for device timing took, ns (`finish::driver_call`).
    pub driver_ns: AtomicU64,
}

/// Queues, contexts, kernels and devices beyond this many are forgotten (the map is cleared and
/// refilled by queries): handles are never freed visibly, so these maps must not grow forever.
pub(super) const MAX_HANDLES: usize = 1 << 16;

#[derive(Default)]
pub(super) struct World {
    pub(super) memory: Mutex<Registry>,
    pub(super) devices: RwLock<HashMap<usize, Arc<Device>>>,
    pub(super) queues: RwLock<HashMap<usize, Arc<QueueInfo>, FxBuildHasher>>,
    /// Context → devices.
    pub(super) contexts: RwLock<HashMap<usize, Vec<usize>>>,
    /// Kernel → its memory-object arguments.
    pub(super) kernels: Mutex<HashMap<usize, KernelArgs>>,
    /// Kernel → function name.
    pub(super) kernel_names: Mutex<HashMap<usize, Arc<str>>>,
    /// Program → its source, or the kernels read from it.
    pub(super) programs: Mutex<HashMap<usize, Program>>,
    /// The events the program holds, and the commands they stand for.
    pub(super) events: Mutex<crate::graph::events::Events>,
}

pub(super) static WORLD: LazyLock<World> = LazyLock::new(World::default);

pub(super) fn bounded_insert<V, S: std::hash::BuildHasher>(
    map: &mut HashMap<usize, V, S>,
    key: usize,
    value: V,
) {
    if map.len() >= MAX_HANDLES && !map.contains_key(&key) {
        map.clear();
    }
    map.insert(key, value);
}

/// What clxfer knows of a queue.
pub struct QueueInfo {
    pub device: Arc<Device>,
    pub device_handle: usize,
    pub r: QueueRef,
    pub timing: Timing,
    pub in_order: bool,
    /// What the program asked for, when clxfer changed it (`timing` is `Forced`).
    pub asked: Asked,
    /// Commands waiting for their completion to be collected (`pending.rs`, `collect.rs`).
    pub waiting: Mutex<Waiting>,
    /// Signalled when a collector has put back what it took (`collect.rs`).
    pub collected: std::sync::Condvar,
    /// The order the queue imposes on its commands (`graph::order`).
    pub order: crate::graph::order::Shared,
    /// A `Toggled` queue: held from turning profiling on for a command to turning it off.
    pub toggling: std::sync::atomic::AtomicBool,
    /// Its commands sampled device timing left untimed: counted here, by the threads that
    /// enqueue on it, rather than in the device's count that every thread would write at every
    /// enqueue; added to the device's when the queue is forgotten.
    pub sampled: std::sync::atomic::AtomicU64,
}

impl Drop for QueueInfo {
    fn drop(&mut self) {
        let n = *self.sampled.get_mut();
        self.device.sampled.fetch_add(n, Ordering::Relaxed);
    }
}

impl QueueInfo {
    /// The same queue on `device`, with no waiting commands (in a forked child, `fork.rs`).
    pub(super) fn fresh_copy(old: &QueueInfo, device: Arc<Device>) -> QueueInfo {
        QueueInfo {
            device,
            device_handle: old.device_handle,
            r: old.r,
            timing: old.timing,
            in_order: old.in_order,
            asked: old.asked.clone(),
            waiting: Mutex::default(),
            collected: std::sync::Condvar::new(),
            // The parent's last command is not the child's to wait for.
            order: crate::graph::order::Shared::new(!old.in_order),
            toggling: Default::default(),
            sampled: Default::default(),
        }
    }
}

/// The properties the program gave a queue whose profiling clxfer turned on.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Asked {
    /// The bitfield (`CL_QUEUE_PROPERTIES`).
    pub props: cl_command_queue_properties,
    /// The list given to `clCreateCommandQueueWithProperties`, with its terminating 0; `None` for
    /// a NULL list or `clCreateCommandQueue`, and for an empty list where the driver answers so
    /// (`CL_QUEUE_PROPERTIES_ARRAY` is then empty).
    pub array: Option<Box<[cl_queue_properties]>>,
}

/// A kernel's memory-object arguments, and how the kernel uses each.
#[derive(Clone, Debug, Default)]
pub struct KernelArgs {
    /// (argument index, memory object), as set now.
    pub mems: Vec<(u32, usize)>,
    /// (argument index, how it is used), judged once per argument.
    pub judged: Vec<(u32, Access)>,
}

/// A program as clxfer keeps it (`programs.rs`).
#[derive(Clone, Debug, Default)]
pub struct Program {
    /// The text, until it is read.
    pub(super) source: Option<Arc<str>>,
    /// The last build's or compile's options.
    pub(super) options: String,
    /// Its kernels, once read (a linked program's from the start).
    pub(super) kernels: Option<Arc<Vec<Kernel>>>,
}
