//! A trace too large for the page to read whole, served from its index (`clxfer::trace::index`):
//! the server answers at once, indexes the trace on every core, then computes its report; the page
//! asks how far both have got (`status.json`), then for the tracks (`tracks`), each view's slices
//! at its pixels' detail (`slices`), the arrows in it (`flows`) and a slice's details on a click
//! (`slice`). Every answer is JSON, bounded by the view's pixels, not by the trace.

use clxfer::report::from_trace;
use clxfer::trace::index::{self, Indexed, View, colour};
use hyper::StatusCode;
use hyper::body::Bytes;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// The most arrows a view draws (viewer/timeline.js's ARROWS): past it, none, and a note.
const MOST_ARROWS: usize = 2000;

/// The trace, its index and report as they come.
pub struct Live {
    pub trace: PathBuf,
    pub size: u64,
    pub read: AtomicU64,
    pub index: OnceLock<Result<Indexed, String>>,
    pub report: OnceLock<Result<Bytes, String>>,
    began: Instant,
    indexed_ms: OnceLock<f64>,
}

impl Live {
    pub fn new(trace: PathBuf, size: u64) -> Arc<Live> {
        Arc::new(Live {
            trace,
            size,
            read: AtomicU64::new(0),
            index: OnceLock::new(),
            report: OnceLock::new(),
            began: Instant::now(),
            indexed_ms: OnceLock::new(),
        })
    }

    /// Indexes the trace on every core, then computes its report (the page shows the timeline as
    /// soon as the index is done); says on stderr what the index took.
    pub fn start(self: &Arc<Live>) {
        let live = self.clone();
        std::thread::spawn(move || {
            // A panic here would leave the page waiting: it is said as the work's failure.
            let work = std::panic::AssertUnwindSafe(|| live.work());
            if std::panic::catch_unwind(work).is_err() {
                const STOPPED: &str = "the indexer stopped (a bug in clxfer: please report it)";
                let _ = live.index.set(Err(STOPPED.into()));
                let _ = live.report.set(Err(STOPPED.into()));
            }
        });
    }

    fn work(&self) {
        let live = self;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let format = clxfer::trace::format::Format::of_name(&live.trace);
        let indexed = fits(live.size, format, available_memory())
            .and_then(|()| index::open(&live.trace, threads, &live.read));
        let ms = live.began.elapsed().as_secs_f64() * 1000.0;
        let _ = live.indexed_ms.set(ms);
        match &indexed {
            Ok(x) => {
                let i = &x.index;
                say(format_args!(
                    "clxfer: indexed {} events ({} slices on {} tracks, {} arrows) in \
                         {:.1} s on {threads} threads: {} in memory, {:.1} bytes an event",
                    i.events,
                    i.slices(),
                    i.tracks.len(),
                    i.arrows.len(),
                    ms / 1000.0,
                    clxfer::units::bytes(i.bytes() as u64),
                    i.bytes() as f64 / i.events.max(1) as f64
                ));
            }
            Err(e) => say(format_args!("clxfer: cannot index: {e}")),
        }
        let limited = indexed
            .as_ref()
            .ok()
            .and_then(|x| x.index.limited_report.clone());
        let _ = live.index.set(indexed);
        let report = match limited {
            // Past CLXFER_TRACE_LIMIT_MIB the events are part of the run: the report its end
            // carries is the whole run's.
            Some(r) => Ok(Bytes::from(r.to_string())),
            None => report(&live.trace),
        };
        if let Err(e) = &report {
            say(format_args!("clxfer: no report: {e}"));
        }
        let _ = live.report.set(report);
    }

    fn status(&self) -> Value {
        let index = match self.index.get() {
            None => json!({"done": false}),
            Some(Ok(x)) => {
                json!({"done": true, "ms": self.indexed_ms.get(), "format": x.format.name()})
            }
            Some(Err(e)) => json!({"done": true, "error": e}),
        };
        let report = match self.report.get() {
            None => json!({"done": false}),
            Some(Ok(_)) => json!({"done": true}),
            Some(Err(e)) => json!({"done": true, "error": e}),
        };
        json!({"read": self.read.load(Ordering::Relaxed), "total": self.size,
               "index": index, "report": report})
    }

