//! The Chrome trace JSON, as Perfetto's importer wants it (../shared/docs/perfetto-json.md):
//! a bare array streamed event by event (a killed program leaves a loadable file), timestamps in µs
//! from the trace start with three decimals, numeric pids and tids, host threads under the process,
//! one synthetic process per device with one track per queue and extra lanes when commands overlap,
//! one `s`/`f` flow per timed command at exactly the two slices' timestamps, class in the names,
//! the whole classification in `args`. Keys come from `schema.rs`.

use super::json::{Json, Part, quoted};
use super::record::*;
use super::schema::{self as s, device_pid, queue_tid};
use super::writer::Output;
use crate::layer::Api;
use crate::model::classification::{Classification, Reason};
use crate::model::flags::{self, MEM_FLAGS};
use crate::timing::clock;
use rustc_hash::FxBuildHasher;
use smallvec::SmallVec;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;

/// Bytes buffered before a write to the file.
const FLUSH_AT: usize = 1 << 18;
/// Commands waiting for the other half of their join; beyond, the join is given up (no arrow).
const JOIN_LIMIT: usize = 1 << 20;

pub struct Chrome<W: Write + Send> {
    out: W,
    j: Json,
    host_pid: u32,
    start_ns: u64,
    /// Device index → named yet.
    devices: HashMap<u32, bool>,
    queues: HashMap<QueueRef, Lanes>,
    /// Host thread → its name, and whether the name is written (only threads with calls are).
    threads: HashMap<u32, (String, bool)>,
    /// Counter → last value written.
    counters: HashMap<Counter, u64>,
    /// Commands whose host slice is written and device slice not yet, and the other way round.
    hosts: HashSet<u64, FxBuildHasher>,
    early: HashMap<u64, Command, FxBuildHasher>,
    reasons: ReasonsCache,
    /// Memory flags → their names (`READ_WRITE|ALLOC_HOST_PTR`).
    flag_names: HashMap<u64, Box<str>, FxBuildHasher>,
    events: u64,
    failed: Option<String>,
    what: String,
}

/// The lanes of one queue. Records arrive out of order (callbacks run on several driver threads),
/// so each lane keeps its recent slices, not just its latest end: a slice goes to the first lane
/// where it overlaps nothing.
#[derive(Default)]
struct Lanes {
    /// Per lane: start → end of its most recent slices.
    slices: Vec<BTreeMap<u64, u64>>,
    label: Option<String>,
    named: usize,
}

/// Slices remembered per lane; older ones are forgotten (records are never that late).
const LANE_MEMORY: usize = 4096;

fn overlaps(lane: &BTreeMap<u64, u64>, start: u64, end: u64) -> bool {
    let before = lane.range(..=start).next_back();
    let after = lane.range(start..).next();
    before.is_some_and(|(&s, &e)| s < end && start < e)
        || after.is_some_and(|(&s, &e)| s < end && start < e)
}

/// Starts the trace: the opening bracket, the start event, the host process's name.
pub struct Start<'a> {
    pub program: &'a str,
    pub command_line: &'a [String],
    pub mode: &'a str,
}

impl<W: Write + Send> Chrome<W> {
    /// `what` names the output in messages (its path).
    pub fn new(out: W, what: String, start: Start) -> Chrome<W> {
        let host_pid = std::process::id();
        let t0 = clock::start();
        let mut c = Chrome {
            out,
            j: Json::default(),
            host_pid,
            start_ns: t0.mono_ns,
            devices: HashMap::new(),
            queues: HashMap::new(),
            threads: HashMap::new(),
            counters: HashMap::new(),
            hosts: HashSet::default(),
            early: HashMap::default(),
            reasons: ReasonsCache::default(),
            flag_names: HashMap::default(),
            events: 0,
            failed: None,
            what,
        };
        c.j.buf.extend_from_slice(b"[\n");
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
        j.field(s::START_TIME)
            .str(&t0.wall.to_rfc3339_opts(chrono::SecondsFormat::Micros, true));
        j.field(s::VERSION).str(env!("CARGO_PKG_VERSION"));
        j.field(s::MODE).str(start.mode);
        j.close();
        c.end_event();
        c
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
    ) -> &mut Json {
        let j = &mut self.j;
        j.open();
        j.qkey(quoted!("name"));
        match name {
            Name::Words(w) => j.words(w),
            Name::Shown(d) => j.display(d),
        };
        j.qkey(quoted!("cat")).word(cat);
        j.qkey(quoted!("ph")).word(ph);
        j.qkey(quoted!("pid")).u64(pid as u64);
        j.qkey(quoted!("tid")).u64(tid as u64);
        j.qkey(quoted!("ts")).us(ts);
        j
    }

