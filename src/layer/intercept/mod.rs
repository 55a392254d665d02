//! The hooks that feed the memory model: object creation and destruction, queues, kernel
//! arguments, SVM/USM allocations (`objects.rs`), and every transfer-like command
//! (`commands.rs`, `map.rs`). Each classified command is reported here.
//!
//! Shared state is a few maps behind short locks; clxfer never calls the driver while holding one
//! (a driver callback, such as a destructor, may take them).

mod commands;
mod map;
mod objects;

pub use commands::*;
pub use map::*;
pub use objects::*;

use super::{Call, Hook, driver};
use crate::model::classification::{Classification, Path};
use crate::model::classify::{self, Op, Request};
use crate::model::device::DeviceProfile;
use crate::model::memory::Registry;
use crate::model::{effects, rules};
use crate::units;
use opencl_sys::{CL_SUCCESS, cl_command_queue, cl_int};
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, LazyLock};

/// A device clxfer has profiled, with the rules that classify its commands.
pub struct Device {
    pub profile: DeviceProfile,
    pub rules: &'static rules::RuleSet,
}

/// Queues, contexts, kernels and devices beyond this many are forgotten (the map is cleared and
/// refilled by queries): handles are never freed visibly, so these maps must not grow forever.
const MAX_HANDLES: usize = 1 << 16;

#[derive(Default)]
struct World {
    memory: Mutex<Registry>,
    devices: RwLock<HashMap<usize, Arc<Device>>>,
    /// Queue → device.
    queues: RwLock<HashMap<usize, usize>>,
    /// Context → devices.
    contexts: RwLock<HashMap<usize, Vec<usize>>>,
    /// Kernel → (argument index, memory object).
    kernels: Mutex<HashMap<usize, Vec<(u32, usize)>>>,
}

static WORLD: LazyLock<World> = LazyLock::new(World::default);

fn bounded_insert<V>(map: &mut HashMap<usize, V>, key: usize, value: V) {
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
    let mut devices = WORLD.devices.write();
    if devices.len() >= MAX_HANDLES {
        devices.clear();
    }
    profile.index = devices.len() as u32 + 1;
    let entry = devices.entry(device).or_insert_with(|| {
        crate::info!(
            "{}: {}, {} {}, {}, OpenCL {}.{}: rules {} ({})",
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
            }
        );
        Arc::new(Device { profile, rules })
    });
    Some(entry.clone())
}

/// The device of a queue the driver accepted.
fn queue_device(queue: usize) -> Option<usize> {
    if let Some(&device) = WORLD.queues.read().get(&queue) {
        return Some(device);
    }
    // SAFETY: the queue came from a call the driver accepted.
    let device = unsafe { driver::queue_device(queue as cl_command_queue) }?;
    bounded_insert(&mut WORLD.queues.write(), queue, device);
    Some(device)
}

/// Classifies a command the driver accepted on `queue`, updates the model, reports it.
fn record(call: Call, queue: usize, blocking: bool, op: Op) {
    let Some(handle) = queue_device(queue) else {
        return;
    };
    let Some(dev) = device(handle) else {
        return;
    };
    let req = Request {
        op,
        device: handle,
        blocking,
    };
    let c = {
        let mut memory = WORLD.memory.lock();
        let c = classify::classify(&req, &memory, &dev.profile, dev.rules);
        effects::apply(&req, &mut memory, dev.rules, &dev.profile);
        c
    };
    // A kernel is reported only when it moves a buffer.
    if matches!(req.op, Op::Kernel { .. }) && c.path == Path::None {
        return;
    }
    report(call, Some(&dev), &c);
}

/// A command the driver refused; the queue is not queried (it may be invalid).
fn refused(call: Call, queue: usize, blocking: bool, code: Option<cl_int>) {
    let known = WORLD.queues.read().get(&queue).copied();
    let dev = known.and_then(|d| WORLD.devices.read().get(&d).cloned());
    let rules = dev.as_ref().map_or(&rules::GENERIC, |d| d.rules);
    report(
        call,
        dev.as_deref(),
        &classify::refused(code, blocking, rules),
    );
}

fn report(call: Call, dev: Option<&Device>, c: &Classification) {
    crate::sink::transfers::record(c);
    match dev {
        Some(d) => crate::debug!(
            "{} on device #{}: {}",
            call.api.name(),
            d.profile.index,
            c.line()
        ),
        None => crate::debug!("{} on an unknown device: {}", call.api.name(), c.line()),
    }
}

/// A transfer-like command: where its queue is, whether it blocks, and what it does.
pub trait Command<A> {
    fn queue(args: &A) -> cl_command_queue;
    fn blocking(_args: &A) -> bool {
        false
    }
    /// # Safety
    /// The driver accepted `args`, so the arrays they point to are valid.
    unsafe fn op(args: &A) -> Option<Op>;
}

/// The hook of every enqueue that returns a `cl_int`: classify on success, note the error else.
pub struct Enqueue<C>(PhantomData<C>);

impl<A, C: Command<A>> Hook<A, cl_int> for Enqueue<C> {
    type State = Call;
    unsafe fn before(call: Call, _: &mut A) -> Call {
        call
    }
    unsafe fn after(call: Call, args: &A, ret: cl_int) -> cl_int {
        let queue = C::queue(args) as usize;
        if ret != CL_SUCCESS {
            refused(call, queue, C::blocking(args), Some(ret));
        } else if let Some(op) = unsafe { C::op(args) } {
            record(call, queue, C::blocking(args), op);
        }
        ret
    }
}

/// At exit (info level): what each device's buffers occupy by its vendor's rules, against its
/// memory size, and the peak of pinned or registered host memory.
pub fn report_memory() {
    if !crate::diag::enabled(crate::config::LogLevel::Info) {
        return;
    }
    let mut devices: Vec<(usize, Arc<Device>)> = WORLD
        .devices
        .read()
        .iter()
        .map(|(&h, d)| (h, d.clone()))
        .collect();
    if devices.is_empty() {
        return;
    }
    devices.sort_by_key(|(_, d)| d.profile.index);
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
