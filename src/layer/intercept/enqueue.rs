//! An enqueue the driver accepted or refused: the hooks of every classified enqueue
//! ([`Enqueue`], over a [`Command`] that says what its arguments move) and of the other
//! commands ([`Timed`]); each command classified into the memory model, placed in the command
//! graph and the race check, timed on the device or counted as sampled out, and reported.

use super::events::{self, Capture};
use super::graph;
use super::pending::What;
use super::queues;
use super::state::QueueInfo;
use super::state::{Device, WORLD, bounded_insert};
use super::{completion, races};
use crate::layer::args::EnqueueArgs;
use crate::layer::{Call, Hook, Span, driver};
use crate::model::classification::{Classification, ObjRef, Path};
use crate::model::classify::{self, Op, Request};
use crate::model::{effects, rules};
use crate::sink::record::{CallFlags, Counter};
use crate::sink::{buffer, counters, summary};
use crate::timing::sample::Sample;
use crate::vocab::word;
use opencl_sys::{CL_SUCCESS, cl_command_queue, cl_event, cl_int, cl_kernel, cl_uint};
use smallvec::SmallVec;
use std::marker::PhantomData;
use std::sync::Arc;

/// Classifies `req`, a command the driver accepted on `dev`, into `class` and updates the model.
/// In trace mode (`trace`: where the objects the command names go, and the end of the call),
/// also lists those objects and updates the counters. `class` is left `None` when the command is
/// not a transfer to report.
#[inline(always)]
fn record(
    call: Call,
    dev: &Device,
    req: Request,
    class: &mut Option<Classification>,
    flags: &mut CallFlags,
    trace: Option<(&mut SmallVec<[ObjRef; 2]>, u64)>,
) {
    let device_handle = req.device;
    let (mems, now) = trace.unzip();
    let usage = {
        let mut memory = WORLD.memory.lock();
        classify::classify_in(&req, &memory, &dev.profile, dev.rules, class);
        // The host bytes staged transfers from pageable memory reached: what a fix pins.
        if let Some(c) = class.as_ref()
            && c.path == Path::Staged
            && let Some(h) = (c.host.as_ref()).filter(|h| word::is(h.kind, b"pageable"))
        {
            let span = c.host_span.unwrap_or(c.bytes);
            memory.staged_from(device_handle, h.ptr as u64, span);
        }
        *flags = match req.op {
            Op::Map { flags, .. } | Op::PtrMap { flags, .. } => CallFlags::Map(flags),
            Op::Migrate { flags, .. } | Op::PtrMigrate { flags, .. } => CallFlags::Migrate(flags),
            _ => CallFlags::None,
        };
        if let Some(mems) = mems {
            for m in req.op.objects() {
                if let Some(o) = memory.object(m) {
                    mems.push(o.obj_ref());
                }
            }
        }
        effects::apply(&req, &mut memory, dev.rules, &dev.profile);
        now.map(|now| {
            let pinned = memory.pinned_bytes().now;
            (pinned, memory.device_bytes(device_handle).now, now)
        })
    };
    if let Some((pinned, resident, now)) = usage {
        counters::set(Counter::PinnedHost, pinned, now);
        counters::set(Counter::DeviceResident(dev.profile.index), resident, now);
    }
    let Some(c) = class else { return };
    // A kernel counts as a transfer (and is reported) only when it moves a buffer.
    if matches!(req.op, Op::Kernel { .. }) && c.path == Path::None {
        *class = None;
        return;
    }
    // Staged from memory the program locked: say that mlock did not pin it.
    let span = c.host_span.unwrap_or(c.bytes);
    if c.path == Path::Staged
        && (c.host.as_ref()).is_some_and(|h| {
            word::is(h.kind, b"pageable") && crate::layer::locked::locked(h.ptr, span)
        })
    {
        classify::locked(c);
    }
    report(call, Some(dev), c);
}

/// The copy a creation made (`CL_MEM_COPY_HOST_PTR` into a buffer of a one-device context): a
/// transfer of the creating call, classified as the blocking write it is and reported as one of
/// kind `Create` with no queue (`queue #0`) and no device time.
pub(super) fn uploaded(call: Call, device_handle: usize, op: Op, span: &mut Span) {
    let Some(dev) = super::devices::device(device_handle) else {
        return;
    };
    let (mut class, mut flags) = (None, CallFlags::None);
    let queue = crate::sink::record::QueueRef {
        device: dev.profile.index,
        queue: 0,
    };
    let req = Request {
        op,
        device: device_handle,
        blocking: true,
    };
    if !crate::sink::recording().slices {
        record(call, &dev, req, &mut class, &mut flags, None);
        let host_ns = span.end.saturating_sub(span.begin);
        span.facts = class.map(|c| crate::report::Fact {
            work: crate::report::Work::Transfer(summary::facts(
                call.api,
                queue,
                &c,
                (flags, host_ns, false),
            )),
            link: crate::report::Link::default(),
        });
        return;
    }
    let mut e = buffer::boxed(queue, None);
    let trace = Some((&mut e.mems, span.end));
    record(call, &dev, req, &mut e.class, &mut e.flags, trace);
    if e.class.is_some() {
        span.command = Some(e);
    }
}