    fn end_event(&mut self) {
        self.j.close();
        self.j.buf.extend_from_slice(b",\n");
        self.events += 1;
        if self.j.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.failed.is_none()
            && let Err(e) = self
                .out
                .write_all(&self.j.buf)
                .and_then(|_| self.out.flush())
        {
            crate::warn!(
                "writing the trace {} failed ({e}); the rest of the trace is lost",
                self.what
            );
            self.failed = Some(e.to_string());
        }
        self.j.buf.clear();
    }

    fn meta(&mut self, pid: u32, tid: Option<u32>, what: &'static str, name: &str) {
        let j = self.begin(
            Name::Words(&[what]),
            "__metadata",
            "M",
            pid,
            tid.unwrap_or(0),
            0,
        );
        j.qkey(quoted!("args")).open().qkey(quoted!("name")).str(name).close();
        self.end_event();
    }

    fn sort_index(&mut self, pid: u32, tid: Option<u32>, index: u32) {
        let what = if tid.is_some() {
            "thread_sort_index"
        } else {
            "process_sort_index"
        };
        let j = self.begin(
            Name::Words(&[what]),
            "__metadata",
            "M",
            pid,
            tid.unwrap_or(0),
            0,
        );
        j.qkey(quoted!("args"))
            .open()
            .qkey(quoted!("sort_index"))
            .u64(index as u64)
            .close();
        self.end_event();
    }

    fn record(&mut self, r: Record) {
        match r {
            Record::Call(c) => self.call(c),
            Record::Command(c) => self.command(c),
            Record::Counter { ts, counter, value } => self.counter(ts, counter, value),
            Record::Device(d) => self.device(&d),
            Record::Queue(q) => self.queue(q),
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
    }

    /// Names a host thread the first time it shows a call.
    fn name_thread(&mut self, tid: u32) {
        let entry = self
            .threads
            .entry(tid)
            .or_insert_with(|| (format!("thread {tid}"), false));
        if entry.1 {
            return;
        }
        entry.1 = true;
        let name = entry.0.clone();
        self.meta(self.host_pid, Some(tid), "thread_name", &name);
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
            self.end_event();
            return;
        };
        let cat = if e.id != 0 {
            s::CAT_ENQUEUE
        } else {
            s::CAT_CALL
        };
        if self.reasons.len() > REASONS_CACHED {
            self.reasons.clear();
        }
        let j = &mut self.j;
        j.open();
        j.qkey(quoted!("name"));
        match &e.class {
            Some(cl) => j.words(&[c.api.name(), cl.direction.as_str(), cl.path.as_str()]),
            None => j.word(c.api.name()),
        };
        j.qkey(quoted!("cat")).word(cat);
        j.qkey(quoted!("ph")).word("X");
        j.qkey(quoted!("pid")).u64(self.host_pid as u64);
        j.qkey(quoted!("tid")).u64(c.tid as u64);
        j.qkey(quoted!("ts")).us(ts);
        j.qkey(quoted!("dur")).us(dur);
        j.qkey(quoted!("args")).open();
        j.field(s::API).word(c.api.name());
        j.field(s::COMMAND).u64(e.id);
        j.field(s::QUEUE).raw_parts(&[
            Part::Text("\"device #"),
            Part::Num(e.queue.device as u64),
            Part::Text(" queue #"),
            Part::Num(e.queue.queue as u64),
            Part::Text("\""),
        ]);
        if let Some(k) = &e.kernel {
            j.field(s::KERNEL).str(k);
        }
        if let Some(cl) = &e.class {
            classification(j, cl, &mut self.reasons);
            j.field(s::HOST_GBPS).f3(gbps(cl.bytes, dur));
        }
        if !e.mems.is_empty() {
            j.field(s::MEM_OBJECTS).open_array();
            for m in &e.mems {
                j.open();
                j.qkey(quoted!("id")).u64(m.id);
                j.qkey(quoted!("kind")).word(m.kind_name());
                let decoded = self
                    .flag_names
                    .entry(m.flags)
                    .or_insert_with(|| flags::decode(m.flags, MEM_FLAGS).to_string().into());
                j.qkey(quoted!("flags")).str(decoded);
                j.close();
            }
            j.close_array();
        }
        j.close();
        self.end_event();
        let id = e.id;
        super::buffer::unbox(e);
        if id != 0 {
            match self.early.remove(&id) {
                Some(c) => self.device_slice(c, true),
                None => self.bare(id),
            }
        }
    }

