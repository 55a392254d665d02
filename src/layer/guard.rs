//! Whether clxfer handles a call: the per-thread re-entrancy guard (nested calls pass straight
//! through, so each program call is seen once even when clxfer sits at two levels of the chain),
//! the process-wide on/off state, and panic containment at the export boundary.

use super::Api;
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

thread_local! {
    static INSIDE: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Held for the duration of the outermost intercepted call on this thread: this thread's flag,
/// found once (each thread-local lookup from a dlopen'd library is a call into the loader).
pub struct Outermost(*const Cell<bool>);

impl Drop for Outermost {
    fn drop(&mut self) {
        // SAFETY: the flag of the thread that made this guard, which is not `Send` (a raw
        // pointer) and so is dropped on that thread, within the call; the flag has no
        // destructor, so its storage lives as long as the thread.
        unsafe { (*self.0).set(false) };
    }
}

/// `Some` when this call is the outermost on its thread and clxfer is on; `None` means: forward
/// only. Before clxfer has started, `init` starts it (`lifecycle::init`, above this file: passed
/// in, not named, and inlined alike) and says whether it is on.
#[inline(always)]
pub fn enter(init: fn() -> bool) -> Option<Outermost> {
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
    // `then_some`: a guard built for a nested call would reset the flag when dropped.
    INSIDE
        .try_with(|inside| (!inside.replace(true)).then(|| Outermost(inside)))
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
        let enter = || enter(|| true);
        let outer = enter().expect("first call is outermost");
        assert!(enter().is_none(), "nested");
        assert!(
            enter().is_none(),
            "still nested after a nested call returned"
        );
        drop(outer);
        assert!(
            enter().is_some(),
            "outermost again once the outer call ended"
        );
    }
}
