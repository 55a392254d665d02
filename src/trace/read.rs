//! Reads a Chrome trace JSON the way Perfetto does: the bare array (with or without its closing
//! `]`, a trailing comma allowed, a truncated last event dropped) or the `{"traceEvents": [...]}`
//! object (which must be complete: `crate::json::read`); or a Perfetto protobuf trace
//! (`crate::perfetto::decode`). Either way the events come out typed ([`Event`]), so every
//! reader takes every format ([`super::format`]).

use crate::event::Event;
pub use crate::event::Read;
use crate::json::read::to_json;
use serde_json::Value;
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// How far this process's reading of trace files has got, bytes, over every thread reading one
/// (`super::many` reads several at once): each thread publishes what it has read every
/// [`PUBLISH_EVERY`] bytes (one shared write per 64 KiB, not per event), and every
/// [`HOOK_EVERY`] bytes the hook, if one is set, is called with the total on the thread that
/// crossed it: the `clxfer` command's progress bar, drawn there (a thread of its own would turn
/// on malloc's locking for the whole read: +2.8% instructions on a report).
static READ: AtomicU64 = AtomicU64::new(0);
static HOOKED_AT: AtomicU64 = AtomicU64::new(0);
static HOOK: std::sync::OnceLock<fn(u64)> = std::sync::OnceLock::new();
const HOOK_EVERY: u64 = 1 << 20;
const PUBLISH_EVERY: u64 = 1 << 16;

