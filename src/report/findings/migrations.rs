//! The findings on migrations and hand-offs between devices: through the host, moving nothing,
//! and a buffer handed back and forth.

use super::super::Finding;
use super::super::acc::{DeviceAcc, Sum};
use super::judge::*;
use crate::model::classification::HandOff;
use crate::model::rules::RuleSet;
use crate::units::{bytes, duration, gbps};

/// Migrations through the host, and migrations that moved nothing.
pub(super) fn migrations(j: &mut Judge) {
    let (d, set) = (j.d, j.set);
    let on = j.on.clone();
    let measured = |s: &Sum| shown(s, replacing(d).is_some());
    let mut push = |kind, title, evidence, fix, saving_ns, estimate| {
        j.push(kind, title, evidence, fix, (saving_ns, estimate))
    };
    let s = &d.via_host_migrations;
    if s.count > 0 {
        let mut evidence = vec![
            measured(s),
            format!(
                "{} ({}.between-devices)",
                set.between_devices.says, set.name
            ),
        ];
        // Never a bandwidth or a saving from a time the driver did not give.
        let untimed = s.bytes.saturating_sub(s.timed_bytes);
        if untimed > 0 {
            evidence.push(format!(
                "{} of them moved without a device time: {}",
                bytes(untimed),
                match set.borrowed_times {
                    Some(r) => format!("the driver does not time migrations ({})", r.id),
                    None => "the driver gave none".into(),
                }
            ));
        }
        // A move without a time of its own (NVIDIA's) is projected by the rules' one model of
        // a move through the host, where they have one; under forced rules the projection is
        // already the time.
        let (saving, estimate) = match (s.ns, through_host(set, s.bytes), replacing(d)) {
            (ns, _, Some(p)) if ns > 0 => (
                ns,
                format!("projected: the moves' device time by {}", model(&p)),
            ),
            (0, Some((ns, how)), _) => (ns, format!("projected: {how}")),
            (0, None, _) => (
                0,
                "not measured: the moves had no time of their own (their cost shows in the \
                 host's waits and in when the next commands start)"
                    .into(),
            ),
            (ns, ..) => (ns, "the migrations' own time".into()),
        };
        // The same bytes copied by the program through pinned memory, where the rules' model
        // prices both pinned links: offered only where it is faster than the moves.
        let (fix, saving, estimate) = match pinned_copy(set, s) {
            Some((ns, how)) if ns < saving => (
                format!(
                    "Copy it yourself through pinned memory: clEnqueueReadBuffer on the source \
                     device's queue into a mapped CL_MEM_ALLOC_HOST_PTR buffer, then \
                     clEnqueueWriteBuffer from it on the destination's queue, waiting on the \
                     read's event ({how}). Or keep each buffer on one device and move only what \
                     the devices share; there is no peer-to-peer path here."
                ),
                saving - ns,
                format!(
                    "{estimate}, less a projected {} for the copy through pinned memory",
                    duration(ns)
                ),
            ),
            _ => (
                "Keep each buffer on one device: give each device its own buffers and move only \
                 what they share, or do the whole job on one device; there is no peer-to-peer \
                 path here."
                    .into(),
                saving,
                estimate,
            ),
        };
        push(
            FindingKind::ViaHostMigration,
            format!(
                "{} between devices went through the host on {on}",
                counted(s.count, "migration")
            ),
            evidence,
            fix,
            saving,
            estimate,
        );
    }
    let s = &d.empty_migrations;
    if s.count > 0 && !set.unified.value && set.migrate.value.is_marker(0) {
        push(
            FindingKind::EmptyMigration,
            format!(
                "{} with flags 0 moved nothing on {on}",
                counted(s.count, "clEnqueueMigrateMemObjects call")
            ),
            vec![
                format!("{}, {} named", counted(s.count, "call"), bytes(s.bytes)),
                format!("{} ({}.migrate)", set.migrate.says, set.name),
            ],
            "Do not count on them to prefetch: the data moves at its first use, inside the next \
             kernel or transfer. Move it ahead of time with clEnqueueWriteBuffer or \
             clEnqueueCopyBuffer, or pass CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED when the \
             contents are not needed."
                .into(),
            0,
            "the move's cost shows up later, in the command that first uses the data".into(),
        );
    }
}