    /// The answer to `path` (under the token) with `query`, if it is one of the index's.
    pub fn answer(&self, path: &str, query: &str) -> Option<(StatusCode, Bytes)> {
        let ok = |v: Value| (StatusCode::OK, Bytes::from(v.to_string()));
        let refuse = |status, e: &str| (status, Bytes::from(json!({"error": e}).to_string()));
        match path {
            "/status.json" => return Some(ok(self.status())),
            "/report.json" => {
                return Some(match self.report.get() {
                    Some(Ok(b)) => (StatusCode::OK, b.clone()),
                    Some(Err(e)) => refuse(StatusCode::INTERNAL_SERVER_ERROR, e),
                    None => refuse(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "the report is being computed",
                    ),
                });
            }
            "/tracks" | "/slices" | "/flows" | "/slice" => {}
            _ => return None,
        }
        let x = match self.index.get() {
            Some(Ok(x)) => x,
            Some(Err(e)) => return Some(refuse(StatusCode::INTERNAL_SERVER_ERROR, e)),
            None => {
                return Some(refuse(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the trace is being indexed",
                ));
            }
        };
        let q = Query(query);
        Some(match path {
            "/tracks" => ok(tracks(x, self.size)),
            "/slices" => match q.view() {
                Some(view) => ok(slices(x, view, q.get("track"))),
                None => refuse(
                    StatusCode::BAD_REQUEST,
                    "slices?from=&to=&px= (µs, µs, pixels)",
                ),
            },
            "/flows" => match q.view() {
                Some(view) => ok(flows(x, view, q.get("kinds"))),
                None => refuse(
                    StatusCode::BAD_REQUEST,
                    "flows?from=&to=&px= (µs, µs, pixels)",
                ),
            },
            _ => {
                let at = (q.get("track").and_then(|t| t.parse().ok()))
                    .zip(q.get("i").and_then(|i| i.parse().ok()));
                match at.map(|(t, i)| x.details(t, i)) {
                    Some(Ok(v)) => ok(v),
                    Some(Err(e)) => refuse(StatusCode::NOT_FOUND, &e),
                    None => refuse(StatusCode::BAD_REQUEST, "slice?track=&i="),
                }
            }
        })
    }
}

/// Memory an index takes at most while it is built, per byte of trace: measured (docs/PERFORMANCE.md)
/// about 0.37 for clxfer's JSON (~130 bytes an event) and 1.2 for protobuf (~40), with room.
const NEED_PER_BYTE: [(clxfer::trace::format::Format, f64); 2] = [
    (clxfer::trace::format::Format::Json, 0.5),
    (clxfer::trace::format::Format::Perfetto, 1.5),
];

/// Whether indexing `size` bytes of trace in `format` fits in `available` bytes of memory (the
/// one limit left: an index past it would have the server killed, and the page nothing); `None`:
/// not known, tried.
fn fits(
    size: u64,
    format: clxfer::trace::format::Format,
    available: Option<u64>,
) -> Result<(), String> {
    let per = NEED_PER_BYTE
        .iter()
        .find(|(f, _)| *f == format)
        .map_or(1.5, |(_, p)| *p);
    let need = (size as f64 * per) as u64;
    match available {
        Some(free) if need > free => Err(format!(
            "its index would take about {} of memory while it is built, and this machine has {} \
             available. Open it in Perfetto (ui.perfetto.dev), or trace part of the run \
             (CLXFER_TRACE_LIMIT_MIB, with CLXFER_TRACE_LIMIT_KEEP=last for its end)",
            clxfer::units::bytes(need),
            clxfer::units::bytes(free)
        )),
        _ => Ok(()),
    }
}

/// The memory available to new work (Linux's `MemAvailable`), if known.
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib << 10)
}

/// A line on stderr, whoever reads it: one that no longer does (a closed pipe) is no failure
/// (`eprintln!` would panic).
fn say(line: std::fmt::Arguments) {
    use std::io::Write;
    crate::progress::suspend(|| {
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    });
}

/// The report of the trace's first process, as JSON (the page shows one; `clxfer report` gives
/// each).
fn report(trace: &std::path::Path) -> Result<Bytes, String> {
    let total = crate::progress::total(&[trace.to_path_buf()], 1);
    let read = crate::progress::watch("reading", total, || from_trace::report_file(trace, None));
    let ps = read.map_err(|e| e.to_string())?;
    let first = ps.first().ok_or("no process")?;
    serde_json::to_vec(&first.report)
        .map(Bytes::from)
        .map_err(|e| e.to_string())
}

/// A query string's values (numbers and words: nothing to decode).
struct Query<'a>(&'a str);

