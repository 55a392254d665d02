//! A JSON trace read for the index on every core. clxfer's writer puts one event on a line
//! (`crate::json::write`), so the file is cut into parts at line ends, and each part's lines are
//! read on whichever thread is free (`super::scan`'s fast path, serde for the rest); a trace
//! whose events are not one a line (another tool's, pretty-printed, the object form) is read by
//! the trace reader instead, on one thread. Each event's byte offset is where its details are
//! read again (`super::details`).

use super::part::Part;
use super::scan;
use crate::json::read::{events, from_json};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Parts per thread: enough that a thread done early takes another.
const PARTS_PER_THREAD: usize = 8;

/// Where a part is at least (smaller traces are one part).
const MIN_PART: usize = 1 << 20;

/// Offset of an event the trace's form gives none for (the object form, parsed whole).
pub const NOWHERE: u64 = u64::MAX;

/// Why the lines could not be read a line an event.
struct NotLines;

/// The parts of JSON trace `b`, read on `threads` threads, in file order; `read` counts the bytes
/// read as the reading goes. Fails as the trace reader fails (the same words).
pub fn read(b: &[u8], threads: usize, read: &AtomicU64) -> Result<Vec<Part>, String> {
    let head: Vec<u8> = (b.iter().take(128).copied())
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    if head.starts_with(b"[{\"") {
        if let Some(parts) = lines(b, threads, read) {
            return Ok(parts);
        }
        read.store(0, Ordering::Relaxed);
    }
    whole(b, read)
}

/// Line ends cutting `b` into about `n` parts.
fn cuts(b: &[u8], n: usize) -> Vec<usize> {
    let mut cuts = vec![0];
    for k in 1..n {
        let at = (b.len() * k / n).max(*cuts.last().unwrap_or(&0));
        match b[at..].iter().position(|&c| c == b'\n') {
            Some(nl) => cuts.push(at + nl + 1),
            None => break,
        }
    }
    cuts.push(b.len());
    cuts.dedup();
    cuts
}

/// The parts of a trace of one event a line; `None` where it is not one.
fn lines(b: &[u8], threads: usize, read: &AtomicU64) -> Option<Vec<Part>> {
    let n = (threads * PARTS_PER_THREAD).min(b.len() / MIN_PART + 1);
    let cuts = cuts(b, n);
    let parts = cuts.len() - 1;
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let slots: Vec<std::sync::Mutex<Option<Part>>> =
        (0..parts).map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, parts) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= parts || failed.load(Ordering::Relaxed) {
                        break;
                    }
                    match part(b, cuts[i], cuts[i + 1], read) {
                        Ok(p) => *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(p),
                        Err(NotLines) => failed.store(true, Ordering::Relaxed),
                    }
                }
            });
        }
    });
    if failed.load(Ordering::Relaxed) {
        return None;
    }
    (slots.into_iter())
        .map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

fn trim(mut l: &[u8]) -> &[u8] {
    while let [c, rest @ ..] = l
        && c.is_ascii_whitespace()
    {
        l = rest;
    }
    while let [rest @ .., c] = l
        && c.is_ascii_whitespace()
    {
        l = rest;
    }
    l
}

/// The part of `b` from `lo` to `hi` (line starts), read a line an event.
fn part(b: &[u8], lo: usize, hi: usize, read: &AtomicU64) -> Result<Part, NotLines> {
    let mut p = Part::default();
    let mut at = lo;
    let mut told = lo;
    while at < hi {
        let end = scan::find(&b[..hi], at, b'\n', b'\n').unwrap_or(hi);
        let (start, mut l) = (at, &b[at..end]);
        at = end + 1;
        if at - told >= 1 << 20 {
            read.fetch_add((at - told) as u64, Ordering::Relaxed);
            told = at;
        }
        // Where the event starts in the file, once the array's `[` and blanks are off.
        let mut offset = start;
        while let [c, rest @ ..] = l
            && (c.is_ascii_whitespace() || (*c == b'[' && offset == first_bracket(b)))
        {
            l = rest;
            offset += 1;
        }
        l = trim(l);
        if let [rest @ .., b']'] = l
            && trim(rest).ends_with(b"}")
        {
            l = trim(rest);
        }
        if let [rest @ .., b','] = l {
            l = trim(rest);
        }
        if l.is_empty() || l == b"]" {
            continue;
        }
        if l[0] != b'{' {
            return Err(NotLines);
        }
        if let Some(line) = scan::line(l)
            && p.line(&line, offset as u64)
        {
            continue;
        }
        match serde_json::from_slice(l) {
            Ok(v) => {
                if let Ok(e) = from_json(v) {
                    p.event(e, offset as u64);
                }
            }
            // The last event cut short (a killed program): dropped, as the reader drops it.
            Err(e) if e.is_eof() && trim(&b[end.min(b.len())..]).is_empty() => {}
            Err(_) => return Err(NotLines),
        }
    }
    read.fetch_add((hi.max(told) - told) as u64, Ordering::Relaxed);
    Ok(p)
}

