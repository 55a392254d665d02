//! The channel between the threads' record buffers (`buffer.rs`) and the one writer thread
//! (`writer.rs`), below both: the messages, the shared state of one process's sink (the channel,
//! the recycled batches, every thread's buffer, the dropped counts) and how the writer waits.

use super::record::{End, KINDS, Record};
use crate::sync::Mutex;
use crossbeam_channel::{Receiver, RecvTimeoutError, SendTimeoutError, Sender, TrySendError};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Records per batch.
pub const BATCH: usize = 256;

/// How often a thread that waits for room looks whether the writer still makes progress.
pub const LOOK: Duration = Duration::from_millis(100);
pub const TICK: Duration = Duration::from_millis(20);

/// Batches the writer has taken, a count that only grows: whether it makes progress (a thread
/// waiting for room; the thread a signal landed on, `layer/signals.rs`).
static WRITTEN: AtomicU64 = AtomicU64::new(0);

/// The writer took a batch.
#[inline]
pub fn wrote() {
    WRITTEN.fetch_add(1, Ordering::Relaxed);
}

/// How many batches the writer has taken.
pub fn written() -> u64 {
    WRITTEN.load(Ordering::Relaxed)
}

pub enum Msg {
    Batch(Vec<Record>),
    /// Write the end of the output, then acknowledge.
    Finish(Box<End>, Sender<()>),
    /// Make what came before durable (the file's buffer flushed), then acknowledge.
    Sync(Sender<()>),
}

pub(super) type Buffer = Arc<Mutex<Vec<Record>>>;
pub(super) type Pool<T> = (Sender<T>, Receiver<T>);

/// One process's sink: the channel to its writer and every thread's buffer.
pub struct Shared {
    pub(super) tx: Sender<Msg>,
    /// Emptied batches, back from the writer for reuse.
    pub(super) pool: Pool<Vec<Record>>,
    pub(super) threads: Mutex<Vec<Buffer>>,
    pub dropped: [AtomicU64; KINDS.len()],
    pub(super) finished: AtomicBool,
    pub(super) writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// How long, in all, the program's threads waited for room, and how many times.
    pub held_ns: AtomicU64,
    pub held: AtomicU64,
    /// How long a thread waits for a writer that makes no progress (`CLXFER_WRITER_WAIT_MS`).
    pub(super) wait_limit: Duration,
}

impl Shared {
    /// Hands a batch to the writer. When its memory is full, waits for room as long as the writer
    /// makes progress (the wait is counted in [`Shared::held_ns`]); drops and counts the batch
    /// only after the writer made none for [`Shared::wait_limit`] (a dead disk).
    pub(super) fn send(&self, batch: Vec<Record>) {
        if batch.is_empty() || self.finished.load(Ordering::Acquire) {
            return;
        }
        let mut msg = match self.tx.try_send(Msg::Batch(batch)) {
            Ok(()) => return,
            Err(TrySendError::Full(msg)) => msg,
            Err(TrySendError::Disconnected(msg)) => return self.lose(msg),
        };
        let start = std::time::Instant::now();
        let mut seen = written();
        let mut still = Duration::ZERO;
        loop {
            match self.tx.send_timeout(msg, LOOK) {
                Ok(()) => break,
                Err(SendTimeoutError::Disconnected(m)) => {
                    self.lose(m);
                    break;
                }
                Err(SendTimeoutError::Timeout(m)) => {
                    let now = written();
                    still = if now == seen {
                        still + LOOK
                    } else {
                        Duration::ZERO
                    };
                    seen = now;
                    if still >= self.wait_limit {
                        self.lose(m);
                        break;
                    }
                    msg = m;
                }
            }
        }
        self.held_ns
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        self.held.fetch_add(1, Ordering::Relaxed);
    }

    fn lose(&self, msg: Msg) {
        if let Msg::Batch(lost) = msg {
            self.count_dropped(&lost);
        }
    }

    /// An empty batch: a recycled one if there is one.
    pub(super) fn fresh(&self) -> Vec<Record> {
        self.pool
            .1
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH))
    }

    /// Takes back a batch the writer has emptied.
    pub fn recycle(&self, mut batch: Vec<Record>) {
        batch.clear();
        if batch.capacity() == BATCH {
            let _ = self.pool.0.try_send(batch);
        }
    }

    pub fn count_dropped(&self, lost: &[Record]) {
        for r in lost {
            self.dropped[r.kind()].fetch_add(r.count(), Ordering::Relaxed);
        }
    }

    /// Every thread's partly filled buffer (the writer's tick, and the end).
    pub fn collect(&self) -> Vec<Vec<Record>> {
        let mut threads = self.threads.lock();
        let batches = threads
            .iter()
            .filter_map(|b| {
                let mut b = b.lock();
                (!b.is_empty()).then(|| std::mem::replace(&mut *b, self.fresh()))
            })
            .collect();
        // Threads that have ended (only this list still holds their buffer).
        threads.retain(|b| Arc::strong_count(b) > 1);
        batches
    }

    pub fn dropped(&self) -> [u64; KINDS.len()] {
        std::array::from_fn(|i| self.dropped[i].load(Ordering::Relaxed))
    }
}

/// What the writer gets next.
pub enum Next {
    Msg(Msg),
    /// A tick passed with no message.
    Tick,
    /// Every sender is gone.
    Closed,
}

pub fn next(rx: &Receiver<Msg>) -> Next {
    match rx.recv_timeout(TICK) {
        Ok(msg) => Next::Msg(msg),
        Err(RecvTimeoutError::Timeout) => Next::Tick,
        Err(RecvTimeoutError::Disconnected) => Next::Closed,
    }
}
