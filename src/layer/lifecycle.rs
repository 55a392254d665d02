//! Start and finish, once per process: configuration, exit handlers, fork.
//!
//! The exit path depends on how the library was started (`layer-contract.md`): under LD_PRELOAD or
//! `clInitLayer` (ocl-icd) an `atexit` handler finishes; under `clInitLayerWithProperties` (Khronos
//! loader) the loader calls `clDeinitLayer` and then `dlclose`s us, so no `atexit` is registered.
//!
//! Around `fork`, every process-wide lock of clxfer's is held by the forking thread
//! (`intercept/fork.rs`), so the child finds them free and the data behind them whole; a child
//! that makes no OpenCL call finishes nothing at exit.

use super::{Api, guard, loader_layer};
use crate::config::{self, Mode};
use std::any::Any;
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static INIT: Once = Once::new();
static PID: AtomicI32 = AtomicI32::new(0);
static FINISHED: AtomicBool = AtomicBool::new(false);
/// This process has made an OpenCL call (a forked child, none yet: it has nothing to finish).
static CALLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The locks the forking thread holds across `fork`.
    static HELD: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
}

/// An outermost call arrived (a load of a shared, rarely written flag).
#[inline(always)]
pub fn called() {
    if !CALLED.load(Ordering::Relaxed) {
        CALLED.store(true, Ordering::Relaxed);
    }
}

/// Runs the first time any entry point is called; returns whether clxfer is on.
pub fn init() -> bool {
    INIT.call_once(|| {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(start)) {
            guard::disable("start-up", &payload);
        }
    });
    guard::is_on()
}

fn start() {
    guard::install_panic_hook();
    let config = config::global();
    crate::timing::clock::start();
    PID.store(std::process::id() as i32, Ordering::Relaxed);
    if config.mode == Mode::Off {
        crate::info!("CLXFER_MODE=off: forwarding every call untouched");
        guard::set_on(false);
        return;
    }
    guard::set_panic_at(config.test_panic_at.as_deref().and_then(Api::from_name));
    // SAFETY: registering plain extern "C" functions that live as long as the process (see above
    // for why the deinit-managed case registers none).
    unsafe {
        if !loader_layer::deinit_managed() {
            libc::atexit(at_exit);
        }
        libc::pthread_atfork(
            Some(before_fork),
            Some(after_fork_in_parent),
            Some(after_fork_in_child),
        );
    }
    crate::info!(
        "clxfer {} active in {} (pid {}), mode {}",
        env!("CARGO_PKG_VERSION"),
        program_name(),
        std::process::id(),
        config.mode.as_str()
    );
    guard::set_on(true);
}

extern "C" fn at_exit() {
    finish();
}

/// Takes every process-wide lock (see the module's comment). Never panics out; a panic leaves
/// what was taken held until the handlers after the fork let it go.
extern "C" fn before_fork() {
    let _ = catch_unwind(|| {
        let mut held = super::intercept::fork::hold();
        held.push(crate::sink::buffer::hold_for_fork());
        held.push(super::extensions::hold_for_fork());
        let _ = HELD.try_with(|h| *h.borrow_mut() = held);
    });
}

fn release_held() {
    let _ = catch_unwind(|| {
        let held = HELD.try_with(|h| std::mem::take(&mut *h.borrow_mut()));
        super::intercept::fork::release(held.unwrap_or_default());
    });
}

extern "C" fn after_fork_in_parent() {
    release_held();
}

extern "C" fn after_fork_in_child() {
    release_held();
    let _ = catch_unwind(super::intercept::fork::renew_in_child);
    CALLED.store(false, Ordering::Relaxed);
    PID.store(std::process::id() as i32, Ordering::Relaxed);
    FINISHED.store(false, Ordering::Relaxed);
    crate::sink::counts::reset();
    crate::sink::transfers::reset();
    crate::sink::buffer::forget_after_fork();
    crate::sink::counters::reset_after_fork();
    super::intercept::forget_after_fork();
}

/// Finishes the outputs: once per process, never on behalf of a parent after `fork`.
pub fn finish() {
    if PID.load(Ordering::Relaxed) != std::process::id() as i32
        || !CALLED.load(Ordering::Relaxed)
        || FINISHED.swap(true, Ordering::AcqRel)
    {
        return;
    }
    let report = || {
        crate::sink::buffer::finish(super::intercept::end());
        crate::sink::counts::report();
        super::intercept::report_memory();
    };
    if let Err(payload) = catch_unwind(report) {
        guard::disable("exit", &payload);
    }
}

/// The program's name, for messages.
pub fn program_name() -> String {
    std::env::args_os()
        .next()
        .and_then(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "program".into())
}
