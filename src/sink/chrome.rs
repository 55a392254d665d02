//! The Chrome trace JSON, as Perfetto's importer wants it (../shared/docs/perfetto-json.md):
//! a bare array streamed event by event (a killed program leaves a loadable file), timestamps in µs
//! from the trace start to the nanosecond, numeric pids and tids, host threads under the process,
//! one synthetic process per device with one track per queue and extra lanes when commands overlap,
//! one `s`/`f` flow per timed command at exactly the two slices' timestamps, class in the names,
//! the whole classification in `args`. Keys come from `schema.rs`.

mod args;
mod classes;
mod lanes;
#[cfg(test)]
mod tests;
mod tracks;
mod waits;

use super::emit::{Emit, Heads, Name};
use super::json::{self, Json, Part, quoted};
use super::record::*;
use super::ring::TraceOut;
use super::writer::Output;
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
    u64,
    Option<crate::model::classification::Classification>,
);

/// The trace writer: records in, events out, as JSON (the default) or Perfetto's protobuf
/// (`E`, [`super::emit`]).
pub struct Chrome<W: TraceOut, E: Emit = Json> {
    out: W,
    j: E,
    host_pid: u32,
    start_ns: u64,
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
    /// Commands whose host slice is written and device slice not yet, and the other way round.
    /// (With the ring's chunk each host slice is in: a device slice whose host slice is in an
    /// earlier chunk says everything itself.)
    hosts: HashMap<u64, u32, FxBuildHasher>,
    /// The ring's chunks begun.
    chunk: u32,
    early: HashMap<u64, Command, FxBuildHasher>,
    rendered: Rendered,
    classes: classes::Classes<E>,
    /// By entry point: its last class, and what made it.
    last_class: Vec<Option<classes::Last<ClassKey>>>,
    /// The dependency arrows' ends not yet joined.
    waits: waits::Waits,
    /// Race arrows drawn (their flow ids).
    races: u64,
    /// Out-of-order queues (their host slices say the barrier each command waits for).
    out_of_order: HashSet<QueueRef, FxBuildHasher>,
    /// Flags → their names as a JSON string (`"READ_WRITE|ALLOC_HOST_PTR"`), by table and value:
    /// a program uses the same few.
    flag_names: HashMap<(usize, u64), Box<[u8]>, FxBuildHasher>,
    /// The JSON's cache of event heads ([`Heads`]).
    heads: Heads,
    events: u64,
    failed: Option<String>,
    what: String,
    /// The run's report as JSON, for the trace's last event.
    report: Option<String>,
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

/// What a kernel does to a memory-object argument, as far as its flags tell: a `READ_ONLY` one is
/// read, a `WRITE_ONLY` one written; the rest are assumed to be read and written (clxfer does not
/// read the kernel's code).
fn access(flags: u64, only_read: bool) -> &'static str {
    use opencl_sys::{CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY};
    if only_read || flags & CL_MEM_READ_ONLY != 0 {
        "read"
    } else if flags & CL_MEM_WRITE_ONLY != 0 {
        "write"
    } else {
        "read-write (assumed)"
    }
}

