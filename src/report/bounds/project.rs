//! The run as the cost model projects it, for the walk under forced rules: before each walk the
//! stretch is replayed with the projected durations, its items moved to the times they take
//! there, and the projected devices' busy time taken from them.

use super::super::replay::{self, Item};
use super::super::timeline::{Busy, Class, Timeline};
use super::{At, Graph, Kind, Label, WINDOW, order};
use rustc_hash::FxHashMap;

/// The run replayed with the projected durations before each walk (`replay::replayed`): each
/// stretch's commands and synchronisation points take the times they would have had, the walk
/// follows those, and the projected devices' busy time is taken from them. A thread's later
/// items move with it (`carry`), so the stretches join up.
#[derive(Debug, Default)]
pub(super) struct Projection {
    /// The devices whose durations are the cost model's, with their busy time as projected.
    pub(super) devices: Vec<(u32, Timeline)>,
    /// Per thread: how far the stretches replayed so far moved it.
    pub(super) carry: FxHashMap<u32, i64>,
}

/// Which item of the graph a replayed item is.
#[derive(Clone, Copy)]
enum Whose {
    Node(u64),
    Sync(u32, usize),
}

impl Graph {
    /// `device`'s durations are the cost model's: the walk and its busy time follow the run as
    /// projected (before its first command).
    pub fn projects(&mut self, device: u32) {
        let p = self.projection.get_or_insert_default();
        if !p.devices.iter().any(|d| d.0 == device) {
            p.devices.push((device, Timeline::default()));
        }
    }

    /// How far the projected run has moved thread `tid` so far (0 when nothing is projected).
    pub(super) fn carried(&self, tid: u32) -> i64 {
        (self.projection.as_ref()).map_or(0, |p| p.carry.get(&tid).copied().unwrap_or(0))
    }

    /// A projected device's busy time and its queues', as the run was projected; `None` for a
    /// device not projected or with no command. After [`Graph::bounds`].
    pub fn projected_busy(&mut self, device: u32) -> Option<(Busy, Vec<(u32, Busy)>)> {
        let p = self.projection.as_mut()?;
        let t = &mut p.devices.iter_mut().find(|d| d.0 == device)?.1;
        Some((t.busy()?, t.queues()))
    }

    /// Replays the items not yet projected up to `t` with the projected durations, moves them to
    /// the times they take there (and each thread's later items with it), and adds the projected
    /// devices' commands to their busy time. Returns where the stretch ends, projected.
    pub(super) fn project(&mut self, at: At, t: u64) -> u64 {
        let mut items: Vec<(Item, Whose)> = (self.nodes.iter())
            .filter(|n| n.id != 0 && n.fresh && n.begin <= t)
            .map(|n| (n.item(), Whose::Node(n.id)))
            .collect();
        for (&tid, syncs) in &self.threads {
            let held = syncs
                .iter()
                .enumerate()
                .filter(|s| s.1.fresh && s.1.end <= t);
            items.extend(held.map(|(i, s)| (s.item(tid), Whose::Sync(tid, i))));
        }
        items.sort_by_key(|i| order(&i.0));
        let end = at.end(t);
        let (items, whose): (Vec<Item>, Vec<Whose>) = items.into_iter().unzip();
        let older = |id: u64| self.node(id).map(|n| n.ran.1);
        let r = replay::replayed(&items, end, &older);
        let Some(p) = self.projection.as_mut() else {
            return t;
        };
        for (w, m) in whose.into_iter().zip(r.items) {
            match w {
                Whose::Node(id) => {
                    let n = &mut self.nodes[id as usize % WINDOW];
                    n.end = n.end.saturating_add_signed(m.call.1);
                    (n.begin, n.ran, n.fresh) = (m.call.0, m.ran, false);
                    if let Some(d) = p.devices.iter_mut().find(|d| d.0 == n.device) {
                        let (q, (a, b)) = (n.queue, n.ran);
                        match &self.labels.all[n.label as usize] {
                            Label::Kernel(_) => d.1.add(q, a, b, Class::Kernel),
                            // A launch that moves its arguments: the move first (a transfer, as
                            // the device's transfer rows count it), then its kernel.
                            Label::Transfer(Kind::Kernel, ..) => {
                                let split = a.saturating_add(u64::from(n.dur.moved)).min(b);
                                d.1.add(q, a, split, Class::Transfer);
                                d.1.add(q, split, b, Class::Kernel);
                            }
                            _ => d.1.add(q, a, b, Class::Transfer),
                        }
                    }
                }
                Whose::Sync(tid, i) => {
                    if let Some(s) = self.threads.get_mut(&tid).and_then(|t| t.get_mut(i)) {
                        (s.begin, s.end, s.fresh) = (m.ran.0, m.ran.1, false);
                    }
                }
            }
        }
        // What a thread does after the stretch moves as far as the stretch moved it.
        for (tid, by) in r.shifts.into_iter().filter(|s| s.1 != 0) {
            *p.carry.entry(tid).or_default() += by;
            for n in (self.nodes.iter_mut()).filter(|n| n.fresh && n.tid == tid) {
                n.begin = n.begin.saturating_add_signed(by);
                n.end = n.end.saturating_add_signed(by);
                n.ran = (
                    n.ran.0.saturating_add_signed(by),
                    n.ran.1.saturating_add_signed(by),
                );
            }
            for s in (self.threads.get_mut(&tid).into_iter().flatten()).filter(|s| s.fresh) {
                s.begin = s.begin.saturating_add_signed(by);
                s.end = s.end.saturating_add_signed(by);
            }
        }
        r.end
    }
}
