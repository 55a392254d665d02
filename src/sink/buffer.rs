//! Per-thread record buffers and the hand-off to the one writer thread (`writer.rs`).
//!
//! A thread pushes into its own buffer (an uncontended lock); a full buffer goes to the writer as
//! one batch through a bounded channel. The writer also collects partly filled buffers every
//! [`channel::TICK`](super::channel::TICK), so records reach the file within a tick even from
//! threads that call rarely. When the writer falls behind, a full batch waits for room as long as
//! the writer makes progress, and is dropped and counted only when it makes none for
//! `CLXFER_WRITER_WAIT_MS`: memory stays bounded (`CLXFER_BUFFER_MIB` of batches in flight,
//! [`queued_batches`]).
//!
//! After `fork` the child starts afresh: it never touches the parent's buffers (another thread may
//! have held their locks at the fork) and writes its own file.

use super::channel::{BATCH, Buffer, Msg, Shared};
use super::record::{CallFlags, End, Enqueued, QueueRef, Record};
use super::writer;
use crate::report::Folds;
use crate::sync::Mutex;
use crossbeam_channel::bounded;
use smallvec::SmallVec;
use std::cell::RefCell;
use std::mem::MaybeUninit;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::time::Duration;

/// The most a record takes: an enqueue's call record and its boxed details (the classification).
const RECORD_BYTES: usize = std::mem::size_of::<Record>() + std::mem::size_of::<Enqueued>();

/// How many batches may wait for the writer within `bytes` (`CLXFER_BUFFER_MIB`): at least 2.
pub fn queued_batches(bytes: u64) -> usize {
    (bytes / (BATCH * RECORD_BYTES) as u64).clamp(2, 1 << 16) as usize
}

static SHARED: AtomicPtr<Shared> = AtomicPtr::new(std::ptr::null_mut());
/// Bumped at fork: a thread whose buffer belongs to an older generation makes a new one.
static GENERATION: AtomicU64 = AtomicU64::new(1);
static STARTING: Mutex<()> = Mutex::new(());

struct Local {
    generation: u64,
    tid: u32,
    buf: Buffer,
    shared: &'static Shared,
    /// Where in the buffer its last foldable facts were put ([`push_fact`]); hints only (the
    /// writer may have taken the buffer since): the fold checks what it finds.
    folds: Folds,
}

impl Drop for Local {
    /// A thread ends: hand over what it still holds (only if it belongs to this process).
    fn drop(&mut self) {
        if self.generation == GENERATION.load(Ordering::Acquire) {
            let rest = std::mem::take(&mut *self.buf.lock());
            self.shared.send(rest);
        }
    }
}

thread_local! {
    static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
    /// A thread of clxfer's own, whose records are other threads' commands: it gets no track.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the calling thread as one of clxfer's own (no track of its own in the trace).
pub fn quiet_thread() {
    QUIET.set(true);
}

/// A new enqueue's details on `queue`, in a recycled box when there is one; the caller fills in
/// the rest in place (an `Enqueued` is ~900 bytes: built on the stack and then boxed, it was
/// copied twice per enqueue).
pub fn boxed(queue: QueueRef, kernel: Option<Arc<str>>) -> Box<Enqueued> {
    let spare = super::spare::take();
    Box::write(
        spare,
        Enqueued {
            id: 0,
            timed: false,
            sampled: false,
            deps: crate::graph::Deps::default(),
            queue,
            class: None,
            mems: SmallVec::new(),
            uses: Default::default(),
            kernel,
            flags: CallFlags::None,
            region: None,
        },
    )
}

/// Drops the contents and keeps the box for reuse (the writer, once it has written the record).
pub fn unbox(b: Box<Enqueued>) {
    let raw = Box::into_raw(b);
    // SAFETY: `raw` is a live, owned `Enqueued`: its contents are dropped once, and the
    // allocation (same layout for `MaybeUninit`) goes back as uninitialised.
    let spare = unsafe {
        std::ptr::drop_in_place(raw);
        Box::from_raw(raw as *mut MaybeUninit<Enqueued>)
    };
    super::spare::give(spare);
}

/// The OS thread id.
pub fn gettid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u32 }
}

