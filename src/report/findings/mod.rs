//! What to change, from the sums the builder kept: each finding has its evidence, the fix as an
//! API change, and the time it would save, estimated from this run's own pinned bandwidth (or,
//! when the run measured none, the vendor's reference figure from the rule set, said so).

//!
//! In layers: `judge.rs` (what a device is judged by, how savings are estimated and worded) at
//! the bottom; a file per family of findings above it (`transfers.rs`, `memory.rs`,
//! `migrations.rs`); here, the order they are made in.

mod fixes;
mod judge;
mod memory;
mod migrations;
mod queues;
mod transfers;

pub(super) use judge::{finding, rules_of};

use super::Finding;
use super::acc::{DeviceAcc, Sum};
use super::bounds::Graph;
use crate::model::rules;
use judge::*;

/// Every finding of every device, the largest saving first.
pub fn all<'a>(devices: impl Iterator<Item = &'a DeviceAcc>, graph: &Graph) -> Vec<Finding> {
    let devices: Vec<&DeviceAcc> = devices.collect();
    // A hand-off's first hop may be on another device's queue than its second.
    let mut to_host = Sum::default();
    for d in &devices {
        to_host.merge(&d.to_host_migrations);
    }
    let mut out = Vec::new();
    for d in devices {
        device(&mut Judge::new(d, graph, &mut out));
        migrations::hand_offs(d, &to_host, &mut out);
    }
    // Stable: equal savings keep the order of the list below (the order).
    out.sort_by_key(|f| std::cmp::Reverse(f.saving_ns));
    out
}

/// One device's findings, in the order equal savings keep.
fn device(j: &mut Judge) {
    transfers::staged(j);
    transfers::held_host(j);
    transfers::map_write(j);
    memory::host_visible(j);
    migrations::migrations(j);
    transfers::small(j);
    transfers::misaligned(j);
    queues::held_by_order(j);
    implausible(j);
    unavailable(j);
}

/// Device times no device can take (issue #56): set aside, said once, naming the device.
fn implausible(j: &mut Judge) {
    let d = j.d;
    let i = &d.implausible;
    if i.commands == 0 {
        return;
    }
    let mut evidence = Vec::new();
    if let Some((gbps, bytes, ns)) = i.fastest {
        evidence.push(format!(
            "{} in {} ({} GB/s), beyond the {:.0} GB/s no device's memory reaches",
            crate::units::bytes(bytes),
            crate::units::duration(ns),
            crate::units::gbps(gbps),
            crate::model::device::MAX_GBPS
        ));
    }
    if i.instant > 0 {
        evidence.push(format!(
            "{} of a nanosecond or less, below any driver's timer",
            counted(i.instant, "command")
        ));
    }
    evidence.push(
        "no table, bandwidth, busy time, path or saving uses them: the transfers among them \
         count as without a device time, timed by their host time where they blocked"
            .into(),
    );
    let name = crate::units::clip(&d.facts.name, 40);
    let title = format!(
        "the driver of device #{} ({name}) reported device times no device can take, for {}",
        d.facts.index,
        counted(i.commands, "command")
    );
    evidence.push(
        "either its profiling times are not measurements, or it did not move the bytes it was \
         asked to (a migration between devices that share host memory)"
            .into(),
    );
    j.push(
        FindingKind::DeviceTimeImplausible,
        title,
        evidence,
        "Nothing to change in the program: this driver's profiling times are not \
         measurements. Time on another driver of the device, or read the host times."
            .into(),
        (0, "accuracy, not time".into()),
    );
}

/// Device time unavailable (in a trace cut short, not known: a command's device slice may lie
/// beyond the cut).
fn unavailable(j: &mut Judge) {
    let d = j.d;
    let on = j.on.clone();
    let mut push = |kind, title, evidence, fix, saving_ns, estimate| {
        j.push(kind, title, evidence, fix, (saving_ns, estimate))
    };
    // Implausible times are their own finding.
    let n = d
        .without_device_time
        .saturating_sub(d.implausible.transfers);
    if n > 0 && d.end.is_some() {
        push(
            FindingKind::DeviceTimeUnavailable,
            format!(
                "{} on {on} {} no device time",
                counted(n, "transfer"),
                if n == 1 { "has" } else { "have" }
            ),
            vec![
                format!(
                    "blocking ones are timed by their host time instead ({}); non-blocking ones \
                     have no bandwidth ({})",
                    d.host_time_used.min(n),
                    n.saturating_sub(d.host_time_used)
                ),
                "causes: a queue the driver would not profile, CLXFER_DEVICE_TIMING=off, a \
                 profiling query that failed or reported 0 (NVIDIA does for migrations), or a \
                 command still running at the end"
                    .into(),
            ],
            "Nothing to change in the program; these rows are less exact. To time every \
             command, let clxfer enable profiling (CLXFER_DEVICE_TIMING=all) and finish the \
             queues (clFinish) before exit."
                .into(),
            0,
            "accuracy, not time".into(),
        );
    }
}

/// Functions the program asked for and did not get: one finding for those no implementation has
/// (a porting guide's advice), one for those this platform does not offer (often a probe, which
/// is fine; listed so that a port that counts on them learns why they are missing).
pub fn missing(names: &[String]) -> Vec<Finding> {
    let mut out = Vec::new();
    let none = "no time: the function is not there to call";
    let finding =
        |kind, title, evidence, fix| finding(kind, 0, title, evidence, fix, (0, none.into()));
    let (fictions, lacking): (Vec<&String>, Vec<&String>) = names
        .iter()
        .partition(|n| rules::no_such_function(n).is_some());
    for name in fictions {
        let why = rules::no_such_function(name).unwrap_or_default();
        out.push(finding(
            FindingKind::NoSuchFunction,
            format!("the program asked for {name}, a function no OpenCL implementation has"),
            vec![why.to_string()],
            format!(
                "To have host memory the driver can DMA from, use {}.",
                rules::HOST_REGISTRATION
            ),
        ));
    }
    if !lacking.is_empty() {
        let list: Vec<&str> = lacking.iter().take(8).map(|s| s.as_str()).collect();
        let more = lacking.len().saturating_sub(list.len());
        out.push(finding(
            FindingKind::FunctionNotOffered,
            format!(
                "the program asked for {} this platform does not offer",
                counted(lacking.len() as u64, "extension function")
            ),
            vec![format!(
                "{}{}: clGetExtensionFunctionAddress(ForPlatform) returned NULL",
                list.join(", "),
                match more {
                    0 => String::new(),
                    n => format!(" and {n} more"),
                }
            )],
            "Nothing, if the program only probes for them; a port that counts on them needs \
             the extension that provides them (clGetPlatformInfo(CL_PLATFORM_EXTENSIONS) lists \
             what this platform has)."
                .into(),
        ));
    }
    out
}