    /// A completed command: drawn once its enqueue's host slice is written, so that the arrow
    /// always has both ends, even in the trace of a program killed with records in flight.
    fn command(&mut self, c: Command) {
        if self.hosts.remove(&c.id) {
            self.device_slice(c, true);
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
        self.hosts.insert(id);
    }

    fn device_slice(&mut self, c: Command, flow: bool) {
        let dpid = device_pid(self.host_pid, c.queue.device);
        self.ensure_device(c.queue.device);
        let lane = self.lane(c.queue, c.start, c.end);
        let tid = queue_tid(c.queue.queue, lane);
        let (ts, dur) = (self.ts(c.start), c.end.saturating_sub(c.start));
        let verb = verb(c.api);
        let shown = CommandName(&c);
        let name = match (&c.kernel, c.class) {
            (None, Some((dir, path))) => Name::Words(&[verb, dir, path]),
            (None, None) => Name::Words(&[verb]),
            (Some(_), _) => Name::Shown(&shown),
        };
        let j = self.begin(name, s::CAT_ENQUEUE, "X", dpid, tid, ts);
        j.qkey(quoted!("dur")).us(dur);
        // The call's own details are on the host slice, one arrow away.
        j.qkey(quoted!("args")).open();
        j.field(s::COMMAND).u64(c.id);
        if let Some((dir, path)) = c.class {
            j.field(s::DIRECTION).word(dir);
            j.field(s::PATH).word(path);
            j.field(s::BYTES).u64(c.bytes);
        }
        if c.time == DeviceTime::Measured {
            j.field(s::QUEUED_TO_SUBMIT)
                .us(c.submit.saturating_sub(c.queued));
            j.field(s::SUBMIT_TO_START)
                .us(c.start.saturating_sub(c.submit));
            j.field(s::ENQUEUE_TO_START)
                .us(c.start.saturating_sub(c.host_begin));
            if c.class.is_some() {
                j.field(s::DEVICE_GBPS).f3(gbps(c.bytes, dur));
            }
        } else {
            j.field(s::DEVICE_TIME).word("unavailable");
        }
        if c.status != 0 {
            j.field(s::STATUS).i64(c.status as i64);
        }
        j.close();
        self.end_event();
        if !flow {
            return;
        }
        // The arrow: from the enqueue slice's start to the device slice's start.
        let host_ts = self.ts(c.host_begin);
        let j = self.begin(
            Name::Words(&[s::FLOW_NAME]),
            s::CAT_ENQUEUE,
            "s",
            self.host_pid,
            c.host_tid,
            host_ts,
        );
        j.qkey(quoted!("id")).u64(c.id);
        self.end_event();
        let j = self.begin(
            Name::Words(&[s::FLOW_NAME]),
            s::CAT_ENQUEUE,
            "f",
            dpid,
            tid,
            ts,
        );
        j.qkey(quoted!("bp")).word("e");
        j.qkey(quoted!("id")).u64(c.id);
        self.end_event();
    }

    /// The first lane of `queue` free from `start` to `end`, made if none is.
    fn lane(&mut self, queue: QueueRef, start: u64, end: u64) -> u32 {
        let lanes = self.queues.entry(queue).or_default();
        let free = lanes.slices.iter().position(|l| !overlaps(l, start, end));
        let lane = match free {
            Some(i) => i,
            None if lanes.slices.len() < s::LANES as usize => {
                lanes.slices.push(BTreeMap::new());
                lanes.slices.len() - 1
            }
            // Out of lanes (never seen): the last one, overlapping.
            None => lanes.slices.len() - 1,
        };
        let slices = &mut lanes.slices[lane];
        slices.insert(start, end.max(slices.get(&start).copied().unwrap_or(0)));
        if slices.len() > LANE_MEMORY {
            slices.pop_first();
        }
        self.name_lanes(queue);
        lane as u32
    }

    fn name_lanes(&mut self, queue: QueueRef) {
        let Some(lanes) = self.queues.get_mut(&queue) else {
            return;
        };
        let Some(label) = lanes.label.clone() else {
            return;
        };
        let (from, to) = (lanes.named, lanes.slices.len());
        lanes.named = to;
        let dpid = device_pid(self.host_pid, queue.device);
        for lane in from..to {
            let tid = queue_tid(queue.queue, lane as u32);
            let name = if lane == 0 {
                label.clone()
            } else {
                format!("{label} · lane {}", lane + 1)
            };
            self.meta(dpid, Some(tid), "thread_name", &name);
            self.sort_index(dpid, Some(tid), tid);
        }
    }

    fn queue(&mut self, q: QueueTrack) {
        let label = format!(
            "queue {} · {} · {}",
            q.queue.queue,
            if q.out_of_order {
                "out-of-order"
            } else {
                "in-order"
            },
            q.timing.as_str()
        );
        self.ensure_device(q.queue.device);
        self.queues.entry(q.queue).or_default().label = Some(label);
        // A queue's lane 0 exists from the start, so the queue shows even before its first command.
        let lanes = self.queues.entry(q.queue).or_default();
        if lanes.slices.is_empty() {
            lanes.slices.push(BTreeMap::new());
        }
        self.name_lanes(q.queue);
    }

    fn ensure_device(&mut self, index: u32) {
        self.devices.entry(index).or_insert(false);
    }

    fn device(&mut self, d: &DeviceTrack) {
        if self.devices.get(&d.index) == Some(&true) {
            return;
        }
        self.devices.insert(d.index, true);
        let dpid = device_pid(self.host_pid, d.index);
        self.meta(dpid, None, "process_name", &format!("OpenCL {}", d.name));
        self.sort_index(dpid, None, d.index);
        let j = self.begin(
            Name::Words(&[s::DEVICE_INFO]),
            s::CAT_CLXFER,
            "i",
            dpid,
            0,
            0,
        );
        j.qkey(quoted!("s")).word("p");
        j.qkey(quoted!("args")).open();
        j.field(s::DEVICE_INDEX).u64(d.index as u64);
        j.field(s::NAME).str(&d.name);
        j.field(s::VENDOR).str(&d.vendor);
        j.field(s::DEVICE_TYPE).word(d.kind);
        j.field(s::RULES).word(d.rules);
        j.field(s::GLOBAL_MEM).u64(d.global_mem);
        j.close();
        self.end_event();
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
        j.qkey(quoted!("args"))
            .open()
            .field(s::BYTES)
            .u64(value)
            .close();
        self.end_event();
    }

    /// Names what never got its name (a device or queue whose record was dropped or never came).
    fn name_the_rest(&mut self) {
        let mut unnamed: Vec<u32> = self
            .devices
            .iter()
            .filter(|&(_, &named)| !named)
            .map(|(&i, _)| i)
            .collect();
        unnamed.sort();
        for index in unnamed {
            let dpid = device_pid(self.host_pid, index);
            self.meta(
                dpid,
                None,
                "process_name",
                &format!("OpenCL device #{index}"),
            );
            self.devices.insert(index, true);
        }
        let mut queues: Vec<QueueRef> = self.queues.keys().copied().collect();
        queues.sort_by_key(|q| (q.device, q.queue));
        for q in queues {
            if let Some(lanes) = self.queues.get_mut(&q) {
                lanes
                    .label
                    .get_or_insert_with(|| format!("queue {}", q.queue));
            }
            self.name_lanes(q);
        }
    }
}

impl<W: Write + Send> Output for Chrome<W> {
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
        let (pid, ts) = (self.host_pid, self.ts(clock::now_ns()));
        let events = self.events + 1;
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
            j.close();
        }
        j.close_array();
        j.field(s::INCOMPLETE).u64(end.incomplete);
        j.field(s::DROPPED).open();
        for (kind, n) in KINDS.iter().zip(dropped) {
            j.key(kind).u64(n);
        }
        j.close();
        j.field(s::EVENTS).u64(events);
        j.close();
        self.j.close();
        self.j.buf.extend_from_slice(b"\n]\n");
        self.flush();
        if self.failed.is_none() {
            crate::info!("trace: {} ({events} events)", self.what);
        }
    }
}

