//! The host's synchronisation points: `clFinish`, `clWaitForEvents`, and the OpenCL 1.1
//! commands that order a queue without an event. Each collects what completed (device timing)
//! and tells the race check and the graph what the host now knows.

use super::enqueue::{Accepted, enqueued};
use super::events::{self, Capture};
use super::graph;
use super::{completion, queues};
use crate::layer::{Call, Hook, Span, args, driver};
use opencl_sys::{CL_SUCCESS, cl_int};
use smallvec::SmallVec;

/// `clEnqueueBarrier` and `clEnqueueWaitForEvents` (OpenCL 1.1): commands without an event,
/// which order their queue as a barrier does.
pub struct Ordered;

impl Hook<args::clEnqueueBarrier, cl_int> for Ordered {
    type State = Call;
    const ENQUEUES: bool = true;
    unsafe fn before(call: Call, _: &mut args::clEnqueueBarrier) -> Call {
        call
    }
    unsafe fn after(
        call: Call,
        args: &args::clEnqueueBarrier,
        ret: cl_int,
        span: &mut Span,
    ) -> cl_int {
        if ret == CL_SUCCESS {
            let accepted = Accepted::on(args.command_queue);
            unsafe { enqueued(call, Capture::default(), accepted, span) };
        }
        ret
    }
}

impl Hook<args::clEnqueueWaitForEvents, cl_int> for Ordered {
    type State = Call;
    const ENQUEUES: bool = true;
    unsafe fn before(call: Call, _: &mut args::clEnqueueWaitForEvents) -> Call {
        call
    }
    unsafe fn after(
        call: Call,
        args: &args::clEnqueueWaitForEvents,
        ret: cl_int,
        span: &mut Span,
    ) -> cl_int {
        if ret == CL_SUCCESS {
            let accepted = Accepted {
                waits: (args.num_events, args.event_list),
                ..Accepted::on(args.command_queue)
            };
            unsafe { enqueued(call, Capture::default(), accepted, span) };
        }
        ret
    }
}

/// `clFinish`: every command of the queue has completed; their records go out now. A host
/// synchronisation point: it waited for the queue's newest command and all before it.
pub struct Finished;

impl Hook<args::clFinish, cl_int> for Finished {
    type State = u64;
    const SYNCS: bool = true;
    unsafe fn before(_: Call, _: &mut args::clFinish) -> u64 {
        events::first_unfinished()
    }
    unsafe fn after(
        over_below: u64,
        args: &args::clFinish,
        ret: cl_int,
        span: &mut Span,
    ) -> cl_int {
        if ret == CL_SUCCESS
            && let Some(q) = queues::known(args.command_queue as usize)
        {
            unsafe { completion::synced(&q, over_below) };
            let last = q.order.newest().unwrap_or(0);
            let queue = (q.r.device, q.r.queue);
            span.waited = Some(crate::report::On::Queue { queue, last });
        }
        ret
    }
}

/// `clWaitForEvents`: the events' commands have completed; their queues' records go out now. A
/// host synchronisation point on those commands.
pub struct WaitedFor;

impl Hook<args::clWaitForEvents, cl_int> for WaitedFor {
    type State = ();
    const SYNCS: bool = true;
    unsafe fn before(_: Call, _: &mut args::clWaitForEvents) {}
    unsafe fn after(_: (), args: &args::clWaitForEvents, ret: cl_int, span: &mut Span) -> cl_int {
        let (n, list) = (args.num_events, args.event_list);
        if ret != CL_SUCCESS || list.is_null() {
            return ret;
        }
        // SAFETY: the driver accepted `n` events at `list`.
        let events = unsafe { std::slice::from_raw_parts(list, n as usize) };
        let mut seen: SmallVec<[usize; 4]> = SmallVec::new();
        for &e in events {
            if let Some(q) = unsafe { driver::event_queue(e) }
                && !seen.contains(&q)
            {
                seen.push(q);
                if let Some(q) = queues::known(q) {
                    unsafe { completion::synced(&q, 0) };
                }
            }
        }
        span.waited = graph::commands_of(events);
        ret
    }
}

/// `clReleaseCommandQueue` and `clReleaseContext`: before the program lets go of a queue (or of
/// the context its queues belong to), what completed on it is collected and clxfer's events of
/// it released, as the program's exit would. Held to the end, they would be released after
/// the program had released the queue, the context and the devices: PoCL then read the freed
/// sub-device's state in `clReleaseEvent` and crashed the program at its exit
/// (tests/verdict.rs, `sub_devices`). What is still running then, or completed with a callback
/// armed on it, stays held until its callback or the exit. Where clxfer holds nothing of a queue
/// nothing is asked: the C++ bindings release a handle's every copy.
pub struct Released;

impl Hook<args::clReleaseCommandQueue, cl_int> for Released {
    type State = ();
    unsafe fn before(_: Call, args: &mut args::clReleaseCommandQueue) {
        if let Some(q) = queues::known(args.command_queue as usize) {
            // SAFETY: the queue's waiting events are live (clxfer holds a reference to each).
            unsafe { completion::collect_held(&q) };
        }
    }
    unsafe fn after(_: (), _: &args::clReleaseCommandQueue, ret: cl_int, _: &mut Span) -> cl_int {
        ret
    }
}

impl Hook<args::clReleaseContext, cl_int> for Released {
    type State = ();
    unsafe fn before(_: Call, _: &mut args::clReleaseContext) {
        for q in queues::all() {
            // SAFETY: as above.
            unsafe { completion::collect_held(&q) };
        }
    }
    unsafe fn after(_: (), _: &args::clReleaseContext, ret: cl_int, _: &mut Span) -> cl_int {
        ret
    }
}
