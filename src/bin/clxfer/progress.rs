//! Progress on long work over traces: once it has run ~1 s, a bar on stderr with the bytes read
//! of the total, the rate and the time left, drawn by `indicatif` (nothing when stderr is not a
//! terminal). Drawn on the reading thread, from `clxfer::trace::read`'s hook (every MiB read), so
//! that no thread is added; gone when the work ends.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The work being watched: its label, total, start and the bytes read before it, and its bar
/// once shown.
struct Watch {
    label: String,
    total: u64,
    since: Instant,
    after: Duration,
    from: u64,
    bar: Option<ProgressBar>,
}

static WATCH: Mutex<Option<Watch>> = Mutex::new(None);

fn watching<T>(f: impl FnOnce(&mut Option<Watch>) -> T) -> T {
    f(&mut WATCH.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Runs `f` (which writes to the terminal) with the bar, if one shows, out of its way.
pub fn suspend<T>(f: impl FnOnce() -> T) -> T {
    match watching(|w| w.as_ref().and_then(|w| w.bar.clone())) {
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

/// The reading hook: shows the bar once the work has run long enough, then moves it.
fn read(bytes: u64) {
    watching(|w| {
        let Some(w) = w.as_mut() else { return };
        let done = bytes.saturating_sub(w.from).min(w.total);
        if w.bar.is_none() && w.since.elapsed() >= w.after {
            let bar = ProgressBar::with_draw_target(Some(w.total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "clxfer: {msg} {wide_bar} {binary_bytes}/{binary_total_bytes} \
                     {binary_bytes_per_sec} {eta} left",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.set_message(w.label.clone());
            w.bar = Some(bar);
        }
        if let Some(bar) = &w.bar {
            bar.set_position(done);
        }
    });
}

/// Runs `work`, showing its progress through `total` bytes under `label` if it runs long
/// enough, on a terminal.
pub fn watch<T>(label: &str, total: u64, work: impl FnOnce() -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return work();
    }
    clxfer::trace::read::on_progress(read);
    let after_ms = clxfer::config::global().test_progress_after_ms;
    watching(|w| {
        *w = Some(Watch {
            label: label.to_string(),
            total,
            since: Instant::now(),
            after: Duration::from_millis(after_ms),
            from: clxfer::trace::read::bytes_read(),
            bar: None,
        })
    });
    // A test's 0 shows the bar at once, however short the work.
    if after_ms == 0 {
        read(clxfer::trace::read::bytes_read());
    }
    let out = work();
    if let Some(bar) = watching(|w| w.take().and_then(|w| w.bar)) {
        bar.finish_and_clear();
    }
    out
}
