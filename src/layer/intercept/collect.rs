//! Collecting completed commands: a queue's list of commands clxfer times ([`Waiting`]), and the
//! one collector that takes completed ones out of it.
//!
//! One completion callback at a time is armed per queue, on its newest command: when it runs, its
//! collector takes every command that has completed, then arms a callback again on the newest of
//! the rest. A callback per command costs PoCL more than all of clxfer's own work on an enqueue,
//! and one costs NVIDIA's OpenCL tens of microseconds (docs/PERFORMANCE.md); where the vendor
//! rules give a gap (`callback_gap_us`), one is armed at most every gap, the rest deferred
//! (`events.rs`), and none within a gap of the program's last wait on the queue: a program that
//! waits collects its commands itself (on the H200, with four threads enqueuing, the storm's
//! callbacks every 100 ms per queue still cost every enqueue about 2 µs, and none were needed
//! there: docs/PERFORMANCE.md). A command that never completes (a marker behind a user event the program sets
//! only at the end) would keep its callback, and with it every later command, waiting: so once
//! [`REARM`] commands have been listed since the last arming, another callback is armed on the
//! newest, whatever is still armed, if [`REARM_AFTER`] (10 ms) has passed since the last
//! arming. At most 256 completed commands per queue, or those the program enqueues between two
//! callbacks (the vendor's gap, or 10 ms) if
//! more, wait to be collected, beyond those the driver itself is still running.
//!
//! The queue's lock is never held while clxfer calls the driver (a driver may run callbacks from
//! a thread that holds its own lock, and the callback takes this one): the collector takes the
//! whole list out under the lock, asks the driver about it and reports without the lock, then
//! puts back what is left, in front of commands listed meanwhile. While one collector works, a
//! callback that wants collecting hands its request to it ([`Request`]) and returns at once (it
//! may run on a driver thread that holds a lock the collector's queries need); a wait of the
//! program hands its request over too, and waits until the collector has done it, so that the
//! records are out when the program's wait returns. Only the collector touches the commands it
//! took out.

use super::events::{self, Pending};
use super::queues::QueueInfo;
use crate::layer::driver;
use opencl_sys::*;
use smallvec::SmallVec;
use std::collections::VecDeque;
use std::sync::Arc;

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
    spare: VecDeque<Pending>,
    /// Callbacks armed that have not run.
    armed: u32,
    /// Commands listed since the last arming.
    since_armed: u32,
    /// When the last callback was armed (host clock, ns).
    pub(super) last_armed: u64,
    /// When the program last waited for the queue (a deferring vendor's only; host clock, ns).
    last_synced: u64,
    /// Listed in the timer's deferred queues (`events.rs`).
    pub(super) deferred: bool,
    /// A collector holds the commands it took out.
    collecting: bool,
    /// Rounds the collectors have finished (each takes the requests made before it began).
    rounds: u64,
    /// Threads waiting for a round ([`wait_for`]): only then is a finished round signalled (a
    /// signal is a system call).
    waiters: u32,
    requests: SmallVec<[Request; 4]>,
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

/// Whether clxfer holds a reference of its own to the program's `event`, a command of `queue`
/// (once no collector holds part of the list).
pub fn holds(queue: &QueueInfo, event: usize) -> bool {
    let waiting = settled(queue);
    waiting.list.iter().any(|p| p.event == event && p.program)
}

/// A command's status after `clFinish`: over, complete unless its profiling times say otherwise
/// (then the driver is asked).
pub const OVER: cl_int = cl_int::MAX;

/// Whether a status says the command is over: complete, failed, or [`OVER`].
fn is_over(status: cl_int) -> bool {
    status <= CL_COMPLETE || status == OVER
}

/// How an in-order queue's command listed before the one whose callback ran stands: listed
/// first by clxfer, but enqueued (its call returned) before the fired one's call began, so before
/// it in the queue (complete); or its call overlapped the fired one's (two threads on one queue:
/// the queue's order is unknown, so the driver is asked).
fn before_fired(p: &Pending, fired: &Pending) -> bool {
    p.host_end <= fired.host_begin
}