thread_local! {
    /// This thread's offset in the file it reads, and how much of it is published.
    static AT: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// Bytes of trace files read so far by this process.
pub fn bytes_read() -> u64 {
    READ.load(Ordering::Relaxed)
}

/// Calls `hook` with [`bytes_read`] as reading goes (every MiB, and at each file's end); once
/// per process.
pub fn on_progress(hook: fn(u64)) {
    let _ = HOOK.set(hook);
}

fn reading_at(offset: usize) {
    let (_, published) = AT.get();
    let offset = offset as u64;
    if offset.saturating_sub(published) < PUBLISH_EVERY {
        AT.set((offset, published));
        return;
    }
    AT.set((offset, offset));
    publish(offset - published);
}

/// `bytes` more read on this thread: added to the total, and the hook called past each MiB.
fn publish(bytes: u64) {
    let read = READ.fetch_add(bytes, Ordering::Relaxed) + bytes;
    let at = HOOKED_AT.load(Ordering::Relaxed);
    if read.saturating_sub(at) >= HOOK_EVERY
        && HOOKED_AT
            .compare_exchange(at, read, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    {
        hook(read);
    }
}

fn hook(read: u64) {
    if let Some(h) = HOOK.get() {
        h(read);
    }
}

/// A trace as read, its events as JSON (what tests and tools that want JSON's shape read).
#[derive(Debug, Default)]
pub struct Trace {
    pub events: Vec<Value>,
    /// The array form ended with `]` (or the object form was used).
    pub closed: bool,
    /// The last event was cut short and dropped (a killed program).
    pub truncated: bool,
}

/// Why a file is not a trace at all.
#[derive(Debug, PartialEq)]
pub struct ReadError(pub String);

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReadError {}

/// Whether a file's name is one clxfer gives its traces (`clxfer-PROGRAM-PID.json`, or another
/// format's first extension): what is read of a directory given for traces.
pub fn is_trace_name(name: &str) -> bool {
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    name.starts_with("clxfer-")
        && (super::format::Format::ALL.iter()).any(|f| f.extensions()[0] == ext)
}

/// Directories below a directory of traces that are searched too: a job's traces kept per host
/// (`traces/node1/…`), or per run.
const DEPTH: usize = 3;

/// The traces in `dir` and its subdirectories (to [`DEPTH`] levels), by [`is_trace_name`],
/// sorted by path.
pub fn traces_in(dir: &Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                // A subdirectory that cannot be read is passed over; the one asked for is not.
                if depth < DEPTH {
                    let _ = walk(&path, depth + 1, out);
                }
            } else if (path.file_name().and_then(|n| n.to_str())).is_some_and(is_trace_name) {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, 0, &mut out)?;
    out.sort();
    Ok(out)
}

/// A trace file's events as JSON, read back whole (compact events expanded:
/// [`super::compact`]).
pub fn read_file(path: &Path) -> Result<Trace, ReadError> {
    let mut events = Vec::new();
    let shape = read_expanded_with(path, |_, e| events.push(to_json(&e)))?;
    Ok(Trace {
        events,
        closed: shape.closed,
        truncated: shape.truncated,
    })
}

/// How a trace ended, once its events went by.
#[derive(Debug, Default, Clone, Copy)]
pub struct Shape {
    pub events: usize,
    pub closed: bool,
    pub truncated: bool,
}

/// Hands each event of the file to `f` in turn, holding one at a time: the file is mapped, not
/// copied, so a trace of any size takes the memory of its largest event (and the page cache).
pub fn read_file_with(path: &Path, f: impl FnMut(usize, Read)) -> Result<Shape, ReadError> {
    let map = mapped(path)?;
    let bytes: &[u8] = map.as_deref().unwrap_or(&[]);
    let shape = parse_with(bytes, f).map_err(|e| ReadError(format!("{}: {e}", path.display())));
    file_read(bytes.len());
    shape
}

/// A file of `len` bytes was read whole on this thread ([`bytes_read`]).
pub fn file_read(len: usize) {
    let (_, published) = AT.replace((0, 0));
    let rest = (len as u64).saturating_sub(published);
    READ.fetch_add(rest, Ordering::Relaxed);
    HOOKED_AT.store(READ.load(Ordering::Relaxed), Ordering::Relaxed);
    hook(bytes_read());
}

/// The file's bytes, mapped (`None`: it is empty).
pub fn mapped(path: &Path) -> Result<Option<memmap2::Mmap>, ReadError> {
    let cannot = |e: std::io::Error| ReadError(format!("cannot read {}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(cannot)?;
    let len = file.metadata().map_err(cannot)?.len();
    if len == 0 {
        return Ok(None);
    }
    // SAFETY: the map is only read; a file shrunk meanwhile would fault (clxfer's own traces are
    // only ever appended to).
    Ok(Some(unsafe { memmap2::Mmap::map(&file) }.map_err(cannot)?))
}

/// [`read_file_with`], each event read back whole ([`super::compact`]) and those that are not
/// events left out: what clxfer's readers (the report, the CSV) take; the checker takes the
/// events as written.
pub fn read_expanded_with(
    path: &Path,
    mut f: impl FnMut(usize, Event),
) -> Result<Shape, ReadError> {
    let mut x = super::compact::Expand::default();
    read_file_with(path, |i, e| {
        if let Ok(mut e) = e {
            x.event(&mut e);
            f(i, e)
        }
    })
}

/// A trace's events as JSON, read back whole (compact events expanded: [`super::compact`]).
pub fn parse(b: &[u8]) -> Result<Trace, ReadError> {
    let mut events = Vec::new();
    let mut x = super::compact::Expand::default();
    let shape = parse_with(b, |_, e| {
        if let Ok(mut e) = e {
            x.event(&mut e);
            events.push(to_json(&e))
        }
    })?;
    Ok(Trace {
        events,
        closed: shape.closed,
        truncated: shape.truncated,
    })
}

/// Hands each event of `b` as written to `f`, with its number, whichever its format
/// ([`super::format`]).
pub fn parse_with(b: &[u8], mut f: impl FnMut(usize, Read)) -> Result<Shape, ReadError> {
    let mut n = 0;
    let format = super::format::Format::of_bytes(b);
    let each = |e| {
        f(n, e);
        n += 1;
    };
    let ended = if b.len() >= PIPELINED_FROM {
        pipelined(format, b, each)
    } else {
        format.decode(b, each, reading_at)
    }
    .map_err(ReadError)?;
    Ok(Shape {
        events: n,
        closed: ended.closed,
        truncated: ended.truncated,
    })
}

/// From this size on, a trace is decoded on a thread of its own while the caller takes its
/// events ([`pipelined`]); below it, a thread costs more than it saves (a job's many small
/// traces are already read on every core: `super::many`).
const PIPELINED_FROM: usize = 16 << 20;
/// Events handed over at a time, and batches waiting at most: a few MiB in flight.
const BATCH: usize = 1024;
const WAITING: usize = 4;

/// [`Format::decode`](super::format::Format::decode) on a thread of its own, its events handed to
/// `f` on this one in order: decoding is about half of reading a large trace into a report, and
/// the halves now run side by side (the CLI's allocator frees across threads cheaply; glibc's
/// made this slower than one thread). Progress is published from this thread as the events
/// reach `f`; a panic while decoding goes on here.
fn pipelined(
    format: super::format::Format,
    b: &[u8],
    mut f: impl FnMut(Read),
) -> Result<crate::event::Ended, String> {
    let (tx, rx) = crossbeam_channel::bounded::<(Vec<Read>, usize)>(WAITING);
    std::thread::scope(|scope| {
        let decoder = scope.spawn(move || {
            let at = std::cell::Cell::new(0);
            let mut batch = Vec::with_capacity(BATCH);
            let ended = format.decode(
                b,
                |e| {
                    batch.push(e);
                    if batch.len() == BATCH {
                        let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                        // Closed only by a panic on this side's thread: nothing to send to.
                        let _ = tx.send((full, at.get()));
                    }
                },
                |i| at.set(i),
            );
            let _ = tx.send((batch, at.get()));
            ended
        });
        for (batch, at) in rx {
            batch.into_iter().for_each(&mut f);
            reading_at(at);
        }
        decoder
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many events `b` holds as written (events or not), and how it ended.
    fn shape(b: &[u8]) -> Shape {
        parse_with(b, |_, _| {}).unwrap()
    }

    #[test]
    fn a_trace_decoded_beside_its_reader_reads_as_one_decoded_in_turn() {
        let many: String = (0..2500)
            .map(|i| {
                format!("{{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":{i},\"name\":\"e{i}\"}},\n")
            })
            .collect();
        let texts = [
            format!("[{many}]\n"),
            format!("[{many}"),
            format!("[{many}{{\"ph\":\"X\",\"na"),
            format!("[{many}{{\"ph\":}}]"),
            "[{\"ph\":\"i\"},\n7]".to_string(),
        ];
        for text in &texts {
            let b = text.as_bytes();
            let format = super::super::format::Format::of_bytes(b);
            let (mut a, mut z) = (Vec::new(), Vec::new());
            let one = format.decode(b, |e| a.push(e), |_| {});
            let two = pipelined(format, b, |e| z.push(e));
            let shown = |e: &Result<crate::event::Ended, String>| {
                e.as_ref()
                    .map(|e| (e.closed, e.truncated))
                    .map_err(Clone::clone)
            };
            assert_eq!(shown(&one), shown(&two));
            let shown = |e: &Read| e.as_ref().map(to_json).map_err(Clone::clone);
            assert_eq!(
                a.iter().map(shown).collect::<Vec<_>>(),
                z.iter().map(shown).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn the_forms_perfetto_accepts() {
        let closed = shape(b"[{\"ph\":\"i\"},\n{\"ph\":\"X\"}\n]\n");
        assert_eq!(
            (closed.events, closed.closed, closed.truncated),
            (2, true, false)
        );
        let open = shape(b"[{\"ph\":\"i\"},\n{\"ph\":\"X\"},\n");
        assert_eq!((open.events, open.closed), (2, false));
        let cut = shape(b"[{\"ph\":\"i\"},\n{\"ph\":\"X\",\"na");
        assert_eq!((cut.events, cut.truncated), (1, true));
        let trailing = shape(b"[{\"a\":1},]");
        assert_eq!((trailing.events, trailing.closed), (1, true));
        let object = shape(b"{\"traceEvents\":[{\"a\":1}]}");
        assert_eq!(object.events, 1);
    }

    #[test]
    fn events_come_out_typed_and_what_is_not_one_says_why() {
        let mut read = Vec::new();
        let text = b"[{\"ph\":\"i\",\"pid\":1,\"tid\":2,\"ts\":3},{\"ph\":\"X\"}]";
        parse_with(text, |_, e| read.push(e)).unwrap();
        assert_eq!(
            read[0].as_ref().map(|e| (e.pid, e.tid, e.ts)),
            Ok((1, 2, 3000))
        );
        assert_eq!(read[1], Err("no \"pid\"".to_string()));
    }

    #[test]
    fn a_directory_s_traces_are_found_in_its_subdirectories_too() {
        let dir = std::env::temp_dir().join(format!("clxfer-traces-in-{}", std::process::id()));
        let deep = dir.join("node1").join("run");
        std::fs::create_dir_all(&deep).unwrap();
        for (at, name) in [
            (&dir, "clxfer-a-1.json"),
            (&deep, "clxfer-b-rank0-2.pftrace"),
            (&dir, "notes.json"),
            (&deep, "clxfer-c-3.txt"),
        ] {
            std::fs::write(at.join(name), b"").unwrap();
        }
        let found = traces_in(&dir).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let names: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            ["clxfer-a-1.json", "node1/run/clxfer-b-rank0-2.pftrace"]
        );
    }

    #[test]
    fn what_it_rejects_says_why() {
        for (bad, says) in [
            (&b"[]"[..], "empty"),
            (b"", "must start"),
            (b"{\"traceEvents\":[{\"a\":1}", "complete"),
            (b"[{\"a\":1} {\"b\":2}]", "expected `,`"),
            (b"[{\"a\":1},\n{\"a\":tru}]", "line 2"),
            (b"[{\"a\":1}] x", "after the closing"),
            (b"\x89PNG", "must start"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(
                e.0.contains(says),
                "{:?}: {e}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