/// Rendered reasons, by the reasons: a program repeats the same few classifications.
type ReasonsCache = HashMap<SmallVec<[Reason; 4]>, (Box<[u8]>, Box<[u8]>), FxBuildHasher>;
const REASONS_CACHED: usize = 4096;

/// The classification's fields (the host slice's args).
fn classification(j: &mut Json, c: &Classification, cache: &mut ReasonsCache) {
    j.field(s::DIRECTION).word(c.direction.as_str());
    j.field(s::PATH).word(c.path.as_str());
    j.field(s::BYTES).u64(c.bytes);
    j.field(s::BLOCKING).bool(c.blocking);
    j.field(s::RULES).word(c.rules);
    if !cache.contains_key(&c.reasons) {
        let mut r = Json::default();
        r.open_array();
        for reason in &c.reasons {
            r.display(&format_args!("[{}] {reason}", reason.rule));
        }
        r.close_array();
        let mut ids = Json::default();
        ids.open_array();
        for reason in &c.reasons {
            ids.word(reason.rule);
        }
        ids.close_array();
        cache.insert(c.reasons.clone(), (r.buf.into(), ids.buf.into()));
    }
    let Some((reasons, ids)) = cache.get(&c.reasons) else {
        return;
    };
    j.field(s::REASONS).raw_bytes(reasons);
    j.field(s::RULE_IDS).raw_bytes(ids);
    if let Some(h) = &c.host {
        j.field(s::HOST_PTR).hex(h.ptr as u64);
        j.field(s::HOST_MEMORY).word(h.kind);
        j.field(s::HOST_PINNED).bool(h.pinned);
        // Pageable memory has no provenance beyond what the reasons say.
        if h.range.is_some() {
            j.field(s::PROVENANCE).str(&h.provenance());
        }
    }
    if let Some(span) = c.host_span {
        j.field(s::HOST_SPAN).u64(span);
    }
    if let Some(a) = c.alignment {
        j.field(s::PTR_MOD_4096).u64(a.ptr_mod_4096);
        j.field(s::PTR_MOD_64).u64(a.ptr_mod_64);
        j.field(s::SIZE_MOD_64).u64(a.size_mod_64);
    }
    if let Some(code) = c.error {
        j.field(s::ERROR).i64(code as i64);
    }
}

