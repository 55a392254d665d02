//! The Chrome trace JSON, as Perfetto's importer wants it (../shared/docs/perfetto-json.md):
//! a bare array streamed event by event (a killed program leaves a loadable file), timestamps in µs
//! from the trace start to the nanosecond, numeric pids and tids, host threads under the process,
//! one synthetic process per device with one track per queue and extra lanes when commands overlap,
//! one `s`/`f` flow per timed command at exactly the two slices' timestamps, class in the names,
//! the whole classification in `args`. Keys come from `schema.rs`. The same events go out as
//! Perfetto's protobuf through the other [`Emit`].
//!
//! Here: the writer's state, its start, its flushes and a ring's chunks. Beside it: the host
//! slices (`calls.rs`, their classes in `classes.rs` and `args.rs`), what the devices did
//! (`device.rs`, lanes in `lanes.rs`, dependency arrows in `waits.rs`), names and tracks
//! (`tracks.rs`), and the writer thread's side (`output.rs`).

mod args;
mod calls;
mod classes;
mod device;
mod lanes;
mod output;
#[cfg(test)]
mod tests;
mod tracks;
mod waits;

use super::record::*;
use super::ring::TraceOut;
use super::writer::Output;
use crate::event::{self, Emit, FlowId, Head, Heads, Kind, Meta, Name, Part, Scope, Text};
use crate::json::{self, Json, quoted};
use crate::model::flags::{self, MAP_FLAGS, MEM_FLAGS, MIGRATION_FLAGS};
use crate::report::On;
use crate::timing::clock;
use crate::vocab::schema::{self as s, device_pid, queue_tid};
use args::{CommandName, Rendered, classification, gbps};
use lanes::Lanes;
use rustc_hash::FxBuildHasher;
use std::collections::{HashMap, HashSet};

/// Bytes buffered before a write to the file.
pub(super) const FLUSH_AT: usize = 1 << 18;
/// Commands waiting for the other half of their join; beyond, the join is given up (no arrow).
const JOIN_LIMIT: usize = 1 << 20;
/// Flag values whose names are kept rendered, at most.
const FLAGS_CACHED: usize = 1024;

/// What makes a host slice's class: its queue, kernel, flags, objects (and which it only reads)
/// and classification.
/// Whether a call's command gets a device slice: part of its class (sampling leaves most calls
/// of a loop untimed and a few timed).
#[derive(Clone, Copy)]
enum DeviceSlice {
    Timed,
    Sampled,
    Untimed,
}

fn device_slice_of(e: &Enqueued) -> DeviceSlice {
    match (e.timed, e.sampled) {
        (true, _) => DeviceSlice::Timed,
        (false, true) => DeviceSlice::Sampled,
        (false, false) => DeviceSlice::Untimed,
    }
}

type ClassKey = (
    QueueRef,
    Option<std::sync::Arc<str>>,
    CallFlags,
    smallvec::SmallVec<[crate::model::classification::ObjRef; 2]>,
    crate::graph::race::Uses,
    Option<crate::model::classification::Classification>,
);

/// The trace writer: records in, events out, as JSON (the default) or Perfetto's protobuf
/// (`E`, [`super::emit`]).
pub struct Chrome<W: TraceOut, E: Emit = Json> {
    file: TraceFile<W>,
    tracks: Tracks,
    arrows: Arrows,
    j: E,
    host_pid: u32,
    start_ns: u64,
    rendered: Rendered,
    classes: classes::Classes<E>,
    /// By entry point: its last class, and what made it.
    last_class: Vec<Option<classes::Last<ClassKey>>>,
    /// Flags → their names as a JSON string (`"READ_WRITE|ALLOC_HOST_PTR"`), by table and value:
    /// a program uses the same few.
    flag_names: HashMap<(usize, u64), Box<[u8]>, FxBuildHasher>,
    /// The JSON's cache of event heads ([`Heads`]).
    heads: Heads,
    events: u64,
    /// The run's report as JSON, for the trace's last event.
    report: Option<String>,
}

