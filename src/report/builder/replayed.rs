//! What the command graph's replay needs of each command, as the builder adds it: its durations
//! under each fix, the non-blocking calls that held the host (a wait the pinned fix removes), and
//! how many of the program's transfers ran at once (what sizes a staging ring).

use super::super::facts::*;
use super::super::replay::{Durations, Fix, Release};
use super::FLIGHTS;
use super::{Builder, map_write, small};
use crate::model::classification::{Direction, Path};
use crate::model::rules;

impl Builder {
    /// A transfer from the program's host region, as it ran on the device: how many ran at once
    /// is what the program's queues allow (a ring needs that many moving, one queued and one
    /// filling).
    pub(super) fn in_flight(&mut self, e: &Enqueue, ran: Option<Ran>) {
        let from_region = (e.path == Path::Staged && e.pageable) || e.mapped;
        let dir = match e.direction {
            Direction::H2D => 0,
            Direction::D2H => 1,
            _ => return,
        };
        if !from_region || !matches!(e.kind, Kind::Write | Kind::Read) {
            return;
        }
        let Some(r) = ran else {
            return;
        };
        let spans = &mut self.device_mut(e.device).flights[dir];
        if spans.len() < FLIGHTS {
            spans.push((r.start_ns, r.start_ns.saturating_add(r.ns)));
        }
    }

    /// A non-blocking call from pageable memory that held the host until its staged transfer
    /// ended (as measured, or under forced rules as the rules say): a wait on its own command,
    /// which pinning the host side removes (`replay.rs`'s [`Release`]), so that the replay of
    /// that fix frees the thread, and under forced rules the projected run holds it.
    pub(super) fn held(&mut self, e: &Enqueue, link: &Link, ran: Option<Ran>) {
        let bits = match e.direction {
            _ if e.blocking || !e.pageable || e.path != Path::Staged => return,
            Direction::H2D => Fix::PinnedH2D.mask(),
            Direction::D2H => Fix::PinnedD2H.mask(),
            _ => return,
        };
        let d = self.device_mut(e.device);
        let call_ns = link.end.saturating_sub(link.begin);
        let own = if d.projecting.is_some_and(|p| p.replaces) {
            if !e.holds_host {
                return;
            }
            // This device's call did not hold: its time is the call's own.
            call_ns
        } else {
            // Measured: it held only if its command ended inside it.
            match ran {
                Some(r) if r.start_ns.saturating_add(r.ns) <= link.end => {}
                _ => return,
            }
            let floor = &d.enqueue_floor;
            let rules = (d.set.and_then(|s| s.cost.as_ref()))
                .and_then(|c| c.enqueue_us)
                .map(|f| (f.value * 1e3) as u64);
            (floor.host_ns.checked_div(floor.count))
                .or(rules)
                .unwrap_or(call_ns)
                .min(call_ns)
        };
        let device = e.device;
        self.graph.hold(
            Sync {
                tid: link.tid,
                begin: link.begin,
                end: link.end,
                on: On::Commands([link.id].into_iter().collect()),
            },
            Some(Release { device, bits, own }),
        );
    }

    /// What a transfer that ran `ns` takes in the replays of the fixes that cover it: as it is
    /// (projected under forced rules), pinned, or its bytes' share of one batched transfer, at
    /// this run's best pinned bandwidth so far, else the rules' cost model (the generic one's
    /// where they have none).
    pub(super) fn durations(&mut self, e: &Enqueue, ns: u64) -> Durations {
        let d = self.device_mut(e.device);
        let replacing = d.projecting.filter(|p| p.replaces);
        let base = match replacing {
            // A kernel's own time is this device's; the move at its launch is projected.
            Some(p) if e.kind == Kind::Kernel => Some(ns.saturating_add(p.time(e).unwrap_or(0))),
            Some(p) => p.time(e),
            _ => Some(ns),
        };
        let Some(base) = base else {
            return Durations::default();
        };
        let mut covered = 0u8;
        if e.path == Path::Staged && e.pageable {
            match e.direction {
                Direction::H2D => covered |= 1 << Fix::PinnedH2D as u8,
                Direction::D2H => covered |= 1 << Fix::PinnedD2H as u8,
                _ => {}
            }
        }
        if map_write(e) {
            covered |= 1 << Fix::MapInvalidate as u8;
        }
        if small(e) {
            covered |= 1 << Fix::Batched as u8;
        }
        let moved = match replacing {
            Some(p) if e.kind == Kind::Kernel => p.time(e).map_or(0, Durations::ns),
            _ => 0,
        };
        let mut dur = Durations {
            base: Durations::ns(base),
            covered,
            moved,
            ..Durations::default()
        };
        if covered == 0 {
            return dur;
        }
        let dir = (e.direction as usize).min(1);
        let cost = (replacing.and_then(|p| p.cost))
            .or(d.set.and_then(|s| s.cost.as_ref()))
            .or(rules::GENERIC.cost.as_ref());
        let link = cost.and_then(|c| c.pinned[dir]);
        let measured = d.best_pinned[dir].filter(|_| replacing.is_none());
        let bw = measured.or(link.map(|l| l.gbps_at(e.bytes))).unwrap_or(0.0);
        if bw > 0.0 {
            let bytes = e.bytes as f64 / bw;
            dur.batched = Durations::ns(bytes as u64);
            dur.pinned = match (measured, link) {
                (None, Some(l)) => Durations::ns((l.floor_us * 1e3 + bytes) as u64),
                _ => Durations::ns(bytes as u64),
            };
        } else {
            dur.covered = 0;
        }
        dur
    }
}