fn thread_name() -> [u8; 16] {
    let mut name = [0u8; 16];
    // SAFETY: a 16-byte buffer is what pthread_getname_np needs for Linux thread names.
    unsafe { libc::pthread_getname_np(libc::pthread_self(), name.as_mut_ptr().cast(), 16) };
    name
}

/// The sink of this process, started on first use. `None` once it has finished.
fn shared() -> Option<&'static Shared> {
    let p = SHARED.load(Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: a published Shared is leaked, so it lives for the process.
        return Some(unsafe { &*p });
    }
    let _starting = STARTING.lock();
    let p = SHARED.load(Ordering::Acquire);
    if !p.is_null() {
        return Some(unsafe { &*p });
    }
    let queued = queued_batches(crate::config::global().buffer_bytes);
    let (tx, rx) = bounded(queued);
    let shared: &'static Shared = Box::leak(Box::new(Shared {
        tx,
        pool: bounded(queued),
        threads: Mutex::new(Vec::new()),
        dropped: Default::default(),
        finished: AtomicBool::new(false),
        writer: Mutex::new(None),
        held_ns: AtomicU64::new(0),
        held: AtomicU64::new(0),
        wait_limit: Duration::from_millis(crate::config::global().writer_wait_ms),
    }));
    match writer::spawn(rx, shared) {
        Some(handle) => *shared.writer.lock() = Some(handle),
        None => shared.finished.store(true, Ordering::Release),
    }
    SHARED.store(shared as *const Shared as *mut Shared, Ordering::Release);
    Some(shared)
}

/// Runs `f` on this thread's buffer if it has one of this process's (`None`: none yet, a
/// parent's from before a fork, the thread torn down, or the buffer in use by the caller).
#[inline]
fn current<R>(f: impl FnOnce(&mut Local) -> R) -> Option<R> {
    let generation = GENERATION.load(Ordering::Acquire);
    LOCAL
        .try_with(|l| {
            let mut l = l.try_borrow_mut().ok()?;
            l.as_mut().filter(|l| l.generation == generation).map(f)
        })
        .ok()
        .flatten()
}

/// This thread's OS id (cached with its buffer; a syscall otherwise).
pub fn current_tid() -> u32 {
    current(|l| l.tid).unwrap_or_else(gettid)
}

/// Pushes one record built with this thread's OS id.
#[inline]
pub fn push_with(make: impl FnOnce(u32) -> Record) {
    put(|buf, tid, _| buf.push(make(tid)));
}

/// Pushes `record` and waits (200 ms at most) until it is in
/// the file, with everything this thread pushed before it: for what a trace cannot be read
/// without (a device's name and rules), so that a run killed a moment later (SIGKILL, `_exit`)
/// leaves it there. Once per device.
pub fn push_now(record: Record) {
    push_with(|_| record);
    let Some(rest) = current(|l| std::mem::replace(&mut *l.buf.lock(), l.shared.fresh())) else {
        return;
    };
    let Some(shared) = shared() else { return };
    shared.send(rest);
    let (ack, done) = bounded(1);
    let start = std::time::Instant::now();
    let limit = Duration::from_millis(200);
    if shared.tx.send_timeout(Msg::Sync(ack), limit).is_ok() {
        let _ = done.recv_timeout(limit.saturating_sub(start.elapsed()));
    }
}

/// Pushes summary mode's fact of an untimed call, folded into the last like one of this thread's
/// buffer where it is still there ([`crate::report::Fact::absorb`]): the writer then adds a
/// loop's repeated transfers once a batch, not once a call.
#[inline]
pub fn push_fact(f: crate::report::Fact) {
    let Some(h) = f.fold_key() else {
        return push_with(|_| Record::Fact(f, None));
    };
    fn untimed(r: &mut Record) -> Option<&mut crate::report::Fact> {
        match r {
            Record::Fact(g, None) => Some(g),
            _ => None,
        }
    }
    // Most facts fold: borrowed, looked for in this thread's buffer as it is; one that does
    // not is pushed the way every record is.
    let folded = current(|l| l.folds.fold(&mut l.buf.lock(), &f, h, untimed));
    if folded != Some(true) {
        put(|buf, _, folds| {
            folds.noted(h, buf.len());
            buf.push(Record::Fact(f, None));
        });
    }
}

