//! The signals that end a process without its exit handlers and that clxfer finishes on
//! (`layer/signals.rs`), their names, and keeping them off clxfer's own threads.

use std::ffi::c_int;
/// SIGTERM (a batch scheduler's walltime), SIGINT (Ctrl-C), SIGHUP, SIGQUIT.
pub const CAUGHT: [c_int; 4] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT];

/// A signal's name (`SIGTERM`), for the report and the trace.
pub fn name(sig: c_int) -> String {
    match sig {
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGINT => "SIGINT".into(),
        libc::SIGHUP => "SIGHUP".into(),
        libc::SIGQUIT => "SIGQUIT".into(),
        other => format!("signal {other}"),
    }
}

/// Blocks the caught signals in the calling thread (one of clxfer's own), so that the kernel
/// delivers them to a thread of the program's.
pub fn block_in_this_thread() {
    // SAFETY: a signal set on the stack, given to pthread_sigmask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in CAUGHT {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}
