//! What to change, from the sums the builder kept: each finding has its evidence, the fix as an
//! API change, and the time it would save, estimated from this run's own pinned bandwidth (or,
//! when the run measured none, the vendor's reference figure from the rule set, said so).

use super::Finding;
use super::acc::{DeviceAcc, Projecting, SMALL, Sum};
use super::bounds::Graph;
use super::facts::HandOff;
use super::replay::Fix;
use crate::model::classification::{Direction, Path};
use crate::model::rules::{self, RuleSet};
use crate::units::{bytes, duration, gbps};

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
        device(d, graph, &mut out);
        hand_offs(d, &to_host, &mut out);
    }
    // Stable: equal savings keep the order of the list below (the order).
    out.sort_by_key(|f| std::cmp::Reverse(f.saving_ns));
    out
}

fn rules_of(d: &DeviceAcc) -> &'static RuleSet {
    rules::by_name(&d.facts.rules).unwrap_or(&rules::GENERIC)
}

/// "the nvidia cost model (an NVIDIA H200 …; docs/RULES.md)": whose figures a projection uses
/// (each figure's source is in docs/RULES.md).
fn model(p: &Projecting) -> String {
    format!(
        "the {} cost model ({}; docs/RULES.md)",
        p.set.name,
        p.cost.map_or("none", |c| c.on)
    )
}

/// The projection standing in for this device's times (forced rules), if any.
fn replacing(d: &DeviceAcc) -> Option<Projecting> {
    d.projecting.filter(|p| p.replaces)
}

/// A fix's saving as the run would see it: its commands' own saving (`ns`, estimated as `how`)
/// replaced by what the command graph, replayed with the fix, says the run's wall time loses
/// (`replay.rs`): nothing for transfers that overlap others or that nothing waits for. Kept as
/// it is where the graph saw none of the commands (none had a device time).
///
/// Where sampled device timing left some of the calls untimed, the graph lacks their times: the
/// calls' own saving, scaled from the timed ones to all of them, stands instead.
fn replayed(
    d: &DeviceAcc,
    graph: &Graph,
    s: &Sum,
    (ns, how): (u64, String),
    fix: Fix,
) -> (u64, String) {
    if s.sampled > 0 && s.timed > 0 {
        return (
            s.extrapolated(ns),
            format!(
                "{how}; scaled from the {} of its {} calls sampled device timing timed (not \
                 replayed: the others have no device time)",
                s.timed,
                s.timed + s.sampled
            ),
        );
    }
    if s.ungraphed > 0 {
        return (
            ns,
            format!(
                "{how} (not replayed: sampled device timing left {} of its calls out of the \
                 command graph)",
                s.ungraphed
            ),
        );
    }
    match graph.saved(d.facts.index, fix).filter(|_| ns > 0) {
        Some(saved) => (
            saved,
            format!(
                "replayed: the run's command graph{} with the fix ends {} sooner (the commands' \
                 own saving: {}, {how})",
                if replacing(d).is_some() {
                    ", its durations projected,"
                } else {
                    ""
                },
                duration(saved),
                duration(ns)
            ),
        ),
        None => (ns, how),
    }
}

/// The pinned bandwidth to estimate with in `dir`, and how it was chosen.
fn pinned(d: &DeviceAcc, dir: Direction) -> (f64, String) {
    let figure = |set: &RuleSet| set.cost.and_then(|c| c.pinned.get(dir as usize).copied()?);
    if let Some(p) = replacing(d)
        && let Some(f) = figure(p.set)
    {
        return (
            f.peak(),
            format!(
                "projected: at {} GB/s, the pinned {} figure of {}",
                gbps(f.peak()),
                dir.as_str(),
                model(&p)
            ),
        );
    }
    let forced = d.forced;
    if let Some(best) = d.best_pinned[dir as usize].filter(|_| !forced) {
        return (
            best,
            format!(
                "at this run's best pinned {} bandwidth, {} GB/s",
                dir.as_str(),
                gbps(best)
            ),
        );
    }
    let set = rules_of(d);
    if set.unified.value
        && let Some(best) = d.best_any[dir as usize].filter(|_| !forced)
    {
        // No bus: the best a large transfer reached here is what batching can approach.
        return (
            best,
            format!(
                "at this run's best {} bandwidth for a transfer of 1 MiB or more, {} GB/s",
                dir.as_str(),
                gbps(best)
            ),
        );
    }
    let (f, whose) = match figure(set) {
        Some(f) => (f, set.name),
        None => (
            figure(&rules::GENERIC).expect("the generic set has a pinned figure"),
            "generic",
        ),
    };
    (
        f.peak(),
        format!(
            "at {} GB/s, the {whose} cost model's pinned {} figure ({}): {}",
            gbps(f.peak()),
            dir.as_str(),
            f.source,
            if forced {
                format!(
                    "the {} rules were forced on a device they do not describe, so its own \
                     bandwidth says nothing of such a device",
                    d.facts.rules
                )
            } else {
                format!(
                    "this run measured no pinned {} transfer of 1 MiB or more",
                    dir.as_str()
                )
            }
        ),
    )
}

