//! The findings on how the program's transfers are made: staged from pageable memory, held the
//! host though non-blocking, a map for writing that copied first, many small ones, misaligned.

use super::super::acc::{SMALL, Sum};
use super::super::replay::Fix;
use super::judge::*;
use crate::model::classification::{Direction, Path};
use crate::units::{bytes, duration};

/// Staged transfers from pageable memory, and the non-blocking calls among them that held the
/// host: one fix (pin the host side), so one finding with one saving (issue #57): the replay of
/// the run with both directions pinned and the held calls returning at once.
pub(super) fn staged(j: &mut Judge) {
    let (d, graph, set) = (j.d, j.graph, j.set);
    let on = j.on.clone();
    let measured = |s: &Sum| shown(s, replacing(d).is_some());
    let dirs: Vec<(Direction, &Sum)> = [Direction::H2D, Direction::D2H]
        .into_iter()
        .map(|dir| (dir, &d.staged_pageable[dir as usize]))
        .filter(|(_, s)| s.count > 0)
        .collect();
    if dirs.is_empty() {
        return;
    }
    let mut all = Sum::default();
    let mut evidence = Vec::new();
    let (mut own, mut hows, mut links) = (0u64, Vec::new(), Vec::new());
    let two = dirs.len() > 1;
    let projected = replacing(d).filter(|_| dirs.iter().all(|(_, s)| s.pinned_ns > 0));
    for &(dir, s) in &dirs {
        all.merge(s);
        // Projected: the same calls over the pinned link, each with its floor (a small call
        // saves little); measured: the bytes at this run's best pinned bandwidth.
        let saved = match projected {
            Some(_) => {
                links.push(format!("{} {}", dir.as_str(), duration(s.pinned_ns)));
                s.ns.saturating_sub(s.pinned_ns)
            }
            None => {
                let (bw, how) = pinned(d, dir);
                hows.push(match two {
                    true => format!("{} {how}", dir.as_str()),
                    false => how,
                });
                saving(s, bw)
            }
        };
        own = own.saturating_add(saved);
        evidence.push(match two {
            true => format!("{}: {}", dir.as_str(), measured(s)),
            false => measured(s),
        });
    }
    if let Some(p) = projected {
        hows.push(match dirs.as_slice() {
            [(dir, s)] => format!(
                "projected: the same calls over the pinned {} link of {}, {}",
                dir.as_str(),
                model(&p),
                duration(s.pinned_ns)
            ),
            _ => format!(
                "projected: the same calls over the pinned links of {}: {}",
                model(&p),
                links.join(", ")
            ),
        });
    }
    // The porting question: "is my mlock'd memory pinned?"
    let mut locked = Sum::default();
    for (dir, _) in &dirs {
        locked.merge(&d.staged_locked[*dir as usize]);
    }
    let memory = match locked.count {
        0 => "malloc'd (pageable) memory",
        n if n == all.count => "memory locked with mlock, pageable to the driver",
        _ => "pageable memory (malloc'd, or locked with mlock: below)",
    };
    evidence.push(format!(
        "the host side is {memory}, which {} copies through a bounce buffer ({}.pageable)",
        set.title, set.name
    ));
    // The region: the host bytes the device's staged transfers reached, each once; the bytes
    // they moved where a trace does not say (one written before clxfer kept it).
    let reached = d.end.as_ref().map_or(0, |e| e.staged_region);
    let want = super::fixes::Want {
        region: match reached {
            0 => dirs.iter().map(|(_, s)| s.bytes).sum(),
            n => n,
        },
        reached: reached > 0,
        block: [Direction::H2D, Direction::D2H].map(|dir| {
            let s = &d.staged_pageable[dir as usize];
            s.bytes.checked_div(s.count).unwrap_or(0)
        }),
        in_flight: d.most_in_flight(),
        replaces: None,
    };
    let (offered, refused) = super::fixes::checked(j, &want);
    let mut fix = format!(
        "Make the host side pinned. {}",
        super::fixes::sentence(
            j,
            "each pins the host side, so saves what the replay below says",
            &offered,
            &refused
        )
    );
    if locked.count > 0 {
        evidence.push(format!(
            "of them, {} ({}) from memory locked with mlock, which the driver is not told of: \
             locked is not pinned (any.mlocked)",
            counted(locked.count, "transfer"),
            bytes(locked.bytes)
        ));
        fix.push_str(
            " mlock does not help: the driver pins only memory it allocates or is given as a \
             buffer's own (USE_HOST_PTR above; clEnqueueMemObjectRegisterKHR, a call to \
             register memory, exists in no implementation).",
        );
    }
    // The non-blocking calls among them that held the host: the same fix frees them.
    let held = held(j);
    let mut own_how = hows.join("; ");
    if let Some(h) = &held {
        evidence.extend(h.evidence.iter().cloned());
        fix.push_str(
            " Pinned memory lets a non-blocking call return at once: then do other work and \
             wait on the transfer's event.",
        );
        // Without a replay the two parts overlap (a held call's time is its transfer's):
        // the larger stands.
        if h.saving > own {
            own = h.saving;
            own_how = h.estimate.clone();
        }
    }
    let (saved, how) = replayed(d, graph, &all, (own, own_how), Fix::Pinned);
    let count = all.count;
    // The port's question first: memory it locked, which it took for pinned.
    let memory = match locked.count == count {
        true => "mlock'd memory (pageable to the driver)",
        false => "pageable memory",
    };
    let mut title = match dirs.as_slice() {
        [(dir, _)] => format!(
            "{} from {memory} {} staged on {on}",
            counted(count, &format!("{} transfer", dir.as_str())),
            if count == 1 { "was" } else { "were" }
        ),
        // The directions' counts are in the evidence, and the verdict's lines.
        _ => format!(
            "{} from {memory} were staged on {on}",
            counted(count, "transfer"),
        ),
    };
    if let Some(h) = &held {
        title += &held_part(h.count, count);
    }
    j.push(
        FindingKind::StagedPageable,
        title,
        evidence,
        fix,
        (saved, how),
    );
}