/// Hands `request` to the queue's collector, and collects if there is none (see the module's
/// comment). Then arms or defers the next callback.
///
/// # Safety
/// The queue's listed events are live (clxfer holds a reference to each).
pub unsafe fn collect(queue: &Arc<QueueInfo>, request: Request) {
    let gap = events::gap(queue);
    let now = events::Now::default();
    let mut w = queue.waiting.lock();
    match request {
        // Its callback has run: no longer armed.
        Request::Fired { .. } | Request::Refused { .. } => w.armed = w.armed.saturating_sub(1),
        // The program waits: no callback needed for a gap (without one, no clock is read).
        Request::Synced { .. } if gap != 0 => w.last_synced = now.get(),
        Request::Synced { .. } => {}
    }
    w.requests.push(request);
    if w.collecting {
        if let Request::Synced { .. } = request {
            // The round at work began before this request: the one after it does it.
            let done = w.rounds + 2;
            drop(wait_for(queue, w, |w| w.rounds >= done || !w.collecting));
        }
        return;
    }
    w.collecting = true;
    loop {
        let requests = std::mem::take(&mut w.requests);
        if requests.is_empty() {
            w.collecting = false;
            let at = if gap == 0 { 0 } else { now.get() };
            let decided = due(&mut w, at, gap);
            drop(w);
            unsafe { events::arm_or_defer(queue, decided) };
            return;
        }
        let spare = std::mem::take(&mut w.spare);
        let mut list = std::mem::replace(&mut w.list, spare);
        drop(w);
        for r in &requests {
            unsafe { pass(queue, &mut list, *r, &now) };
        }
        w = queue.waiting.lock();
        // What is left goes back in front of the commands listed meanwhile (mostly none).
        if !w.list.is_empty() {
            list.extend(w.list.drain(..));
        }
        let emptied = std::mem::replace(&mut w.list, list);
        w.spare = emptied;
        w.rounds += 1;
        if w.waiters > 0 {
            queue.collected.notify_all();
        }
    }
}

/// How long a program's wait, or the end, waits for another thread's collector.
const WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Waits (at most [`WAIT`]) until `done` holds of the queue's list, with its lock.
fn wait_for<'a>(
    queue: &'a QueueInfo,
    mut w: std::sync::MutexGuard<'a, Waiting>,
    done: impl Fn(&Waiting) -> bool,
) -> std::sync::MutexGuard<'a, Waiting> {
    let until = std::time::Instant::now() + WAIT;
    while !done(&w) {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        w.waiters += 1;
        w = match queue.collected.wait_timeout(w, left) {
            Ok((w, _)) => w,
            Err(e) => e.into_inner().0,
        };
        w.waiters -= 1;
    }
    w
}

/// The queue's list once no collector holds part of it (at most [`WAIT`]; the end).
pub fn settled(queue: &QueueInfo) -> std::sync::MutexGuard<'_, Waiting> {
    wait_for(queue, queue.waiting.lock(), |w| !w.collecting)
}