/// A command the driver refused; the queue is not queried (it may be invalid).
pub(super) fn refused(call: Call, queue: usize, blocking: bool, code: Option<cl_int>) {
    let dev = queues::known(queue).map(|q| q.device.clone());
    let rules = dev.as_ref().map_or(&rules::GENERIC, |d| d.rules);
    report(
        call,
        dev.as_deref(),
        &classify::refused(code, blocking, rules),
    );
}

#[inline]
fn report(call: Call, dev: Option<&Device>, c: &Classification) {
    crate::sink::transfers::record(c);
    match dev {
        Some(d) => crate::debug!(
            "{} on device #{}: {}",
            call.api.name(),
            d.profile.index,
            c.line()
        ),
        None => crate::debug!("{} on an unknown device: {}", call.api.name(), c.line()),
    }
}

/// The function name of a kernel, asked once.
pub(super) fn kernel_name(kernel: cl_kernel) -> Option<Arc<str>> {
    if let Some(name) = WORLD.kernel_names.lock().get(&(kernel as usize)) {
        return Some(name.clone());
    }
    // SAFETY: the driver accepted an enqueue of this kernel.
    let name: Arc<str> = unsafe { driver::kernel_name(kernel) }?.into();
    bounded_insert(
        &mut WORLD.kernel_names.lock(),
        kernel as usize,
        name.clone(),
    );
    Some(name)
}

/// An enqueue the driver accepted, as its hook read it from the arguments.
pub(super) struct Accepted<'a> {
    pub queue: cl_command_queue,
    /// The event out-pointer the driver got (see [`events::track`]).
    pub event: *mut cl_event,
    /// `(num_events_in_wait_list, event_wait_list)`.
    pub waits: (cl_uint, *const cl_event),
    /// A transfer-like command: whether it blocks, and what it does.
    pub transfer: Option<(bool, Op)>,
    /// The memory it touches, for the race check.
    pub touches: &'a [races::Touch],
    /// A kernel launch's kernel.
    pub kernel: Option<cl_kernel>,
}

impl Accepted<'_> {
    /// A command on `queue` without an event or a wait list that classifies nothing.
    pub fn on(queue: cl_command_queue) -> Self {
        Accepted {
            queue,
            event: std::ptr::null_mut(),
            waits: (0, std::ptr::null()),
            transfer: None,
            touches: &[],
            kernel: None,
        }
    }

    /// The command of an enqueue with `args`, which classifies nothing.
    pub fn of(args: &impl EnqueueArgs) -> Self {
        Accepted {
            event: args.event(),
            waits: args.wait_list(),
            ..Accepted::on(args.queue())
        }
    }
}

