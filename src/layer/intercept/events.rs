//! Device timing, the enqueue's side: every timed command gets an event (clxfer's own when the
//! program passes none, the program's retained otherwise) and is listed in its queue's list
//! (`pending.rs`), for its completion to be collected (`completion.rs`, `collect.rs`) and its
//! times read and handed to the writer as they come (`finish.rs`), so no events pile up. Which
//! commands are timed at all is the sampler's to say ([`capture`], `timing::sample`); summary mode
//! times only transfers and kernels.

use super::completion;
use super::pending::{Pending, What, due};
use super::queues;
use super::state::QueueInfo;
use crate::config::DeviceTiming;
use crate::layer::Span;
use crate::layer::driver;
use crate::sink::buffer;
use crate::sink::counters;
use crate::sink::record::{Record, Timing};
use crate::sync::Padded;
use crate::timing::clock;
use crate::timing::sample::{Sample, Sampler};
use opencl_sys::*;
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

thread_local! {
    /// Where the driver writes the event clxfer asked for when the program passed none.
    static SLOT: Cell<cl_event> = const { Cell::new(std::ptr::null_mut()) };
}

/// Taken before the call: whether clxfer supplied the event out-pointer, and whether sampling
/// left the command untimed; and the queue, when it was looked up to decide (the enqueue's
/// `after` uses it rather than looking again).
#[derive(Default)]
pub struct Capture {
    pub queue: Option<Arc<QueueInfo>>,
    supplied: bool,
    sampled_out: bool,
    /// Profiling was turned on for this command (a `Toggled` queue): [`settle`] turns it off.
    toggled: bool,
    /// How long turning it on took, ns.
    toggle_ns: u32,
}

impl Capture {
    /// The event out-pointer is clxfer's: the program never sees the event.
    pub fn supplied(&self) -> bool {
        self.supplied
    }

    /// Sampled device timing left the command untimed (`timing::sample`).
    pub fn sampled_out(&self) -> bool {
        self.sampled_out
    }
}

/// Before an enqueue on `queue` of a command of kind `sample`: whether to time it, and if so make
/// sure the driver hands back an event.
#[inline]
pub fn capture(event: &mut *mut cl_event, queue: cl_command_queue, sample: Sample) -> Capture {
    let config = crate::config::global();
    if config.device_timing == DeviceTiming::Off
        || (sample == Sample::Other && !crate::sink::recording().time_unreported)
    {
        return Capture::default();
    }
    // One lookup for both questions (a queue clxfer does not know yet is decided after the
    // call, `track`).
    let queue_info = queues::cached(queue as usize);
    let q = queue_info.as_ref().filter(|q| q.timing != Timing::Untimed);
    let timed = match (config.device_timing, q) {
        (DeviceTiming::Sampled, Some(q)) => match config.test_sample_every {
            0 => BUDGET.decide(sample, price_ns(q)),
            every => BUDGET.decide_every(sample, every),
        },
        _ => true,
    };
    let toggled = q.is_some_and(|q| q.timing == Timing::Toggled);
    let mut cap = Capture {
        queue: queue_info,
        sampled_out: true,
        ..Capture::default()
    };
    if !timed {
        return cap;
    }
    // A `Toggled` queue: profiling on for this command, unless another thread's command holds
    // the queue's toggle. Then this one is not timed: waiting could deadlock (that call may be a
    // blocking one, waiting for what this thread is about to do).
    if toggled && let Some(q) = &cap.queue {
        if q.toggling.swap(true, Ordering::Acquire) {
            return cap;
        }
        let before = clock::now_ns();
        // SAFETY: the queue is one clxfer saw made (its handle is live while the program
        // enqueues on it).
        if !unsafe { driver::set_profiling(queue, true) } {
            q.toggling.store(false, Ordering::Release);
            return cap;
        }
        cap.toggled = true;
        cap.toggle_ns = u32::try_from(clock::now_ns().saturating_sub(before)).unwrap_or(u32::MAX);
    }
    cap.sampled_out = false;
    if event.is_null() {
        match SLOT.try_with(|slot| slot.as_ptr()) {
            Ok(slot) => {
                *event = slot;
                cap.supplied = true;
            }
            Err(_) => {
                settle(&cap, queue);
                return Capture {
                    queue: cap.queue,
                    ..Capture::default()
                };
            }
        }
    }
    cap
}

/// After the driver's call: profiling off again on a `Toggled` queue where [`capture`] turned it
/// on. Every hook that captures calls this first thing in its `after`.
///
/// The two switches are timed, and what they took is spent from the sampling budget on top of
/// the rules' price of a timed command (whose measurement had no switches), and said in the
/// own-cost line: on the H200 a pair took 0.2–0.45 µs, with one enqueuing thread or four
/// (docs/PERFORMANCE.md), but a driver that makes them wait is charged what they cost.
pub fn settle(cap: &Capture, queue: cl_command_queue) {
    if !cap.toggled {
        return;
    }
    if let Some(q) = &cap.queue {
        let before = clock::now_ns();
        // SAFETY: as in `capture`.
        unsafe { driver::set_profiling(queue, false) };
        let took = clock::now_ns().saturating_sub(before) + u64::from(cap.toggle_ns);
        q.toggling.store(false, Ordering::Release);
        BUDGET.spend(took);
        let own = &q.device.own;
        own.toggles.fetch_add(1, Ordering::Relaxed);
        own.toggle_ns.fetch_add(took, Ordering::Relaxed);
    }
}

