//! Device timing: every enqueued command gets an event (clxfer's own when the program passes
//! none, the program's retained otherwise) and waits in its queue's list for a completion
//! callback ([`Waiting`]). The callback reads the four profiling timestamps of each completed
//! command, places them on the host clock (`timing::mapping`), releases the event and hands a
//! device record to the writer, so device records stream out as commands finish and no events
//! pile up. Where the vendor's callbacks are dear, they are rate-limited per queue and a timer
//! thread arms the deferred ones ([`Waiting`]). Summary mode times only transfers, reads START
//! and END only, and hands the writer the transfer's report facts with its device duration
//! instead of a device record. Which commands are timed at all is the sampler's to say
//! ([`capture`], `timing::sample`).

use super::Device;
use super::collect::{self, OVER, Request};
use super::queues::{self, QueueInfo};
use crate::config::DeviceTiming;
use crate::layer::driver;
use crate::layer::{Api, Span};
use crate::model::classification::{Direction, Path};
use crate::sink::buffer;
use crate::sink::counters;
use crate::sink::record::{Command, DeviceTime, Record, Timing};
use crate::sync::{Mutex, Padded};
use crate::timing::sample::{Sample, Sampler};
use crate::timing::{clock, mapping};
use opencl_sys::*;
use std::cell::Cell;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// The arguments of an enqueue whose first argument is the queue and last the event out-pointer.
pub trait EnqueueArgs {
    fn queue(&self) -> cl_command_queue;
    fn event(&self) -> *mut cl_event;
    fn event_mut(&mut self) -> &mut *mut cl_event;
}

macro_rules! enqueue_args {
    ($($t:ident)*) => {
        #[allow(non_snake_case)]
        impl<$($t),*> EnqueueArgs for (cl_command_queue, $($t,)* *mut cl_event) {
            fn queue(&self) -> cl_command_queue {
                self.0
            }
            fn event(&self) -> *mut cl_event {
                let (_, $($t,)* event) = self;
                $(let _ = $t;)*
                *event
            }
            fn event_mut(&mut self) -> &mut *mut cl_event {
                let (_, $($t,)* event) = self;
                $(let _ = $t;)*
                event
            }
        }
    };
}

