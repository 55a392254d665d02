//! How clxfer learns that the commands it times completed, and collects them: a completion callback
//! armed per queue at a time, a timer thread for the deferred ones, and the program's waits. Each
//! hands the queue to the collector (`collect.rs`) and arms what it says.
//!
//! One completion callback at a time is armed per queue, on its newest command: when it runs, its
//! collector takes every command that has completed, then arms a callback again on the newest of
//! the rest. A callback per command costs PoCL more than all of clxfer's own work on an enqueue,
//! and one costs NVIDIA's OpenCL tens of microseconds (docs/PERFORMANCE.md); where the vendor rules
//! give a gap (`callback_gap_us`), one is armed at most every gap, the rest deferred (the timer
//! thread, below), and none within a gap of the program's last wait on the queue: a program that
//! waits collects its commands itself (on the H200, with four threads enqueuing, the storm's
//! callbacks every 100 ms per queue still cost every enqueue about 2 µs, and none were needed
//! there: docs/PERFORMANCE.md). A command that never completes (a marker behind a user event the
//! program sets only at the end) would keep its callback, and with it every later command, waiting:
//! so once `pending::REARM` commands have been listed since the last arming, another callback is
//! armed on the newest, whatever is still armed, if `REARM_AFTER` (10 ms) has passed since the last
//! arming. At most 256 completed commands per queue, or those the program enqueues between two
//! callbacks (the vendor's gap, or 10 ms) if more, wait to be collected, beyond those the driver
//! itself is still running. How the collector works without the queue's lock while the driver is
//! asked: `collect.rs`.

use super::collect;
use super::finish::driver_call;
use super::pending::{Request, Waiting, due};
use super::state::QueueInfo;
use crate::layer::driver;
use crate::sink::buffer;
use crate::sync::Mutex;
use crate::timing::clock;
use opencl_sys::*;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Hands `request` to the queue's collector ([`collect::collect`]), then arms or defers the
/// next callback it says.
///
/// # Safety
/// As [`collect::collect`].
pub unsafe fn collect(queue: &Arc<QueueInfo>, request: Request) {
    let decided = unsafe { collect::collect(queue, request, gap(queue)) };
    unsafe { arm_or_defer(queue, decided) };
}

/// In a forked child: the parent's deferred queues are forgotten (the timer thread was not
/// forked: the child's own are deferred afresh).
pub fn forget_after_fork() {
    std::mem::forget(std::mem::take(&mut *DEFERRED.lock()));
}

/// Before a fork: this file's process-wide locks, in the order its paths take them (the timer
/// thread holds `BUSY` while a round takes `DEFERRED`).
pub fn hold_for_fork() -> Vec<Box<dyn std::any::Any>> {
    vec![Box::new(timer::busy()), Box::new(DEFERRED.lock())]
}

/// Arms what [`due`] said, and lists a deferred queue for the timer. Called without the
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
            due(&mut waiting, now, gap(&queue))
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
        crate::sigset::block_in_this_thread();
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
        unsafe { collect(&queue, Request::Refused { event }) };
    }
}

/// The completion callback (any driver thread). Never panics out.
unsafe extern "C" fn completed(event: cl_event, status: cl_int, user: *mut c_void) {
    // SAFETY: `user` is the queue reference `arm_on` handed out for this callback, which runs once.
    let queue = unsafe { Arc::from_raw(user as *const QueueInfo) };
    let event = event as usize;
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe {
        collect(&queue, Request::Fired { event, status })
    }));
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
    if !unsafe { collect_held(queue) } {
        return;
    }
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

/// Collects what completed on `queue`, as a program's wait would, if clxfer holds any of its
/// commands; `false` where it holds none (nothing asked).
///
/// # Safety
/// As [`collect`].
pub unsafe fn collect_held(queue: &Arc<QueueInfo>) -> bool {
    {
        let w = queue.waiting.lock();
        if w.list.is_empty() && !w.collecting {
            return false;
        }
    }
    unsafe { synced(queue, 0) };
    true
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
