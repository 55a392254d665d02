//! The hooks that feed the memory model: object creation and destruction, queues, kernel
//! arguments, SVM/USM allocations (`objects.rs`), and every transfer-like command
//! (`commands.rs`, `map.rs`). Each classified command is reported here.
//!
//! Shared state is a few maps behind short locks; clxfer never calls the driver while holding one
//! (a driver callback, such as a destructor, may take them).

mod collect;
mod commands;
mod completion;
mod enqueue;
mod events;
mod finish;
pub mod fork;
mod graph;
mod hidden;
mod map;
mod objects;
mod pending;
mod programs;
mod queues;
mod races;
mod waits;

/// A host synchronisation point: the race check's clocks learn what completed.
pub use races::synced as host_synced;

pub use commands::*;
pub use enqueue::{Command, Enqueue, Marker, Timed};
pub use events::{EnqueueArgs, forget_after_fork};
pub use graph::{CallbackSet, EventAsked, EventHeld, UserEventCreated, UserEventSet, WaitList};
pub use hidden::{
    ContextQueried, EventQueried, MemQueried, ProfilingQueried, QueuePropertySet, QueueQueried,
};
pub use map::*;
pub use objects::*;
pub use programs::{ProgramBuilt, ProgramLinked, ProgramSource};
pub use queues::QueueCreated;
pub use waits::{Finished, Ordered, WaitedFor};

use super::{Hook, Span, driver};
use crate::model::device::DeviceProfile;
use crate::model::memory::Registry;
use crate::model::rules;
use crate::sink::buffer;
use crate::sink::record::{DeviceEnd, DeviceTrack, End, Record};
use crate::sync::{Mutex, Padded, RwLock};
use crate::timing::mapping::ClockMap;
use crate::units;
use queues::QueueInfo;
use rustc_hash::FxBuildHasher;
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
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
const MAX_HANDLES: usize = 1 << 16;

#[derive(Default)]
struct World {
    memory: Mutex<Registry>,
    devices: RwLock<HashMap<usize, Arc<Device>>>,
    queues: RwLock<HashMap<usize, Arc<QueueInfo>, FxBuildHasher>>,
    /// Context → devices.
    contexts: RwLock<HashMap<usize, Vec<usize>>>,
    /// Kernel → its memory-object arguments.
    kernels: Mutex<HashMap<usize, objects::KernelArgs>>,
    /// Kernel → function name.
    kernel_names: Mutex<HashMap<usize, Arc<str>>>,
    /// Program → its source, or the kernels read from it.
    programs: Mutex<HashMap<usize, programs::Program>>,
    /// The events the program holds, and the commands they stand for.
    events: Mutex<crate::graph::events::Events>,
}

static WORLD: LazyLock<World> = LazyLock::new(World::default);

fn bounded_insert<V, S: std::hash::BuildHasher>(
    map: &mut HashMap<usize, V, S>,
    key: usize,
    value: V,
) {
    if map.len() >= MAX_HANDLES && !map.contains_key(&key) {
        map.clear();
    }
    map.insert(key, value);
}

/// The profile and rules of `device`, read from the driver the first time.
fn device(device: usize) -> Option<Arc<Device>> {
    if let Some(known) = WORLD.devices.read().get(&device) {
        return Some(known.clone());
    }
    // SAFETY: `device` came from a call the driver accepted.
    let mut profile = unsafe { driver::device_profile(device as _, 0) };
    let forced = crate::config::global().rules;
    let rules = forced.unwrap_or_else(|| rules::for_device(&profile));
    let clock = match profile.host_timer {
        // SAFETY: as above; the timer exists (the profile tried it).
        true => unsafe { driver::device_timer(device as _) }
            .map(|(before, d, after)| ClockMap::calibrated(before, d, after)),
        false => None,
    }
    .unwrap_or_else(ClockMap::estimate);
    let mut devices = WORLD.devices.write();
    if let Some(known) = devices.get(&device) {
        return Some(known.clone());
    }
    if devices.len() >= MAX_HANDLES {
        devices.clear();
    }
    profile.index = devices.len() as u32 + 1;
    crate::info!(
        "{}: {}, {} {}, {}, OpenCL {}.{}: rules {} ({}), clock mapping {}",
        profile.label(),
        profile.vendor,
        profile.kind.as_str(),
        if profile.host_unified {
            "unified memory"
        } else {
            "discrete memory"
        },
        units::bytes(profile.global_mem),
        profile.version.0,
        profile.version.1,
        rules.name,
        if forced.is_some() {
            "CLXFER_RULES"
        } else {
            "auto"
        },
        clock.method.as_str()
    );
    let track = DeviceTrack {
        index: profile.index,
        name: profile.name.clone(),
        vendor: profile.vendor.clone(),
        kind: profile.kind.as_str(),
        rules: rules.name,
        auto_rules: rules::for_device(&profile).name,
        global_mem: profile.global_mem,
        memory_given: crate::config::global().device_memory,
        host_import: profile.host_import,
    };
    let entry = Arc::new(Device {
        handle: device,
        profile,
        rules,
        clock,
        unavailable: Padded::default(),
        untimed: Padded::default(),
        sampled: AtomicU64::default(),
        own: Padded::default(),
        answers_unprofiled: std::sync::OnceLock::new(),
    });
    devices.insert(device, entry.clone());
    drop(devices);
    buffer::push_now(Record::Device(Box::new(track)));
    Some(entry)
}