/// After an enqueue the driver accepted: classify it (if it is a transfer), time it on the
/// device, and note both in the call's span.
///
/// # Safety
/// `accepted.event` is the event out-pointer the driver got (see [`events::track`]).
pub(super) unsafe fn enqueued(call: Call, mut cap: Capture, accepted: Accepted, span: &mut Span) {
    let Accepted {
        queue,
        event,
        waits,
        transfer,
        touches,
        kernel,
    } = accepted;
    let Some(q) = cap.queue.take().or_else(|| queues::info(queue as usize)) else {
        return;
    };
    let id = events::next_id();
    let deps = unsafe { graph::deps(call.api, id, &q, waits) };
    let blocking = transfer.as_ref().is_some_and(|t| t.0);
    span.blocking = blocking;
    // The program holds the command's event: a wait list or wait may name it later.
    let named = !event.is_null() && !cap.supplied();
    // Read once: the race check's record of the call, and summary mode's link.
    let tid = buffer::current_tid();
    let race = |deps: &crate::graph::Deps, timed| {
        races::command(&races::NewCommand {
            id,
            api: call.api,
            q: &q,
            kind: graph::kind(call.api),
            deps,
            touches,
            named,
            blocking,
            thread: tid,
            begin: span.begin,
            timed,
        })
    };
    if !cap.supplied() {
        unsafe { graph::made(event, id) };
    }
    if !crate::sink::recording().slices {
        // No trace: whether the command is timed matters to no slice.
        span.races = race(&deps, false);
        let kernel = kernel.and_then(kernel_name);
        let placed = Placed {
            id,
            tid,
            q: &q,
            deps: &deps,
        };
        return unsafe { summarized(call, cap, placed, event, span, transfer, kernel) };
    }
    let mut e = buffer::boxed(q.r, kernel.and_then(kernel_name));
    e.id = id;
    if let Some((blocking, op)) = transfer {
        if let Op::Kernel { .. } = &op {
            for (i, t) in touches.iter().enumerate() {
                e.uses.set(i, t.use_, t.how);
            }
        }
        let trace = Some((&mut e.mems, span.end));
        let req = Request {
            op,
            device: q.device_handle,
            blocking,
        };
        record(call, &q.device, req, &mut e.class, &mut e.flags, trace);
        let class = e.class.as_ref().map(|c| (c.direction, c.path));
        unsafe { graph::classified(event, q.device.rules, call.api, class) };
        // A kernel names its arguments whether or not they move; another command that moves
        // nothing names none.
        if e.class.is_none() && e.kernel.is_none() {
            e.mems.clear();
        }
    }
    // Sampled out (most commands of a storm): no device slice to describe.
    e.sampled = cap.sampled_out();
    e.timed = if e.sampled {
        events::sampled_out(&q, span.end);
        false
    } else {
        let what = What {
            api: call.api,
            class: e.class.as_ref().map(|c| (c.direction, c.path)),
            bytes: e.class.as_ref().map_or(0, |c| c.bytes),
            blocking: e.class.as_ref().is_some_and(|c| c.blocking),
            kernel: e.kernel.clone(),
            facts: None,
            waits: deps.waits.as_slice().into(),
            before: [0; 3],
        };
        unsafe { events::track(id, &cap, event, &q, span, what, &mut None) }
    };
    // After `track`: the trace's race arrow needs to know what its enqueue slice will be.
    span.races = race(&deps, e.timed);
    e.deps = deps;
    // A blocking call returned: its command, and those before it, have completed.
    if e.timed && e.class.as_ref().is_some_and(|c| c.blocking) {
        unsafe { completion::synced(&q, 0) };
    }
    span.command = Some(e);
}

/// A command [`enqueued`] placed: its number, the enqueuing thread, its queue, and its place in
/// the graph.
struct Placed<'a> {
    id: u64,
    tid: u32,
    q: &'a Arc<QueueInfo>,
    deps: &'a crate::graph::Deps,
}

/// [`enqueued`] in summary mode: a transfer's or kernel launch's report facts (~50 bytes), to go
/// with its device time and its place in the graph; other commands are neither timed nor
/// recorded.
///
/// # Safety
/// As [`enqueued`].
#[inline]
unsafe fn summarized(
    call: Call,
    cap: Capture,
    placed: Placed,
    event: *mut cl_event,
    span: &mut Span,
    transfer: Option<(bool, Op)>,
    kernel: Option<Arc<str>>,
) {
    use crate::report::{Fact, Link, Work};
    let Placed { id, tid, q, deps } = placed;
    let host_ns = span.end.saturating_sub(span.begin);
    let (mut class, mut flags) = (None, CallFlags::None);
    if let Some((blocking, op)) = transfer {
        let req = Request {
            op,
            device: q.device_handle,
            blocking,
        };
        record(call, &q.device, req, &mut class, &mut flags, None);
        let c = class.as_ref().map(|c| (c.direction, c.path));
        unsafe { graph::classified(event, q.device.rules, call.api, c) };
    }
    let blocking = class.as_ref().is_some_and(|c| c.blocking);
    // Built where it stays (each move of the facts is a copy of ~100 bytes, at every enqueue).
    let work = || {
        let how = (flags, host_ns, cap.sampled_out());
        let moved = (class.as_ref()).map(|c| summary::facts(call.api, q.r, c, how));
        let on = (q.r.device, q.r.queue);
        Work::of(moved, kernel, on, (host_ns, cap.sampled_out()))
    };
    let before = Link::before(deps.after.unwrap_or(0), deps.waits.iter().copied());
    let link = |span: &Span| Link {
        id,
        tid,
        begin: span.begin,
        end: span.end,
        before,
    };
    // Not timed: the facts go from the call, at once (most commands, in a storm of small ones).
    if cap.sampled_out() {
        events::sampled_out(q, span.end);
        span.facts = work().map(|work| Fact {
            work,
            link: link(span),
        });
        return;
    }
    // A timed command's facts take its place in the graph along.
    let what = What {
        api: call.api,
        class: class.as_ref().map(|c| (c.direction, c.path)),
        bytes: 0,
        blocking,
        kernel: None,
        facts: None,
        waits: Box::default(),
        before,
    };
    let mut work = work();
    let timed = unsafe { events::track(id, &cap, event, q, span, what, &mut work) };
    span.facts = work.map(|work| Fact {
        work,
        link: link(span),
    });
    // A blocking call returned: its command, and those before it, have completed.
    if timed && blocking {
        unsafe { completion::synced(q, 0) };
    }
}

