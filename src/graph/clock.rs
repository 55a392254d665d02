//! Happens-before as vector clocks over queues (issue #25). Each queue is a slot and numbers its
//! commands 1, 2, … (a command's [`Stamp`]); a command's [`Clock`] says, for each slot, the
//! newest command of that queue known to have completed before it ran. Command `a` happens
//! before command `b` when `b`'s clock knows `a`'s stamp.
//!
//! What orders commands: an in-order queue (each after the one before), wait lists (and what
//! the awaited commands knew), a barrier on an out-of-order queue (every later command of the
//! queue after it), a marker or barrier without a wait list there (after every earlier command),
//! and the host: a command enqueued after the host learnt that others completed (`clFinish`,
//! `clWaitForEvents`, a blocking call, a status query that saw `CL_COMPLETE`) is after them.
//! The host's knowledge is one clock for every thread: a thread that synchronised tells the
//! others only through means clxfer does not see, so this may order too much — a race missed,
//! never a race invented.
//!
//! Where exactness would cost memory, the approximations err the same way:
//! - a wait for one command of an out-of-order queue is taken as knowing every command of that
//!   queue numbered before it;
//! - queues past [`SLOTS`] share slots (their commands then look ordered by each other's);
//! - a command that waits, directly or through others, for a user event the program has not yet
//!   set is *gated*: it runs after whatever the host does before setting the event, which its
//!   clock cannot know at its enqueue, so it is not checked for races at all;
//! - the clocks of the newest [`WINDOW`] commands are kept; a wait for an older one is taken as
//!   knowing the host's clock at the time only.

use super::{Deps, Id, Kind};
use rustc_hash::{FxHashMap, FxHashSet};

/// Queue slots at most (4 bytes each in every clock).
pub const SLOTS: usize = 64;
/// Commands whose clocks are kept (by number).
pub const WINDOW: usize = 1 << 14;

/// A command's place in its queue's order: the queue's slot, and its number there (from 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Stamp {
    pub slot: u8,
    pub epoch: u32,
}

/// Slots a clock keeps in place (most programs have a few queues); the others are on the heap,
/// made when first raised.
const INLINE: usize = 8;

/// For each slot, the newest epoch known to happen before (0: none). In place, not a small
/// vector: every command copies one and joins it, and a fixed array is a few vector moves with
/// no branch on where its slots live.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Clock {
    lo: [u32; INLINE],
    hi: Option<Box<[u32; SLOTS - INLINE]>>,
}

impl Clock {
    /// Whether the command stamped `s` happened before.
    #[inline]
    pub fn knows(&self, s: Stamp) -> bool {
        let i = s.slot as usize;
        let e = match self.lo.get(i) {
            Some(&e) => e,
            None => self
                .hi
                .as_ref()
                .map_or(0, |h| h.get(i - INLINE).copied().unwrap_or(0)),
        };
        s.epoch != 0 && e >= s.epoch
    }

    #[inline]
    pub fn join(&mut self, other: &Clock) {
        for (a, &b) in self.lo.iter_mut().zip(&other.lo) {
            *a = (*a).max(b);
        }
        if let Some(o) = &other.hi {
            let h = self.hi.get_or_insert_with(|| Box::new([0; SLOTS - INLINE]));
            for (a, &b) in h.iter_mut().zip(o.iter()) {
                *a = (*a).max(b);
            }
        }
    }

    /// Knows `s` (and, in its slot, everything before it).
    #[inline]
    pub fn raise(&mut self, s: Stamp) {
        let i = s.slot as usize;
        let e = match self.lo.get_mut(i) {
            Some(e) => e,
            None => match self
                .hi
                .get_or_insert_with(|| Box::new([0; SLOTS - INLINE]))
                .get_mut(i - INLINE)
            {
                Some(e) => e,
                None => return,
            },
        };
        *e = (*e).max(s.epoch);
    }
}

/// A queue as the clocks see it.
#[derive(Debug, Default)]
struct Queue {
    slot: u8,
    /// The last epoch given.
    epoch: u32,
    out_of_order: bool,
    /// In order: the newest command's clock. Out of order: the join of all its commands'.
    newest: Clock,
    /// Out of order: the last barrier's clock (every later command is after it).
    barrier: Clock,
    /// The newest command is gated by this user event (in order: so is the next).
    gate: Option<Id>,
    /// The host's clock had this version when the newest command was placed (in order: then
    /// `newest` already holds it).
    host_seen: u64,
}

