//! Feeding the command graph (`crate::graph`): each enqueue's wait list resolved to the commands
//! its events stand for, its queue's order added, and the events the program holds followed from
//! the call that made them to the program's last release.

use super::state::QueueInfo;
use super::state::WORLD;
use crate::graph::{Deps, Id, Kind};
use crate::layer::args::{self, for_args};
use crate::layer::{Api, Call};
use crate::layer::{Hook, Span};
use crate::report::On;
use opencl_sys::*;
use smallvec::SmallVec;

/// How an entry point orders its queue.
pub(super) fn kind(api: Api) -> Kind {
    match api {
        Api::clEnqueueMarker | Api::clEnqueueMarkerWithWaitList => Kind::Marker,
        Api::clEnqueueBarrier | Api::clEnqueueBarrierWithWaitList | Api::clEnqueueWaitForEvents => {
            Kind::Barrier
        }
        _ => Kind::Work,
    }
}

/// What command `id`, enqueued by `api` on `queue` with `waits`, waits for.
///
/// # Safety
/// The driver accepted the enqueue, so `waits` names that many live events.
#[inline]
pub unsafe fn deps(api: Api, id: Id, queue: &QueueInfo, waits: (cl_uint, *const cl_event)) -> Deps {
    let mut deps = Deps::default();
    let (n, list) = waits;
    if n > 0 && !list.is_null() {
        // SAFETY: the driver accepted `n` events at `list`.
        unsafe { resolve(std::slice::from_raw_parts(list, n as usize), &mut deps) };
    }
    queue.order.place(id, kind(api), &mut deps);
    deps
}

/// A wait list's events, as the commands they stand for.
///
/// # Safety
/// `events` are live (the driver accepted them).
unsafe fn resolve(events: &[cl_event], deps: &mut Deps) {
    let known = WORLD.events.lock();
    for &e in events {
        match known.command(e as usize) {
            Some(c) => deps.waits.push(c),
            None => deps.unknown += 1,
        }
    }
}

/// The driver handed the program `event` for command `id` (`event` is the program's out-pointer).
///
/// # Safety
/// `event` is null or points to the event the driver wrote.
#[inline]
pub unsafe fn made(event: *mut cl_event, id: Id) {
    if event.is_null() {
        return;
    }
    let handle = unsafe { event.read() };
    if !handle.is_null() {
        WORLD.events.lock().made(handle as usize, id);
    }
}

/// After classification: where the rules say a command like this reads complete before what it
/// waits for (NVIDIA's migrations to a device), a status query that sees its event complete is
/// no synchronisation point.
///
/// # Safety
/// As [`made`].
#[inline]
pub unsafe fn classified(
    event: *mut cl_event,
    rules: &crate::model::rules::RuleSet,
    api: crate::vocab::Api,
    class: Option<(
        crate::model::classification::Direction,
        crate::model::classification::Path,
    )>,
) {
    let early = rules
        .early_complete
        .is_some_and(|r| r.value.cover(api.verb(), class));
    if !early || event.is_null() {
        return;
    }
    let handle = unsafe { event.read() };
    if !handle.is_null() {
        WORLD.events.lock().completes_early(handle as usize);
    }
}

/// The commands a status query that saw `event` complete shows completed, as a
/// synchronisation point's `waited` (none: `None`).
fn completed_by_status(event: cl_event) -> Option<On> {
    let id = WORLD.events.lock().completed_by_status(event as usize)?;
    Some(On::Commands([id].into_iter().collect()))
}

/// The commands `events` stand for, as a synchronisation point's `waited` (none known: `None`).
pub fn commands_of(events: &[cl_event]) -> Option<On> {
    let known = WORLD.events.lock();
    let ids: SmallVec<[Id; 2]> = events
        .iter()
        .filter_map(|&e| known.command(e as usize))
        .collect();
    (!ids.is_empty()).then_some(On::Commands(ids))
}

/// `clGetEventInfo`: the reference count without clxfer's own ([`super::EventQueried`]); a
/// status query that sees `CL_COMPLETE` is a host synchronisation point (a polling loop's end).
pub struct EventAsked;

impl Hook<args::clGetEventInfo, cl_int> for EventAsked {
    type State = ();
    const SYNCS: bool = true;
    unsafe fn before(call: Call, args: &mut args::clGetEventInfo) {
        unsafe { super::EventQueried::before(call, args) }
    }
    unsafe fn after(_: (), args: &args::clGetEventInfo, ret: cl_int, span: &mut Span) -> cl_int {
        let (event, size, value) = (args.event, args.param_value_size, args.param_value);
        if args.param_name != CL_EVENT_COMMAND_EXECUTION_STATUS {
            return unsafe { super::EventQueried::after((), args, ret, span) };
        }
        let complete = ret == CL_SUCCESS
            && !value.is_null()
            && size >= std::mem::size_of::<cl_int>()
            // SAFETY: the driver wrote a `cl_int` there.
            && unsafe { (value as *const cl_int).read_unaligned() } == CL_COMPLETE;
        if complete {
            span.waited = completed_by_status(event);
        }
        ret
    }
}

