//! What clxfer keeps of the commands it times until they complete: each command in flight
//! ([`Pending`], what its device slice will say), and a queue's list of them ([`Waiting`]) with
//! when its next completion callback is due ([`due`]). Plain state: the collector
//! (`collect.rs`) takes completed commands out, the completion paths (`completion.rs`) arm what
//! [`due`] says.

use crate::layer::Api;
use crate::model::classification::{Direction, Path};
use opencl_sys::*;
use smallvec::SmallVec;
use std::collections::VecDeque;
use std::sync::Arc;

/// What the device slice will say about the command.
pub struct What {
    pub api: Api,
    /// A transfer's direction and path (the device slice's name).
    pub class: Option<(Direction, Path)>,
    pub bytes: u64,
    pub blocking: bool,
    pub kernel: Option<Arc<str>>,
    /// Summary mode: what the report needs, sent with the device time when the command completes
    /// (its place in the graph is made then, of this and the pending command's own fields).
    pub facts: Option<crate::report::Work>,
    /// Trace mode: the commands its wait list named (for the dependency arrows).
    pub waits: Box<[u64]>,
    /// Summary mode: what the report's graph follows of its queue order and wait list
    /// ([`crate::report::Link::before`]).
    pub before: [u64; 3],
}

/// A command clxfer times, until its completion is collected (`collect.rs`).
pub struct Pending {
    /// The event, holding a reference of clxfer's own.
    pub event: usize,
    pub id: u64,
    pub(super) what: What,
    pub(super) host_tid: u32,
    pub host_begin: u64,
    pub host_end: u64,
    /// Its device record is written; only the event is left to release (once no callback is
    /// armed on it).
    pub reported: bool,
    /// A completion callback is armed on its event and has not run.
    pub armed: bool,
    /// The event is the program's (clxfer's reference is one more than the program's own).
    pub program: bool,
}

impl Pending {
    /// Summary mode: the report's facts, with the command's place in the graph (times on the
    /// monotonic clock, made relative by the writer); once.
    pub(super) fn fact(&mut self) -> Option<crate::report::Fact> {
        let work = self.what.facts.take()?;
        let link = crate::report::Link {
            id: self.id,
            tid: self.host_tid,
            begin: self.host_begin,
            end: self.host_end,
            before: self.what.before,
        };
        Some(crate::report::Fact { work, link })
    }
}

/// Commands listed since the last arming after which another callback is armed although one
/// still is (the armed command may never complete), once [`REARM_AFTER`] has passed too: a
/// callback costs NVIDIA's OpenCL tens of microseconds, and an armed command that is merely slow
/// should not cost another.
pub const REARM: u32 = 256;
pub const REARM_AFTER: u64 = 10_000_000;

/// What a collector is asked to do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Request {
    /// The callback armed on `event` ran with `status`.
    Fired { event: usize, status: cl_int },
    /// The program waited for the queue: collect what has completed; commands numbered below
    /// `over_below` are known to be over (`clFinish`).
    Synced { over_below: u64 },
    /// The driver refused a callback on `event`: nothing will collect the list, which ends now,
    /// without device times.
    Refused { event: usize },
}

#[derive(Default)]
pub struct Waiting {
    pub(super) list: VecDeque<Pending>,
    /// An empty list with capacity, swapped in while a collector holds the list.
    pub(super) spare: VecDeque<Pending>,
    /// Callbacks armed that have not run.
    pub(super) armed: u32,
    /// Commands listed since the last arming.
    pub(super) since_armed: u32,
    /// When the last callback was armed (host clock, ns).
    pub(super) last_armed: u64,
    /// When the program last waited for the queue (a deferring vendor's only; host clock, ns).
    pub(super) last_synced: u64,
    /// Listed in the timer's deferred queues (`completion.rs`).
    pub(super) deferred: bool,
    /// A collector holds the commands it took out.
    pub(super) collecting: bool,
    /// Rounds the collectors have finished (each takes the requests made before it began).
    pub(super) rounds: u64,
    /// Threads waiting for a round ([`wait_for`]): only then is a finished round signalled (a
    /// signal is a system call).
    pub(super) waiters: u32,
    pub(super) requests: SmallVec<[Request; 4]>,
}

impl Waiting {
    /// Lists a new command (`events::track`).
    pub(super) fn push(&mut self, p: Pending) {
        self.list.push_back(p);
        self.since_armed = self.since_armed.saturating_add(1);
    }

    /// When the queue's commands were last taken care of: a callback armed, or the program's
    /// wait. The next callback is due a gap after.
    pub(super) fn quiet_since(&self) -> u64 {
        self.last_armed.max(self.last_synced)
    }

    /// The commands listed now and not taken out by a collector.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Pending> {
        self.list.iter_mut()
    }
}

/// What to arm now that the queue's list changed at `now` (0: the clock was not read): its newest
/// command, if no callback is armed (or [`REARM`] commands and [`REARM_AFTER`] came since the
/// last arming) and none was armed, nor the program waited, within `gap` ns; otherwise nothing. `true` in the second
/// place: the queue has just been deferred, and the caller lists it for the timer.
#[inline]
pub fn due(waiting: &mut Waiting, now: u64, gap: u64) -> (Option<usize>, bool) {
    let stuck = waiting.since_armed >= REARM
        && now != 0
        && now >= waiting.last_armed.saturating_add(REARM_AFTER);
    if waiting.armed != 0 && !stuck {
        return (None, false);
    }
    let quiet_since = waiting.quiet_since();
    let Some(newest) = waiting.list.back_mut().filter(|p| !p.armed) else {
        return (None, false);
    };
    if gap == 0 || now >= quiet_since.saturating_add(gap) {
        newest.armed = true;
        waiting.armed += 1;
        waiting.since_armed = 0;
        waiting.last_armed = now;
        return (Some(newest.event), false);
    }
    (None, !std::mem::replace(&mut waiting.deferred, true))
}

