//! The findings on how the program's transfers are made: staged from pageable memory, held the
//! host though non-blocking, a map for writing that copied first, many small ones, misaligned.

use super::super::acc::{SMALL, Sum};
use super::super::replay::Fix;
use super::judge::*;
use crate::model::classification::{Direction, Path};
use crate::units::{bytes, duration};

/// Staged transfers from pageable memory.
pub(super) fn staged(j: &mut Judge) {
    let (d, graph, set) = (j.d, j.graph, j.set);
    let on = j.on.clone();
    let measured = |s: &Sum| shown(s, replacing(d).is_some());
    let mut push = |kind, title, evidence, fix, saving_ns, estimate| {
        j.push(kind, title, evidence, fix, (saving_ns, estimate))
    };
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
}

/// Non-blocking transfers from pageable memory that held the host anyway.
pub(super) fn held_host(j: &mut Judge) {
    let (d, set) = (j.d, j.set);
    let on = j.on.clone();
    let measured = |s: &Sum| shown(s, replacing(d).is_some());
    let mut push = |kind, title, evidence, fix, saving_ns, estimate| {
        j.push(kind, title, evidence, fix, (saving_ns, estimate))
    };
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
                        // Its source is listed in docs/RULES.md, which a user can open.
                        .map(|(ns, _)| {
                            (ns, format!("the {} rules' figure, docs/RULES.md", set.name))
                        }),
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
}

/// Map for WRITE that copied data first.
pub(super) fn map_write(j: &mut Judge) {
    let (d, graph) = (j.d, j.graph);
    let on = j.on.clone();
    let measured = |s: &Sum| shown(s, replacing(d).is_some());
    let mut push = |kind, title, evidence, fix, saving_ns, estimate| {
        j.push(kind, title, evidence, fix, (saving_ns, estimate))
    };
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
}

/// Many small transfers.
pub(super) fn small(j: &mut Judge) {
    let (d, graph) = (j.d, j.graph);
    let on = j.on.clone();
    let measured = |s: &Sum| shown(s, replacing(d).is_some());
    let mut push = |kind, title, evidence, fix, saving_ns, estimate| {
        j.push(kind, title, evidence, fix, (saving_ns, estimate))
    };
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
        let (saved, how) = one.unwrap_or_else(|| match pinned(d, Direction::H2D) {
            (bw, how) if bw > 0.0 => (saving(s, bw), format!("{how}, as one large transfer")),
            (_, how) => (0, how),
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
}

/// Misaligned pointers where the rules care.
pub(super) fn misaligned(j: &mut Judge) {
    let (d, set) = (j.d, j.set);
    let on = j.on.clone();
    let measured = |s: &Sum| shown(s, replacing(d).is_some());
    let mut push = |kind, title, evidence, fix, saving_ns, estimate| {
        j.push(kind, title, evidence, fix, (saving_ns, estimate))
    };
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
}
