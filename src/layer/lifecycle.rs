//! Start and finish, once per process: configuration, exit handlers, fork.
//!
//! The end: under LD_PRELOAD or `clInitLayer` (ocl-icd), the library's own destructor
//! (`.fini_array`) finishes. It runs in the dynamic linker's exit handler, which `exit` runs after
//! every `atexit` handler and C++ static destructor of the program (that handler was registered
//! first, before `main`), so the calls those make are traced; an `atexit` handler registered at
//! clxfer's first call would run before the program's earlier ones. Under
//! `clInitLayerWithProperties` (Khronos loader) the loader calls `clDeinitLayer` (from its own
//! destructor) and then `dlclose`s us; the destructor then finds the work done
//! (`layer-contract.md`). A call that arrives after the end (from a later library's destructor)
//! is forwarded untraced, and said once.
//!
//! Around `fork`, every process-wide lock of clxfer's is held by the forking thread
//! (`intercept/fork.rs`), so the child finds them free and the data behind them whole; a child
//! that makes no OpenCL call finishes nothing at exit.

use super::{Api, guard};
use crate::config::{self, Mode};
use std::any::Any;
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, Ordering};

static INIT: Once = Once::new();
static PID: AtomicI32 = AtomicI32::new(0);

/// Where this process is: no OpenCL call yet (a forked child that makes none has nothing to
/// finish), calls arriving, or finished (later calls are forwarded untraced).
static STAGE: AtomicU8 = AtomicU8::new(QUIET);
const QUIET: u8 = 0;
const CALLED: u8 = 1;
const OVER: u8 = 2;
static LATE_SAID: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The locks the forking thread holds across `fork`.
    static HELD: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
}

/// An outermost call arrived (a load of a shared, rarely written flag); `false` when it came
/// after the end, to be forwarded untraced.
#[inline(always)]
pub fn called(api: Api) -> bool {
    match STAGE.load(Ordering::Relaxed) {
        CALLED => true,
        QUIET => {
            if STAGE
                .compare_exchange(QUIET, CALLED, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                first_call();
            }
            true
        }
        _ => {
            late(api);
            false
        }
    }
}

/// This process's first traced call: `clxfer run` learns that the program reached OpenCL.
#[cold]
fn first_call() {
    crate::sink::trace_file::note("called", std::path::Path::new(&program_name()));
    super::signals::install(finish);
}

#[cold]
fn late(api: Api) {
    // After a signal's finish the program is ending: its last calls are expected.
    if super::signals::finishing() {
        return;
    }
    if !LATE_SAID.swap(true, Ordering::Relaxed) {
        crate::warn!(
            "{} was called after clxfer finished at exit (from a library's destructor?): it and \
             any later calls are forwarded but not traced",
            api.name()
        );
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
    for warning in &config.warnings {
        crate::warn!("{warning}");
    }
    crate::timing::clock::start();
    PID.store(std::process::id() as i32, Ordering::Relaxed);
    if config.mode == Mode::Off {
        crate::info!("CLXFER_MODE=off: forwarding every call untouched");
        guard::set_on(false);
        return;
    }
    guard::set_panic_at(config.test_panic_at.as_deref().and_then(Api::from_name));
    // SAFETY: registering plain extern "C" functions that live as long as the process.
    unsafe {
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
    crate::info!("options: {}", config.given());
    guard::set_on(true);
}

/// The library's constructor: under `clxfer run`, notes that clxfer was loaded into this process
/// (so that a run that saw no OpenCL call can tell "not loaded" from "no call"). Plain libc calls
/// only: nothing here may allocate, print or panic.
#[used]
#[unsafe(link_section = ".init_array")]
static AT_INIT: extern "C" fn() = at_init;

extern "C" fn at_init() {
    // SAFETY: getenv's result is a C string or null; the file is opened for appending only, never
    // following a link, and closed; the line is built on the stack.
    unsafe {
        let path = libc::getenv(c"CLXFER_RUN_NOTES".as_ptr());
        if path.is_null() || libc::getauxval(libc::AT_SECURE) != 0 {
            return;
        }
        let fd = libc::open(
            path,
            libc::O_WRONLY | libc::O_APPEND | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return;
        }
        let mut line = *b"loaded 0000000000\n";
        let mut pid = libc::getpid() as u32;
        for i in (7..17).rev() {
            line[i] = b'0' + (pid % 10) as u8;
            pid /= 10;
        }
        libc::write(fd, line.as_ptr().cast(), line.len());
        libc::close(fd);
    }
}

/// The library's destructor: at exit, after the program's exit handlers (see above), or when
/// the Khronos loader unloads clxfer after `clDeinitLayer`.
#[used]
#[unsafe(link_section = ".fini_array")]
static AT_FINI: extern "C" fn() = at_fini;

extern "C" fn at_fini() {
    finish();
}

/// Takes every process-wide lock (see the module's comment). Never panics out; a panic leaves
/// what was taken held until the handlers after the fork let it go.
extern "C" fn before_fork() {
    let _ = catch_unwind(|| {
        let mut held = super::intercept::fork::hold();
        held.push(crate::sink::buffer::hold_for_fork());
        held.push(super::extensions::hold_for_fork());
        held.push(super::locked::hold_for_fork());
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
    STAGE.store(QUIET, Ordering::Relaxed);
    PID.store(std::process::id() as i32, Ordering::Relaxed);
    crate::sink::counts::reset();
    crate::sink::host_calls::reset();
    crate::sink::transfers::reset();
    crate::sink::buffer::forget_after_fork();
    crate::sink::counters::reset_after_fork();
    super::intercept::forget_after_fork();
}

/// Finishes the outputs: once per process, never on behalf of a parent after `fork`.
pub fn finish() {
    // Once: only the first to move the stage from CALLED to OVER finishes.
    if PID.load(Ordering::Relaxed) != std::process::id() as i32 {
        return;
    }
    if STAGE
        .compare_exchange(CALLED, OVER, Ordering::AcqRel, Ordering::Relaxed)
        .is_err()
    {
        // An exit while a signal's finish is under way (the program went on meanwhile): the
        // process must not end before the finish has written the end.
        if super::signals::finishing() {
            super::signals::wait_finished();
        }
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

pub use crate::diag::program_name;
