//! The collector: takes a queue's completed commands out of its list ([`Waiting`]), hands each
//! to [`finish`], releases its event, and says which callback to arm next ([`due`]); the
//! completion paths (`completion.rs`) call it and arm what it says.
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

use super::finish::{self, Now};
use super::pending::{OVER, Pending, Request, Waiting, due};
use super::state::QueueInfo;
use crate::layer::driver;
use opencl_sys::*;
use smallvec::SmallVec;
use std::collections::VecDeque;

/// Whether clxfer holds a reference of its own to the program's `event`, a command of `queue`
/// (once no collector holds part of the list).
pub fn holds(queue: &QueueInfo, event: usize) -> bool {
    let waiting = settled(queue);
    waiting.list.iter().any(|p| p.event == event && p.program)
}

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
/// comment); `gap`: the queue's between callbacks. Returns what to arm or defer next ([`due`]),
/// for the caller to do without the queue's lock (nothing, where another collector works).
///
/// # Safety
/// The queue's listed events are live (clxfer holds a reference to each).
#[must_use]
pub unsafe fn collect(queue: &QueueInfo, request: Request, gap: u64) -> (Option<usize>, bool) {
    let now = Now::default();
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
        return (None, false);
    }
    w.collecting = true;
    loop {
        let requests = std::mem::take(&mut w.requests);
        if requests.is_empty() {
            w.collecting = false;
            let at = if gap == 0 { 0 } else { now.get() };
            return due(&mut w, at, gap);
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
unsafe fn pass(queue: &QueueInfo, list: &mut VecDeque<Pending>, request: Request, now: &Now) {
    // The common case, one command listed and its callback run: what the general case below does
    // with it, without building the statuses.
    if let Request::Fired { event, status } = request
        && list.len() == 1
        && let Some(p) = list.front_mut().filter(|p| p.event == event)
    {
        p.armed = false;
        if is_over(status) && !p.reported {
            let asked = unsafe { finish::ask(queue, p, status) };
            unsafe { finish::finish(queue, p, status, asked, now) };
        }
        if p.reported {
            finish::driver_call(&queue.device, || unsafe {
                driver::release_event(p.event as cl_event)
            });
            list.clear();
        }
        return;
    }
    let status_of = |p: &Pending, unknown: cl_int| {
        finish::driver_call(&queue.device, || unsafe {
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
    // Ask the driver every time first, then report what is over, then release what no callback
    // still waits on (`finish::ask`: queries and releases interleaved cost NVIDIA's enqueuing
    // threads); keep the rest, in order.
    let asked: SmallVec<[finish::Asked; 32]> = (list.iter().zip(&statuses))
        .map(|(p, &st)| match is_over(st) && !p.reported {
            true => unsafe { finish::ask(queue, p, st) },
            false => None,
        })
        .collect();
    let mut released: SmallVec<[usize; 32]> = SmallVec::new();
    let mut i = 0;
    list.retain_mut(|p| {
        let (st, times) = (statuses[i], asked[i]);
        i += 1;
        if is_over(st) && !p.reported {
            unsafe { finish::finish(queue, p, st, times, now) };
        }
        if p.reported && !p.armed {
            released.push(p.event);
            return false;
        }
        true
    });
    for event in released {
        finish::driver_call(&queue.device, || unsafe {
            driver::release_event(event as cl_event)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layer::intercept::pending::tests::pending;

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