/// `clSetEventCallback` for `CL_COMPLETE`: the program's callback, when it runs on the command's
/// completion, tells the host the command is done (a program waits on a flag its callback sets
/// as often as on the event), so the race check orders what the host enqueues after it. The
/// driver gets a trampoline that says so and then calls the program's function with the
/// program's own arguments; where the driver refuses, nothing is left behind.
pub struct CallbackSet;

/// The program's callback, and the command its event stands for where its completion proves it
/// done (not NVIDIA's early-completing migrations).
pub struct Wrapped {
    notify: Notify,
    user: *mut std::ffi::c_void,
    id: Option<Id>,
}

type Notify = unsafe extern "C" fn(cl_event, cl_int, *mut std::ffi::c_void);

impl Hook<args::clSetEventCallback, cl_int> for CallbackSet {
    /// The wrapper the driver was given, to take back if it refused.
    type State = Option<*mut Wrapped>;
    unsafe fn before(_: Call, args: &mut args::clSetEventCallback) -> Option<*mut Wrapped> {
        let (event, user) = (args.event, args.user_data);
        let status = args.command_exec_callback_type;
        let notify = args.pfn_notify.filter(|_| status == CL_COMPLETE)?;
        let id = WORLD.events.lock().completed_by_status(event as usize)?;
        let wrapped = Box::into_raw(Box::new(Wrapped {
            notify,
            user,
            id: Some(id),
        }));
        (args.pfn_notify, args.user_data) = (Some(trampoline as Notify), wrapped.cast());
        Some(wrapped)
    }
    unsafe fn after(
        wrapped: Self::State,
        _: &args::clSetEventCallback,
        ret: cl_int,
        _: &mut Span,
    ) -> cl_int {
        if let Some(w) = wrapped.filter(|_| ret != CL_SUCCESS) {
            // SAFETY: the driver refused it, so it will never call the trampoline with it.
            drop(unsafe { Box::from_raw(w) });
        }
        ret
    }
}

/// What the driver calls once, on the command's completion: the race check learns it, then the
/// program's own callback runs with its own arguments.
unsafe extern "C" fn trampoline(event: cl_event, status: cl_int, data: *mut std::ffi::c_void) {
    // SAFETY: `data` is the wrapper [`CallbackSet`] made for this one call.
    let w = unsafe { Box::from_raw(data.cast::<Wrapped>()) };
    if status == CL_COMPLETE
        && let Some(id) = w.id
    {
        let _ = std::panic::catch_unwind(|| {
            super::host_synced(&On::Commands([id].into_iter().collect()));
        });
    }
    // SAFETY: the program's function, with the arguments it asked for.
    unsafe { (w.notify)(event, status, w.user) };
}

/// `clRetainEvent` (`RETAIN`) and `clReleaseEvent`: the program's references to its events.
pub struct EventHeld<const RETAIN: bool>;

for_args!([clRetainEvent, clReleaseEvent]
impl<const RETAIN: bool> Hook<Args, cl_int> for EventHeld<RETAIN> {
    type State = ();
    unsafe fn before(_: Call, _: &mut Args) {}
    unsafe fn after(_: (), args: &Args, ret: cl_int, _: &mut Span) -> cl_int {
        if ret == CL_SUCCESS {
            let mut events = WORLD.events.lock();
            if RETAIN {
                events.retained(args.event as usize);
            } else {
                events.released(args.event as usize);
            }
        }
        ret
    }
});

/// `clCreateUserEvent`: a user event is a node of the graph, numbered like commands.
pub struct UserEventCreated;

impl Hook<args::clCreateUserEvent, cl_event> for UserEventCreated {
    type State = ();
    unsafe fn before(_: Call, _: &mut args::clCreateUserEvent) {}
    unsafe fn after(
        _: (),
        _: &args::clCreateUserEvent,
        ret: cl_event,
        span: &mut Span,
    ) -> cl_event {
        if !ret.is_null() {
            let id = super::events::next_id();
            WORLD.events.lock().made(ret as usize, id);
            super::races::user_event(id);
            span.node = id;
        }
        ret
    }
}

/// `clSetUserEventStatus`: the host completes a user event (its slice names the event's number).
pub struct UserEventSet;

impl Hook<args::clSetUserEventStatus, cl_int> for UserEventSet {
    type State = ();
    unsafe fn before(_: Call, _: &mut args::clSetUserEventStatus) {}
    unsafe fn after(
        _: (),
        args: &args::clSetUserEventStatus,
        ret: cl_int,
        span: &mut Span,
    ) -> cl_int {
        if ret == CL_SUCCESS
            && let Some(id) = WORLD.events.lock().command(args.event as usize)
        {
            super::races::user_event_set(id);
            span.node = id;
        }
        ret
    }
}