/// The trace file: where the events go, how much it may hold, and what was left out of it.
struct TraceFile<W> {
    out: W,
    /// Its name in messages (its path).
    what: String,
    failed: Option<String>,
    /// Bytes handed to the file, and how many it may hold ([`super::trace_file::room`]).
    written: u64,
    room: u64,
    /// CLXFER_TRACE_LIMIT_MIB in bytes (`u64::MAX`: none); the events left out past it, and the
    /// events counted when the buffer was last written out.
    limit: u64,
    left_out: u64,
    flushed_events: u64,
    /// The limit was reached: nothing more but the last event is written.
    limited: bool,
    /// The last event is being written: past the limit too.
    closing: bool,
    /// The output keeps the most recent part (a ring, `super::ring`) and has dropped some.
    ring_dropped: bool,
    /// The ring's chunks begun.
    chunk: u32,
}

/// The tracks the trace names: devices, their queues' lanes, host threads, counters.
#[derive(Default)]
struct Tracks {
    /// `rank R · ` in a parallel job, before each device's name; else empty.
    rank: Option<String>,
    /// Device index → named yet.
    devices: HashMap<u32, bool, FxBuildHasher>,
    /// The devices' tracks as said, to say again in each chunk of a ring.
    device_tracks: Vec<DeviceTrack>,
    /// Devices under forced rules: the cost model projecting their transfers, if the rules have
    /// one (issue #26).
    projecting: HashMap<u32, Option<&'static crate::model::cost::Cost>, FxBuildHasher>,
    queues: HashMap<QueueRef, Lanes, FxBuildHasher>,
    /// Host thread → its name, and whether the name is written (only threads with calls are).
    threads: HashMap<u32, (String, bool), FxBuildHasher>,
    /// Counter → last value written.
    counters: HashMap<Counter, u64, FxBuildHasher>,
    /// Out-of-order queues (their host slices say the barrier each command waits for).
    out_of_order: HashSet<QueueRef, FxBuildHasher>,
}

/// The arrows: a command's host and device slices joined, its dependencies, races.
#[derive(Default)]
struct Arrows {
    /// Commands whose host slice is written and device slice not yet, and the other way round.
    /// (With the ring's chunk each host slice is in: a device slice whose host slice is in an
    /// earlier chunk says everything itself.)
    hosts: HashMap<u64, u32, FxBuildHasher>,
    early: HashMap<u64, Command, FxBuildHasher>,
    /// The dependency arrows' ends not yet joined.
    waits: waits::Waits,
    /// Race arrows drawn (their flow ids).
    races: u64,
}

/// `flags` decoded with `names`, as a JSON string, rendered once.
fn flag_names<E: Emit>(
    cache: &mut HashMap<(usize, u64), Box<[u8]>, FxBuildHasher>,
    flags: u64,
    names: flags::Names,
) -> &[u8] {
    let key = (names.as_ptr() as usize, flags);
    // Flag values are the program's: bounded whatever it passes.
    if cache.len() >= FLAGS_CACHED && !cache.contains_key(&key) {
        cache.clear();
    }
    cache.entry(key).or_insert_with(|| {
        let mut j = E::default();
        j.display(&flags::decode(flags, names));
        j.bytes().into()
    })
}

/// Starts the trace: the opening bracket, the start event, the host process's name.
pub struct Start<'a> {
    pub program: &'a str,
    /// Its place in a parallel job, and its host.
    pub job: &'a crate::job::Job,
    pub command_line: &'a [String],
    pub mode: &'a str,
    pub settings: &'a [crate::config::Setting],
}

