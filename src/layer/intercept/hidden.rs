//! What clxfer adds stays clxfer's: the program's queries are answered as the driver would have
//! answered them without clxfer. Profiling that clxfer turned on is hidden from a queue's
//! properties (`CL_QUEUE_PROPERTIES`, `CL_QUEUE_PROPERTIES_ARRAY`, `clSetCommandQueueProperty`'s
//! old properties) and from its events (`clGetEventProfilingInfo` says
//! `CL_PROFILING_INFO_NOT_AVAILABLE` where the driver would), and reference counts leave out
//! what clxfer's events hold ([`Counted`]). docs/RELIABILITY.md lists every query and its test.
//!
//! Each hook lets the driver validate the call first (an invalid handle gets the driver's
//! error), and only then answers from what the program asked for.

use super::queues;
use super::state::QueueInfo;
use super::{collect, completion};
use crate::layer::{Call, Hook, Span, args, driver};
use crate::sink::record::Timing;
use opencl_sys::*;
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::Arc;

/// The queue clxfer turned profiling on for, if `queue` is one (clxfer's map only: the handle is
/// not read).
fn forced(queue: usize) -> Option<Arc<QueueInfo>> {
    queues::known(queue).filter(|q| matches!(q.timing, Timing::Forced | Timing::Toggled))
}

/// Whether the program, without clxfer, would have been refused profiling info about `event`:
/// it is a command of a queue whose profiling clxfer turned on, and its driver refuses such
/// queries for queues made without profiling (as the spec says; Rusticl answers them, learned
/// once per device, [`driver::answers_unprofiled`]).
///
/// # Safety
/// The driver has just accepted `event`.
unsafe fn refused_without_clxfer(event: cl_event) -> bool {
    let Some(info) = unsafe { driver::event_queue(event) }.and_then(forced) else {
        return false;
    };
    let answers = *info.device.answers_unprofiled.get_or_init(|| {
        let device = info.device_handle as cl_device_id;
        unsafe { driver::event_context(event) }
            .and_then(|context| unsafe { driver::answers_unprofiled(context, device) })
            .unwrap_or(false)
    });
    !answers
}

/// A bitfield with the profiling clxfer added taken out again.
fn without_forced(info: &QueueInfo, props: cl_command_queue_properties) -> u64 {
    props & !(CL_QUEUE_PROFILING_ENABLE & !info.asked.props)
}

thread_local! {
    /// Where the driver writes what clxfer answers itself (each hook runs only for the outermost
    /// call on its thread, so one place per thread is enough).
    static VALUE: Cell<[u64; 8]> = const { Cell::new([0; 8]) };
    static SIZE: Cell<usize> = const { Cell::new(0) };
}

/// The program's own out-parameters of an info query, while the driver writes to clxfer's.
#[derive(Clone, Copy)]
pub struct Out {
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
}

/// An info query's arguments, whatever its entry point calls the object asked about.
#[derive(Clone, Copy)]
pub struct Query {
    handle: *mut c_void,
    param: cl_uint,
    out: Out,
}

/// The info queries clxfer answers.
pub trait Queried {
    fn query(&self) -> Query;
}

/// Each query names its object (`name.object`); the rest of their parameters are named alike.
macro_rules! queried {
    ($($name:ident.$handle:ident),*) => { $(
        impl Queried for args::$name {
            fn query(&self) -> Query {
                let out = Out {
                    size: self.param_value_size,
                    value: self.param_value,
                    size_ret: self.param_value_size_ret,
                };
                Query { handle: self.$handle, param: self.param_name, out }
            }
        }
    )* };
}

queried!(
    clGetMemObjectInfo.memobj,
    clGetContextInfo.context,
    clGetCommandQueueInfo.command_queue,
    clGetEventInfo.event,
    clGetEventProfilingInfo.event
);

/// Writes an info value of `bytes` as the driver would: `CL_INVALID_VALUE` when the program's
/// buffer is too small, the size where asked.
///
/// # Safety
/// `out` holds the program's own out-parameters of a call the driver accepted.
unsafe fn answer(out: Out, bytes: &[u8]) -> cl_int {
    if !out.value.is_null() {
        if out.size < bytes.len() {
            return CL_INVALID_VALUE;
        }
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.value.cast(), bytes.len()) };
    }
    if !out.size_ret.is_null() {
        unsafe { out.size_ret.write(bytes.len()) };
    }
    CL_SUCCESS
}

/// `clGetCommandQueueInfo`.
pub struct QueueQueried;