/// Runs `put` on this thread's buffer, with its OS id and fold hints, and sends the buffer
/// when full.
#[inline]
fn put(put: impl FnOnce(&mut Vec<Record>, u32, &mut Folds)) {
    let mut make = Some(put);
    let done = LOCAL.try_with(|local| {
        let mut local = local.borrow_mut();
        let generation = GENERATION.load(Ordering::Acquire);
        if local.as_ref().is_none_or(|l| l.generation != generation) {
            let Some(shared) = shared() else { return };
            let tid = gettid();
            let buf: Buffer = Arc::new(Mutex::new(Vec::with_capacity(BATCH)));
            if !QUIET.get() {
                buf.lock().push(Record::Thread {
                    tid,
                    name: thread_name(),
                });
            }
            shared.threads.lock().push(buf.clone());
            let old = local.replace(Local {
                generation,
                tid,
                buf,
                shared,
                folds: Folds::default(),
            });
            // A buffer from before a fork holds the parent's records: never send them.
            if let Some(old) = old {
                std::mem::forget(old);
            }
        }
        let (Some(l), Some(make)) = (local.as_mut(), make.take()) else {
            return;
        };
        let full = {
            let mut buf = l.buf.lock();
            make(&mut buf, l.tid, &mut l.folds);
            (buf.len() >= BATCH).then(|| std::mem::replace(&mut *buf, l.shared.fresh()))
        };
        if let Some(batch) = full {
            l.shared.send(batch);
        }
    });
    if done.is_err() {
        // The thread is being torn down: no buffer any more; send the record alone.
        if let (Some(shared), Some(make)) = (shared(), make.take()) {
            let mut alone = Vec::new();
            make(&mut alone, gettid(), &mut Folds::default());
            shared.send(alone);
        }
    }
}

/// Ends the output: everything buffered goes to the writer, which writes `end` and closes.
/// Waits at most a few seconds. Later records are ignored.
pub fn finish(end: End) {
    let p = SHARED.load(Ordering::Acquire);
    if p.is_null() {
        return;
    }
    // SAFETY: as in `shared`.
    let shared = unsafe { &*p };
    for batch in shared.collect() {
        shared.send(batch);
    }
    if shared.finished.swap(true, Ordering::AcqRel) {
        return;
    }
    let (ack, done) = bounded(1);
    let msg = Msg::Finish(Box::new(end), ack);
    if shared.tx.send_timeout(msg, Duration::from_secs(2)).is_ok()
        && done.recv_timeout(Duration::from_secs(10)).is_ok()
    {
        // The writer has finished and is returning: wait for it, so that a loader that unloads
        // clxfer next (clDeinitLayer, then dlclose) never unmaps code the thread still runs.
        if let Some(handle) = shared.writer.lock().take() {
            let _ = handle.join();
        }
    }
}

/// Before a fork: the one process-wide lock of the sink (a child starts its own sink under it;
/// the parent's buffers it never touches).
pub fn hold_for_fork() -> Box<dyn std::any::Any> {
    Box::new(STARTING.lock())
}

/// In a forked child (from `pthread_atfork`): forget the parent's sink without touching it.
pub fn forget_after_fork() {
    SHARED.store(std::ptr::null_mut(), Ordering::Release);
    GENERATION.fetch_add(1, Ordering::AcqRel);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_option_sets_how_many_batches_wait() {
        let batch = (BATCH * RECORD_BYTES) as u64;
        assert_eq!(queued_batches(16 << 20), (16 << 20) / batch as usize);
        assert_eq!(queued_batches(64 << 20), (64 << 20) / batch as usize);
        assert_eq!(queued_batches(1), 2);
        // A batch of the biggest records is tens of KiB, so the default holds dozens of batches.
        eprintln!(
            "record {RECORD_BYTES} B, batch {batch} B, default {} batches",
            queued_batches(16 << 20)
        );
        assert!((16..=1024).contains(&queued_batches(16 << 20)));
    }
}