/// What the moves of `s` cost the program's own way instead, a read into pinned memory and a
/// write on, by the rules' pinned links (each move its mean size), and how that is said, with
/// the staging buffer's memory by the rules: `None` where the model lacks a pinned link.
fn pinned_copy(set: &RuleSet, s: &Sum) -> Option<(u64, String)> {
    use crate::model::rules::Placement;
    let c = set.cost.as_ref()?;
    let each = s.bytes.checked_div(s.count)?;
    let [h2d, d2h] = c.pinned;
    let one = d2h?.time_ns(each)? + h2d?.time_ns(each)?;
    let ns = (one * s.count as f64).round() as u64;
    let storage = match set.alloc_host_ptr.value {
        Placement::Device => format!(
            "; the staging buffer, {} of pinned memory, takes as much device memory ({})",
            bytes(each),
            set.alloc_host_ptr.id
        ),
        Placement::Host => format!("; the staging buffer, {} of pinned memory", bytes(each)),
    };
    Some((
        ns,
        format!(
            "projected {} for {}, by the {} cost model's pinned links, ~{} GB/s to the host and \
             ~{} GB/s on{storage}",
            duration(ns),
            bytes(s.bytes),
            set.name,
            gbps(d2h?.gbps_at(each)),
            gbps(h2d?.gbps_at(each)),
        ),
    ))
}

/// What moving `bytes` from one device to another through the host costs by the rules' one
/// model of it (both legs of `Cost::legs`), and how that is said; `None` where the rules have
/// no figures for the legs.
fn through_host(set: &RuleSet, n: u64) -> Option<(u64, String)> {
    let c = set.cost.as_ref()?;
    let ns = c.via_host_ns(n)?;
    let leg = |l: Option<crate::model::cost::Link>| l.map_or(0.0, |l| l.gbps_at(n));
    Some((
        ns,
        format!(
            "{} through the host at the {} cost model's legs: to it at ~{} GB/s, on to the \
             device at ~{} GB/s (docs/RULES.md)",
            bytes(n),
            set.name,
            gbps(leg(c.legs[1])),
            gbps(leg(c.legs[0])),
        ),
    ))
}

/// Which form of a hand-off is better on the rules' devices, and by how much: the HOST form's
/// two hops against a flags-0 migration's move of the same `n` bytes, costed by one model
/// ([`through_host`]); and the saving that makes. Where the rules have no figures, or cannot
/// rank the forms, it says so.
fn hand_off_verdict(set: &RuleSet, n: u64) -> (String, (u64, String)) {
    use crate::model::rules::CrossDevice;
    let id = set.between_devices.id;
    match (set.between_devices.value, through_host(set, n)) {
        (CrossDevice::Peer, _) => (
            format!(
                "on {} devices a flags-0 migration goes peer-to-peer ({id}); the HOST form \
                 always goes through the host, twice",
                set.name
            ),
            (
                0,
                "not projected: the rules have no figure for the peer path".into(),
            ),
        ),
        (CrossDevice::Shared, _) => (
            format!("on {} devices both forms move nothing ({id})", set.name),
            (0, "no time: the devices share memory".into()),
        ),
        (CrossDevice::ViaHost, Some((ns, how))) => (
            format!(
                "which form is better on {} devices: flags 0. There is no peer path ({id}), so \
                 both forms take the same two legs, {} ({how}); flags 0 is not slower, makes \
                 one command of the two and moves the buffer before the command that needs it, \
                 not inside its launch. The {} figures rank them no further (the move between \
                 two GPUs was measured once)",
                set.name,
                duration(ns),
                set.name
            ),
            (
                0,
                format!(
                    "no time by the {} cost model: the same two legs either way ({}); the \
                     fix is about moving once, ahead of the use",
                    set.name,
                    duration(ns)
                ),
            ),
        ),
        (CrossDevice::ViaHost, None) => (
            format!(
                "{} devices move buffers between them through the host ({id}); the {} rules \
                 have no figures for these moves, so clxfer cannot say which form is faster",
                set.name, set.name
            ),
            (
                0,
                "not projected: the rules have no figures for moves through the host".into(),
            ),
        ),
    }
}