/// The title's part for `held` of `count` transfers that were non-blocking calls holding the
/// host: "8 of them" of 8 read as a part, so all, or one, are said as such.
fn held_part(held: u64, count: u64) -> String {
    match (held, count) {
        (1, 1) => ", a non-blocking call that held the host".into(),
        (n, all) if n == all => ", all of them non-blocking calls that held the host".into(),
        (1, _) => ", 1 of them a non-blocking call that held the host".into(),
        (n, _) => format!(", {n} of them non-blocking calls that held the host"),
    }
}

/// What non-blocking calls from pageable memory that held the host anyway say and would save.
struct Held {
    count: u64,
    evidence: Vec<String>,
    saving: u64,
    estimate: String,
}

/// Non-blocking transfers from pageable memory that held the host anyway, where no staged
/// transfer's finding holds them (`staged`).
pub(super) fn held_host(j: &mut Judge) {
    let d = j.d;
    if d.staged_pageable.iter().any(|s| s.count > 0) {
        return;
    }
    let Some(h) = held(j) else {
        return;
    };
    let title = format!(
        "{} from pageable memory held the host anyway on {}",
        counted(h.count, "non-blocking transfer"),
        j.on
    );
    let mut evidence = vec![shown(&d.held_host, replacing(d).is_some())];
    evidence.extend(h.evidence);
    let fix = format!(
        "Pinned memory lets a non-blocking call return at once: {}; then do other work and \
         wait on the transfer's event.",
        j.set.recipe
    );
    j.push(
        FindingKind::NonblockingHeldHost,
        title,
        evidence,
        fix,
        (h.saving, h.estimate),
    );
}

/// The calls that held the host, if any: their evidence and what pinned memory would save.
fn held(j: &Judge) -> Option<Held> {
    let (d, set) = (j.d, j.set);
    let s = &d.held_host;
    if s.count == 0 {
        return None;
    }
    let mut evidence = Vec::new();
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
        evidence.push(format!(
            "{} non-blocking: {} inside the calls{share}",
            s.count,
            duration(s.host_ns)
        ));
    }
    // The ported pipeline's question: does it overlap? Not while the calls hold the thread.
    if set.nonblocking_blocks.value {
        evidence.push(
            "while a call holds the program's thread, the program enqueues nothing else: such \
             transfers cannot overlap its kernels or its other transfers (the device's busy \
             line says how much did)"
                .into(),
        );
    }
    // What pinned memory would save: the time inside the calls, less the enqueue's own cost
    // (which a pinned call pays too), as this run's non-blocking calls that stage nothing
    // measured it, or the cost model where the run has none or its times are not the vendor's.
    // Under forced rules the calls' time is projected: the rule says they hold the thread for
    // their transfer.
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
                    .map(|(ns, _)| (ns, format!("the {} rules' figure, docs/RULES.md", set.name))),
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
                "of the time in those calls, {} is the enqueue's own cost ({} per call, \
                 {whose}), which a pinned call pays too",
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
    Some(Held {
        count: s.count,
        evidence,
        saving,
        estimate,
    })
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
            FindingKind::MapWriteCopied,
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
            FindingKind::SmallTransfers,
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
            FindingKind::Misaligned,
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_held_calls_are_all_one_or_a_part() {
        for (held, count, want) in [
            (1, 1, ", a non-blocking call that held the host"),
            (8, 8, ", all of them non-blocking calls that held the host"),
            (1, 3, ", 1 of them a non-blocking call that held the host"),
            (2, 3, ", 2 of them non-blocking calls that held the host"),
        ] {
            assert_eq!(super::held_part(held, count), want);
        }
    }
}