/// A command's status after `clFinish`: over, complete unless its profiling times say otherwise
/// (then the driver is asked).
pub const OVER: cl_int = cl_int::MAX;

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A command of event `event` whose enqueue call ran from `begin` to `end`.
    pub fn pending(event: usize, begin: u64, end: u64) -> Pending {
        Pending {
            event,
            id: event as u64,
            what: What {
                api: Api::ALL[0],
                class: None,
                bytes: 0,
                blocking: false,
                kernel: None,
                facts: None,
                waits: Box::default(),
                before: [0; 3],
            },
            host_tid: 0,
            host_begin: begin,
            host_end: end,
            reported: false,
            armed: false,
            program: false,
        }
    }

    fn waiting(events: &[usize]) -> Waiting {
        let mut w = Waiting::default();
        for &event in events {
            w.push(pending(event, 0, 0));
        }
        w.since_armed = 0;
        w
    }

    #[test]
    fn without_a_gap_the_newest_command_is_armed_whenever_none_is() {
        let mut w = waiting(&[1, 2]);
        assert_eq!(due(&mut w, 0, 0), (Some(2), false));
        // Armed: nothing more until its callback has run.
        w.push(pending(3, 0, 0));
        assert_eq!(due(&mut w, 0, 0), (None, false));
        w.armed = 0;
        assert_eq!(due(&mut w, 1, 0), (Some(3), false));
        assert!(!w.deferred);
        // Nothing waiting: nothing to arm.
        let mut empty = waiting(&[]);
        assert_eq!(due(&mut empty, 5, 0), (None, false));
    }

    #[test]
    fn with_a_gap_one_callback_is_armed_per_gap_and_the_rest_are_deferred_once() {
        let gap = 1_000_000;
        let mut w = waiting(&[1]);
        w.last_armed = 0;
        // The first one: the last arming (never) is more than a gap ago.
        assert_eq!(due(&mut w, gap, gap), (Some(1), false));
        assert_eq!(w.last_armed, gap);
        // Its callback ran at once; two more commands within the gap: deferred, listed once.
        w.armed = 0;
        w.list = waiting(&[2, 3]).list;
        assert_eq!(due(&mut w, gap + 10, gap), (None, true));
        assert!(w.deferred);
        assert_eq!(due(&mut w, gap + 20, gap), (None, false));
        // The gap has passed (the timer's round clears the flag first): the newest is armed.
        w.deferred = false;
        assert_eq!(due(&mut w, 2 * gap, gap), (Some(3), false));
        assert_eq!((w.armed, w.last_armed), (1, 2 * gap));
    }

    #[test]
    fn a_queue_the_program_waits_on_gets_no_callback_within_a_gap_of_the_wait() {
        let gap = 1_000_000;
        let mut w = waiting(&[1]);
        // The program waited at 5 gaps; a command listed just after is left to its next wait.
        w.last_synced = 5 * gap;
        assert_eq!(due(&mut w, 5 * gap + 10, gap), (None, true));
        w.deferred = false;
        assert_eq!(due(&mut w, 6 * gap - 1, gap), (None, true));
        // No wait for a gap: the timer arms it, as for a program that never waits.
        w.deferred = false;
        assert_eq!(due(&mut w, 6 * gap, gap), (Some(1), false));
        // Without a gap (a vendor whose callbacks are cheap) a wait changes nothing.
        let mut w = waiting(&[1]);
        w.last_synced = 5 * gap;
        assert_eq!(due(&mut w, 5 * gap + 10, 0), (Some(1), false));
    }

    #[test]
    fn a_callback_that_never_runs_does_not_keep_later_commands_waiting() {
        let t0 = 1_000;
        let mut w = waiting(&[1]);
        assert_eq!(due(&mut w, t0, 0), (Some(1), false));
        // Command 1 never completes; REARM - 1 more commands arm nothing, however late.
        let late = t0 + REARM_AFTER;
        for e in 2..=REARM as usize {
            w.push(pending(e, 0, 0));
            assert_eq!(due(&mut w, late, 0), (None, false), "command {e}");
        }
        // The REARM-th since, but sooner than REARM_AFTER: nothing (a slow command, not stuck).
        let newest = REARM as usize + 1;
        w.push(pending(newest, 0, 0));
        assert_eq!(due(&mut w, late - 1, 0), (None, false));
        // Without a time (the clock not read): nothing.
        assert_eq!(due(&mut w, 0, 0), (None, false));
        // REARM commands and REARM_AFTER: a second callback, on the newest.
        assert_eq!(due(&mut w, late, 0), (Some(newest), false));
        assert_eq!(w.armed, 2);
        // A command already armed is never armed twice.
        w.since_armed = REARM;
        assert_eq!(due(&mut w, late + REARM_AFTER, 0), (None, false));
    }
}