/// Time saved if `s`'s timed bytes had moved at `bw` GB/s.
fn saving(s: &Sum, bw: f64) -> u64 {
    let ideal = if bw > 0.0 {
        (s.timed_bytes as f64 / bw) as u64
    } else {
        s.ns
    };
    s.ns.saturating_sub(ideal)
}

/// `1 call`, `12 calls`.
fn counted(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// `12 calls, 48.0 MiB, 12.3 ms (3.91 GB/s)`.
fn measured(s: &Sum) -> String {
    shown(s, false)
}

/// [`measured`], or `12 calls, 48.0 MiB, 12.3 ms projected (3.91 GB/s)` where the times are.
fn shown(s: &Sum, projected: bool) -> String {
    let mut t = format!("{}, {}", counted(s.count, "call"), bytes(s.bytes));
    if s.ns > 0 {
        t += &format!(", {}", duration(s.ns));
        if projected {
            t += " projected";
        }
        if s.timed_bytes > 0 {
            t += &format!(" ({} GB/s)", gbps(s.timed_bytes as f64 / s.ns as f64));
        }
        if s.sampled > 0 {
            t += &format!(
                " over the {} timed (sampled device timing left {} untimed)",
                s.timed, s.sampled
            );
        }
    }
    t
}

/// A finding on `device` that saves `saving_ns` (0: none), estimated as `estimate` says; its
/// `saves` is how the report shows both.
pub(super) fn finding(
    kind: &'static str,
    device: u32,
    title: String,
    evidence: Vec<String>,
    fix: String,
    (saving_ns, estimate): (u64, String),
) -> Finding {
    debug_assert!(
        super::KINDS.contains(&kind),
        "{kind} is not in report::KINDS"
    );
    let saves = match saving_ns {
        0 => estimate.clone(),
        ns => format!("~{}, {estimate}", duration(ns)),
    };
    Finding {
        kind,
        device,
        title,
        evidence,
        fix,
        saving_ns,
        estimate,
        saves,
        confidence: None,
        misuse: super::MISUSES.contains(&kind),
        minor: false,
        weighed: false,
    }
}

fn device(d: &DeviceAcc, graph: &Graph, out: &mut Vec<Finding>) {
    let set = rules_of(d);
    let dev = d.facts.index;
    let measured = |s: &Sum| shown(s, replacing(d).is_some());
    let on = format!("device #{dev} ({} rules)", set.name);
    // The findings whose saving is always an estimate of time (0 included).
    const TIME: [&str; 5] = [
        "staged-pageable",
        "nonblocking-held-host",
        "map-write-copied",
        "small-transfers",
        "misaligned",
    ];
    // Forced rules without a cost model: this device's times say nothing, and nothing projects.
    let unmodelled = replacing(d).filter(|p| p.cost.is_none()).map(|p| {
        format!(
            "not estimated: the {} rules have no cost model (docs/RULES.md), and this device's \
             times say nothing of such a device",
            p.set.name
        )
    });
    let mut push =
        |kind, title: String, evidence: Vec<String>, fix: String, saving_ns, estimate: String| {
            let time = TIME.contains(&kind);
            let saving = match &unmodelled {
                Some(why) if time => (0, why.clone()),
                _ => (saving_ns, estimate),
            };
            let mut f = finding(kind, dev, title, evidence, fix, saving);
            f.weighed = time && unmodelled.is_none();
            out.push(f)
        };

    // 1. Staged transfers from pageable memory.
    for dir in [Direction::H2D, Direction::D2H] {
        let s = &d.staged_pageable[dir as usize];
        if s.count == 0 {
            continue;
        }
        // Projected: the same calls over the pinned link, each with its floor (a small call
        // saves little); measured: the bytes at this run's best pinned bandwidth.
        let (saved, how) = match replacing(d).filter(|_| s.pinned_ns > 0) {
            Some(p) => (
                s.ns.saturating_sub(s.pinned_ns),
                format!(
                    "projected: the same calls over the pinned {} link of {}, {}",
                    dir.as_str(),
                    model(&p),
                    duration(s.pinned_ns)
                ),
            ),
            None => {
                let (bw, how) = pinned(d, dir);
                (saving(s, bw), how)
            }
        };
        let fix = match dir {
            Direction::H2D => Fix::PinnedH2D,
            _ => Fix::PinnedD2H,
        };
        let (saved, how) = replayed(d, graph, s, (saved, how), fix);
        let mut evidence = vec![
            measured(s),
            format!(
                "the host side is malloc'd (pageable) memory, which {} copies through a bounce \
                 buffer ({}.pageable)",
                set.title, set.name
            ),
        ];
        let mut fix = format!("Make the host side pinned: {}.", set.recipe);
        // The porting question: "is my mlock'd memory pinned?"
        let locked = &d.staged_locked[dir as usize];
        if locked.count > 0 {
            evidence.push(format!(
                "of them, {} ({}) from memory locked with mlock, which the driver is not told \
                 of: locked is not pinned (any.mlocked)",
                counted(locked.count, "transfer"),
                bytes(locked.bytes)
            ));
            fix.push_str(
                " mlock does not help (and OpenCL has no call to register host memory: \
                 clEnqueueMemObjectRegisterKHR exists in no implementation); the driver pins \
                 only memory it allocates or is given as a buffer's own.",
            );
        }
        push(
            "staged-pageable",
            format!(
                "{} from pageable memory {} staged on {on}",
                counted(s.count, &format!("{} transfer", dir.as_str())),
                if s.count == 1 { "was" } else { "were" }
            ),
            evidence,
            fix,
            saved,
            how,
        );
    }

    // 2. Non-blocking transfers from pageable memory that held the host anyway.
    let s = &d.held_host;
    if s.count > 0 {
        let mut evidence = vec![measured(s)];
        // This device's time in the calls, where it says something of the rules' devices.
        if replacing(d).is_none() {
            let share = if s.ns > 0 {
                format!(
                    ", {:.0}% of their transfer time",
                    100.0 * s.host_ns as f64 / s.ns as f64
                )
            } else {
                String::new()
            };
            evidence.push(format!("{} inside the calls{share}", duration(s.host_ns)));
        }
        // The ported pipeline's question: does it overlap? Not while the calls hold the thread.
        if set.nonblocking_blocks.value {
            evidence.push(
                "while a call holds the program's thread, the program enqueues nothing else: \
                 such transfers cannot overlap its kernels or its other transfers (the device's \
                 busy line says how much did)"
                    .into(),
            );
        }
        // What pinned memory would save: the time inside the calls, less the enqueue's own cost
        // (which a pinned call pays too), as this run's non-blocking calls that stage nothing
        // measured it, or the cost model where the run has none or its times are not the
        // vendor's. Under forced rules the calls' time is projected: the rule says they hold
        // the thread for their transfer.
        let floor = &d.enqueue_floor;
        let rules_floor = set
            .cost
            .and_then(|c| c.enqueue_us)
            .map(|f| ((f.value * 1e3) as u64, f.source));
        let (held, per_call) = match replacing(d) {
            Some(p) => {
                evidence.push(format!(
                    "{} ({}.nonblocking)",
                    set.nonblocking_blocks.says, set.name
                ));
                let own = rules_floor.map(|(ns, _)| (ns, format!("by {}", model(&p))));
                (s.ns, own)
            }
            None => {
                let own = match floor.host_ns.checked_div(floor.count) {
                    Some(ns) => Some((
                        ns,
                        format!(
                            "the mean of this run's {} that stage nothing",
                            counted(floor.count, "non-blocking call")
                        ),
                    )),
                    None => rules_floor
                        .map(|(ns, src)| (ns, format!("the {} rules' figure: {src}", set.name))),
                };
                (s.host_ns, own)
            }
        };
        let what = match replacing(d) {
            Some(_) => "projected: the transfers' device time, which the calls hold the thread for",
            None => "the time the calls held the program's thread",
        };
        let (saving, estimate) = match per_call {
            Some((per_call, whose)) => {
                let own = per_call.saturating_mul(s.count).min(held);
                evidence.push(format!(
                    "of that, {} is the enqueue's own cost ({} per call, {whose}), which a \
                     pinned call pays too",
                    duration(own),
                    duration(per_call),
                ));
                (held - own, format!("{what}, less the enqueue's own cost"))
            }
            None => (
                held,
                format!(
                    "{what} (no call here staged nothing and the rules have no figure, so the \
                     enqueue's own cost, which a pinned call pays too, is in it)"
                ),
            ),
        };
        push(
            "nonblocking-held-host",
            format!(
                "{} from pageable memory held the host anyway on {on}",
                counted(s.count, "non-blocking transfer")
            ),
            evidence,
            format!(
                "Pinned memory lets a non-blocking call return at once: {}; then do other work \
                 and wait on the transfer's event.",
                set.recipe
            ),
            saving,
            estimate,
        );
    }

    // 3. Map for WRITE that copied data first.
    let s = &d.map_write;
    if s.count > 0 {
        // The copy's own time where it is real, else projected: by the cost model under forced
        // rules (PoCL copies nothing at map), at the pinned D2H figure when it has no time.
        let (map_copy, map_how) = match replacing(d) {
            _ if s.ns == 0 => {
                let (bw, how) = pinned(d, Direction::D2H);
                let ns = (bw > 0.0).then(|| (s.bytes as f64 / bw) as u64);
                (
                    ns.unwrap_or(0),
                    format!("projected: the copy of {} {how}", bytes(s.bytes)),
                )
            }
            Some(p) => (
                s.ns,
                format!("projected: the copies' device time by {}", model(&p)),
            ),
            None => (s.ns, "the map-time copies' own time".into()),
        };
        let (map_copy, map_how) = replayed(d, graph, s, (map_copy, map_how), Fix::MapInvalidate);
        push(
            "map-write-copied",
            format!(
                "{} with CL_MAP_WRITE copied the buffer to the host first on {on}",
                counted(s.count, "map")
            ),
            vec![
                measured(s),
                "a map for writing only copies the current contents so that the parts the \
                 program does not overwrite stay intact"
                    .into(),
            ],
            "If the program overwrites the whole mapped region, map with \
             CL_MAP_WRITE_INVALIDATE_REGION instead of CL_MAP_WRITE: the copy at map time is \
             skipped."
                .into(),
            map_copy,
            map_how,
        );
    }

    // 4. ALLOC_HOST_PTR buffers that also take device memory.
    let (ahp, all, buffers) = d.end.as_ref().map_or((0, 0, 0), |e| {
        (
            e.alloc_host_ptr_peak,
            e.resident_peak,
            e.alloc_host_ptr_buffers,
        )
    });
    if ahp > 0 && !set.unified.value {
        let of = if d.facts.global_mem > 0 {
            format!(
                " of {} ({:.1}%)",
                bytes(d.facts.global_mem),
                100.0 * ahp as f64 / d.facts.global_mem as f64
            )
        } else {
            String::new()
        };
        push(
            "alloc-host-ptr-device-memory",
            format!(
                "ALLOC_HOST_PTR buffers also took {} of device memory on {on}",
                bytes(ahp)
            ),
            vec![
                format!(
                    "peak {}{of}; all buffers together peaked at {}",
                    bytes(ahp),
                    bytes(all)
                ),
                format!("{} ({}.alloc-host-ptr)", set.alloc_host_ptr.says, set.name),
            ],
            staging_advice(d, set, ahp, buffers),
            0,
            "saves device memory, not time".into(),
        );
    }

    // 5. Migrations through the host, and migrations that moved nothing.
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
        push(
            "via-host-migration",
            format!(
                "{} between devices went through the host on {on}",
                counted(s.count, "migration")
            ),
            evidence,
            "Keep each buffer on one device: give each device its own buffers and move only what \
             they share, or do the whole job on one device; there is no peer-to-peer path here."
                .into(),
            saving,
            estimate,
        );
    }
    let s = &d.empty_migrations;
    if s.count > 0 && !set.unified.value && set.migrate.value.is_marker(0) {
        push(
            "empty-migration",
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

    // 6. Many small transfers.
    let s = &d.small;
    if s.count >= 64 {
        // Projected: one transfer of all their bytes over the pinned link, with one floor.
        let one = replacing(d).and_then(|p| {
            let ns = (p.cost?).time_ns(Direction::H2D, Path::Pinned, s.timed_bytes)?;
            Some((
                s.ns.saturating_sub(ns),
                format!(
                    "projected: as one transfer of {} over the pinned H2D link of {}, {}",
                    bytes(s.timed_bytes),
                    model(&p),
                    duration(ns)
                ),
            ))
        });
        let (saved, how) = one.unwrap_or_else(|| {
            let (bw, how) = pinned(d, Direction::H2D);
            (saving(s, bw), format!("{how}, as one large transfer"))
        });
        let (saved, how) = replayed(d, graph, s, (saved, how), Fix::Batched);
        let half = d.small_sizes.values().sum::<u64>().div_ceil(2);
        let mut seen = 0;
        let median = d
            .small_sizes
            .iter()
            .find(|&(_, &n)| {
                seen += n;
                seen >= half
            })
            .map_or(0, |(&size, _)| size);
        push(
            "small-transfers",
            format!(
                "{} transfers under {} are latency-bound on {on}",
                s.count,
                bytes(SMALL)
            ),
            vec![measured(s), format!("median size {}", bytes(median))],
            "Batch them: gather the pieces into one host buffer and move it with one \
             clEnqueueWriteBuffer/ReadBuffer (or one clEnqueueWriteBufferRect for strided data), \
             or keep the data on the device between kernels."
                .into(),
            saved,
            how,
        );
    }

    // 7. Misaligned pointers where the rules care.
    let s = &d.misaligned;
    if s.count > 0 {
        let (bw, how) = pinned(d, Direction::H2D);
        let saved = s.extrapolated(saving(s, bw));
        let align = set.alignment.value.unwrap_or(64);
        push(
            "misaligned",
            format!(
                "{} host pointers misaligned for {on}",
                counted(s.count, "transfer") + " used"
            ),
            vec![
                measured(s),
                format!("{} ({}.alignment)", set.alignment.says, set.name),
            ],
            format!(
                "Align host buffers and sizes to {align} bytes or more: aligned_alloc(4096, size) \
                 or posix_memalign."
            ),
            saved,
            how,
        );
    }

    // 8. Device time unavailable (in a trace cut short, not known: a command's device slice may
    // lie beyond the cut).
    if d.without_device_time > 0 && d.end.is_some() {
        let n = d.without_device_time;
        push(
            "device-time-unavailable",
            format!(
                "{} on {on} {} no device time",
                counted(n, "transfer"),
                if n == 1 { "has" } else { "have" }
            ),
            vec![
                format!(
                    "blocking ones are timed by their host time instead ({}); non-blocking ones \
                     have no bandwidth ({})",
                    d.host_time_used,
                    n - d.host_time_used
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
fn hand_offs(d: &DeviceAcc, to_host: &Sum, out: &mut Vec<Finding>) {
    let dev = d.facts.index;
    let push = |out: &mut Vec<Finding>,
                (kind, title): (&'static str, String),
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
                "host-hop-migration",
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
                "migration-on-source-queue",
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
                "initialised-twice",
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
            "no-such-function",
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
            "function-not-offered",
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

/// The staging recipe that fits the program (issue #26, question 2 of the brief): a ring of two
/// or three mapped ALLOC_HOST_PTR buffers sized to the transfers it makes from mapped memory,
/// whether it now has one large staging region or one per data buffer, and the alternatives.
fn staging_advice(d: &DeviceAcc, set: &RuleSet, ahp: u64, buffers: u64) -> String {
    let block = d.from_mapped.bytes.checked_div(d.from_mapped.count);
    let now = match buffers {
        0 | 1 => format!("The program's ALLOC_HOST_PTR buffer ({}) costs", bytes(ahp)),
        n => format!(
            "The program's {n} ALLOC_HOST_PTR buffers ({}) cost",
            bytes(ahp)
        ),
    };
    let ring = match block {
        // A ring smaller than what the program has now.
        Some(b) if b > 0 && b.saturating_mul(3) < ahp => format!(
            "{now} as much device memory again on this device; a ring of three mapped staging \
             buffers of the program's transfer block ({}, the mean of its {} from mapped \
             memory) would take {}, used in turn so that one fills while another transfers.",
            bytes(b),
            counted(d.from_mapped.count, "transfer"),
            bytes(b.saturating_mul(3))
        ),
        Some(_) => format!(
            "{now} as much device memory again on this device; its staging already fits its \
             transfers ({} from mapped memory): keep two or three such buffers at most.",
            counted(d.from_mapped.count, "transfer")
        ),
        None => format!(
            "{now} as much device memory again on this device; stage through a ring of two or \
             three mapped buffers sized to one transfer, not one buffer per data buffer."
        ),
    };
    // Each option's speed, by the rules' cost model (every one is a pinned path on a bus).
    let speed = match set.cost.and_then(|c| c.pinned[0]) {
        Some(l) => format!(
            ", each moving at the pinned {} GB/s of the {} cost model (docs/RULES.md)",
            gbps(l.peak()),
            set.name
        ),
        None => String::new(),
    };
    format!(
        "{ring} Or: CL_MEM_USE_HOST_PTR over the program's own memory ({}); or \
         coarse-grain SVM (clSVMAlloc: {}){speed}.",
        set.use_host_ptr.says, set.svm.says
    )
}