enqueue_args!();
enqueue_args!(A);
enqueue_args!(A B);
enqueue_args!(A B C);
enqueue_args!(A B C D);
enqueue_args!(A B C D E);
enqueue_args!(A B C D E F);
enqueue_args!(A B C D E F G);
enqueue_args!(A B C D E F G H);
enqueue_args!(A B C D E F G H I);
enqueue_args!(A B C D E F G H I J);
enqueue_args!(A B C D E F G H I J K);
enqueue_args!(A B C D E F G H I J K L);

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
pub fn capture(event: &mut *mut cl_event, queue: cl_command_queue, sample: Sample) -> Capture {
    let config = crate::config::global();
    // Summary mode reports transfers and kernels: other commands need no device time.
    if config.device_timing == DeviceTiming::Off
        || (sample == Sample::Other && !crate::sink::records_every_call())
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

/// One of clxfer's own driver calls for device timing (a profiling or status query, an event's
/// release, a callback armed), its time added to the device's measured share of the driver's
/// work (`OwnCounts::driver_ns`, the own-cost line's "measured"). Two clock reads, made only for
/// timed commands. A callback the driver runs at once, inside the arming call, counts as the
/// driver's.
#[inline]
pub(super) fn driver_call<T>(dev: &Device, call: impl FnOnce() -> T) -> T {
    let before = clock::now_ns();
    let out = call();
    let took = clock::now_ns().saturating_sub(before);
    dev.own.driver_ns.fetch_add(took, Ordering::Relaxed);
    out
}

/// The time, read from the clock once, and only if asked (most completions never need it).
#[derive(Default)]
pub(super) struct Now(Cell<u64>);

impl Now {
    pub(super) fn get(&self) -> u64 {
        if self.0.get() == 0 {
            self.0.set(clock::now_ns());
        }
        self.0.get()
    }
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
/// The queues' lists are fresh (`fork.rs`); the parent's deferred queues are forgotten (the
/// timer thread was not forked: the child's own are deferred afresh).
pub fn forget_after_fork() {
    FIRST_OURS.store(NEXT_ID.load(Ordering::Relaxed), Ordering::Relaxed);
    std::mem::forget(std::mem::take(&mut *DEFERRED.lock()));
}

/// Before a fork: this room's process-wide locks, in the order its paths take them (the timer
/// thread holds `BUSY` while a round takes `DEFERRED`).
pub fn hold_for_fork() -> Vec<Box<dyn std::any::Any>> {
    vec![Box::new(timer::busy()), Box::new(DEFERRED.lock())]
}

/// A command sampled device timing left untimed, its call ended at `end`: counted, and the
/// budget learns the enqueue rate.
pub fn sampled_out(queue: &QueueInfo, end: u64) {
    BUDGET.seen(end);
    queue.sampled.fetch_add(1, Ordering::Relaxed);
}

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

/// Arms what [`collect::due`] said, and lists a deferred queue for the timer. Called without the
/// queue's lock.
#[inline]
pub(super) unsafe fn arm_or_defer(queue: &Arc<QueueInfo>, (arm, deferred): (Option<usize>, bool)) {
    if deferred {
        defer(queue);
    }
    if let Some(event) = arm {
        unsafe { arm_on(queue, event as cl_event) };
    }
}

/// The queue's gap between callbacks, ns: its vendor's, if the timer thread can run (0 otherwise:
/// every callback armed at once, as commands complete).
pub(super) fn gap(queue: &QueueInfo) -> u64 {
    if crate::config::global().test_no_callbacks {
        // Never due: collected at the program's waits only.
        return u64::MAX;
    }
    let us = queue.device.rules.callback_gap_us;
    if us == 0 || !timer::available() {
        return 0;
    }
    us as u64 * 1000
}

/// Queues whose waiting commands have no callback armed, for the timer thread.
static DEFERRED: Mutex<Vec<Arc<QueueInfo>>> = Mutex::new(Vec::new());

fn defer(queue: &Arc<QueueInfo>) {
    let first = {
        let mut deferred = DEFERRED.lock();
        deferred.push(queue.clone());
        deferred.len() == 1
    };
    if first {
        timer::wake();
    }
}

/// Arms the deferred callbacks that are due; returns when the next one left is. A command that
/// has completed runs its callback at once, on the calling (timer) thread.
fn round() -> Option<u64> {
    let queues = std::mem::take(&mut *DEFERRED.lock());
    let now = clock::now_ns();
    for queue in queues {
        let decided = {
            let mut waiting = queue.waiting.lock();
            waiting.deferred = false;
            collect::due(&mut waiting, now, gap(&queue))
        };
        unsafe { arm_or_defer(&queue, decided) };
    }
    DEFERRED
        .lock()
        .iter()
        .map(|q| q.waiting.lock().quiet_since().saturating_add(gap(q)))
        .min()
}

/// The thread that arms deferred callbacks: asleep while none is deferred. Not the writer thread:
/// a callback can wait for the writer's channel, and NVIDIA's `clSetEventCallback` for a callback
/// in progress, so a writer arming callbacks could wait for itself. It stops at exit before the
/// driver's own exit handlers run ([`timer::stop`]), so that it never calls a driver being torn
/// down.
mod timer {
    use super::*;

    /// The thread and the process it belongs to (a forked child has none until it needs one).
    static THREAD: Mutex<Option<(u32, std::thread::Thread)>> = Mutex::new(None);
    /// Set at exit, or when the thread could not start: callbacks are then armed at once.
    static STOPPED: AtomicBool = AtomicBool::new(false);
    /// Held while the thread calls the driver.
    static BUSY: Mutex<()> = Mutex::new(());

    /// Holds the thread between rounds (across a fork, `fork.rs`).
    pub(super) fn busy() -> std::sync::MutexGuard<'static, ()> {
        BUSY.lock()
    }

    /// Whether deferred callbacks can be armed by the timer thread: only where clxfer can stop it
    /// at exit before the driver's exit handlers. An `atexit` handler registered now, after the
    /// driver loaded, runs before them; under the Khronos loader's deinit path clxfer registers
    /// none (`lifecycle.rs`), and callbacks are armed at once there.
    pub(super) fn available() -> bool {
        static OK: OnceLock<bool> = OnceLock::new();
        let ok = *OK.get_or_init(|| {
            // SAFETY: a plain extern "C" function that lives as long as the process.
            !crate::layer::loaded::deinit_managed() && unsafe { libc::atexit(stop) } == 0
        });
        ok && !STOPPED.load(Ordering::Relaxed)
    }

    /// Wakes the thread (starting it in this process if need be). Not from the thread itself
    /// (a queue its round lists again, not yet due, or one a callback it armed deferred): that
    /// wake would end its next sleep at once, and it would spin on the queues' locks until the
    /// gap passed, for as long as the program kept waiting.
    pub(super) fn wake() {
        let pid = std::process::id();
        let mut thread = THREAD.lock();
        if let Some((p, t)) = thread.as_ref()
            && *p == pid
        {
            if t.id() != std::thread::current().id() {
                t.unpark();
            }
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("clxfer-timer".into())
            .spawn(run);
        match spawned {
            Ok(handle) => *thread = Some((pid, handle.thread().clone())),
            // No thread: from now on callbacks are armed at once; the commands already deferred
            // wait for the queue's next enqueue or wait.
            Err(_) => {
                STOPPED.store(true, Ordering::Release);
                crate::warn!("device timing: no timer thread; completion callbacks armed at once");
            }
        }
    }

    fn run() {
        buffer::quiet_thread();
        loop {
            loop {
                let next = {
                    let _busy = BUSY.lock();
                    if STOPPED.load(Ordering::Acquire) {
                        return;
                    }
                    catch_unwind(round).ok().flatten()
                };
                let Some(at) = next else { break };
                let wait = at.saturating_sub(clock::now_ns());
                std::thread::park_timeout(Duration::from_nanos(wait.max(50_000)));
            }
            // Until a queue is deferred again (`defer` wakes it).
            std::thread::park();
        }
    }

    /// At exit, before the driver's own exit handlers: the thread calls the driver no more.
    extern "C" fn stop() {
        STOPPED.store(true, Ordering::Release);
        // Waits for a round in progress to leave the driver; bounded, in case the exiting thread
        // holds a lock of the driver's that the round waits for.
        drop(BUSY.try_lock_for(Duration::from_millis(100)));
    }
}

/// A command clxfer times, until its completion is collected (`collect.rs`).
pub struct Pending {
    /// The event, holding a reference of clxfer's own.
    pub event: usize,
    pub id: u64,
    what: What,
    host_tid: u32,
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
    fn fact(&mut self) -> Option<crate::report::Fact> {
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
    // Summary mode reports transfers and kernels only: other commands need no device time.
    let unreported = facts.is_none() && !crate::sink::records_every_call();
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
    let gap = gap(queue);
    let decided = {
        let mut waiting = queue.waiting.lock();
        waiting.push(pending);
        collect::due(&mut waiting, span.end, gap)
    };
    unsafe { arm_or_defer(queue, decided) };
    true
}

/// Arms the queue's callback on `event`, one of its waiting commands. Called without the lock:
/// the driver may run the callback at once, on this thread.
unsafe fn arm_on(queue: &Arc<QueueInfo>, event: cl_event) {
    let user = Arc::into_raw(queue.clone());
    queue.device.own.callbacks.fetch_add(1, Ordering::Relaxed);
    // From here the callback may run at any time, on any thread, and owns `user`.
    let armed = driver_call(&queue.device, || unsafe {
        driver::on_complete(event, completed, user as *mut c_void)
    });
    if !armed {
        // SAFETY: the driver refused the callback, so `user` was never handed out.
        let queue = unsafe { Arc::from_raw(user) };
        let event = event as usize;
        unsafe { collect::collect(&queue, Request::Refused { event }) };
    }
}

/// The completion callback (any driver thread). Never panics out.
unsafe extern "C" fn completed(event: cl_event, status: cl_int, user: *mut c_void) {
    // SAFETY: `user` is the queue reference `arm_on` handed out for this callback, which runs once.
    let queue = unsafe { Arc::from_raw(user as *const QueueInfo) };
    let event = event as usize;
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe {
        collect::collect(&queue, Request::Fired { event, status })
    }));
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
        let mut waiting = collect::settled(q);
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

/// One command is over with `status`: hand its device record to the writer (once; the caller
/// releases the event).
pub(super) unsafe fn finish(queue: &QueueInfo, p: &mut Pending, status: cl_int, now: &Now) {
    let event = p.event as cl_event;
    if std::mem::replace(&mut p.reported, true) {
        return;
    }
    let dev: &Device = &queue.device;
    let mut status = status;
    // Times the vendor's driver does not really measure are not used as if it did.
    let untrusted =
        (dev.rules.borrowed_times).is_some_and(|r| r.value.cover(p.what.api.verb(), p.what.class));
    if !crate::sink::records_every_call() {
        // Summary mode: the report needs the duration and the start on the host clock (for the
        // busy time, a blocking call's wait for the commands ahead of it, and the critical
        // path), and no device slice; the in-flight counter is the trace's. START, two queries
        // rather than four: the command started after its call began, a bound on the clock's
        // offset as QUEUED is (a looser one: `timing::mapping` converges on the first command
        // that starts at once).
        let ok = matches!(status, CL_COMPLETE | OVER) && !untrusted;
        let ran = if ok {
            driver_call(dev, || unsafe {
                driver::profiling(
                    event,
                    [CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END],
                )
            })
            .filter(|&[start, end]| start != 0 && start < end)
            .map(|[start, end]| {
                let offset = dev.clock.place(p.host_begin, start);
                let host_start = mapping::to_host(start, offset);
                crate::report::Ran {
                    ns: end - start,
                    after_call_ns: host_start.saturating_sub(p.host_begin),
                    // On the monotonic clock: the writer makes it relative to the run's start.
                    start_ns: host_start,
                }
            })
        } else {
            None
        };
        if ran.is_none() {
            dev.unavailable.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(facts) = p.fact() {
            buffer::push_with(|_| Record::Fact(facts, ran));
        }
        return;
    }
    let times = match status {
        CL_COMPLETE | OVER => driver_call(dev, || unsafe {
            driver::profiling(
                event,
                [
                    CL_PROFILING_COMMAND_QUEUED,
                    CL_PROFILING_COMMAND_SUBMIT,
                    CL_PROFILING_COMMAND_START,
                    CL_PROFILING_COMMAND_END,
                ],
            )
        }),
        _ => None,
    };
    if status == OVER {
        // A failed command has no profiling times: only then is its status worth asking.
        status = match times {
            Some(_) => CL_COMPLETE,
            None => {
                driver_call(dev, || unsafe { driver::event_status(event) }).unwrap_or(CL_COMPLETE)
            }
        };
    }
    counters::in_flight_add(-(p.what.bytes as i64), || now.get());
    let (queued, submit, start, end, time) = match times {
        Some(_) if untrusted => {
            let t = now.get().max(p.host_end);
            (t, t, t, t, DeviceTime::Untrusted)
        }
        Some([q, s, st, e]) if st != 0 && st <= e => {
            // Some drivers leave QUEUED or SUBMIT at 0 or after START for commands they run
            // themselves (NVIDIA's migrations): those are clamped to START, the duration stands.
            let q = if q == 0 || q > st { st } else { q };
            let s = s.clamp(q, st);
            let offset = dev.clock.place(p.host_begin, q);
            let h = |t| mapping::to_host(t, offset);
            let time = if e > st {
                DeviceTime::Measured
            } else {
                DeviceTime::Unavailable
            };
            (h(q), h(s), h(st), h(e), time)
        }
        // No usable timestamps: the slice sits at the completion, which is after the enqueue.
        _ => {
            let t = now.get().max(p.host_end);
            (t, t, t, t, DeviceTime::Unavailable)
        }
    };
    if time != DeviceTime::Measured {
        dev.unavailable.fetch_add(1, Ordering::Relaxed);
    }
    let command = Command {
        id: p.id,
        api: p.what.api,
        queue: queue.r,
        host_tid: p.host_tid,
        host_begin: p.host_begin,
        host_end: p.host_end,
        queued,
        submit,
        start,
        end,
        time,
        status,
        class: p.what.class,
        bytes: p.what.bytes,
        blocking: p.what.blocking,
        kernel: p.what.kernel.take(),
        waits: std::mem::take(&mut p.what.waits),
        held: p.program,
    };
    buffer::push_with(|_| Record::Command(command));
}

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
}
