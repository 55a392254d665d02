//! Where records go: per-thread buffers (`buffer.rs`) hand batches to one writer thread
//! (`writer.rs`), which feeds the output of the mode: the Chrome trace (`chrome.rs`, keys in
//! `schema.rs`) or, in summary mode, the aggregate. Call and transfer counts for the exit report
//! (`counts.rs`, `transfers.rs`) are kept alongside.

pub mod buffer;
pub mod channel;
pub mod chrome;
pub mod counters;
pub mod counts;
pub mod host_calls;
pub mod own;
pub mod record;
pub mod ring;
pub mod spare;
pub mod summary;
pub mod trace_file;
pub mod transfers;
pub mod writer;

use crate::config::{self, Mode};
use crate::event::Emit;
use crate::trace::format::Writer;

/// What the mode means for recording, decided here alone: trace mode records every call, each
/// command as slices, and the counters; summary mode only what its report needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recording {
    /// Every call is a record of its own; else only enqueues and host synchronisation points.
    pub every_call: bool,
    /// A command is recorded as the trace's slices (its call's and its device's); else as the
    /// report's facts.
    pub slices: bool,
    /// Commands no report fact needs (markers, barriers, unclassified commands) are timed on the
    /// device too.
    pub time_unreported: bool,
    /// The counters (pinned, resident, in flight), which only the trace draws, are kept.
    pub counters: bool,
}

impl Recording {
    pub const fn of(mode: Mode) -> Recording {
        let trace = matches!(mode, Mode::Trace);
        Recording {
            every_call: trace,
            slices: trace,
            time_unreported: trace,
            counters: trace,
        }
    }
}

/// This process's [`Recording`].
#[inline]
pub fn recording() -> Recording {
    Recording::of(config::global().mode)
}

/// The output of this process's mode, opened by the writer thread when it starts.
fn output() -> Option<Box<dyn writer::Output>> {
    let config = config::global();
    let program = crate::diag::program_name();
    let job = crate::job::this();
    let report = (config.report.as_ref())
        .map(|r| trace_file::fill(&r.to_string_lossy(), &program, job).into());
    match config.mode {
        Mode::Trace => {
            let (file, path) = trace_file::create(config, &program)?;
            let ring = config.trace_keep_last && config.trace_limit != u64::MAX;
            trace_file::note("trace", &path);
            let args: Vec<String> = std::env::args().collect();
            let start = chrome::Start {
                program: &program,
                job,
                command_line: &args,
                mode: config.mode.as_str(),
                settings: &config.settings,
            };
            let what = path.display().to_string();
            let summary = summary::Summary::new(&program, report, false);
            if ring {
                // A chunk passes its size by a flush and the record that crossed it.
                let flush = 2 * chrome::FLUSH_AT as u64;
                let out = ring::Ring::new(path, file, config.trace_limit, flush);
                (config.format).write_with(TraceOutput(out, what, start, summary))
            } else {
                let out = std::io::BufWriter::with_capacity(1 << 16, file);
                (config.format).write_with(TraceOutput(out, what, start, summary))
            }
        }
        Mode::Summary => Some(Box::new(summary::Summary::new(&program, report, true))),
        Mode::Off => None,
    }
}

/// The trace, waiting for the serialiser of the format asked for, and the summary beside it.
struct TraceOutput<'a, W>(W, String, chrome::Start<'a>, summary::Summary);

impl<W: ring::TraceOut + 'static> Writer for TraceOutput<'_, W> {
    type Out = Option<Box<dyn writer::Output>>;
    fn with<E: Emit + 'static>(self) -> Self::Out {
        let TraceOutput(out, what, start, summary) = self;
        let trace: chrome::Chrome<W, E> = chrome::Chrome::new(out, what, start);
        Some(Box::new(summary::Both { trace, summary }))
    }
}
