//! The one writer thread: takes batches from the threads' buffers and feeds the output of the
//! mode (`trace`: the Chrome trace file; `summary`: the aggregate). The call path never does I/O.

use super::channel::{self, Msg, Next, Shared};
use super::record::{End, Record};
use crossbeam_channel::Receiver;

/// Where records go. Runs on the writer thread only.
pub trait Output: Send {
    /// Takes every record out of `records` (the emptied batch is reused).
    fn write(&mut self, records: &mut Vec<Record>);
    /// Every tick (and before the end): make what was written durable.
    fn tick(&mut self) {}
    /// The end: everything has been written.
    fn finish(&mut self, end: &End, dropped: [u64; super::record::KINDS.len()]);
    /// The run's report (JSON), to go into the output's end if it has a place for it.
    fn embed_report(&mut self, _json: String) {}
}

/// Starts the writer thread; `None` if there is no output or no thread (records are dropped).
pub fn spawn(rx: Receiver<Msg>, shared: &'static Shared) -> Option<std::thread::JoinHandle<()>> {
    let mut output = super::output()?;
    // The trace's start is on disk before the program's first call returns: a run that ends at
    // any moment after it (SIGKILL, `_exit`) leaves a trace that loads.
    output.tick();
    std::thread::Builder::new()
        .name("clxfer-writer".into())
        .spawn(move || run(rx, shared, output))
        .ok()
}

// Never inlined: scripts/bench finds the writer's thread in callgrind's output by this name.
#[inline(never)]
fn run(rx: Receiver<Msg>, shared: &'static Shared, mut output: Box<dyn Output>) {
    crate::sigset::block_in_this_thread();
    let stall = crate::config::global().test_writer_stall_ms;
    if stall > 0 {
        std::thread::sleep(std::time::Duration::from_millis(stall));
    }
    loop {
        match channel::next(&rx) {
            Next::Msg(Msg::Batch(mut records)) => {
                output.write(&mut records);
                shared.recycle(records);
                channel::wrote();
            }
            Next::Msg(Msg::Sync(ack)) => {
                output.tick();
                let _ = ack.send(());
            }
            Next::Msg(Msg::Finish(mut end, ack)) => {
                while let Ok(msg) = rx.try_recv() {
                    match msg {
                        Msg::Batch(mut records) => output.write(&mut records),
                        Msg::Sync(ack) => drop(ack.send(())),
                        Msg::Finish(..) => {}
                    }
                }
                end.own.writer_cpu_ns = super::own::thread_cpu_ns();
                end.own.held_ns = shared.held_ns.load(std::sync::atomic::Ordering::Relaxed);
                end.own.held = shared.held.load(std::sync::atomic::Ordering::Relaxed);
                let dropped = shared.dropped();
                // A fault of clxfer's own here would lose the end silently: say so instead.
                let finished = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    output.finish(&end, dropped)
                }));
                if finished.is_err() {
                    crate::warn!(
                        "internal error while writing the end: the trace or report is incomplete"
                    );
                }
                let _ = ack.send(());
                return;
            }
            Next::Tick => {
                for mut batch in shared.collect() {
                    output.write(&mut batch);
                    shared.recycle(batch);
                }
                output.tick();
            }
            Next::Closed => return,
        }
    }
}
