//! Ending by a signal. SIGTERM (a batch scheduler's walltime), SIGINT (Ctrl-C), SIGHUP and SIGQUIT
//! end a process by default without its exit handlers, so the trace would lose its end and the
//! summary would never print. Where the program left such a signal at its default action when it
//! first called OpenCL, clxfer catches it, finishes what it has (the trace's end, the report,
//! which says which signal cut the run), then lets the signal do what it would have done: the
//! process ends by it, with the same status (and core dump, for SIGQUIT).
//!
//! A signal the program handles or ignores is left alone: its handler, and what it does, are
//! the program's (one that ends by `exit` finishes clxfer as any exit does). A driver may put its
//! own handler over clxfer's while it starts (PoCL's LLVM does, for every one of these): LLVM's
//! puts clxfer's back and raises the signal again, so clxfer still finishes; only a second copy of
//! the signal arriving within microseconds (GNU `timeout` without `--foreground` sends one to the
//! program and one to its group) can find the default action in between, and end the process
//! before clxfer has finished, as it would have ended without clxfer.
//!
//! The handler does only what a signal handler may: it wakes clxfer's finisher thread through a
//! pipe and waits for it (`poll`). The finisher finishes and raises the signal again at its
//! default action, which ends the process. Should the thread the signal landed on hold one of
//! clxfer's locks (inside a call), the finisher would wait for it: so the handler holds the thread
//! only while the finish makes progress (the writer writes; a look every 100 ms), else returns,
//! the thread goes on and lets go, and the finisher ends the process when done. A watchdog ends
//! it after [`LIMIT`] whatever the finisher's state (a dead disk). A second signal while
//! finishing ends the process at once.

use crate::sigset::{CAUGHT, block_in_this_thread};
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, Ordering};
use std::time::Duration;

/// The longest a finish by signal may take before the signal ends the process anyway.
pub const LIMIT: Duration = Duration::from_secs(5);

/// How often the handler looks whether the finish still makes progress.
const LOOK_MS: c_int = 100;

/// The signal being finished on (0: none), and when it came (monotonic ms).
static ENDING: AtomicI32 = AtomicI32::new(0);
static ENDING_AT: AtomicI64 = AtomicI64::new(0);
/// A second signal this soon after the first is the same event delivered twice (to the process
/// and to its group, or passed on by `clxfer run`), not a user pressing Ctrl-C again.
const TWICE_MS: i64 = 300;
/// The pipe that wakes the finisher (read end, write end), and the process they belong to.
static WAKE_READ: AtomicI32 = AtomicI32::new(-1);
static WAKE_WRITE: AtomicI32 = AtomicI32::new(-1);
static DONE_READ: AtomicI32 = AtomicI32::new(-1);
static DONE_WRITE: AtomicI32 = AtomicI32::new(-1);
static OWNER: AtomicI32 = AtomicI32::new(0);
static FINISHED: AtomicBool = AtomicBool::new(false);

/// The signal this process is ending by, once its handler ran.
pub fn ending() -> Option<c_int> {
    Some(ENDING.load(Ordering::Acquire)).filter(|&s| s != 0)
}

/// At the process's first OpenCL call (and a forked child's): the finisher thread, then the
/// handlers over each caught signal still at its default action. `finish` is what the end does
/// (`lifecycle::finish`, passed in from above).
pub fn install(finish: fn()) {
    let pid = std::process::id() as i32;
    if OWNER.swap(pid, Ordering::AcqRel) == pid {
        return;
    }
    FINISHED.store(false, Ordering::Release);
    let (Some((wake_r, wake_w)), Some((done_r, done_w))) = (pipe(), pipe()) else {
        return;
    };
    WAKE_READ.store(wake_r, Ordering::Release);
    WAKE_WRITE.store(wake_w, Ordering::Release);
    DONE_READ.store(done_r, Ordering::Release);
    DONE_WRITE.store(done_w, Ordering::Release);
    let spawned = std::thread::Builder::new()
        .name("clxfer-signals".into())
        .stack_size(64 << 10)
        .spawn(move || finisher(wake_r, finish));
    if spawned.is_err() {
        return;
    }
    for sig in CAUGHT {
        // SAFETY: reading and setting a disposition; the handler is async-signal-safe.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction != libc::SIG_DFL
            {
                continue;
            }
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            // SA_NODEFER: a second signal enters the handler again, and ends the process.
            new.sa_flags = libc::SA_RESTART | libc::SA_NODEFER;
            libc::sigemptyset(&mut new.sa_mask);
            libc::sigaction(sig, &new, std::ptr::null_mut());
        }
    }
}