impl<W: TraceOut, E: Emit> Chrome<W, E> {
    /// `what` names the output in messages (its path).
    pub fn new(out: W, what: String, start: Start) -> Chrome<W, E> {
        let host_pid = std::process::id();
        let t0 = clock::start();
        let mut c = Chrome {
            file: TraceFile {
                out,
                what,
                failed: None,
                written: 0,
                room: super::trace_file::room(),
                // A ring limits the trace itself (`super::ring`).
                limit: match crate::config::global() {
                    c if c.trace_keep_last => u64::MAX,
                    c => c.trace_limit,
                },
                left_out: 0,
                flushed_events: 0,
                limited: false,
                closing: false,
                ring_dropped: false,
                chunk: 0,
            },
            tracks: Tracks::default(),
            arrows: Arrows::default(),
            j: E::default(),
            host_pid,
            start_ns: t0.mono_ns,
            rendered: Rendered::default(),
            classes: classes::Classes::default(),
            last_class: Vec::new(),
            flag_names: HashMap::default(),
            heads: HashMap::default(),
            events: 0,
            report: None,
        };
        // Room for a flush's worth and the record that crosses it, from the start.
        c.j.start(t0.mono_ns, 2 * FLUSH_AT);
        // In a job, each process's tracks say its rank: a merge of the ranks' traces tells them
        // apart.
        c.tracks.rank = start.job.rank.map(|r| format!("rank {r} · "));
        let shown = match start.job.rank {
            Some(r) => format!("{} · rank {r} ({})", start.program, start.job.host),
            None => start.program.to_string(),
        };
        c.meta(host_pid, None, &shown);
        c.sort_index(host_pid, None, 0);
        let j = c.begin(
            Name::Words(&[s::TRACE_START]),
            s::CAT_CLXFER,
            Kind::Instant(Scope::Global),
            host_pid,
            host_pid,
            0,
        );
        j.args();
        j.field(s::PROGRAM).str(start.program);
        j.field(s::COMMAND_LINE).open_array();
        for a in start.command_line {
            j.str(a);
        }
        j.close_array();
        j.field(s::PID).u64(host_pid as u64);
        if let Some(rank) = start.job.rank {
            j.field(s::RANK).u64(rank.into());
        }
        if let Some(ranks) = start.job.ranks {
            j.field(s::RANKS).u64(ranks.into());
        }
        if let Some(launcher) = start.job.launcher {
            j.field(s::LAUNCHER).word(launcher);
        }
        j.field(s::HOST).str(&start.job.host);
        j.field(s::START_TIME).str(&t0.rfc3339());
        j.field(s::VERSION).str(env!("CARGO_PKG_VERSION"));
        j.field(s::MODE).str(start.mode);
        j.field(s::OPTIONS).open();
        for o in start.settings {
            if o.spec.testing_only() && !o.is_set() {
                continue;
            }
            j.key(o.spec.var).open();
            j.qkey(quoted!("value")).str(&o.value);
            j.qkey(quoted!("from")).str(o.from());
            j.close();
        }
        j.close();
        j.close();
        c.end_event();
        // A ring's head: what comes before its first chunk, always kept.
        if c.file.out.chunk_due() {
            c.flush();
        }
        c
    }

    /// A new chunk of a ring (`super::ring`): the chunks before it may be dropped, so what
    /// follows stands alone. The devices are said again at once; threads and lanes are named,
    /// and classes said, again as they next appear; a device slice whose host slice is in an
    /// earlier chunk says everything itself.
    fn new_chunk(&mut self) {
        let dropped = self.file.out.chunk(self.events);
        if dropped > 0 {
            if !self.file.ring_dropped {
                crate::warn!(
                    "the trace {} reached CLXFER_TRACE_LIMIT_MIB ({} MiB): its oldest events \
                     are dropped as new ones come (counted in its last event); the report stays \
                     whole",
                    self.file.what,
                    crate::config::global().trace_limit >> 20
                );
            }
            self.file.ring_dropped = true;
            self.file.left_out += dropped;
        }
        self.j.restart();
        self.classes.restart();
        self.last_class.iter_mut().for_each(|l| *l = None);
        self.file.chunk += 1;
        self.tracks.threads.values_mut().for_each(|t| t.1 = false);
        self.tracks.queues.values_mut().for_each(|q| q.named = 0);
        self.tracks
            .devices
            .values_mut()
            .for_each(|named| *named = false);
        for d in std::mem::take(&mut self.tracks.device_tracks) {
            self.device(&d);
        }
    }

    fn ts(&self, ns: u64) -> u64 {
        ns.saturating_sub(self.start_ns)
    }

    /// Opens an event: name, cat, kind, pid, tid, ts. The caller adds its args, then
    /// `end_event`.
    fn begin(
        &mut self,
        name: Name,
        cat: &'static str,
        kind: Kind<&str>,
        pid: u32,
        tid: u32,
        ts: u64,
    ) -> &mut E {
        let cat = Text::Word(cat);
        let head = Head {
            name,
            cat,
            kind,
            pid,
            tid,
            ts,
        };
        (self.j).begin_event(&head, &mut self.heads);
        &mut self.j
    }

    fn end_event(&mut self) {
        self.j.end_event();
        self.events += 1;
    }