/// A command as a race check needs it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placed {
    pub stamp: Stamp,
    pub clock: Clock,
    /// It waits (perhaps through others) for this user event, not set when it was enqueued.
    pub gate: Option<Id>,
}

#[derive(Debug, Default)]
pub struct Clocks {
    /// By command number modulo [`WINDOW`]: (number, its place).
    ring: Vec<(Id, Placed)>,
    /// By the layer's queue number.
    queues: FxHashMap<u32, Queue>,
    /// What the host knows completed, and how often it learnt more.
    host: Clock,
    host_version: u64,
    /// User events made and not yet set (or failed).
    unset: FxHashSet<Id>,
}

impl Clocks {
    /// Command `id` of `kind`, enqueued on queue `queue` (out of order or not) with `deps`
    /// ([`super::order::Queue::place`] has added the queue's order to them).
    pub fn command(
        &mut self,
        id: Id,
        queue: u32,
        out_of_order: bool,
        kind: Kind,
        deps: &Deps,
    ) -> &Placed {
        if self.ring.is_empty() {
            self.ring.resize(WINDOW, (0, Placed::default()));
        }
        let slots = self.queues.len();
        let q = self.queues.entry(queue).or_insert_with(|| Queue {
            slot: (slots % SLOTS) as u8,
            out_of_order,
            ..Queue::default()
        });
        q.epoch += 1;
        let stamp = Stamp {
            slot: q.slot,
            epoch: q.epoch,
        };
        let mut gate = None;
        let mut clock = if q.out_of_order {
            let mut c = self.host.clone();
            c.join(&q.barrier);
            if deps.all_before {
                c.join(&q.newest);
            }
            c
        } else {
            gate = q.gate.filter(|u| self.unset.contains(u));
            // The queue's newest already knows the host's clock unless the host learnt since.
            // Taken, not copied: the queue's newest becomes this command's own clock below.
            let mut c = std::mem::take(&mut q.newest);
            if q.host_seen != self.host_version {
                c.join(&self.host);
            }
            c
        };
        for &w in &deps.waits {
            if self.unset.contains(&w) {
                gate = gate.or(Some(w));
                continue;
            }
            let Some((_, p)) = self.ring.get(w as usize % WINDOW).filter(|e| e.0 == w) else {
                continue;
            };
            clock.join(&p.clock);
            clock.raise(p.stamp);
            gate = gate.or(p.gate.filter(|u| self.unset.contains(u)));
        }
        // Its own place: the next command of an in-order queue knows it.
        let mut own = clock.clone();
        own.raise(stamp);
        if q.out_of_order {
            q.newest.join(&own);
            if kind == Kind::Barrier {
                q.barrier = own;
            }
        } else {
            q.newest = own;
        }
        q.gate = gate;
        q.host_seen = self.host_version;
        let slot = &mut self.ring[id as usize % WINDOW];
        *slot = (id, Placed { stamp, clock, gate });
        &slot.1
    }

    /// The program made user event `id`.
    pub fn user_event(&mut self, id: Id) {
        self.unset.insert(id);
    }

    /// The program set user event `id`'s status: what waits for it runs after what the host
    /// knew then.
    pub fn user_event_set(&mut self, id: Id) {
        self.unset.remove(&id);
    }

    /// The host learnt that commands `ids` completed.
    pub fn host_waited(&mut self, ids: &[Id]) {
        for &id in ids {
            if let Some((_, p)) = self.ring.get(id as usize % WINDOW).filter(|e| e.0 == id) {
                self.host.join(&p.clock);
                self.host.raise(p.stamp);
                self.host_version += 1;
            }
        }
    }

    /// `clFinish` on `queue` returned: every command enqueued on it so far completed.
    pub fn host_finished(&mut self, queue: u32) {
        if let Some(q) = self.queues.get(&queue) {
            self.host.join(&q.newest);
            self.host_version += 1;
        }
    }

    /// Whether command `b` (placed) happens after the command stamped `a`.
    pub fn ordered(a: Stamp, b: &Placed) -> bool {
        b.clock.knows(a)
    }
}

#[cfg(test)]
mod tests;
