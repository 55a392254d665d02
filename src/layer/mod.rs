//! Everything that touches FFI: the exports, the loader-layer entry points, resolving the real
//! OpenCL library, and the one generic path every intercepted call takes ([`forward`]).

pub mod api;
pub mod args;
mod dlsym;
pub mod driver;
mod expand;
pub mod extensions;
mod guard;
pub mod intercept;
pub mod lifecycle;
mod loaded;
pub mod loader_layer;
pub(crate) mod locked;
pub mod preload;
pub mod probe;
pub(crate) mod signals;

use crate::sink::record::Record;
use crate::timing::clock;
pub use crate::vocab::{Api, Via};
use opencl_sys::{CL_INVALID_PLATFORM, CL_PLATFORM_NOT_FOUND_KHR, cl_int};

/// One intercepted call: which entry point, and how it arrived (counted per way in, `sink::counts`;
/// clxfer's own queries go through the object's dispatch table, [`driver::icd`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    pub api: Api,
    pub via: Via,
}

/// The host side of one call: when the call down began and ended (monotonic ns), and, for an
/// enqueue, what it put on the queue. `forward` turns it into the call's record.
#[derive(Default)]
pub struct Span {
    pub begin: u64,
    pub end: u64,
    pub command: Option<Box<crate::sink::record::Enqueued>>,
    /// Summary mode: what the report needs of a classified enqueue that is not timed on the
    /// device, instead of `command` (a timed one's facts wait for its completion, `intercept/finish.rs`).
    pub facts: Option<crate::report::Fact>,
    /// A call about a node of the graph that is no command (a user event): its number.
    pub node: u64,
    /// A host synchronisation point: what it waited for.
    pub waited: Option<crate::report::On>,
    /// The possible data races the enqueue made, sent after the call's record.
    pub races: Vec<crate::sink::record::Race>,
    /// A blocking enqueue: the call waited for its command.
    pub blocking: bool,
}

/// What an entry point does around the call down. `before` may edit a copy of the arguments;
/// `after` may replace the result and note in the [`Span`] what was enqueued. Both run only for
/// the outermost call on a thread, inside `catch_unwind`: if either panics, the program gets the
/// driver's own arguments and result.
///
/// # Safety
/// Implementations may read through the pointers in `args`: they are the program's arguments, which
/// the driver is about to read (`before`) or has just accepted (`after`).
pub trait Hook<A, R> {
    type State;
    /// # Safety
    /// `args` are the program's arguments, about to go to the driver.
    unsafe fn before(call: Call, args: &mut A) -> Self::State;
    /// Whether the entry point enqueues a command. Summary mode records only these calls (and
    /// skips timing the others).
    const ENQUEUES: bool = false;
    /// Whether the entry point may be a host synchronisation point (summary mode times it, and
    /// records it when its `after` notes what it waited for in the span).
    const SYNCS: bool = false;
    /// Whether to call the driver again with the program's own arguments, because it refused the
    /// edited ones (a queue with profiling forced on).
    fn retry(_state: &mut Self::State, _ret: &R) -> bool {
        false
    }
    /// # Safety
    /// `args` went to the driver, which returned `ret`.
    unsafe fn after(state: Self::State, args: &A, ret: R, span: &mut Span) -> R;
}

/// What a call's return says of its success, for the report's failed calls
/// (`sink::host_calls::failed`).
pub trait Outcome: Copy {
    /// `Some` where the call failed, with its error code where known. `errcode_ret`: the entry
    /// point's error out-parameter, where it has one (`None`: it has none).
    ///
    /// # Safety
    /// A non-null `errcode_ret` points to a `cl_int` the call has set.
    unsafe fn failure(&self, errcode_ret: Option<*mut cl_int>) -> Option<Option<i32>>;
}

impl Outcome for cl_int {
    #[inline(always)]
    unsafe fn failure(&self, _: Option<*mut cl_int>) -> Option<Option<i32>> {
        (*self != opencl_sys::CL_SUCCESS).then_some(Some(*self))
    }
}

impl<T> Outcome for *mut T {
    /// A null object from an entry point with an error out-parameter. Without one a null is an
    /// answer (no such extension function), or unsaid (`clSVMAlloc`): not counted.
    #[inline(always)]
    unsafe fn failure(&self, errcode_ret: Option<*mut cl_int>) -> Option<Option<i32>> {
        let e = errcode_ret.filter(|_| self.is_null())?;
        // SAFETY: as the trait says.
        Some(
            (!e.is_null())
                .then(|| unsafe { e.read() })
                .filter(|&c| c != 0),
        )
    }
}