pub enum QueueAsk {
    Other,
    Count,
    Props,
    /// `CL_QUEUE_PROPERTIES_ARRAY` of a queue clxfer edited: the driver only validates the call.
    Array(Arc<QueueInfo>, Out),
}

impl Hook<args::clGetCommandQueueInfo, cl_int> for QueueQueried {
    type State = QueueAsk;
    unsafe fn before(_: Call, args: &mut args::clGetCommandQueueInfo) -> QueueAsk {
        match args.param_name {
            CL_QUEUE_REFERENCE_COUNT => QueueAsk::Count,
            CL_QUEUE_PROPERTIES => QueueAsk::Props,
            CL_QUEUE_PROPERTIES_ARRAY => match forced(args.command_queue as usize) {
                Some(info) => {
                    let out = args.query().out;
                    let size = SIZE.with(|s| s.as_ptr());
                    args.param_value_size = 0;
                    args.param_value = std::ptr::null_mut();
                    args.param_value_size_ret = size;
                    QueueAsk::Array(info, out)
                }
                None => QueueAsk::Other,
            },
            _ => QueueAsk::Other,
        }
    }
    unsafe fn after(
        ask: QueueAsk,
        args: &args::clGetCommandQueueInfo,
        ret: cl_int,
        _: &mut Span,
    ) -> cl_int {
        if ret != CL_SUCCESS {
            return ret;
        }
        match ask {
            QueueAsk::Other => ret,
            QueueAsk::Count => unsafe { recount(args.query(), ret) },
            QueueAsk::Props => {
                let size = args.param_value_size;
                let value = args.param_value as *mut cl_command_queue_properties;
                if let Some(info) = forced(args.command_queue as usize)
                    && !value.is_null()
                    && size >= size_of::<cl_command_queue_properties>()
                {
                    unsafe { value.write_unaligned(without_forced(&info, value.read_unaligned())) };
                }
                ret
            }
            QueueAsk::Array(info, out) => {
                let list = info.asked.array.as_deref().unwrap_or_default();
                let bytes: Vec<u8> = list.iter().flat_map(|p| p.to_ne_bytes()).collect();
                unsafe { answer(out, &bytes) }
            }
        }
    }
}

/// `clSetCommandQueueProperty` (OpenCL 1.0): the old properties it hands back.
pub struct QueuePropertySet;

impl Hook<args::clSetCommandQueueProperty, cl_int> for QueuePropertySet {
    type State = ();
    unsafe fn before(_: Call, _: &mut args::clSetCommandQueueProperty) {}
    unsafe fn after(
        _: (),
        args: &args::clSetCommandQueueProperty,
        ret: cl_int,
        _: &mut Span,
    ) -> cl_int {
        if ret == CL_SUCCESS
            && !args.old_properties.is_null()
            && let Some(info) = forced(args.command_queue as usize)
        {
            let old = args.old_properties;
            unsafe { old.write_unaligned(without_forced(&info, old.read_unaligned())) };
        }
        ret
    }
}

/// `clGetEventProfilingInfo`: on a queue whose profiling clxfer turned on, the program gets
/// `CL_PROFILING_INFO_NOT_AVAILABLE`, as without clxfer, and its buffer is left untouched (the
/// driver writes to clxfer's, which is copied over only when the answer stands); where the
/// driver answers queues made without profiling, its answer stands.
pub struct ProfilingQueried;

impl Hook<args::clGetEventProfilingInfo, cl_int> for ProfilingQueried {
    type State = Out;
    unsafe fn before(_: Call, args: &mut args::clGetEventProfilingInfo) -> Out {
        let out = args.query().out;
        if !args.param_value.is_null() {
            args.param_value = VALUE.with(|v| v.as_ptr()).cast();
            args.param_value_size = args.param_value_size.min(size_of::<[u64; 8]>());
        }
        SIZE.with(|s| s.set(usize::MAX));
        args.param_value_size_ret = SIZE.with(|s| s.as_ptr());
        out
    }
    unsafe fn after(
        out: Out,
        args: &args::clGetEventProfilingInfo,
        ret: cl_int,
        _: &mut Span,
    ) -> cl_int {
        let written = SIZE.with(|s| s.get());
        // Without clxfer the queue has no profiling, which drivers check before the parameter
        // and the buffer (PoCL does): a query the driver refused for those says so too. An
        // event the driver refused (CL_INVALID_EVENT) is not asked about.
        let valid_event =
            ret == CL_SUCCESS || (ret == CL_INVALID_VALUE && driver::plausible(args.event));
        if valid_event && unsafe { refused_without_clxfer(args.event) } {
            return CL_PROFILING_INFO_NOT_AVAILABLE;
        }
        if ret == CL_SUCCESS && !out.value.is_null() {
            // Every profiling value is a cl_ulong; a driver that did not say its size wrote one.
            let n = if written == usize::MAX {
                size_of::<cl_ulong>()
            } else {
                written
            };
            let value = VALUE.with(|v| v.get());
            let n = n.min(args.param_value_size);
            unsafe {
                std::ptr::copy_nonoverlapping(value.as_ptr().cast::<u8>(), out.value.cast(), n)
            };
        }
        if written != usize::MAX && !out.size_ret.is_null() {
            unsafe { out.size_ret.write(written) };
        }
        ret
    }
}