/// Hand-offs between devices gone wrong (issue #25): a HOST migration where a device-to-device
/// one was meant, a migration on the queue of the device that already held the buffer, and one
/// buffer initialised on two devices.
pub(super) fn hand_offs(d: &DeviceAcc, to_host: &Sum, out: &mut Vec<Finding>) {
    let dev = d.facts.index;
    let push = |out: &mut Vec<Finding>,
                (kind, title): (FindingKind, String),
                evidence: Vec<String>,
                fix: &str,
                saving: (u64, String)| {
        out.push(finding(kind, dev, title, evidence, fix.into(), saving));
    };
    let s = &d.hand_offs[HandOff::HostHop as usize];
    if s.count > 0 {
        let set = rules_of(d);
        let first = match to_host.count {
            0 => "no migration to the host moved data".to_string(),
            _ => format!(
                "first hop, device to host: the run's HOST migrations, {} of them",
                bytes(to_host.bytes)
            ),
        };
        let (verdict, saving) = hand_off_verdict(set, s.bytes);
        push(
            out,
            (
                FindingKind::HostHopMigration,
                format!(
                    "{} on device #{dev} brought buffers back from the host, where a HOST \
                     migration had taken them off another device",
                    counted(s.count, "command")
                ),
            ),
            vec![
                first,
                format!(
                    "second hop, host to device #{dev}: {}, {}, inside those commands (a \
                     kernel's pull is part of its launch, so it cannot overlap other work)",
                    counted(s.count, "call"),
                    bytes(s.bytes)
                ),
                "CL_MIGRATE_MEM_OBJECT_HOST moves the contents to the host, not to the other \
                 device (any.host-hop)"
                    .into(),
                verdict,
            ],
            "To hand a buffer from one device to another, enqueue clEnqueueMigrateMemObjects \
             with flags 0 on the queue of the device that uses it next, waiting for the last \
             writer's event: one move, ahead of the command that needs it.",
            saving,
        );
    }
    let s = &d.hand_offs[HandOff::IdleMigration as usize];
    if s.count > 0 {
        push(
            out,
            (
                FindingKind::MigrationOnSourceQueue,
                format!(
                    "{} on device #{dev} pulled buffers through the host that a migration had \
                     not moved: it was enqueued on the device that already held them",
                    counted(s.count, "command")
                ),
            ),
            vec![
                format!(
                    "the pulls: {}, {}, inside those commands",
                    counted(s.count, "call"),
                    bytes(s.bytes)
                ),
                "clEnqueueMigrateMemObjects moves objects to the device of the queue it is \
                 enqueued on (any.idle-migration)"
                    .into(),
            ],
            &format!(
                "Enqueue the migration on a queue of device #{dev} (the device that uses the \
                 buffer next), waiting for the last writer's event: the move then happens \
                 ahead, where it can overlap other work, instead of inside the command."
            ),
            (
                0,
                "no time by itself: the move remains, but leaves the command's launch".into(),
            ),
        );
    }
    let s = &d.hand_offs[HandOff::WrittenTwice as usize];
    if s.count > 0 {
        push(
            out,
            (
                FindingKind::InitialisedTwice,
                format!(
                    "{} on device #{dev} rewrote whole buffers just written on another device, \
                     with no use between",
                    counted(s.count, "write")
                ),
            ),
            vec![
                format!("the second writes: {}", measured(s)),
                "one of each pair of writes is wasted (any.written-twice)".into(),
            ],
            "Write each buffer once, on the device that uses it first, and migrate it \
             (flags 0, on the other device's queue) when the other needs it.",
            (s.ns, "the second writes' measured time".into()),
        );
    }
}
