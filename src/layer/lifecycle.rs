//! Start and finish, once per process: configuration, exit handlers, fork.
//!
//! The exit path depends on how the library was started (`layer-contract.md`): under LD_PRELOAD or
//! `clInitLayer` (ocl-icd) an `atexit` handler finishes; under `clInitLayerWithProperties` (Khronos
//! loader) the loader calls `clDeinitLayer` and then `dlclose`s us, so no `atexit` is registered.

use super::{Api, guard, loader_layer};
use crate::config::{self, Mode};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static INIT: Once = Once::new();
static PID: AtomicI32 = AtomicI32::new(0);
static FINISHED: AtomicBool = AtomicBool::new(false);

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
        libc::pthread_atfork(None, None, Some(after_fork_in_child));
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

extern "C" fn after_fork_in_child() {
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