/// One request on the list a collector took out. Without the queue's lock.
///
/// # Safety
/// As [`collect`].
unsafe fn pass(
    queue: &QueueInfo,
    list: &mut VecDeque<Pending>,
    request: Request,
    now: &events::Now,
) {
    // The common case, one command listed and its callback run: what the general case below does
    // with it, without building the statuses.
    if let Request::Fired { event, status } = request
        && list.len() == 1
        && let Some(p) = list.front_mut().filter(|p| p.event == event)
    {
        p.armed = false;
        if is_over(status) && !p.reported {
            unsafe { events::finish(queue, p, status, now) };
        }
        if p.reported {
            events::driver_call(&queue.device, || unsafe {
                driver::release_event(p.event as cl_event)
            });
            list.clear();
        }
        return;
    }
    let status_of = |p: &Pending, unknown: cl_int| {
        events::driver_call(&queue.device, || unsafe {
            driver::event_status(p.event as cl_event)
        })
        .unwrap_or(unknown)
    };
    let mut statuses: SmallVec<[cl_int; 32]> = SmallVec::with_capacity(list.len());
    match request {
        Request::Fired { event, status } => {
            // On an in-order queue that completed it: commands before it in the queue are complete;
            // listed before it but of uncertain order, asked; listed after it, left for later.
            let in_order = list
                .iter()
                .position(|p| p.event == event)
                .filter(|_| queue.in_order && status == CL_COMPLETE);
            for (i, p) in list.iter().enumerate() {
                statuses.push(if p.event == event {
                    status
                } else if in_order.is_some_and(|at| before_fired(p, &list[at])) {
                    CL_COMPLETE
                } else if p.reported || in_order.is_some_and(|at| i > at) {
                    CL_RUNNING
                } else {
                    status_of(p, CL_RUNNING)
                });
            }
            // The fired one's callback has run: it may go once over.
            if let Some(p) = list.iter_mut().find(|p| p.event == event) {
                p.armed = false;
            }
        }
        Request::Synced { over_below } => {
            for p in list.iter() {
                statuses.push(if p.reported {
                    CL_RUNNING
                } else if p.id < over_below {
                    OVER
                } else {
                    status_of(p, CL_RUNNING)
                });
            }
        }
        Request::Refused { event } => {
            if let Some(p) = list.iter_mut().find(|p| p.event == event) {
                p.armed = false;
            }
            statuses.extend(list.iter().map(|_| CL_INVALID_EVENT));
        }
    }
    // Report what is over; release what no callback still waits on; keep the rest, in order.
    let mut i = 0;
    list.retain_mut(|p| {
        let st = statuses[i];
        i += 1;
        if is_over(st) && !p.reported {
            unsafe { events::finish(queue, p, st, now) };
        }
        if p.reported && !p.armed {
            events::driver_call(&queue.device, || unsafe {
                driver::release_event(p.event as cl_event)
            });
            return false;
        }
        true
    });
}

/// How long a reference count waits for callbacks of completed commands ([`quiesce`]).
const QUIESCE: std::time::Duration = std::time::Duration::from_millis(100);

/// Before the program is told a reference count: collects what has completed on `queue` and
/// waits (at most [`QUIESCE`]) until the callbacks armed on completed commands have run, so that
/// clxfer holds nothing of them.
///
/// # Safety
/// As [`collect`].
pub unsafe fn quiesce(queue: &Arc<QueueInfo>) {
    let idle = |w: &Waiting| !w.collecting && !w.list.iter().any(|p| p.reported && p.armed);
    {
        let w = queue.waiting.lock();
        if w.list.is_empty() && !w.collecting {
            return;
        }
    }
    unsafe { synced(queue, 0) };
    let until = std::time::Instant::now() + QUIESCE;
    while !idle(&queue.waiting.lock()) {
        if std::time::Instant::now() >= until {
            crate::debug!("a reference count: callbacks still pending after {QUIESCE:?}");
            break;
        }
        // The driver's thread is about to run the callbacks: give it the core.
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
}

/// The program waited for `queue`'s commands (clFinish, clWaitForEvents, a blocking enqueue): the
/// completed ones are collected now (or by the collector at work), so their records do not wait
/// for a callback that a program about to exit may never see. One a callback is armed on is
/// reported now and released when its callback has run.
///
/// # Safety
/// As [`collect`].
pub unsafe fn synced(queue: &Arc<QueueInfo>, over_below: u64) {
    unsafe { collect(queue, Request::Synced { over_below }) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layer::intercept::events::tests::pending;

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

    #[test]
    fn on_an_in_order_queue_only_commands_enqueued_before_the_fired_one_count_as_complete() {
        // (host_begin, host_end) of the fired command: 100..200.
        let fired = pending(9, 100, 200);
        let table = [
            // Its call returned before the fired one's began: before it in the queue.
            ((10, 90), true),
            ((10, 100), true),
            // Overlapping calls (two threads): the queue's order is unknown.
            ((10, 150), false),
            ((150, 160), false),
            ((120, 250), false),
        ];
        for ((begin, end), complete) in table {
            assert_eq!(
                before_fired(&pending(1, begin, end), &fired),
                complete,
                "{begin}..{end}"
            );
        }
    }
}