/// Starts the trace: the opening bracket, the start event, the host process's name.
pub struct Start<'a> {
    pub program: &'a str,
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
            out,
            j: E::default(),
            host_pid,
            start_ns: t0.mono_ns,
            devices: HashMap::default(),
            device_tracks: Vec::new(),
            projecting: HashMap::default(),
            queues: HashMap::default(),
            threads: HashMap::default(),
            counters: HashMap::default(),
            hosts: HashMap::default(),
            chunk: 0,
            early: HashMap::default(),
            rendered: Rendered::default(),
            classes: classes::Classes::default(),
            last_class: Vec::new(),
            waits: waits::Waits::default(),
            races: 0,
            out_of_order: HashSet::default(),
            flag_names: HashMap::default(),
            heads: HashMap::default(),
            events: 0,
            failed: None,
            what,
            report: None,
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
        };
        // Room for a flush's worth and the record that crosses it, from the start.
        c.j.start(t0.mono_ns, 2 * FLUSH_AT);
        c.meta(host_pid, None, "process_name", start.program);
        c.sort_index(host_pid, None, 0);
        let j = c.begin(
            Name::Words(&[s::TRACE_START]),
            s::CAT_CLXFER,
            "i",
            host_pid,
            host_pid,
            0,
        );
        j.qkey(quoted!("s")).word("g");
        j.qkey(quoted!("args")).open();
        j.field(s::PROGRAM).str(start.program);
        j.field(s::COMMAND_LINE).open_array();
        for a in start.command_line {
            j.str(a);
        }
        j.close_array();
        j.field(s::PID).u64(host_pid as u64);
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
        if c.out.chunk_due() {
            c.flush();
        }
        c
    }

    /// A new chunk of a ring (`super::ring`): the chunks before it may be dropped, so what
    /// follows stands alone. The devices are said again at once; threads and lanes are named,
    /// and classes said, again as they next appear; a device slice whose host slice is in an
    /// earlier chunk says everything itself.
    fn new_chunk(&mut self) {
        let dropped = self.out.chunk(self.events);
        if dropped > 0 {
            if !self.ring_dropped {
                crate::warn!(
                    "the trace {} reached CLXFER_TRACE_LIMIT_MIB ({} MiB): its oldest events \
                     are dropped as new ones come (counted in its last event); the report stays \
                     whole",
                    self.what,
                    crate::config::global().trace_limit >> 20
                );
            }
            self.ring_dropped = true;
            self.left_out += dropped;
        }
        self.j.restart();
        self.classes.restart();
        self.last_class.iter_mut().for_each(|l| *l = None);
        self.chunk += 1;
        self.threads.values_mut().for_each(|t| t.1 = false);
        self.queues.values_mut().for_each(|q| q.named = 0);
        self.devices.values_mut().for_each(|named| *named = false);
        for d in std::mem::take(&mut self.device_tracks) {
            self.device(&d);
        }
    }

    fn ts(&self, ns: u64) -> u64 {
        ns.saturating_sub(self.start_ns)
    }

    /// Opens an event: name, cat, ph, pid, tid, ts. The caller adds fields, then `end_event`.
    fn begin(
        &mut self,
        name: Name,
        cat: &'static str,
        ph: &'static str,
        pid: u32,
        tid: u32,
        ts: u64,
    ) -> &mut E {
        (self.j).begin_event(name, cat, ph, pid, tid, ts, &mut self.heads);
        &mut self.j
    }

    fn end_event(&mut self) {
        self.j.end_event();
        self.events += 1;
    }

    fn flush(&mut self) {
        // Past RLIMIT_FSIZE the kernel would send SIGXFSZ, which kills the whole program: stop
        // writing before the limit instead.
        if self.failed.is_some() {
            self.j.clear();
            return;
        }
        // Past CLXFER_TRACE_LIMIT_MIB, whole batches are left out (a batch holds a slice with
        // the two ends of its arrows) and counted; the last event is written anyway.
        let batch = self.events - self.flushed_events;
        self.flushed_events = self.events;
        let over = self.written.saturating_add(self.j.bytes().len() as u64) > self.limit;
        if !self.closing && (self.limited || over) {
            if !self.limited {
                self.limited = true;
                crate::warn!(
                    "the trace {} reached CLXFER_TRACE_LIMIT_MIB ({} MiB): later events are left \
                     out and counted in its last event; the report stays whole",
                    self.what,
                    self.limit >> 20
                );
            }
            self.left_out += batch;
            self.j.clear();
            return;
        }
        let room = self.room.saturating_sub(self.written) as usize;
        let result = if self.j.bytes().len() > room {
            // As many whole events as fit, so the file stays loadable.
            let fit = self.j.fit(room);
            let _ = (self.out.write_all(&self.j.bytes()[..fit])).and_then(|_| self.out.flush());
            self.written += fit as u64;
            Err(std::io::Error::other(format!(
                "the file size limit (RLIMIT_FSIZE, {} bytes) is reached",
                self.room
            )))
        } else {
            self.written += self.j.bytes().len() as u64;
            self.out
                .write_all(self.j.bytes())
                .and_then(|_| self.out.flush())
        };
        if result.is_ok() && !self.closing && self.out.chunk_due() {
            self.j.clear();
            self.new_chunk();
            return;
        }
        if let Err(e) = result {
            crate::warn!(
                "writing the trace {} failed ({e}); the rest of the trace is lost",
                self.what
            );
            self.failed = Some(e.to_string());
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
            Record::Fact(..) => {}
            Record::Race(r) => self.race(&r),
            Record::Missing(m) => {
                let ts = self.ts(m.at);
                let (pid, tid) = (self.host_pid, m.tid);
                let j = self.begin(
                    Name::Words(&[s::FUNCTION_NOT_FOUND]),
                    s::CAT_CLXFER,
                    "i",
                    pid,
                    tid,
                    ts,
                );
                j.qkey(quoted!("s")).word("t");
                j.qkey(quoted!("args")).open();
                j.field(s::FUNCTION).str(&m.name);
                j.close();
                self.end_event();
            }
            Record::Thread { tid, name } => {
                let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                let name = String::from_utf8_lossy(&name[..end]).into_owned();
                let named = self.threads.get(&tid).is_some_and(|t| t.1);
                self.threads.insert(tid, (name, false));
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

    fn call(&mut self, c: Call) {
        if !self.threads.get(&c.tid).is_some_and(|t| t.1) {
            self.name_thread(c.tid);
        }
        let (ts, dur) = (self.ts(c.begin), c.end.saturating_sub(c.begin));
        let Some(e) = c.command else {
            let j = self.begin(
                Name::Words(&[c.api.name()]),
                s::CAT_CALL,
                "X",
                self.host_pid,
                c.tid,
                ts,
            );
            j.qkey(quoted!("dur")).us(dur);
            // A call about a user event names it, as its waiters' `waits` do; a
            // synchronisation point names what it waited for.
            if c.node != 0 || c.waited.is_some() {
                j.qkey(quoted!("args")).open();
                if c.node != 0 {
                    j.field(s::COMMAND).u64(c.node);
                }
                match c.waited.as_deref() {
                    Some(On::Commands(ids)) => {
                        j.field(s::WAITED_FOR).open_array();
                        for &id in ids {
                            j.u64(id);
                        }
                        j.close_array();
                    }
                    Some(&On::Queue { queue, last }) => {
                        let (device, queue) = queue;
                        queue_field(j, QueueRef { device, queue });
                        j.field(s::FINISHED_UP_TO).u64(last);
                    }
                    None => {}
                }
                j.close();
            }
            self.end_event();
            return;
        };
        let cat = if e.timed { s::CAT_ENQUEUE } else { s::CAT_CALL };
        let api = [c.api.name()];
        let classed =
            (e.class.as_ref()).map(|cl| [c.api.name(), cl.direction.as_str(), cl.path.as_str()]);
        let words: &[&'static str] = classed.as_ref().map_or(&api, |w| w);
        self.begin(Name::Words(words), cat, "X", self.host_pid, c.tid, ts);
        // Borrowed apart from the caches below.
        let j = &mut self.j;
        j.qkey(quoted!("dur")).us(dur);
        j.qkey(quoted!("args")).open();
        // What varies per call first, then the class (`classes.rs`).
        j.field(s::COMMAND).u64(e.id);
        if !e.deps.waits.is_empty() {
            j.field(s::WAITS).open_array();
            for &w in &e.deps.waits {
                j.u64(w);
            }
            j.close_array();
        }
        if e.deps.unknown > 0 {
            j.field(s::WAITS_UNKNOWN).u64(e.deps.unknown as u64);
        }
        if self.out_of_order.contains(&e.queue)
            && let Some(after) = e.deps.after
        {
            j.field(s::AFTER).u64(after);
        }
        if e.deps.all_before {
            j.field(s::AFTER_ALL).bool(true);
        }
        if let Some(cl) = &e.class {
            args::per_call(j, cl);
            // Under forced rules this device's time is not the rules' devices': the cost model's
            // stands in. A non-blocking call's time says nothing of its transfer (issue #26).
            match self.projecting.get(&e.queue.device) {
                Some(cost) => {
                    let projected = cost.and_then(|c| c.time_ns(cl.direction, cl.path, cl.bytes));
                    if let Some(ns) = projected.filter(|_| e.kernel.is_none()) {
                        j.field(s::PROJECTED_US).us(ns);
                        j.field(s::PROJECTED_GBPS).f3(gbps(cl.bytes, ns));
                    }
                }
                None if cl.blocking => {
                    j.field(s::HOST_GBPS).f3(gbps(cl.bytes, dur));
                }
                None => {}
            }
        }
        if let Some((offset, size)) = e.region {
            j.field(s::REGION).open();
            j.qkey(quoted!("offset")).u64(offset);
            j.qkey(quoted!("size")).u64(size);
            j.close();
        }
        // A call like the last of its entry point (a loop's) names that class without rendering;
        // one per kind of device timing, which sampling varies from call to call.
        if self.last_class.is_empty() {
            self.last_class
                .resize_with(crate::vocab::Api::ALL.len() * 3, || None);
        }
        let slot = c.api as usize * 3 + device_slice_of(&e) as usize;
        let last = &mut self.last_class[slot];
        let same = self.classes.current(last)
            && last.as_ref().is_some_and(|l| {
                let (queue, kernel, flags, mems, reads, class) = &l.key;
                *queue == e.queue
                    && *kernel == e.kernel
                    && *flags == e.flags
                    && *mems == e.mems
                    && *reads == e.reads
                    && *class == e.class
            });
        if let Some(l) = last.as_ref().filter(|_| same) {
            self.classes.reuse(j, l);
        } else {
            self.class(&e, c.api, slot);
        }
        let j = &mut self.j;
        j.close();
        self.end_event();
        let (id, timed) = (e.id, e.timed);
        super::buffer::unbox(e);
        if timed {
            match self.early.remove(&id) {
                Some(c) => self.device_slice(c, true),
                None => self.bare(id),
            }
        }
    }

    /// A host slice's class (`classes.rs`), rendered and numbered, and remembered as its entry
    /// point's last.
    fn class(&mut self, e: &Enqueued, api: crate::vocab::Api, slot: usize) {
        let c_api = api;
        let j = &mut self.j;
        let (rendered, flag_cache) = (&mut self.rendered, &mut self.flag_names);
        self.classes.write(j, |j| {
            j.field(s::API).word(c_api.name());
            queue_field(j, e.queue);
            match device_slice_of(e) {
                DeviceSlice::Timed => {}
                DeviceSlice::Sampled => {
                    j.field(s::DEVICE_TIME).word("sampled");
                }
                DeviceSlice::Untimed => {
                    j.field(s::DEVICE_TIME).word("untimed");
                }
            }
            if let Some(k) = &e.kernel {
                j.field(s::KERNEL).str(k);
            }
            if let Some(cl) = &e.class {
                classification(j, c_api, cl, rendered);
            }
            match e.flags {
                CallFlags::None => {}
                CallFlags::Map(f) => {
                    j.field(s::MAP_FLAGS)
                        .raw_bytes(flag_names::<E>(flag_cache, f, MAP_FLAGS));
                }
                CallFlags::Migrate(f) => {
                    j.field(s::MIGRATION_FLAGS).raw_bytes(flag_names::<E>(
                        flag_cache,
                        f,
                        MIGRATION_FLAGS,
                    ));
                }
            }
            if !e.mems.is_empty() {
                j.field(s::MEM_OBJECTS).open_array();
                for (i, m) in e.mems.iter().enumerate() {
                    j.open();
                    j.qkey(quoted!("id")).u64(m.id);
                    j.qkey(quoted!("kind")).word(m.kind_name());
                    j.qkey(quoted!("size")).u64(m.size);
                    j.qkey(quoted!("flags"))
                        .raw_bytes(flag_names::<E>(flag_cache, m.flags, MEM_FLAGS));
                    // A kernel's access to its arguments, as far as their flags tell.
                    if e.kernel.is_some() {
                        let only_read = crate::model::classify::only_reads(e.reads, i);
                        j.qkey(quoted!("access")).word(access(m.flags, only_read));
                    }
                    j.close();
                }
                j.close_array();
            }
        });
        let key = (
            e.queue,
            e.kernel.clone(),
            e.flags,
            e.mems.clone(),
            e.reads,
            e.class.clone(),
        );
        self.last_class[slot] = Some(self.classes.remember(key));
    }

    /// A completed command: drawn once its enqueue's host slice is written, so that the arrow
    /// always has both ends, even in the trace of a program killed with records in flight.
    fn command(&mut self, c: Command) {
        if let Some(chunk) = self.hosts.remove(&c.id) {
            self.device_slice(c, chunk == self.chunk);
        } else if self.early.len() < JOIN_LIMIT {
            self.early.insert(c.id, c);
        } else {
            self.device_slice(c, false);
        }
    }

    /// A host slice whose command has not completed yet.
    fn bare(&mut self, id: u64) {
        if self.hosts.len() >= JOIN_LIMIT {
            self.hosts.clear();
        }
        self.hosts.insert(id, self.chunk);
    }

    fn device_slice(&mut self, c: Command, flow: bool) {
        let dpid = device_pid(self.host_pid, c.queue.device);
        self.ensure_device(c.queue.device);
        let lane = self.lane(c.queue, c.start, c.end);
        let tid = queue_tid(c.queue.queue, lane);
        let (ts, dur) = (self.ts(c.start), c.end.saturating_sub(c.start));
        let verb = c.api.verb();
        let shown = CommandName(&c);
        let name = match (&c.kernel, c.class) {
            (None, Some((dir, path))) => Name::Words(&[verb, dir.as_str(), path.as_str()]),
            (None, None) => Name::Words(&[verb]),
            (Some(_), _) => Name::Shown(&shown),
        };
        let projected = self.projecting.contains_key(&c.queue.device);
        let j = self.begin(name, s::CAT_ENQUEUE, "X", dpid, tid, ts);
        j.qkey(quoted!("dur")).us(dur);
        // The call's own details are on the host slice, one arrow away: with the arrow, what
        // the host slice says (the class, the bytes) and what follows from its start is not
        // said again (`crate::trace::compact` restores it).
        j.qkey(quoted!("args")).open();
        j.field(s::COMMAND).u64(c.id);
        if let Some((dir, path)) = c.class.filter(|_| !flow) {
            j.field(s::DIRECTION).word(dir.as_str());
            j.field(s::PATH).word(path.as_str());
            j.field(s::BYTES).u64(c.bytes);
        }
        if c.time == DeviceTime::Measured {
            j.field(s::QUEUED_TO_SUBMIT)
                .us(c.submit.saturating_sub(c.queued));
            j.field(s::SUBMIT_TO_START)
                .us(c.start.saturating_sub(c.submit));
            if !flow {
                j.field(s::ENQUEUE_TO_START)
                    .us(c.start.saturating_sub(c.host_begin));
            }
            if c.class.is_some() && !projected {
                j.field(s::DEVICE_GBPS).f3(gbps(c.bytes, dur));
            }
        } else if c.time == DeviceTime::Untrusted {
            j.field(s::DEVICE_TIME).word("untrusted");
        } else {
            j.field(s::DEVICE_TIME).word("unavailable");
        }
        if c.status != 0 {
            j.field(s::STATUS).i64(c.status as i64);
        }
        j.close();
        self.end_event();
        let at = waits::At { pid: dpid, tid, ts };
        if c.held || !c.waits.is_empty() {
            for (id, from, to) in self.waits.slice(c.id, at, c.held, &c.waits) {
                self.flow(s::WAIT_FLOW_NAME, id, from, to);
            }
        }
        if !flow {
            return;
        }
        // The arrow: from the enqueue slice's start to the device slice's start.
        let host = waits::At {
            pid: self.host_pid,
            tid: c.host_tid,
            ts: self.ts(c.host_begin),
        };
        self.flow(s::FLOW_NAME, c.id, host, at);
    }

    /// A possible data race: an instant where the second command's enqueue slice starts, and an
    /// arrow from the first's. The arrow needs both slices of one category (DevTools binds a
    /// flow only to its own): a timed and an untimed enqueue get the instant alone.
    fn race(&mut self, r: &super::record::Race) {
        let f = &r.fact;
        let [(first, first_timed), (second, second_timed)] = r.calls;
        let (from, to) = (self.ts(first), self.ts(second));
        let pid = self.host_pid;
        let j = self.begin(
            Name::Words(&[s::RACE]),
            s::CAT_CLXFER,
            "i",
            pid,
            f.second.thread,
            to,
        );
        j.qkey(quoted!("s")).word("t");
        j.qkey(quoted!("args")).open();
        j.field(s::MEM_OBJECT).hex(f.object);
        j.field(s::CONFIDENCE).str(&f.confidence);
        for (key, side) in [(s::FIRST, &f.first), (s::SECOND, &f.second)] {
            j.field(key).open();
            j.qkey(quoted!("command")).u64(side.command);
            j.qkey(quoted!("api")).str(&side.api);
            queue_field(
                j,
                QueueRef {
                    device: side.device,
                    queue: side.queue,
                },
            );
            j.qkey(quoted!("thread")).u64(side.thread as u64);
            j.qkey(quoted!("access")).str(&side.access);
            j.qkey(quoted!("bytes")).open_array();
            j.u64(side.bytes.0);
            if side.bytes.1 != u64::MAX {
                j.u64(side.bytes.1);
            }
            j.close_array();
            j.close();
        }
        j.close();
        self.end_event();
        if first_timed == second_timed && from != to {
            let cat = if first_timed {
                s::CAT_ENQUEUE
            } else {
                s::CAT_CALL
            };
            self.races += 1;
            let at = |tid, ts| waits::At { pid, tid, ts };
            let (a, b) = (at(f.first.thread, from), at(f.second.thread, to));
            self.flow_of(s::RACE_FLOW_NAME, cat, self.races, a, b);
        }
    }

    /// A flow arrow of `name`: `s` at `from`, `f` (bound to its enclosing slice) at `to`.
    fn flow(&mut self, name: &'static str, id: u64, from: waits::At, to: waits::At) {
        self.flow_of(name, s::CAT_ENQUEUE, id, from, to)
    }

    fn flow_of(
        &mut self,
        name: &'static str,
        cat: &'static str,
        id: u64,
        from: waits::At,
        to: waits::At,
    ) {
        let j = self.begin(Name::Words(&[name]), cat, "s", from.pid, from.tid, from.ts);
        j.qkey(quoted!("id")).u64(id);
        self.end_event();
        let j = self.begin(Name::Words(&[name]), cat, "f", to.pid, to.tid, to.ts);
        j.qkey(quoted!("bp")).word("e");
        j.qkey(quoted!("id")).u64(id);
        self.end_event();
    }

    /// The lane of `queue` for a slice from `start` to `end`; names new lanes.
    fn lane(&mut self, queue: QueueRef, start: u64, end: u64) -> u32 {
        let lane = self.queues.entry(queue).or_default().place(start, end);
        self.name_lanes(queue);
        lane
    }

    fn counter(&mut self, ns: u64, counter: Counter, value: u64) {
        if self.counters.insert(counter, value) == Some(value) {
            return;
        }
        let ts = self.ts(ns);
        let (pid, name) = match counter {
            Counter::PinnedHost => (self.host_pid, s::PINNED_COUNTER),
            Counter::InFlight => (self.host_pid, s::IN_FLIGHT_COUNTER),
            Counter::DeviceResident(d) => {
                self.ensure_device(d);
                (device_pid(self.host_pid, d), s::RESIDENT_COUNTER)
            }
        };
        let j = self.begin(Name::Words(&[name]), s::CAT_CLXFER, "C", pid, 0, ts);
        // Perfetto plots counters as doubles and takes only numbers: a value past 2^53 (from
        // sizes a driver accepted from a hostile call) is drawn at 2^53.
        j.qkey(quoted!("args"))
            .open()
            .field(s::BYTES)
            .u64(value.min(json::EXACT))
            .close();
        self.end_event();
    }
}

impl<W: TraceOut, E: Emit> Output for Chrome<W, E> {
    fn embed_report(&mut self, json: String) {
        self.report = Some(json);
    }

    fn write(&mut self, records: &mut Vec<Record>) {
        for r in records.drain(..) {
            self.record(r);
        }
    }

    fn tick(&mut self) {
        let now = clock::now_ns();
        for (c, v) in super::counters::current() {
            if self.counters.get(&c).copied().unwrap_or(0) != v {
                self.counter(now, c, v);
            }
        }
        self.flush();
    }

    fn finish(&mut self, end: &End, dropped: [u64; KINDS.len()]) {
        // Commands whose enqueue record never came (dropped): their device slices, without arrows.
        let mut early: Vec<Command> = self.early.drain().map(|(_, c)| c).collect();
        early.sort_by_key(|c| c.id);
        for c in early {
            self.device_slice(c, false);
        }
        self.tick();
        self.name_the_rest();
        let (pid, ts) = (self.host_pid, self.ts(end.at));
        let report = self.report.take();
        // Written whatever the limit, with the events before it still waiting.
        self.flush();
        self.closing = true;
        let (events, left_out) = (self.events + 1 - self.left_out, self.left_out);
        let j = self.begin(
            Name::Words(&[s::TRACE_END]),
            s::CAT_CLXFER,
            "i",
            pid,
            pid,
            ts,
        );
        j.qkey(quoted!("s")).word("g");
        j.qkey(quoted!("args")).open();
        j.field(s::DEVICES).open_array();
        for d in &end.devices {
            j.open();
            j.field(s::DEVICE_INDEX).u64(d.index as u64);
            j.field(s::NAME).str(&d.name);
            j.field(s::RULES).word(d.rules);
            j.field(s::CLOCK).word(d.clock);
            j.field(s::CORRECTIONS).u64(d.corrections);
            j.field(s::UNAVAILABLE).u64(d.unavailable);
            j.field(s::UNTIMED).u64(d.untimed);
            j.field(s::TIMED).u64(d.timing.timed);
            j.field(s::OWN_EVENTS).u64(d.timing.own_events);
            j.field(s::CALLBACKS).u64(d.timing.callbacks);
            j.field(s::TOGGLES).u64(d.timing.toggles);
            j.field(s::TOGGLE_NS).u64(d.timing.toggle_ns);
            j.field(s::SAMPLED).u64(d.timing.sampled);
            j.field(s::RESIDENT_PEAK).u64(d.resident_peak);
            j.field(s::AHP_PEAK).u64(d.alloc_host_ptr_peak);
            j.field(s::AHP_BUFFERS).u64(d.alloc_host_ptr_buffers);
            j.close();
        }
        j.close_array();
        j.field(s::PINNED_PEAK).u64(end.pinned_peak);
        j.field(s::INCOMPLETE).u64(end.incomplete);
        j.field(s::OWN_CALLS).u64(end.own.calls);
        j.field(s::OWN_MEASURED).open_array();
        j.u64(end.own.measured);
        j.u64(end.own.measured_ns);
        j.close_array();
        j.field(s::WRITER_CPU).u64(end.own.writer_cpu_ns);
        j.field(s::DROPPED).open();
        for (kind, n) in KINDS.iter().zip(dropped) {
            j.key(kind).u64(n);
        }
        j.close();
        j.field(s::EVENTS).u64(events);
        j.field(s::LEFT_OUT).u64(left_out);
        if let Some(report) = report {
            j.field(s::REPORT).raw_json(&report);
        }
        j.close();
        self.end_event();
        self.j.finish();
        self.flush();
        if self.failed.is_none() {
            crate::info!("trace: {} ({events} events)", self.what);
        }
        let lost: u64 = dropped.iter().sum();
        if lost > 0 {
            crate::warn!(
                "the trace writer fell behind: {lost} records were dropped ({}); the count is \
                 in the trace's last event",
                KINDS
                    .iter()
                    .zip(dropped)
                    .filter(|&(_, n)| n > 0)
                    .map(|(k, n)| format!("{n} {k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
}

/// `queue`: `device #D queue #Q`.
fn queue_field<E: Emit>(j: &mut E, q: QueueRef) {
    j.field(s::QUEUE).raw_parts(&[
        Part::Text("device #"),
        Part::Num(q.device as u64),
        Part::Text(" queue #"),
        Part::Num(q.queue as u64),
    ]);
}
