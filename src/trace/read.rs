//! Reads a Chrome trace JSON the way Perfetto does: the bare array (with or without its closing
//! `]`, a trailing comma allowed, a truncated last event dropped) or the `{"traceEvents": [...]}`
//! object (which must be complete); or a Perfetto protobuf trace, as the JSON events it stands
//! for (`crate::perfetto::decode`), so every reader takes both formats.

use serde_json::Value;
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// How far this process's reading of trace files has got, bytes: the files read whole, and the
/// offset in the one being read. Stored once an event (a relaxed store); every [`HOOK_EVERY`]
/// bytes the hook, if one is set, is called with it on the reading thread: the `clxfer`
/// command's progress bar, drawn there (a thread of its own would turn on malloc's locking for
/// the whole read: +2.8% instructions on a report).
static FILES_READ: AtomicU64 = AtomicU64::new(0);
static IN_FILE: AtomicU64 = AtomicU64::new(0);
static HOOKED_AT: AtomicU64 = AtomicU64::new(0);
static HOOK: std::sync::OnceLock<fn(u64)> = std::sync::OnceLock::new();
const HOOK_EVERY: u64 = 1 << 20;

/// Bytes of trace files read so far by this process.
pub fn bytes_read() -> u64 {
    FILES_READ.load(Ordering::Relaxed) + IN_FILE.load(Ordering::Relaxed)
}

/// Calls `hook` with [`bytes_read`] as reading goes (every MiB, and at each file's end); once
/// per process.
pub fn on_progress(hook: fn(u64)) {
    let _ = HOOK.set(hook);
}

fn reading_at(offset: usize) {
    IN_FILE.store(offset as u64, Ordering::Relaxed);
    let read = bytes_read();
    if read.wrapping_sub(HOOKED_AT.load(Ordering::Relaxed)) >= HOOK_EVERY {
        hook(read);
    }
}

fn hook(read: u64) {
    HOOKED_AT.store(read, Ordering::Relaxed);
    if let Some(h) = HOOK.get() {
        h(read);
    }
}

/// A trace as read.
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

/// Whether a file's name is one clxfer gives its traces (`clxfer-PROGRAM-PID.json` or
/// `.pftrace`): what is read of a directory given for traces.
pub fn is_trace_name(name: &str) -> bool {
    name.starts_with("clxfer-") && (name.ends_with(".json") || name.ends_with(".pftrace"))
}

