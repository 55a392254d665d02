//! Where the trace writer's bytes go ([`TraceOut`]), and the ring that keeps a trace's most
//! recent part (`CLXFER_TRACE_LIMIT_KEEP=last`). The writer cuts its trace into chunks, each
//! standing alone (it says names, classes and tracks again at the start of each); the ring
//! remembers where each chunk starts in the file, and when the file passes the limit it writes a
//! new file of the file's head (what came before the first chunk: the opening and the run's
//! start) and its newest chunks, and renames it over the old one. The trace is a whole file at
//! every moment, so a program killed at any point leaves one that reads.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

/// What the trace writer writes into: a file, a ring, or (tests, benchmarks) any writer.
pub trait TraceOut: Write + Send {
    /// A chunk starts at the next byte, after `events` events in all. Returns the events that
    /// dropping old chunks left out (a ring's).
    fn chunk(&mut self, _events: u64) -> u64 {
        0
    }

    /// Whether a new chunk is due (the bytes since the last passed a quarter of the limit).
    fn chunk_due(&self) -> bool {
        false
    }
}

impl TraceOut for BufWriter<File> {}
impl TraceOut for std::io::Sink {}
impl TraceOut for &mut Vec<u8> {}
impl TraceOut for Vec<u8> {}

/// A trace file that keeps its most recent part.
pub struct Ring {
    path: PathBuf,
    out: BufWriter<File>,
    limit: u64,
    /// The most a chunk can pass a quarter of the limit by: the writer's flush.
    flush: u64,
    /// Bytes in the file, written out or still buffered.
    len: u64,
    /// The head's length: the bytes before the first chunk, always kept.
    head: Option<u64>,
    /// Each chunk's start in the file, and the events written before it.
    chunks: VecDeque<(u64, u64)>,
    /// The ring failed (a rewrite could not be made): it writes on without dropping.
    failed: bool,
}

impl Ring {
    /// A ring of at most `limit` bytes, written `flush` bytes or so at a time.
    pub fn new(path: PathBuf, file: File, limit: u64, flush: u64) -> Ring {
        Ring {
            path,
            out: BufWriter::with_capacity(1 << 16, file),
            limit: limit.max(1 << 20),
            flush,
            len: 0,
            head: None,
            chunks: VecDeque::new(),
            failed: false,
        }
    }

    /// The new file: the head and the chunks from `from` on, renamed over the old one.
    fn rewrite(&mut self, from: u64) -> std::io::Result<File> {
        self.out.flush()?;
        let head = self.head.unwrap_or(0);
        let tmp = self.path.with_extension("ring-tmp");
        // A leftover of a run killed inside a rewrite is ours to replace.
        let _ = std::fs::remove_file(&tmp);
        let mut new = super::trace_file::open_new(&tmp)?;
        let mut old = File::open(&self.path)?;
        std::io::copy(&mut (&mut old).take(head), &mut new)?;
        old.seek(SeekFrom::Start(from))?;
        std::io::copy(&mut old, &mut new)?;
        std::fs::rename(&tmp, &self.path)?;
        Ok(new)
    }
}

impl Write for Ring {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

impl TraceOut for Ring {
    fn chunk_due(&self) -> bool {
        let last = self.chunks.back().map_or(0, |c| c.0);
        self.head.is_none() || self.len - last >= self.limit / 4
    }

    fn chunk(&mut self, events: u64) -> u64 {
        let head = *self.head.get_or_insert(self.len);
        self.chunks.push_back((self.len, events));
        // The chunk now begun ends a quarter of the limit and a flush from here at most: if that
        // could pass the limit, the oldest chunks go now, until the file is back under half of
        // it (the newest chunk, just begun, always stays).
        if self.failed || self.len + self.limit / 4 + self.flush <= self.limit {
            return 0;
        }
        let oldest = self.chunks[0];
        while self.chunks.len() > 1 && head + (self.len - self.chunks[0].0) > self.limit / 2 {
            self.chunks.pop_front();
        }
        let first = self.chunks[0];
        match self.rewrite(first.0) {
            Ok(file) => {
                self.out = BufWriter::with_capacity(1 << 16, file);
                let shift = first.0 - head;
                for c in self.chunks.iter_mut() {
                    c.0 -= shift;
                }
                self.len -= shift;
                // The events of the chunks dropped.
                first.1 - oldest.1
            }
            Err(e) => {
                self.failed = true;
                crate::warn!(
                    "the trace {} cannot be rewritten to keep its most recent part ({e}); it \
                     grows on past CLXFER_TRACE_LIMIT_MIB",
                    self.path.display()
                );
                0
            }
        }
    }
}