/// The reference-count queries: clxfer's events of completed commands hold references of the
/// driver's to their queue, context and memory objects (and to the program's events, which clxfer
/// retains) until clxfer releases them, which for a command a callback is armed on waits for the
/// callback. So before such a count is given, clxfer collects what has completed on the queues
/// concerned ([`completion::quiesce`], which waits at most 100 ms for callbacks the driver is
/// about to run) and asks the driver again; a program's event clxfer still holds (its
/// command still runs) is given without clxfer's own reference. While commands run, their
/// references are the driver's, as without clxfer.
pub struct Counted<const PARAM: u32>;

/// The queues whose completions can hold references to the object a count is asked of.
///
/// # Safety
/// The driver has just accepted `handle` in a call with `param`.
unsafe fn concerned(handle: *mut c_void, param: cl_uint) -> Vec<Arc<QueueInfo>> {
    match param {
        CL_QUEUE_REFERENCE_COUNT => queues::known(handle as usize).into_iter().collect(),
        CL_EVENT_REFERENCE_COUNT => unsafe { driver::event_queue(handle.cast()) }
            .and_then(queues::known)
            .into_iter()
            .collect(),
        _ => queues::all(),
    }
}

/// Asks the driver again, with the program's arguments.
///
/// # Safety
/// The driver has just accepted this call.
unsafe fn ask_again(query: Query) -> cl_int {
    let Query { handle, param, out } = query;
    let Some(t) = (unsafe { driver::icd(handle) }) else {
        return CL_INVALID_VALUE;
    };
    let f = match param {
        CL_MEM_REFERENCE_COUNT => t.clGetMemObjectInfo,
        CL_CONTEXT_REFERENCE_COUNT => t.clGetContextInfo,
        CL_QUEUE_REFERENCE_COUNT => t.clGetCommandQueueInfo,
        _ => t.clGetEventInfo,
    };
    f.map_or(CL_INVALID_VALUE, |f| unsafe {
        f(handle, param, out.size, out.value, out.size_ret)
    })
}

/// After the driver accepted a reference-count query: collect, ask again, leave out clxfer's own.
///
/// # Safety
/// The driver returned `ret` for this call.
unsafe fn recount(query: Query, ret: cl_int) -> cl_int {
    let Query { handle, param, out } = query;
    let value = out.value as *mut cl_uint;
    if ret != CL_SUCCESS || value.is_null() || out.size < size_of::<cl_uint>() {
        return ret;
    }
    let queues = unsafe { concerned(handle, param) };
    // Every queue is quiesced; then the count is asked again, always: the driver's first answer
    // may have come while a callback clxfer's collector has since finished was in flight.
    for q in &queues {
        unsafe { completion::quiesce(q) };
    }
    let again = unsafe { ask_again(query) };
    if again != CL_SUCCESS {
        return again;
    }
    // A program's event clxfer still holds (its command runs): without clxfer's reference.
    let own = param == CL_EVENT_REFERENCE_COUNT
        && queues.iter().any(|q| collect::holds(q, handle as usize));
    if own {
        unsafe { value.write_unaligned(value.read_unaligned().saturating_sub(1)) };
    }
    ret
}

impl<A: Queried, const PARAM: u32> Hook<A, cl_int> for Counted<PARAM> {
    type State = ();
    unsafe fn before(_: Call, _: &mut A) {}
    unsafe fn after(_: (), args: &A, ret: cl_int, _: &mut Span) -> cl_int {
        let query = args.query();
        if query.param != PARAM {
            return ret;
        }
        unsafe { recount(query, ret) }
    }
}

pub type MemQueried = Counted<CL_MEM_REFERENCE_COUNT>;
pub type ContextQueried = Counted<CL_CONTEXT_REFERENCE_COUNT>;
pub type EventQueried = Counted<CL_EVENT_REFERENCE_COUNT>;