/// A trace file's events, read back whole (compact events expanded: [`super::compact`]).
pub fn read_file(path: &Path) -> Result<Trace, ReadError> {
    let mut events = Vec::new();
    let shape = read_expanded_with(path, |_, e| events.push(e))?;
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
pub fn read_file_with(path: &Path, f: impl FnMut(usize, Value)) -> Result<Shape, ReadError> {
    let map = mapped(path)?;
    let bytes: &[u8] = map.as_deref().unwrap_or(&[]);
    let shape = parse_with(bytes, f).map_err(|e| ReadError(format!("{}: {e}", path.display())));
    file_read(bytes.len());
    shape
}

/// A file of `len` bytes was read whole ([`bytes_read`]).
pub fn file_read(len: usize) {
    IN_FILE.store(0, Ordering::Relaxed);
    FILES_READ.fetch_add(len as u64, Ordering::Relaxed);
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

/// A Perfetto protobuf trace's events, as the JSON events they stand for
/// ([`crate::perfetto::decode`]).
fn protobuf_with(b: &[u8], mut f: impl FnMut(usize, Value)) -> Result<Shape, ReadError> {
    let mut n = 0;
    let shape = crate::perfetto::decode::events(
        b,
        |e| {
            f(n, e);
            n += 1;
        },
        reading_at,
    )
    .map_err(|e| ReadError(format!("not a Perfetto protobuf trace: {}", e.0)))?;
    Ok(Shape {
        events: n,
        closed: !shape.truncated,
        truncated: shape.truncated,
    })
}

/// [`read_file_with`], each event read back whole ([`super::compact`]): what clxfer's readers
/// (the report, the CSV) take; the checker takes the events as written.
pub fn read_expanded_with(
    path: &Path,
    mut f: impl FnMut(usize, Value),
) -> Result<Shape, ReadError> {
    let mut x = super::compact::Expand::default();
    read_file_with(path, |i, mut e| {
        x.event(&mut e);
        f(i, e)
    })
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Line and column of byte `at`, for messages.
fn position(b: &[u8], at: usize) -> String {
    let at = at.min(b.len());
    let line = b[..at].iter().filter(|&&c| c == b'\n').count() + 1;
    let col = at
        - b[..at]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1)
        + 1;
    format!("line {line}, column {col}")
}

/// A trace's events, read back whole (compact events expanded: [`super::compact`]).
pub fn parse(b: &[u8]) -> Result<Trace, ReadError> {
    let mut events = Vec::new();
    let mut x = super::compact::Expand::default();
    let shape = parse_with(b, |_, mut e| {
        x.event(&mut e);
        events.push(e)
    })?;
    Ok(Trace {
        events,
        closed: shape.closed,
        truncated: shape.truncated,
    })
}

/// [`parse`], handing each event to `f` (with its number) instead of keeping them.
pub fn parse_with(b: &[u8], mut f: impl FnMut(usize, Value)) -> Result<Shape, ReadError> {
    if crate::perfetto::decode::is_protobuf(b) {
        return protobuf_with(b, f);
    }
    // Perfetto's detection: the first 128 bytes without whitespace start with `[{"` or `{"`.
    let head: Vec<u8> = b
        .iter()
        .take(128)
        .copied()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    if head.starts_with(b"{\"") {
        let v: Value = serde_json::from_slice(b)
            .map_err(|e| ReadError(format!("not a complete JSON object: {e}")))?;
        let events = match v {
            Value::Object(mut o) => match o.remove("traceEvents") {
                Some(Value::Array(events)) => events,
                _ => return Err(ReadError("no \"traceEvents\" array".into())),
            },
            _ => return Err(ReadError("no \"traceEvents\" array".into())),
        };
        let n = events.len();
        for (i, e) in events.into_iter().enumerate() {
            f(i, e);
        }
        return Ok(Shape {
            events: n,
            closed: true,
            truncated: false,
        });
    }
    if !head.starts_with(b"[{\"") {
        return Err(ReadError(
            "not a Chrome trace: it must start with `[{\"` or `{\"` (an empty `[]` is not one)"
                .into(),
        ));
    }
    let mut trace = Shape::default();
    let mut i = skip_ws(b, 0) + 1;
    loop {
        i = skip_ws(b, i);
        if i >= b.len() {
            return Ok(trace);
        }
        if b[i] == b']' {
            trace.closed = true;
            let rest = skip_ws(b, i + 1);
            if rest < b.len() {
                return Err(ReadError(format!(
                    "text after the closing `]` at {}",
                    position(b, rest)
                )));
            }
            return Ok(trace);
        }
        let mut stream = serde_json::Deserializer::from_slice(&b[i..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v)) => {
                f(trace.events, v);
                trace.events += 1;
                i += stream.byte_offset();
                reading_at(i);
            }
            Some(Err(e)) if e.is_eof() => {
                trace.truncated = true;
                return Ok(trace);
            }
            Some(Err(e)) => {
                return Err(ReadError(format!(
                    "malformed event at {}: {e}",
                    position(b, i)
                )));
            }
            None => return Ok(trace),
        }
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b']') | None => {}
            Some(_) => {
                return Err(ReadError(format!(
                    "expected `,` or `]` between events at {}",
                    position(b, i)
                )));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_perfetto_accepts() {
        let closed = parse(b"[{\"ph\":\"i\"},\n{\"ph\":\"X\"}\n]\n").unwrap();
        assert_eq!(
            (closed.events.len(), closed.closed, closed.truncated),
            (2, true, false)
        );
        let open = parse(b"[{\"ph\":\"i\"},\n{\"ph\":\"X\"},\n").unwrap();
        assert_eq!((open.events.len(), open.closed), (2, false));
        let cut = parse(b"[{\"ph\":\"i\"},\n{\"ph\":\"X\",\"na").unwrap();
        assert_eq!((cut.events.len(), cut.truncated), (1, true));
        let trailing = parse(b"[{\"a\":1},]").unwrap();
        assert_eq!((trailing.events.len(), trailing.closed), (1, true));
        let object = parse(b"{\"traceEvents\":[{\"a\":1}]}").unwrap();
        assert_eq!(object.events.len(), 1);
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