/// A transfer-like command: whether it blocks, and what it does (its queue and event are the
/// enqueue's first and last arguments, [`EnqueueArgs`]); implemented per argument struct.
pub trait Command<A> {
    fn blocking(_args: &A) -> bool {
        false
    }
    /// # Safety
    /// The driver accepted `args`, so the arrays they point to are valid.
    unsafe fn op(args: &A) -> Option<Op>;
    /// The kernel of a kernel launch.
    fn kernel(_args: &A) -> Option<cl_kernel> {
        None
    }
    /// The memory it touches, for the race check (none: not judged).
    ///
    /// # Safety
    /// As [`Command::op`].
    unsafe fn touches(_args: &A) -> races::Touches {
        races::Touches::new()
    }
    /// What it is to the sampled device timing, from its arguments before the call (not read
    /// through pointers: the driver has not checked them yet).
    fn sample(_args: &A) -> Sample {
        Sample::Always
    }
}

/// The hook of every classified enqueue that returns a `cl_int`: classify and time on success,
/// note the error else.
pub struct Enqueue<C>(PhantomData<C>);

impl<A: EnqueueArgs, C: Command<A>> Hook<A, cl_int> for Enqueue<C> {
    type State = (Call, Capture);
    const ENQUEUES: bool = true;
    unsafe fn before(call: Call, args: &mut A) -> (Call, Capture) {
        let (sample, queue) = (C::sample(args), args.queue());
        (call, events::capture(args.event_mut(), queue, sample))
    }
    unsafe fn after(
        (call, cap): (Call, Capture),
        args: &A,
        ret: cl_int,
        span: &mut Span,
    ) -> cl_int {
        let queue = args.queue();
        events::settle(&cap, queue);
        if ret != CL_SUCCESS {
            refused(call, queue as usize, C::blocking(args), Some(ret));
        } else {
            let mut op = unsafe { C::op(args) }.map(|op| (C::blocking(args), op));
            let mut touches = unsafe { C::touches(args) };
            // A kernel's arguments, read once: as touches, and so as the op's objects.
            if let Some((_, Op::Kernel { mems, reads })) = &mut op
                && mems.is_empty()
            {
                for (i, t) in touches.iter().enumerate() {
                    mems.push(t.object);
                    if i < 64 && t.use_ == crate::graph::race::Use::Read {
                        *reads |= 1 << i;
                    }
                }
            }
            races::in_parents(&mut touches);
            let accepted = Accepted {
                transfer: op,
                touches: &touches,
                kernel: C::kernel(args),
                ..Accepted::of(args)
            };
            unsafe { enqueued(call, cap, accepted, span) };
        }
        ret
    }
}

/// The hook of every other enqueue (markers, barriers, GL/EGL acquire and release, advice):
/// timed on the device, nothing to classify. `EVENT_REQUIRED`: a NULL event pointer is an error
/// the program must get from the driver (`clEnqueueMarker`), so clxfer supplies none.
pub struct Timed<const EVENT_REQUIRED: bool = false>;

/// `clEnqueueMarker`, whose event is not optional.
pub type Marker = Timed<true>;

impl<A: EnqueueArgs, const EVENT_REQUIRED: bool> Hook<A, cl_int> for Timed<EVENT_REQUIRED> {
    type State = (Call, Capture);
    const ENQUEUES: bool = true;
    unsafe fn before(call: Call, args: &mut A) -> (Call, Capture) {
        if EVENT_REQUIRED {
            return (call, Capture::default());
        }
        let queue = args.queue();
        (
            call,
            events::capture(args.event_mut(), queue, Sample::Other),
        )
    }
    unsafe fn after(
        (call, cap): (Call, Capture),
        args: &A,
        ret: cl_int,
        span: &mut Span,
    ) -> cl_int {
        events::settle(&cap, args.queue());
        if ret == CL_SUCCESS {
            unsafe { enqueued(call, cap, Accepted::of(args), span) };
        }
        ret
    }
}
