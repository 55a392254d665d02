//! What the room tells at the program's end: the trace's last event about the devices, and at
//! info level what their buffers occupied.

use super::devices::devices_by_index;
use super::state::{QueueInfo, WORLD};
use super::{completion, events};
use crate::sink::record::{DeviceEnd, End};
use crate::units;
use std::sync::Arc;

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
                    staged_region: memory.staged_region(*handle),
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
