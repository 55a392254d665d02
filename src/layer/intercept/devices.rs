//! The devices clxfer meets: profiled from the driver the first time, numbered, given their
//! rules and clock mapping, and named in the trace.

use super::state::{Device, MAX_HANDLES, WORLD};
use crate::layer::driver;
use crate::model::rules;
use crate::sink::buffer;
use crate::sink::record::{DeviceTrack, Record};
use crate::sync::Padded;
use crate::timing::mapping::ClockMap;
use crate::units;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// The profile and rules of `device`, read from the driver the first time.
pub(super) fn device(device: usize) -> Option<Arc<Device>> {
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
pub(super) fn devices_by_index() -> Vec<(usize, Arc<Device>)> {
    let mut devices: Vec<(usize, Arc<Device>)> = WORLD
        .devices
        .read()
        .iter()
        .map(|(&h, d)| (h, d.clone()))
        .collect();
    devices.sort_by_key(|(_, d)| d.profile.index);
    devices
}
