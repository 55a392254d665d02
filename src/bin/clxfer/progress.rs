//! Progress on long work over traces: once it has run ~1 s, a bar on stderr with the bytes read
//! of the total, the rate and the time left, drawn by `indicatif` (which draws nothing when stderr
//! is not a terminal), from `clxfer::trace::read::bytes_read`. Gone when the work ends.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::PathBuf;
use std::sync::{Mutex, mpsc};
use std::time::Duration;

/// The bar while it shows.
static BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Runs `f` (which writes to the terminal) with the bar, if one shows, out of its way.
pub fn suspend<T>(f: impl FnOnce() -> T) -> T {
    let bar = BAR.lock().unwrap_or_else(|e| e.into_inner()).clone();
    match bar {
        Some(b) => b.suspend(f),
        None => f(),
    }
}

/// The bytes of `paths` (files, or the traces and reports of directories), `passes` times: what
/// a command reading them all that often reads.
pub fn total(paths: &[PathBuf], passes: u64) -> u64 {
    let size = |p: &PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
    let files = paths
        .iter()
        .flat_map(|p| clxfer::compare::input::files(p).unwrap_or_else(|_| vec![p.clone()]));
    files.map(|f| size(&f)).sum::<u64>() * passes
}

/// Runs `work`, showing its progress through `total` bytes under `label` if it runs long
/// enough.
pub fn watch<T>(label: &str, total: u64, work: impl FnOnce() -> T) -> T {
    let after = Duration::from_millis(clxfer::config::global().test_progress_after_ms);
    let start = clxfer::trace::read::bytes_read();
    let (done, finished) = mpsc::channel::<()>();
    let label = label.to_string();
    let bar = std::thread::spawn(move || {
        // Work that ends sooner shows nothing (a test's 0 shows the bar at once, whatever).
        if !after.is_zero() && finished.recv_timeout(after) != Err(mpsc::RecvTimeoutError::Timeout) {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "clxfer: {msg} {wide_bar} {binary_bytes}/{binary_total_bytes} \
                 {binary_bytes_per_sec} {eta} left",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_message(label);
        bar.set_position(clxfer::trace::read::bytes_read().saturating_sub(start).min(total));
        bar.tick();
        *BAR.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar.clone());
        loop {
            let read = clxfer::trace::read::bytes_read().saturating_sub(start);
            bar.set_position(read.min(total));
            match finished.recv_timeout(Duration::from_millis(100)) {
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                _ => break,
            }
        }
        BAR.lock().unwrap_or_else(|e| e.into_inner()).take();
        bar.finish_and_clear();
    });
    let out = work();
    let _ = done.send(());
    let _ = bar.join();
    out
}