/// GB/s (10^9 bytes per second); 0 for no time.
fn gbps(bytes: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 / ns as f64
    }
}

/// The verb of an enqueue, for device slice names (`Write`, `Map`, `Migrate`, `Kernel`, …).
pub fn verb(api: Api) -> &'static str {
    let name = api.name();
    let bare = name.strip_prefix("clEnqueue").unwrap_or(name);
    let starts = |p: &str| bare.starts_with(p);
    if starts("Write") {
        "Write"
    } else if starts("Read") {
        "Read"
    } else if starts("Copy") {
        "Copy"
    } else if starts("Fill") || starts("SVMMemFill") || starts("MemFill") || starts("Memset") {
        "Fill"
    } else if starts("Map") || starts("SVMMap") {
        "Map"
    } else if starts("Unmap") || starts("SVMUnmap") {
        "Unmap"
    } else if starts("Migrate") || starts("SVMMigrate") {
        "Migrate"
    } else if starts("SVMMemcpy") || starts("Memcpy") {
        "Memcpy"
    } else if starts("NDRange") || starts("Task") || starts("NativeKernel") {
        "Kernel"
    } else {
        bare
    }
}

/// An event's name: clxfer's own words joined by spaces, or text to escape.
enum Name<'a> {
    Words(&'a [&'static str]),
    Shown(&'a dyn std::fmt::Display),
}

/// `Write H2D staged`, `Kernel vadd`, `Marker`.
struct CommandName<'a>(&'a Command);