fn pipe() -> Option<(c_int, c_int)> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: pipe2 writes two descriptors.
    (unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == 0).then_some((fds[0], fds[1]))
}

/// The handler: async-signal-safe calls only.
extern "C" fn on_signal(sig: c_int) {
    // SAFETY: errno is saved and restored around the calls below, which are all
    // async-signal-safe (getpid, write, poll, sigaction, raise).
    unsafe {
        let errno = *libc::__errno_location();
        let now = monotonic_ms();
        let first = ENDING.compare_exchange(0, sig, Ordering::AcqRel, Ordering::Acquire);
        let ours = OWNER.load(Ordering::Acquire) == libc::getpid();
        if first.is_ok() {
            ENDING_AT.store(now, Ordering::Release);
        } else if now - ENDING_AT.load(Ordering::Acquire) < TWICE_MS {
            // The same signal delivered twice: the first one's finish goes on.
            *libc::__errno_location() = errno;
            return;
        }
        if first.is_err() || !ours || FINISHED.load(Ordering::Acquire) {
            // A second signal (Ctrl-C again), a forked child without a finisher, or nothing
            // left to do.
            die(sig);
        }
        let byte = sig as u8;
        libc::write(
            WAKE_WRITE.load(Ordering::Acquire),
            (&byte as *const u8).cast(),
            1,
        );
        let mut done = libc::pollfd {
            fd: DONE_READ.load(Ordering::Acquire),
            events: libc::POLLIN,
            revents: 0,
        };
        // Two looks without progress (the finisher may be waiting for this thread): let it go.
        let mut seen = crate::sink::channel::written();
        let mut still = 0;
        let looks = LIMIT.as_millis() as c_int / LOOK_MS;
        for _ in 0..looks {
            if libc::poll(&mut done, 1, LOOK_MS) > 0 {
                break;
            }
            let now = crate::sink::channel::written();
            still = if now == seen { still + 1 } else { 0 };
            seen = now;
            if still >= 2 {
                break;
            }
        }
        *libc::__errno_location() = errno;
    }
}

/// The monotonic clock in ms (async-signal-safe).
fn monotonic_ms() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime is async-signal-safe and writes the struct it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1000 + ts.tv_nsec / 1_000_000
}

/// Ends the process by `sig` at its default action (async-signal-safe).
fn die(sig: c_int) {
    // SAFETY: sigaction and raise are async-signal-safe; SIG_DFL of a caught signal ends the
    // process (raise from a thread that blocks it: the kill below reaches the others).
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut dfl.sa_mask);
        libc::sigaction(sig, &dfl, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
        libc::raise(sig);
    }
}

/// clxfer's thread that finishes when a signal comes, then ends the process by it.
fn finisher(wake: c_int, finish: fn()) {
    block_in_this_thread();
    let mut byte = 0u8;
    // SAFETY: reading one byte from the pipe this thread owns.
    loop {
        let n = unsafe { libc::read(wake, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            break;
        }
        if n == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
    let Some(sig) = ending() else { return };
    let _ = std::thread::Builder::new()
        .name("clxfer-watchdog".into())
        .stack_size(32 << 10)
        .spawn(move || {
            block_in_this_thread();
            std::thread::sleep(LIMIT);
            die(sig);
        });
    let _ = std::panic::catch_unwind(finish);
    FINISHED.store(true, Ordering::Release);
    let byte = 1u8;
    // SAFETY: one byte into the pipe the handler polls.
    unsafe {
        libc::write(
            DONE_WRITE.load(Ordering::Acquire),
            (&byte as *const u8).cast(),
            1,
        )
    };
    die(sig);
}

/// Whether a finish by signal is under way (an exit meanwhile waits for it, [`wait_finished`]).
pub fn finishing() -> bool {
    ending().is_some() && OWNER.load(Ordering::Acquire) == std::process::id() as i32
}

/// Waits, at most [`LIMIT`], for the finisher to be done.
pub fn wait_finished() {
    let start = std::time::Instant::now();
    while !FINISHED.load(Ordering::Acquire) && start.elapsed() < LIMIT {
        std::thread::sleep(Duration::from_millis(5));
    }
}
