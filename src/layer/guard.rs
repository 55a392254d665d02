//! Whether clxfer handles a call: the per-thread re-entrancy guard, the process-wide on/off
//! state, and panic containment at the export boundary.
//!
//! The guard tells three kinds of nested call apart by where its thread is:
//! - in clxfer's own code (a hook, clxfer's own queries): the call is clxfer's, and passes
//!   straight through;
//! - in the driver, running a program's call that came by LD_PRELOAD: a call arriving at the
//!   loader layer is that same call one level down the chain (clxfer loaded both ways), and
//!   passes straight through, so each program call is seen once;
//! - otherwise in the driver: the call is the program's own, from a callback the driver runs
//!   inside the call (PoCL runs an event's callback inside `clSetEventCallback` when the event is
//!   complete, a build's inside `clBuildProgram`): it is hooked and traced as any program call,
//!   and sees exactly what it would without clxfer.

use super::{Api, Via};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

const UNINIT: u8 = 0;
const ON: u8 = 1;
const OFF: u8 = 2;

static STATE: AtomicU8 = AtomicU8::new(UNINIT);
static DISABLED_SAID: AtomicBool = AtomicBool::new(false);
static PANIC_AT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Where a thread is: in the program's code, in clxfer's own, or in the driver running a
/// program's call that came by LD_PRELOAD or by another way.
const PROGRAM: u8 = 0;
const OWN: u8 = 1;
const DRIVER_PRELOAD: u8 = 2;
const DRIVER: u8 = 3;

thread_local! {
    static WHERE: Cell<u8> = const { Cell::new(PROGRAM) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Held for the duration of a call clxfer handles on this thread: this thread's place, found
/// once (each thread-local lookup from a dlopen'd library is a call into the loader), and the
/// place to go back to (a callback's call returns into the driver).
pub struct Outermost {
    at: *const Cell<u8>,
    back: u8,
}

impl Outermost {
    /// The driver runs the program's call, which came `via`.
    #[inline(always)]
    pub fn down(&self, via: Via) {
        let at = if via == Via::Preload {
            DRIVER_PRELOAD
        } else {
            DRIVER
        };
        // SAFETY: as in `drop`.
        unsafe { (*self.at).set(at) };
    }

    /// The call down returned: clxfer's own code again.
    #[inline(always)]
    pub fn up(&self) {
        // SAFETY: as in `drop`.
        unsafe { (*self.at).set(OWN) };
    }
}

impl Drop for Outermost {
    fn drop(&mut self) {
        // SAFETY: the place of the thread that made this guard, which is not `Send` (a raw
        // pointer) and so is dropped on that thread, within the call; the cell has no
        // destructor, so its storage lives as long as the thread.
        unsafe { (*self.at).set(self.back) };
    }
}

/// `Some` when this call, arriving `via`, is the program's (see the module's comment) and clxfer
/// is on; `None` means: forward only. Before clxfer has started, `init` starts it
/// (`lifecycle::init`, above this file: passed in, not named, and inlined alike) and says whether
/// it is on.
#[inline(always)]
pub fn enter(init: fn() -> bool, via: Via) -> Option<Outermost> {
    match STATE.load(Ordering::Acquire) {
        ON => {}
        OFF => return None,
        _ => {
            if !init() {
                return None;
            }
        }
    }
    // try_with: during thread teardown the slot may be gone; then just forward. `then`, not
    // `then_some`: a guard built for a call clxfer passes would reset the place when dropped.
    WHERE
        .try_with(|at| {
            let back = at.get();
            let programs = match back {
                PROGRAM | DRIVER => true,
                DRIVER_PRELOAD => via != Via::Layer,
                _ => false,
            };
            programs.then(|| {
                at.set(OWN);
                Outermost { at, back }
            })
        })
        .ok()
        .flatten()
}

pub(super) fn set_on(on: bool) {
    STATE.store(if on { ON } else { OFF }, Ordering::Release);
}

pub(super) fn is_on() -> bool {
    STATE.load(Ordering::Acquire) == ON
}

/// Runs clxfer's own code for `api`; a panic disables clxfer for the process and yields `None`.
#[inline(always)]
pub fn protect<T>(api: Api, f: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => Some(value),
        Err(payload) => {
            disable(api.name(), &payload);
            None
        }
    }
}

/// Turns clxfer off after a panic in its code, saying so once.
#[cold]
pub(super) fn disable(context: &str, payload: &Box<dyn Any + Send>) {
    set_on(false);
    if DISABLED_SAID.swap(true, Ordering::AcqRel) {
        return;
    }
    let what = LAST_PANIC
        .try_with(|p| p.borrow_mut().take())
        .ok()
        .flatten()
        .unwrap_or_else(|| {
            payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into())
        });
    crate::warn!(
        "internal error in {context} ({what}); clxfer has disabled itself for this process and \
         every OpenCL call now passes straight through"
    );
}

/// Replaces the panic message of clxfer's own std (a cdylib has its own) with nothing: the one
/// `clxfer:` line from [`disable`] says what happened.
pub(super) fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let _ = LAST_PANIC.try_with(|p| *p.borrow_mut() = Some(format!("panic{at}: {msg}")));
    }));
}

/// `CLXFER_TEST_PANIC_AT`: the entry point whose hook panics on purpose.
pub(super) fn set_panic_at(api: Option<Api>) {
    PANIC_AT.store(api.map_or(usize::MAX, |a| a as usize), Ordering::Relaxed);
}

#[inline(always)]
pub fn injected_panic(api: Api) {
    if PANIC_AT.load(Ordering::Relaxed) == api as usize {
        panic!("injected by CLXFER_TEST_PANIC_AT={}", api.name());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_calls_do_not_reset_the_outermost_flag() {
        set_on(true);
        let enter = |via| enter(|| true, via);
        let outer = enter(Via::Preload).expect("first call is outermost");
        assert!(enter(Via::Preload).is_none(), "clxfer's own call");
        assert!(
            enter(Via::Layer).is_none(),
            "still clxfer's after a nested call returned"
        );
        drop(outer);
        assert!(
            enter(Via::Layer).is_some(),
            "outermost again once the outer call ended"
        );
    }

    #[test]
    fn in_the_driver_a_layer_call_is_the_same_call_and_a_callback_s_is_the_programs() {
        set_on(true);
        let enter = |via| enter(|| true, via);
        // By preload, down into the driver: the loader's layer sees the same call.
        let outer = enter(Via::Preload).unwrap();
        outer.down(Via::Preload);
        assert!(enter(Via::Layer).is_none(), "the same call, one level down");
        // A callback the driver runs calls by preload: the program's, and traced.
        let callback = enter(Via::Preload).expect("a callback's call");
        callback.down(Via::Preload);
        assert!(
            enter(Via::Layer).is_none(),
            "the callback's call, one level down"
        );
        callback.up();
        drop(callback);
        assert!(
            enter(Via::Layer).is_none(),
            "back in the outer call's driver"
        );
        outer.up();
        assert!(enter(Via::Preload).is_none(), "clxfer's own code");
        drop(outer);
        // As a layer only: a call arriving while the driver runs one is a callback's.
        let outer = enter(Via::Layer).unwrap();
        outer.down(Via::Layer);
        assert!(enter(Via::Layer).is_some(), "a callback's call");
        drop(outer);
    }
}