/// The process's budget for timing small commands (`timing::sample`), which every enqueuing
/// thread reads, and writes when time passed or it timed a command: apart from what they only
/// read.
static BUDGET: Padded<Sampler> = Padded(Sampler::new());

/// What timing one command costs on the queue's driver, ns (its rules' `timed_command_us`).
fn price_ns(q: &QueueInfo) -> i64 {
    (q.device.rules.timed_command_us * 1000.0) as i64
}

/// Written by every enqueue: apart, like [`BUDGET`].
static NEXT_ID: Padded<AtomicU64> = Padded(AtomicU64::new(1));

/// A new command's (or user event's) number.
pub fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Taken as `clFinish` starts: the commands numbered below it were enqueued before, so they are
/// over once it returns.
pub fn first_unfinished() -> u64 {
    NEXT_ID.load(Ordering::Acquire)
}

/// The first command id of this process: lower ones were enqueued by the parent before a fork,
/// and are the parent's to report.
static FIRST_OURS: AtomicU64 = AtomicU64::new(0);

/// In a forked child: the parent's commands never complete here and are not this process's.
/// The queues' lists are fresh (`fork.rs`); the parent's deferred queues are forgotten.
pub fn forget_after_fork() {
    FIRST_OURS.store(NEXT_ID.load(Ordering::Relaxed), Ordering::Relaxed);
    completion::forget_after_fork();
}

/// A command sampled device timing left untimed, its call ended at `end`: counted, and the
/// budget learns the enqueue rate.
pub fn sampled_out(queue: &QueueInfo, end: u64) {
    BUDGET.seen(end);
    queue.sampled.fetch_add(1, Ordering::Relaxed);
}

/// After an enqueue the driver accepted: time command `id` on the device. `event` is the event
/// out-pointer the driver got. Returns whether it is timed (a device record will come). A timed
/// command takes the report's `facts` (summary mode) along, to send them when it completes.
/// Not for a command sampling left untimed: the caller counts it with [`sampled_out`], without
/// describing a device slice it will never get.
///
/// # Safety
/// The driver accepted the enqueue, so `*event` (if `event` is not null) is a live event.
pub unsafe fn track(
    id: u64,
    cap: &Capture,
    event: *mut cl_event,
    queue: &Arc<QueueInfo>,
    span: &Span,
    mut what: What,
    facts: &mut Option<crate::report::Work>,
) -> bool {
    let handle = if event.is_null() {
        std::ptr::null_mut()
    } else {
        unsafe { event.read() }
    };
    if cap.supplied {
        let _ = SLOT.try_with(|slot| slot.set(std::ptr::null_mut()));
    }
    BUDGET.seen(span.end);
    if handle.is_null() {
        return false;
    }
    let untimed = queue.timing == Timing::Untimed || !crate::config::global().device_timing.on();
    let unreported = facts.is_none() && !crate::sink::recording().time_unreported;
    if untimed || unreported {
        if untimed {
            queue.device.untimed.fetch_add(1, Ordering::Relaxed);
        }
        if cap.supplied {
            unsafe { driver::release_event(handle) };
        }
        return false;
    }
    // The program's event: hold a reference of clxfer's own until the command completes.
    if !cap.supplied && !unsafe { driver::retain_event(handle) } {
        return false;
    }
    let own = &queue.device.own;
    own.timed.fetch_add(1, Ordering::Relaxed);
    if cap.supplied {
        own.supplied.fetch_add(1, Ordering::Relaxed);
    }
    what.facts = facts.take();
    counters::in_flight_add(what.bytes as i64, || span.end);
    let pending = Pending {
        event: handle as usize,
        id,
        what,
        host_tid: buffer::current_tid(),
        host_begin: span.begin,
        host_end: span.end,
        reported: false,
        armed: false,
        program: !cap.supplied,
    };
    let gap = completion::gap(queue);
    let decided = {
        let mut waiting = queue.waiting.lock();
        waiting.push(pending);
        due(&mut waiting, span.end, gap)
    };
    unsafe { completion::arm_or_defer(queue, decided) };
    true
}

/// At the end: how many of this process's commands have not completed (counted here rather than
/// kept in a shared counter every enqueue and completion would write). Their report facts (summary
/// mode) go to the report without a device time.
pub fn report_waiting(queues: &[Arc<QueueInfo>]) -> u64 {
    let first = FIRST_OURS.load(Ordering::Relaxed);
    let mut left = Vec::new();
    let mut incomplete = 0;
    for q in queues {
        // Once no collector holds commands (bounded: a collector on a driver thread may wait).
        let mut waiting = super::collect::settled(q);
        let ours = waiting.iter_mut().filter(|p| p.id >= first && !p.reported);
        for p in ours {
            incomplete += 1;
            left.extend(p.fact());
        }
    }
    for facts in left {
        buffer::push_with(|_| Record::Fact(facts, None));
    }
    incomplete
}