impl Query<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        (self.0.split('&')).find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
    }

    fn num(&self, key: &str) -> Option<f64> {
        self.get(key)?.parse().ok().filter(|v: &f64| v.is_finite())
    }

    /// `from` and `to` (µs) and `px`: the view, in ns.
    fn view(&self) -> Option<View> {
        let (from, to) = (self.num("from")? * 1000.0, self.num("to")? * 1000.0);
        let px = self.num("px")?.clamp(1.0, f64::from(index::track::MAX_PX)) as u32;
        (to > from).then_some(View { from, to, px })
    }
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// The tracks, their names as the trace gives them, the processes and the trace's span.
fn tracks(x: &Indexed, size: u64) -> Value {
    let i = &x.index;
    let (start, end) = i.span().unwrap_or((0, 1));
    let tracks: Vec<Value> = (i.tracks.iter())
        .map(|t| {
            json!({"pid": t.pid, "tid": t.tid,
                   "device": t.pid >= clxfer::vocab::schema::DEVICE_PID_BASE,
                   "process": i.process_names.get(&t.pid),
                   "thread": i.thread_names.get(&(t.pid, t.tid)),
                   "count": t.len(), "colours": t.colours()})
        })
        .collect();
    let processes: Vec<Value> = (i.processes.iter())
        .map(|p| json!({"pid": p.pid, "program": p.program, "rank": p.rank, "ranks": p.ranks, "host": p.host}))
        .collect();
    json!({"start": us(start), "end": us(end), "tracks": tracks, "processes": processes,
           "colours": colour::WORDS, "arrow_kinds": i.arrow_names.iter().map(|n| &**n).collect::<Vec<_>>(),
           "events": i.events, "slices": i.slices(), "arrows": i.arrows.len(),
           "memory_bytes": i.bytes(), "file_bytes": size, "format": x.format.name()})
}

/// Each track's slices in `view` (or track `only`'s): per group, flat, its start and end (µs),
/// colour, how many slices it stands for and the first's index, and the name of a group of one
/// (by id, the ids' names beside).
fn slices(x: &Indexed, view: View, only: Option<&str>) -> Value {
    let i = &x.index;
    let only: Option<usize> = only.and_then(|t| t.parse().ok());
    let mut names = serde_json::Map::new();
    let tracks: Vec<Value> = (i.tracks.iter().enumerate())
        .filter(|(k, _)| only.is_none_or(|o| o == *k))
        .map(|(k, t)| {
            let groups = t.window(view);
            let mut flat = Vec::with_capacity(groups.len() * 6);
            let mut n = 0u64;
            for g in &groups {
                n += u64::from(g.count);
                let name = if g.count == 1 {
                    let id = t.slice(g.first as usize).name;
                    names
                        .entry(id.to_string())
                        .or_insert_with(|| i.names[id as usize].to_string().into());
                    json!(id)
                } else {
                    json!(-1)
                };
                flat.extend([
                    json!(us(g.start)),
                    json!(us(g.end)),
                    json!(g.colour),
                    json!(g.count),
                    json!(g.first),
                    name,
                ]);
            }
            json!({"track": k, "n": n, "groups": flat})
        })
        .collect();
    json!({"from": view.from / 1000.0, "to": view.to / 1000.0, "px": view.px, "tracks": tracks, "names": names})
}

/// The arrows in `view` of the kinds asked for (all by default): flat, each's start (µs) and
/// track, end and track, and kind; or, past [`MOST_ARROWS`], how many at least.
fn flows(x: &Indexed, view: View, kinds: Option<&str>) -> Value {
    let i = &x.index;
    let shown: Vec<bool> = (i.arrow_names.iter())
        .map(|n| kinds.is_none_or(|k| k.split(',').any(|w| w == &**n)))
        .collect();
    let from = view.from.max(0.0) as u64;
    let to = view.to.max(0.0) as u64;
    let found = i.arrows.in_view(
        from,
        to,
        |k| shown.get(k as usize).copied().unwrap_or(false),
        MOST_ARROWS,
    );
    match found {
        index::arrows::InView::Over(n) => json!({"over": n, "arrows": []}),
        index::arrows::InView::Arrows(list) => {
            let flat: Vec<Value> = (list.iter())
                .flat_map(|a| {
                    [
                        json!(us(a.t0)),
                        json!(a.track0),
                        json!(us(a.t1)),
                        json!(a.track1),
                        json!(a.kind),
                    ]
                })
                .collect();
            json!({"over": 0, "arrows": flat})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clxfer::trace::format::Format;

    #[test]
    fn an_index_past_the_memory_available_is_not_begun_and_says_why() {
        let gib = 1u64 << 30;
        assert_eq!(fits(2 * gib, Format::Json, Some(8 * gib)), Ok(()));
        assert_eq!(fits(2 * gib, Format::Json, None), Ok(()));
        let why = fits(20 * gib, Format::Json, Some(8 * gib)).unwrap_err();
        assert!(
            why.contains("10.0 GiB") && why.contains("8.00 GiB"),
            "{why}"
        );
        assert!(fits(6 * gib, Format::Perfetto, Some(8 * gib)).is_err());
        assert!(available_memory().is_some_and(|m| m > 0));
    }
}
