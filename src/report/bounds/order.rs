//! Commands an in-order queue held behind one that waits for another queue: what the replay of
//! [`Fix::Reordered`] moves, and what the `queue-order` finding counts.

use super::labels::Label;
use super::{Graph, Node, QUEUES};
use crate::report::facts::Kind;
use crate::report::replay::Fix;
use smallvec::SmallVec;

/// Commands [`Graph::reaches`] looks through at most.
const REACH: usize = 64;
/// Waiting commands in a row a held one is moved past at most.
const HOPS: usize = 16;

/// Commands an in-order queue held behind one that waits for another queue's command, which
/// they do not wait for themselves: a pipeline's uploads behind its read-backs, each read-back
/// waiting for its chunk's kernel. The queue's order alone keeps them from overlapping that
/// kernel. The first one is kept as the example.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderHeld {
    /// (device, queue).
    pub queue: (u32, u32),
    pub commands: u64,
    /// What the first held command, the one it followed, and what that one waited for are
    /// charged as ([`Label::describe`]), and the last one's queue.
    pub first: [String; 3],
    pub behind: (u32, u32),
}

impl Graph {
    /// Marks the window's command at `i`, one of the stretch being replayed, if its queue's
    /// order alone held it ([`Graph::held_by_order`]), for the replay of [`Fix::Reordered`]. At
    /// the walk, not as each command comes: completions reach the report in no fixed order, and
    /// the commands before one must be in the window to judge it.
    pub(super) fn mark_held(&mut self, i: usize) {
        let mask = Fix::Reordered.mask();
        let n = &self.nodes[i];
        if n.before[0] == 0 || n.dur.covered & mask != 0 {
            return;
        }
        let n = *n;
        let Some(alternative) = self.held_by_order(&n) else {
            return;
        };
        let m = &mut self.nodes[i];
        m.dur.covered |= mask;
        m.reorder = alternative;
        self.covers(n.device, mask);
    }

    /// Whether command `c`, not a kernel, follows a command of its queue, not a kernel, that
    /// ended after `c` was enqueued and waits for a command of another queue, which `c` does
    /// not wait for itself: then the
    /// command it would follow were that one, and those just before it that wait for another
    /// queue too, on a queue of their own (0: none), and the queue's count goes up. Only a command in the window counts
    /// (a sampled-out one is in no graph); a command an out-of-order queue orders after a
    /// barrier follows no command here (barriers are not in the graph).
    fn held_by_order(&mut self, c: &Node) -> Option<u64> {
        let (queue, label) = ((c.device, c.queue), c.label);
        // Kernels: a device runs one after another whatever queues they are on, so a kernel
        // behind a kernel, or a transfer behind one, is no loss a queue of its own would undo.
        let kernel = |l: u32| {
            matches!(
                self.labels.all[l as usize],
                Label::Kernel(_) | Label::Transfer(Kind::Kernel, ..)
            )
        };
        let [after, own @ ..] = c.before;
        // One that had ended before this one was enqueued held nothing back; one that waits
        // for nothing holds nothing back but by its own time (the first test: most commands).
        let p = (self.node(after)).filter(|p| {
            p.before[1..] != [0, 0]
                && (p.device, p.queue) == queue
                && p.ran.1 > c.begin
                && !kernel(p.label)
                && !kernel(label)
        })?;
        let [mut alternative, waits @ ..] = p.before;
        let w = (waits.into_iter())
            .filter_map(|w| self.node(w))
            .find(|w| (w.device, w.queue) != queue && !self.reaches(own, w.id))?;
        // The commands just before `p` that wait for another queue too would move with it (a
        // run of read-backs): `c` follows the first before them that stays.
        let waits_elsewhere = |n: &Node| {
            n.before[1..]
                .iter()
                .any(|&w| w != 0 && self.node(w).is_some_and(|w| (w.device, w.queue) != queue))
        };
        for _ in 0..HOPS {
            match self.node(alternative) {
                Some(q)
                    if (q.device, q.queue) == queue && !kernel(q.label) && waits_elsewhere(q) =>
                {
                    alternative = q.before[0]
                }
                _ => break,
            }
        }
        let (first, behind) = ([label, p.label, w.label], (w.device, w.queue));
        let room = self.held.len() < QUEUES;
        match self.held.iter_mut().find(|h| h.queue == queue) {
            Some(h) => h.commands += 1,
            None if room => {
                let first = first.map(|l| self.labels.all[l as usize].describe());
                self.held.push(OrderHeld {
                    queue,
                    commands: 1,
                    first,
                    behind,
                });
            }
            None => {}
        }
        Some(alternative)
    }

    /// Whether a command waiting for `waits` depends on command `target` through them (their
    /// queue order and wait lists, within the window): a bounded search, [`REACH`] commands at
    /// most (past it, taken as depending: no finding rather than a wrong one).
    fn reaches(&self, waits: [u64; 2], target: u64) -> bool {
        let mut stack: SmallVec<[u64; 16]> = waits.into_iter().filter(|&w| w != 0).collect();
        let mut seen = 0;
        while let Some(id) = stack.pop() {
            if id == target {
                return true;
            }
            seen += 1;
            if seen > REACH {
                return true;
            }
            // Numbers only go down along dependencies: one older than the target cannot reach it.
            if let Some(n) = self.node(id).filter(|_| id > target) {
                stack.extend(n.before.into_iter().filter(|&b| b != 0 && b < id));
            }
        }
        false
    }

    /// The queues of `device` with commands held only by their order ([`OrderHeld`]).
    pub fn held_by_order_on(&self, device: u32) -> impl Iterator<Item = &OrderHeld> {
        self.held.iter().filter(move |h| h.queue.0 == device)
    }
}