impl std::fmt::Display for CommandName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let c = self.0;
        match &c.kernel {
            Some(k) => write!(f, "Kernel {k}")?,
            None => f.write_str(verb(c.api))?,
        }
        if let Some((dir, path)) = c.class {
            write!(f, " {dir} {path}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{check::check, read::parse};

    fn command(id: u64, queue: u32, host: u64, start: u64, end: u64) -> Record {
        let base = clock::start().mono_ns;
        Record::Command(Command {
            id,
            api: Api::clEnqueueWriteBuffer,
            queue: QueueRef { device: 1, queue },
            host_tid: 7,
            host_begin: base + host - 500,
            host_end: base + host - 100,
            queued: base + host - 400,
            submit: base + host - 300,
            start: base + start,
            end: base + end,
            time: DeviceTime::Measured,
            status: 0,
            class: Some(("H2D", "staged")),
            bytes: 4096,
            blocking: false,
            kernel: None,
        })
    }

    fn host(id: u64, start: u64) -> Record {
        let base = clock::start().mono_ns;
        Record::Call(Call {
            api: Api::clEnqueueWriteBuffer,
            tid: 7,
            begin: base + start - 500,
            end: base + start - 100,
            command: Some(Box::new(Enqueued {
                id,
                queue: QueueRef {
                    device: 1,
                    queue: 1,
                },
                class: None,
                mems: Default::default(),
                kernel: None,
            })),
        })
    }

    /// Overlapping commands of an out-of-order queue, arriving out of order: each goes to the first
    /// lane where it overlaps nothing, and the trace passes every check.
    #[test]
    fn overlapping_commands_get_lanes_and_late_arrivals_fit_back() {
        let mut out = Vec::new();
        let start = Start {
            program: "t",
            command_line: &[],
            mode: "trace",
        };
        let mut c = Chrome::new(&mut out, "test".into(), start);
        let spans = [
            (10_000, 20_000),
            (15_000, 25_000),
            (30_000, 40_000),
            (1_000, 9_000),
            (16_000, 18_000),
        ];
        // A command whose enqueue record never comes (dropped): its slice, with no arrow.
        let mut records = vec![
            command(99, 1, 50_000, 50_000, 51_000),
            Record::Queue(QueueTrack {
                queue: QueueRef {
                    device: 1,
                    queue: 1,
                },
                out_of_order: true,
                timing: Timing::Forced,
            }),
        ];
        for (i, &(s, e)) in spans.iter().enumerate() {
            // Host calls 1 µs apart, each before its command.
            let h = 1_000 * (i as u64 + 1);
            // Odd ones complete before their enqueue's record arrives (another thread's buffer).
            let (host, command) = (
                host(i as u64 + 1, h),
                command(i as u64 + 1, 1, h, s.max(h), e),
            );
            if i % 2 == 1 {
                records.extend([command, host]);
            } else {
                records.extend([host, command]);
            }
        }
        c.write(&mut records);
        c.finish(&End::default(), [0; KINDS.len()]);
        drop(c);
        let trace = parse(&out).unwrap();
        assert!(trace.closed);
        let report = check(&trace);
        assert!(report.ok(), "{:?}", report.violations);
        let lane_of = |id: u64| {
            trace
                .events
                .iter()
                .find(|e| {
                    e["ph"] == "X"
                        && e["args"]["command"] == id
                        && e["cat"] == "enqueue"
                        && e["pid"] != 0
                        && e["tid"] != 7
                })
                .map(|e| e["tid"].as_u64().unwrap() - s::LANES as u64)
                .unwrap()
        };
        // 1 on lane 0; 2 overlaps it: lane 1; 3 fits lane 0; 4 (earlier, late) fits lane 0;
        // 5 sits inside 1 and 2: lane 2.
        assert_eq!([1, 2, 3, 4, 5].map(lane_of), [0, 1, 0, 0, 2]);
        assert_eq!(lane_of(99), 0);
        assert_eq!(
            report.flows, 5,
            "one arrow per command whose enqueue was recorded"
        );
        let names: Vec<&str> = trace
            .events
            .iter()
            .filter(|e| e["name"] == "thread_name" && e["pid"] != 0)
            .filter_map(|e| e["args"]["name"].as_str())
            .collect();
        assert!(
            names.contains(&"queue 1 · out-of-order · profiling forced · lane 3"),
            "{names:?}"
        );
    }
}
