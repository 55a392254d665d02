//! Diagnostics: one line each on stderr, prefixed `clxfer:`. Never stdout, never a panic when stderr
//! is closed, one write per line so lines from several threads do not interleave.

use crate::config::{self, LogLevel};

/// Writes one `clxfer:` line to stderr, whatever the log level: one `write(2)`, not through std's
/// `Stderr`, whose lock a thread of the parent may hold at a `fork` (the child would wait on it
/// forever).
pub fn emit(args: std::fmt::Arguments) {
    let line = format!("clxfer: {args}\n");
    let mut rest = line.as_bytes();
    while !rest.is_empty() {
        // SAFETY: writes bytes of a live buffer to file descriptor 2.
        let n = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
        if n <= 0 {
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        rest = &rest[n as usize..];
    }
}

/// Whether messages of this level are shown.
pub fn enabled(level: LogLevel) -> bool {
    config::global().log >= level
}

/// A problem the user should know about; always shown.
#[macro_export]
macro_rules! warn {
    ($($t:tt)*) => { $crate::diag::emit(format_args!($($t)*)) };
}

/// How clxfer loaded and what it saw; shown with `CLXFER_LOG=info` or `debug`.
#[macro_export]
macro_rules! info {
    ($($t:tt)*) => {
        if $crate::diag::enabled($crate::config::LogLevel::Info) {
            $crate::diag::emit(format_args!($($t)*))
        }
    };
}

/// Details of resolution and dispatch; shown with `CLXFER_LOG=debug`.
#[macro_export]
macro_rules! debug {
    ($($t:tt)*) => {
        if $crate::diag::enabled($crate::config::LogLevel::Debug) {
            $crate::diag::emit(format_args!($($t)*))
        }
    };
}

/// The program's name, for messages and file names.
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
