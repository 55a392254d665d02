//! Where records go: per-thread buffers (`buffer.rs`) hand batches to one writer thread
//! (`writer.rs`), which feeds the output of the mode: the Chrome trace (`chrome.rs`, keys in
//! `schema.rs`) or, in summary mode, the aggregate. Call and transfer counts for the exit report
//! (`counts.rs`, `transfers.rs`) are kept alongside.

pub mod buffer;
pub mod chrome;
pub mod counters;
pub mod counts;
pub mod json;
pub mod record;
pub mod schema;
pub mod trace_file;
pub mod transfers;
pub mod writer;

use crate::config::{self, Mode};

/// The output of this process's mode, opened by the writer thread when it starts.
fn output() -> Option<Box<dyn writer::Output>> {
    let config = config::global();
    match config.mode {
        Mode::Trace => {
            let (file, path) =
                trace_file::create(&config.dir, &crate::layer::lifecycle::program_name())?;
            let args: Vec<String> = std::env::args().collect();
            let start = chrome::Start {
                program: &crate::layer::lifecycle::program_name(),
                command_line: &args,
                mode: config.mode.as_str(),
            };
            let out = std::io::BufWriter::with_capacity(1 << 16, file);
            Some(Box::new(chrome::Chrome::new(
                out,
                path.display().to_string(),
                start,
            )))
        }
        Mode::Summary => Some(Box::new(Discard)),
        Mode::Off => None,
    }
}

/// Summary mode until the aggregate exists (issue #5): records are taken and let go.
struct Discard;

impl writer::Output for Discard {
    fn write(&mut self, records: &mut Vec<record::Record>) {
        for r in records.drain(..) {
            if let record::Record::Call(record::Call {
                command: Some(e), ..
            }) = r
            {
                buffer::unbox(e);
            }
        }
    }
    fn finish(&mut self, _: &record::End, _: [u64; record::KINDS.len()]) {}
}