    fn flush(&mut self) {
        // Past RLIMIT_FSIZE the kernel would send SIGXFSZ, which kills the whole program: stop
        // writing before the limit instead.
        if self.file.failed.is_some() {
            self.j.clear();
            return;
        }
        // Past CLXFER_TRACE_LIMIT_MIB, whole batches are left out (a batch holds a slice with
        // the two ends of its arrows) and counted; the last event is written anyway.
        let batch = self.events - self.file.flushed_events;
        self.file.flushed_events = self.events;
        let over = self
            .file
            .written
            .saturating_add(self.j.bytes().len() as u64)
            > self.file.limit;
        if !self.file.closing && (self.file.limited || over) {
            if !self.file.limited {
                self.file.limited = true;
                crate::warn!(
                    "the trace {} reached CLXFER_TRACE_LIMIT_MIB ({} MiB): later events are left \
                     out and counted in its last event; the report stays whole",
                    self.file.what,
                    self.file.limit >> 20
                );
            }
            self.file.left_out += batch;
            self.j.clear();
            return;
        }
        let room = self.file.room.saturating_sub(self.file.written) as usize;
        let result = if self.j.bytes().len() > room {
            // As many whole events as fit, so the file stays loadable.
            let fit = self.j.fit(room);
            let _ = (self.file.out.write_all(&self.j.bytes()[..fit]))
                .and_then(|_| self.file.out.flush());
            self.file.written += fit as u64;
            Err(std::io::Error::other(format!(
                "the file size limit (RLIMIT_FSIZE, {} bytes) is reached",
                self.file.room
            )))
        } else {
            self.file.written += self.j.bytes().len() as u64;
            self.file
                .out
                .write_all(self.j.bytes())
                .and_then(|_| self.file.out.flush())
        };
        if result.is_ok() && !self.file.closing && self.file.out.chunk_due() {
            self.j.clear();
            self.new_chunk();
            return;
        }
        if let Err(e) = result {
            crate::warn!(
                "writing the trace {} failed ({e}); the rest of the trace is lost",
                self.file.what
            );
            self.file.failed = Some(e.to_string());
        }
        self.j.clear();
    }

    fn record(&mut self, r: Record) {
        match r {
            Record::Call(c) => self.call(c),
            Record::Command(c) => self.command(c),
            Record::Counter { ts, counter, value } => self.counter(ts, counter, value),
            Record::Device(d) => self.device(&d),
            Record::Queue(q) => self.queue(q),
            // Summary mode's compact enqueues: a trace gets whole calls instead.
            Record::Fact(..) | Record::Failed(_) => {}
            Record::Race(r) => self.race(&r),
            Record::Missing(m) => {
                let ts = self.ts(m.at);
                let (pid, tid) = (self.host_pid, m.tid);
                let j = self.begin(
                    Name::Words(&[s::FUNCTION_NOT_FOUND]),
                    s::CAT_CLXFER,
                    Kind::Instant(Scope::Thread),
                    pid,
                    tid,
                    ts,
                );
                j.args();
                j.field(s::FUNCTION).str(&m.name);
                j.close();
                self.end_event();
            }
            Record::Thread { tid, name } => {
                let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                let name = String::from_utf8_lossy(&name[..end]).into_owned();
                let named = self.tracks.threads.get(&tid).is_some_and(|t| t.1);
                self.tracks.threads.insert(tid, (name, false));
                if named {
                    self.name_thread(tid);
                }
            }
        }
        // Written out between records, never inside one: a slice and the two ends of its arrow
        // reach the file together, so a killed program leaves no arrow with one end.
        if self.j.bytes().len() >= FLUSH_AT {
            self.flush();
        }
    }
}

/// `queue`: `device #D queue #Q`; `device #D` for a transfer on no queue (the copy a buffer's
/// creation made).
fn queue_field<E: Emit>(j: &mut E, q: QueueRef) {
    if q.queue == 0 {
        j.field(s::QUEUE)
            .raw_parts(&[Part::Text("device #"), Part::Num(q.device as u64)]);
        return;
    }
    j.field(s::QUEUE).raw_parts(&[
        Part::Text("device #"),
        Part::Num(q.device as u64),
        Part::Text(" queue #"),
        Part::Num(q.queue as u64),
    ]);
}