impl Outcome for () {
    #[inline(always)]
    unsafe fn failure(&self, _: Option<*mut cl_int>) -> Option<Option<i32>> {
        None
    }
}

/// The default hook: the call is counted and nothing is changed.
pub struct Plain;

impl<A, R> Hook<A, R> for Plain {
    type State = ();
    unsafe fn before(_: Call, _: &mut A) {}
    unsafe fn after(_: (), _: &A, ret: R, _: &mut Span) -> R {
        ret
    }
}

/// The error an entry point returns when no OpenCL implementation could be found at all, as a loader
/// with no platforms would answer.
pub const NO_DRIVER: cl_int = CL_INVALID_PLATFORM;

/// The result when there is no function to forward to.
pub trait Fallback {
    fn fallback(api: Api) -> Self;
}

impl Fallback for cl_int {
    fn fallback(api: Api) -> cl_int {
        if api == Api::clGetPlatformIDs {
            CL_PLATFORM_NOT_FOUND_KHR
        } else {
            NO_DRIVER
        }
    }
}

impl<T> Fallback for *mut T {
    fn fallback(_: Api) -> *mut T {
        std::ptr::null_mut()
    }
}

impl Fallback for () {
    fn fallback(_: Api) {}
}

/// The one path of every intercepted call. `down` is the next function (the real library's, or the
/// next layer's); it is called exactly once, with the program's arguments unless a hook edited them.
///
/// # Safety
/// `down` must be a function with the entry point's signature, and `args` the program's arguments.
#[inline(always)]
pub unsafe fn forward<H: Hook<A, R>, F: Copy, A: Copy, R: Outcome>(
    api: Api,
    via: Via,
    down: Option<F>,
    (args, errcode_ret): (A, Option<*mut cl_int>),
    call: impl Fn(F, A) -> R,
    missing: impl FnOnce() -> R,
) -> R {
    let Some(f) = down else { return missing() };
    let Some(outermost) = guard::enter(lifecycle::init, via) else {
        return call(f, args);
    };
    if !lifecycle::called(api) {
        return call(f, args);
    }
    crate::sink::counts::record(api, via);
    // Every call is timed, for the host-call table (`sink/host_calls.rs`).
    let every_call = crate::sink::recording().every_call;
    let recorded = H::ENQUEUES || H::SYNCS || every_call;
    // One recorded call in 64 measures clxfer's own time (`sink::own`).
    let measured = recorded && crate::sink::own::tick();
    let entered = if measured { clock::now_ns() } else { 0 };
    let mut edited = args;
    let mut state = guard::protect(api, || {
        guard::injected_panic(api);
        unsafe { H::before(Call { api, via }, &mut edited) }
    });
    let mut used = if state.is_some() { edited } else { args };
    let begin = clock::now_ns();
    outermost.down(via);
    let mut ret = call(f, used);
    outermost.up();
    if let Some(st) = state.as_mut()
        && guard::protect(api, || H::retry(st, &ret)) == Some(true)
    {
        used = args;
        outermost.down(via);
        ret = call(f, used);
        outermost.up();
    }
    let mut span = Span {
        begin,
        end: clock::now_ns(),
        ..Span::default()
    };
    let ret = match state {
        Some(state) => {
            guard::protect(api, || unsafe { H::after(state, &used, ret, &mut span) }).unwrap_or(ret)
        }
        None => ret,
    };
    if let Some(w) = &span.waited {
        intercept::host_synced(w);
    }
    let waited = span.waited.is_some() || span.blocking;
    crate::sink::host_calls::add(api, span.end.saturating_sub(span.begin), waited);
    // SAFETY: `errcode_ret` is the program's error out-parameter, which the driver just set.
    if let Some(code) = unsafe { ret.failure(errcode_ret) } {
        crate::sink::host_calls::failed(api, code);
    }
    if recorded && guard::is_on() {
        let Span {
            begin,
            end,
            command,
            facts,
            node,
            waited,
            races,
            ..
        } = span;
        match facts {
            Some(facts) => crate::sink::buffer::push_fact(facts),
            // Else only classified enqueues, as facts, and synchronisation points.
            None if waited.is_none() && !every_call => {}
            None => crate::sink::buffer::push_with(|tid| {
                Record::Call(crate::sink::record::Call {
                    api,
                    tid,
                    begin,
                    end,
                    command,
                    node,
                    waited,
                })
            }),
        }
        for r in races {
            crate::sink::buffer::push_with(|_| Record::Race(Box::new(r)));
        }
        if measured {
            let driver = end.saturating_sub(begin);
            crate::sink::own::add(clock::now_ns().saturating_sub(entered + driver));
        }
    }
    ret
}