/// Where the array's `[` is.
fn first_bracket(b: &[u8]) -> usize {
    b.iter().position(|&c| c == b'[').unwrap_or(0)
}

/// The trace read by the trace reader, one part, each event's offset where the reader found it
/// (none in the object form, which it parses whole).
fn whole(b: &[u8], read: &AtomicU64) -> Result<Vec<Part>, String> {
    let mut p = Part::default();
    let object = trim(b).starts_with(b"{");
    let last = std::cell::Cell::new(first_bracket(b) + 1);
    events(
        b,
        |e| {
            if let Ok(e) = e {
                let at = if object { NOWHERE } else { last.get() as u64 };
                p.event(e, at);
            }
        },
        |end| {
            last.set(end);
            read.store(end as u64, Ordering::Relaxed);
        },
    )?;
    read.store(b.len() as u64, Ordering::Relaxed);
    Ok(vec![p])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slices(parts: &[Part]) -> Vec<(u32, u64, u64)> {
        let mut out: Vec<(u32, u64, u64)> = (parts.iter())
            .flat_map(|p| p.tracks.iter())
            .flat_map(|((pid, _), s)| s.iter().map(move |s| (*pid, s.start, s.at)))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn lines_and_the_reader_agree_and_offsets_find_each_event() {
        let mut text = String::from("[\n");
        for i in 0..20_000u64 {
            text.push_str(&format!(
                "{{\"name\":\"a\",\"ph\":\"X\",\"pid\":{},\"tid\":1,\"ts\":{}.5,\"dur\":1}},\n",
                i % 3,
                i
            ));
        }
        text.push_str(
            "{\"name\":\"b\\\"q\",\"ph\":\"X\",\"pid\":9,\"tid\":1,\"ts\":1,\"dur\":1}\n]\n",
        );
        let b = text.as_bytes();
        let counted = AtomicU64::new(0);
        let by_lines = super::lines(b, 2, &counted).expect("a line an event");
        assert_eq!(counted.load(Ordering::Relaxed), b.len() as u64);
        let by_reader = whole(b, &AtomicU64::new(0)).unwrap();
        let (l, r) = (slices(&by_lines), slices(&by_reader));
        assert_eq!(l.len(), 20_001);
        assert_eq!(
            l.iter().map(|s| (s.0, s.1)).collect::<Vec<_>>(),
            r.iter().map(|s| (s.0, s.1)).collect::<Vec<_>>()
        );
        // Each offset leads to its event (the reader's, past the comma and blanks before it).
        for (_, _, at) in l.iter().chain(&r).step_by(997) {
            let rest = &b[*at as usize..];
            let rest = rest
                .trim_ascii_start()
                .strip_prefix(b",")
                .unwrap_or(rest)
                .trim_ascii_start();
            assert!(
                rest.starts_with(b"{\"name\""),
                "{:?}",
                String::from_utf8_lossy(&rest[..20])
            );
        }
        // Pretty-printed: not a line an event; the reader reads it.
        let pretty =
            b"[\n  {\n    \"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1\n  }\n]";
        assert!(super::lines(pretty, 2, &AtomicU64::new(0)).is_none());
        assert_eq!(
            slices(&read(pretty, 2, &AtomicU64::new(0)).unwrap()).len(),
            1
        );
        // Cut short: the last event dropped, as the reader drops it.
        let cut = &b[..b.len() - 40];
        let parts = read(cut, 2, &AtomicU64::new(0)).unwrap();
        assert_eq!(slices(&parts).len(), 20_000);
    }
}
