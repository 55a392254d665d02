//! Device timing: every enqueued command gets an event (clxfer's own when the program passes
//! none, the program's retained otherwise) and a completion callback. The callback reads the four
//! profiling timestamps, places them on the host clock (`timing::mapping`), releases the event and
//! hands a device record to the writer, so device records stream out as commands finish and no
//! events pile up.

use super::Device;
use super::queues::QueueInfo;
use crate::layer::driver;
use crate::layer::{Api, Span};
use crate::sink::buffer;
use crate::sink::counters;
use crate::sink::record::{Command, DeviceTime, Record, Timing};
use crate::timing::{clock, mapping};
use opencl_sys::*;
use std::cell::Cell;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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

/// Taken before the call: whether clxfer supplied the event out-pointer.
#[derive(Clone, Copy, Debug, Default)]
pub struct Capture {
    supplied: bool,
}

/// Before an enqueue: make sure the driver hands back an event.
pub fn capture(event: &mut *mut cl_event) -> Capture {
    if !crate::config::global().device_timing || !event.is_null() {
        return Capture::default();
    }
    match SLOT.try_with(|slot| slot.as_ptr()) {
        Ok(slot) => {
            *event = slot;
            Capture { supplied: true }
        }
        Err(_) => Capture::default(),
    }
}

/// Commands whose completion has not arrived yet.
static INCOMPLETE: AtomicU64 = AtomicU64::new(0);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub fn incomplete() -> u64 {
    INCOMPLETE.load(Ordering::Relaxed)
}

/// What the device slice will say about the command.
pub struct What {
    pub api: Api,
    pub class: Option<(&'static str, &'static str)>,
    pub bytes: u64,
    pub blocking: bool,
    pub kernel: Option<Arc<str>>,
}

struct Pending {
    id: u64,
    what: What,
    queue: Arc<QueueInfo>,
    host_tid: u32,
    host_begin: u64,
    host_end: u64,
}

/// After an enqueue the driver accepted: time the command on the device. `event` is the event
/// out-pointer the driver got. Returns the command's id, 0 when it is not timed.
///
/// # Safety
/// The driver accepted the enqueue, so `*event` (if `event` is not null) is a live event.
pub unsafe fn track(
    cap: Capture,
    event: *mut cl_event,
    queue: &Arc<QueueInfo>,
    span: &Span,
    what: What,
) -> u64 {
    let handle = if event.is_null() {
        std::ptr::null_mut()
    } else {
        unsafe { event.read() }
    };
    if cap.supplied {
        let _ = SLOT.try_with(|slot| slot.set(std::ptr::null_mut()));
    }
    if handle.is_null() {
        return 0;
    }
    if queue.timing == Timing::Untimed || !crate::config::global().device_timing {
        queue.device.untimed.fetch_add(1, Ordering::Relaxed);
        if cap.supplied {
            unsafe { driver::release_event(handle) };
        }
        return 0;
    }
    // The program's event: hold a reference of clxfer's own until the command completes.
    if !cap.supplied && !unsafe { driver::retain_event(handle) } {
        return 0;
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let bytes = what.bytes;
    let pending = Box::new(Pending {
        id,
        what,
        queue: queue.clone(),
        host_tid: buffer::current_tid(),
        host_begin: span.begin,
        host_end: span.end,
    });
    INCOMPLETE.fetch_add(1, Ordering::Relaxed);
    counters::in_flight_add(bytes as i64, span.end);
    let user = Box::into_raw(pending);
    // From here the callback may run at any time, on any thread, and owns `user`.
    if unsafe { driver::on_complete(handle, completed, user.cast()) } {
        id
    } else {
        // SAFETY: the driver refused the callback, so `user` was never handed out.
        drop(unsafe { Box::from_raw(user) });
        INCOMPLETE.fetch_sub(1, Ordering::Relaxed);
        counters::in_flight_add(-(bytes as i64), span.end);
        unsafe { driver::release_event(handle) };
        0
    }
}

/// The completion callback (any driver thread). Never panics out.
unsafe extern "C" fn completed(event: cl_event, status: cl_int, user: *mut c_void) {
    // SAFETY: `user` is the Pending that `track` leaked for this callback, which runs once.
    let pending = unsafe { Box::from_raw(user as *mut Pending) };
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe {
        finish(event, status, *pending)
    }));
}

unsafe fn finish(event: cl_event, status: cl_int, p: Pending) {
    let now = clock::now_ns();
    let times = if status == CL_COMPLETE {
        unsafe { driver::profiling(event) }
    } else {
        None
    };
    unsafe { driver::release_event(event) };
    INCOMPLETE.fetch_sub(1, Ordering::Relaxed);
    counters::in_flight_add(-(p.what.bytes as i64), now);
    let dev: &Device = &p.queue.device;
    let (queued, submit, start, end, time) = match times {
        Some([q, s, st, e]) if q != 0 && q <= s && s <= st && st <= e => {
            let offset = dev.clock.lock().place(p.host_begin, q);
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
            let t = now.max(p.host_end);
            (t, t, t, t, DeviceTime::Unavailable)
        }
    };
    if time == DeviceTime::Unavailable {
        dev.unavailable.fetch_add(1, Ordering::Relaxed);
    }
    let command = Command {
        id: p.id,
        api: p.what.api,
        queue: p.queue.r,
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
        kernel: p.what.kernel,
    };
    buffer::push_with(|_| Record::Command(command));
}