/// Every device clxfer met (handle and what it knows), in the order it numbered them.
fn devices_by_index() -> Vec<(usize, Arc<Device>)> {
    let mut devices: Vec<(usize, Arc<Device>)> = WORLD
        .devices
        .read()
        .iter()
        .map(|(&h, d)| (h, d.clone()))
        .collect();
    devices.sort_by_key(|(_, d)| d.profile.index);
    devices
}

/// What the trace's last event says about the devices.
pub fn end() -> End {
    use std::sync::atomic::Ordering::Relaxed;
    let queues: Vec<Arc<QueueInfo>> = WORLD.queues.read().values().cloned().collect();
    // What completed without the program waiting on its own queue (it waited on another
    // queue's command that depended on it, or on nothing) is collected now, with its device
    // time. Not when a signal ends the run: a collector may be the very thread it stopped.
    if crate::layer::signals::ending().is_none() {
        for q in &queues {
            // SAFETY: the queue's waiting events are live (clxfer holds a reference to each).
            unsafe { completion::synced(q, 0) };
        }
    }
    let incomplete = events::report_waiting(&queues);
    let devices = devices_by_index();
    let memory = WORLD.memory.lock();
    End {
        host_calls: crate::sink::host_calls::snapshot(),
        at: crate::timing::clock::now_ns(),
        signal: crate::layer::signals::ending().map(crate::sigset::name),
        pinned_peak: memory.pinned_bytes().peak,
        devices: devices
            .iter()
            .map(|(handle, d)| {
                let clock = &d.clock;
                DeviceEnd {
                    index: d.profile.index,
                    name: d.profile.name.clone(),
                    rules: d.rules.name,
                    clock: clock.method.as_str(),
                    corrections: clock.corrections(),
                    unavailable: d.unavailable.load(Relaxed),
                    untimed: d.untimed.load(Relaxed),
                    timing: crate::report::TimingFacts {
                        timed: d.own.timed.load(Relaxed),
                        own_events: d.own.supplied.load(Relaxed),
                        callbacks: d.own.callbacks.load(Relaxed),
                        // Forgotten queues' counts, and the live ones'.
                        sampled: d.sampled.load(Relaxed)
                            + (queues.iter())
                                .filter(|q| q.device_handle == *handle)
                                .map(|q| q.sampled.load(Relaxed))
                                .sum::<u64>(),
                        toggles: d.own.toggles.load(Relaxed),
                        toggle_ns: d.own.toggle_ns.load(Relaxed),
                        driver_ns: d.own.driver_ns.load(Relaxed),
                    },
                    resident_peak: memory.device_bytes(*handle).peak,
                    alloc_host_ptr_peak: memory.alloc_host_ptr_device_bytes(*handle).peak,
                    alloc_host_ptr_buffers: memory.alloc_host_ptr_buffers(*handle).peak,
                    svm_peak: memory.svm_device_bytes(*handle).peak,
                }
            })
            .collect(),
        incomplete,
        own: {
            let (calls, measured, measured_ns) = crate::sink::own::totals();
            crate::report::OwnFacts {
                calls,
                measured,
                measured_ns,
                // The writer's, filled in on its thread.
                writer_cpu_ns: 0,
                held_ns: 0,
                held: 0,
            }
        },
    }
}

/// At exit (info level): what each device's buffers occupy by its vendor's rules, against its
/// memory size, and the peak of pinned or registered host memory.
pub fn report_memory() {
    if !crate::diag::enabled(crate::config::LogLevel::Info) {
        return;
    }
    let devices = devices_by_index();
    if devices.is_empty() {
        return;
    }
    let memory = WORLD.memory.lock();
    for (handle, d) in devices {
        let used = memory.device_bytes(handle);
        crate::info!(
            "device #{} memory ({} rules): buffers {} now, peak {}, of {}",
            d.profile.index,
            d.rules.name,
            units::bytes(used.now),
            units::bytes(used.peak),
            units::bytes(d.profile.global_mem)
        );
    }
    let pinned = memory.pinned_bytes();
    crate::info!(
        "pinned or registered host memory: peak {}",
        units::bytes(pinned.peak)
    );
}
