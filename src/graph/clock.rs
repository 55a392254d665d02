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
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Clock {
    lo: [u32; INLINE],
    hi: Option<Box<[u32; SLOTS - INLINE]>>,
}

impl Clone for Clock {
    fn clone(&self) -> Clock {
        Clock {
            lo: self.lo,
            hi: self.hi.clone(),
        }
    }

    /// Into the heap slots it has, if both have them (the ring's clocks are overwritten so).
    fn clone_from(&mut self, other: &Clock) {
        self.lo = other.lo;
        match (&mut self.hi, &other.hi) {
            (Some(a), Some(b)) => **a = **b,
            (a, b) => a.clone_from(b),
        }
    }
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

/// A command as the ring keeps it, for what waits for it later: its stamp, what it knows (its
/// own place included), and the user event that gates it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placed {
    pub stamp: Stamp,
    pub clock: Clock,
    /// It waits (perhaps through others) for this user event, not set when it was enqueued.
    pub gate: Option<Id>,
}

/// A command as a race check needs it, borrowed from the clocks: its stamp, the clock it ran
/// after, and its gate.
#[derive(Clone, Copy, Debug)]
pub struct Seen<'a> {
    pub stamp: Stamp,
    pub clock: &'a Clock,
    pub gate: Option<Id>,
}

impl Seen<'_> {
    pub fn to_placed(self) -> Placed {
        Placed {
            stamp: self.stamp,
            clock: self.clock.clone(),
            gate: self.gate,
        }
    }
}

#[derive(Debug, Default)]
pub struct Clocks {
    /// By command number modulo [`WINDOW`]: (number, its place), for the commands the program
    /// can name later (its event, a blocking call).
    ring: Vec<(Id, Placed)>,
    /// In order of first use; `index` finds them by the layer's queue number, `last` the one
    /// used last (a storm's every command, without hashing).
    queues: Vec<Queue>,
    index: FxHashMap<u32, usize>,
    last: Option<(u32, usize)>,
    /// An out-of-order command's clock before its own place (its own queue's earlier commands
    /// are not known by being earlier).
    before: Clock,
    /// What the host knows completed, and how often it learnt more.
    host: Clock,
    host_version: u64,
    /// User events made and not yet set (or failed).
    unset: FxHashSet<Id>,
}

impl Clocks {
    /// The queue numbered `queue` (made on first use, out of order or not).
    fn queue(&mut self, queue: u32, out_of_order: bool) -> usize {
        if let Some((n, i)) = self.last
            && n == queue
        {
            return i;
        }
        let slots = self.queues.len();
        let i = *self.index.entry(queue).or_insert_with(|| {
            self.queues.push(Queue {
                slot: (slots % SLOTS) as u8,
                out_of_order,
                ..Queue::default()
            });
            slots
        });
        self.last = Some((queue, i));
        i
    }

    /// Command `id` of `kind`, enqueued on queue `queue` (out of order or not) with `deps`
    /// ([`super::order::Queue::place`] has added the queue's order to them); `named`: the
    /// program can name it later (it holds its event, or the call blocked), so it is kept for
    /// what waits for it.
    ///
    /// On an in-order queue the command's own clock (its place raised) stands for the clock it
    /// ran after: every earlier command of its queue is known either way (a queue sharing its
    /// slot looks ordered by it, as the module says), and so no copy is made.
    pub fn command(
        &mut self,
        id: Id,
        (queue, out_of_order): (u32, bool),
        kind: Kind,
        deps: &Deps,
        named: bool,
    ) -> Seen<'_> {
        let i = self.queue(queue, out_of_order);
        let q = &mut self.queues[i];
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
        q.gate = gate;
        q.host_seen = self.host_version;
        let seen = if q.out_of_order {
            let mut own = clock.clone();
            own.raise(stamp);
            q.newest.join(&own);
            if named {
                keep(&mut self.ring, id, stamp, &own, gate);
            }
            if kind == Kind::Barrier {
                q.barrier = own;
            }
            self.before = clock;
            &self.before
        } else {
            clock.raise(stamp);
            q.newest = clock;
            if named {
                keep(&mut self.ring, id, stamp, &q.newest, gate);
            }
            &q.newest
        };
        Seen {
            stamp,
            clock: seen,
            gate,
        }
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
        if let Some(&i) = self.index.get(&queue) {
            self.host.join(&self.queues[i].newest);
            self.host_version += 1;
        }
    }

    /// Whether command `b` (placed) happens after the command stamped `a`.
    pub fn ordered(a: Stamp, b: &Placed) -> bool {
        b.clock.knows(a)
    }
}

/// Keeps command `id`'s place in the ring (its slot's storage reused: no allocation once the
/// ring is full).
fn keep(ring: &mut Vec<(Id, Placed)>, id: Id, stamp: Stamp, clock: &Clock, gate: Option<Id>) {
    if ring.is_empty() {
        ring.resize(WINDOW, (0, Placed::default()));
    }
    let (n, p) = &mut ring[id as usize % WINDOW];
    *n = id;
    p.stamp = stamp;
    p.clock.clone_from(clock);
    p.gate = gate;
}

#[cfg(test)]
mod tests;
