//! Writing Perfetto's protobuf trace: the events of clxfer's trace (docs/TRACE.md) as
//! `TrackEvent` packets on one sequence, with event names, categories, annotation names and short
//! string values interned, a track descriptor for each process, thread, queue lane and counter,
//! arrows by flow ids, and the args as debug annotations.
//!
//! A JSON event maps onto packets one for one (what [`crate::perfetto::decode`] maps back): a
//! complete slice (`X`) is a begin and an end; an instant (`i`) an instant on its thread's,
//! process's or the global track; an arrow's end (`s`, `f`) an instant carrying the arrow's flow
//! id where the JSON binds it (the start of a slice, inside which it sits); a counter sample (`C`)
//! a counter event on a counter track; the metadata (`M`) the descriptors' names and order.

use super::fields::{
    self as f, annotation as a, event as ev, interned as i, packet as p, track as t,
};
use super::wire;
use rustc_hash::FxHashMap;

/// Entries an interning table holds at most; past it, texts are written in full.
const INTERNED: usize = 1 << 16;
/// Strings longer than this are written in full (reasons, paths): interning pays for words.
const INTERN_LEN: usize = 40;

/// Where an instant sits: its thread's track, its process's, or the trace's global track.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Thread,
    Process,
    Global,
}

/// One interning table: text → iid, and the `InternedData` field its new entries go to.
#[derive(Default)]
struct Table {
    ids: FxHashMap<Box<str>, u64>,
    /// clxfer's own words (schema keys, categories, vocabulary) by address: one lookup of two
    /// words instead of hashing the text, at every annotation.
    statics: FxHashMap<(usize, usize), u64>,
}

impl Table {
    fn iid_static(&mut self, text: &'static str, field: u32, new: &mut Vec<u8>) -> Option<u64> {
        let at = (text.as_ptr() as usize, text.len());
        if let Some(&id) = self.statics.get(&at) {
            return Some(id);
        }
        let id = self.iid(text, field, new)?;
        self.statics.insert(at, id);
        Some(id)
    }

    /// The iid of `text`, adding it to `new` (this packet's interned data) the first time;
    /// `None` when the table is full.
    fn iid(&mut self, text: &str, field: u32, new: &mut Vec<u8>) -> Option<u64> {
        if let Some(&id) = self.ids.get(text) {
            return Some(id);
        }
        if self.ids.len() >= INTERNED {
            return None;
        }
        let id = self.ids.len() as u64 + 1;
        self.ids.insert(text.into(), id);
        let at = wire::open(new, field);
        wire::uint(new, i::IID, id);
        wire::bytes(new, i::TEXT, text.as_bytes());
        wire::close(new, at);
        Some(id)
    }
}

/// The pending name of the next annotation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    None,
    Static(&'static str),
    Text,
}

/// What the annotations being written sit in.
#[derive(Clone, Copy)]
enum In {
    /// The event's own (`TrackEvent.debug_annotations`).
    Event,
    /// A dictionary's entries, opened at this offset.
    Dict(usize),
    /// An array's values, opened at this offset.
    Array(usize),
}

pub struct Encoder {
    /// Whole packets, each framed as `Trace.packet`, ready for the file.
    pub out: Vec<u8>,
    seq: u64,
    names: Table,
    categories: Table,
    keys: Table,
    strings: Table,
    /// This packet's new interned entries.
    interned: Vec<u8>,
    /// This event's annotations, and where each open container starts.
    args: Vec<u8>,
    open: Vec<In>,
    /// The name of the next annotation: one of clxfer's words, or text in `key_text`.
    key: Key,
    key_text: String,
    processes: FxHashMap<u32, u64>,
    threads: FxHashMap<(u32, u32), u64>,
    counters: FxHashMap<(u32, Box<str>), u64>,
    global: u64,
    next_uuid: u64,
    packet: Vec<u8>,
    /// Fragments only: nothing interned.
    inline: bool,
}

impl Encoder {
    /// An encoder of annotations only, with every name and string written in full: for
    /// fragments rendered apart and copied into an event ([`Encoder::raw`]), whose interned ids
    /// would be another table's.
    pub fn fragments() -> Encoder {
        let mut e = Encoder::new(1, 0);
        e.out.clear();
        e.inline = true;
        e
    }

    /// The annotations written since the last event (a fragment's).
    pub fn args(&self) -> &[u8] {
        &self.args
    }

    pub fn clear_args(&mut self) {
        self.args.clear();
        self.open.clear();
        self.key = Key::None;
    }

    /// Copies a fragment ([`Encoder::fragments`]): after a pending key, its one annotation's
    /// value, named by the key; otherwise its annotations as they are.
    pub fn raw(&mut self, fragment: &[u8]) {
        if self.key == Key::None {
            self.args.extend_from_slice(fragment);
            return;
        }
        let at = self.annotation();
        if let Some(Ok((_, value))) = wire::fields(fragment).next() {
            self.args.extend_from_slice(value.bytes());
        }
        wire::close(&mut self.args, at);
    }

    /// A new trace whose clock 0 is `start_mono_ns` on `CLOCK_MONOTONIC`, on sequence `seq`.
    pub fn new(seq: u32, start_mono_ns: u64) -> Encoder {
        let mut e = Encoder {
            out: Vec::new(),
            seq: u64::from(seq.max(1)),
            names: Table::default(),
            categories: Table::default(),
            keys: Table::default(),
            strings: Table::default(),
            interned: Vec::new(),
            args: Vec::new(),
            open: Vec::new(),
            key: Key::None,
            key_text: String::new(),
            processes: FxHashMap::default(),
            threads: FxHashMap::default(),
            counters: FxHashMap::default(),
            global: 0,
            next_uuid: 0,
            packet: Vec::new(),
            inline: false,
        };
        // The first packet: the sequence starts afresh, its timestamps are on clxfer's clock
        // (nanoseconds from its start), which maps onto CLOCK_MONOTONIC, the trace's clock.
        let b = &mut e.packet;
        wire::uint(b, p::SEQUENCE_ID, e.seq);
        wire::uint(b, p::FIRST_ON_SEQUENCE, 1);
        wire::uint(b, p::SEQUENCE_FLAGS, p::INCREMENTAL_STATE_CLEARED);
        let snap = wire::open(b, p::CLOCK_SNAPSHOT);
        for (id, ts) in [(f::clock::CLXFER, 0), (f::clock::MONOTONIC, start_mono_ns)] {
            let c = wire::open(b, f::clock::SNAPSHOT_CLOCKS);
            wire::uint(b, f::clock::CLOCK_ID, id);
            wire::uint(b, f::clock::CLOCK_TIMESTAMP, ts);
            wire::close(b, c);
        }
        wire::uint(b, f::clock::SNAPSHOT_PRIMARY, f::clock::MONOTONIC);
        wire::close(b, snap);
        let d = wire::open(b, p::DEFAULTS);
        wire::uint(b, f::clock::DEFAULTS_CLOCK_ID, f::clock::CLXFER);
        wire::close(b, d);
        e.emit();
        e
    }

    /// Frames the packet built so far into [`Encoder::out`].
    fn emit(&mut self) {
        wire::bytes(&mut self.out, f::TRACE_PACKET, &self.packet);
        self.packet.clear();
    }

    fn uuid(&mut self) -> u64 {
        self.next_uuid += 1;
        self.next_uuid
    }

    /// A track descriptor packet: `uuid`, what it describes (written by `body`).
    fn describe(&mut self, uuid: u64, body: impl FnOnce(&mut Vec<u8>)) {
        let b = &mut self.packet;
        wire::uint(b, p::SEQUENCE_ID, self.seq);
        let at = wire::open(b, p::TRACK_DESCRIPTOR);
        wire::uint(b, t::UUID, uuid);
        body(b);
        wire::close(b, at);
        self.emit();
    }

    fn process(&mut self, pid: u32, name: Option<&str>, rank: Option<i64>) -> u64 {
        let known = self.processes.get(&pid).copied();
        let uuid = match known {
            Some(u) if name.is_none() && rank.is_none() => return u,
            Some(u) => u,
            None => self.uuid(),
        };
        self.processes.insert(pid, uuid);
        self.describe(uuid, |b| {
            let at = wire::open(b, t::PROCESS);
            // `int32`: a device's pid (2^31 and up) is a negative one, sign-extended.
            wire::int(b, t::PROCESS_PID, i64::from(pid as i32));
            if let Some(n) = name {
                wire::bytes(b, t::PROCESS_NAME, n.as_bytes());
            }
            wire::close(b, at);
            if let Some(r) = rank {
                wire::int(b, t::ORDER_RANK, r);
            }
        });
        uuid
    }

    fn thread(&mut self, pid: u32, tid: u32, name: Option<&str>, rank: Option<i64>) -> u64 {
        let known = self.threads.get(&(pid, tid)).copied();
        let uuid = match known {
            Some(u) if name.is_none() && rank.is_none() => return u,
            Some(u) => u,
            None => self.uuid(),
        };
        self.threads.insert((pid, tid), uuid);
        self.describe(uuid, |b| {
            let at = wire::open(b, t::THREAD);
            wire::int(b, t::THREAD_PID, i64::from(pid as i32));
            wire::uint(b, t::THREAD_TID, u64::from(tid));
            if let Some(n) = name {
                wire::bytes(b, t::THREAD_NAME, n.as_bytes());
            }
            wire::close(b, at);
            if let Some(r) = rank {
                wire::int(b, t::ORDER_RANK, r);
            }
        });
        uuid
    }

    fn global_track(&mut self) -> u64 {
        if self.global == 0 {
            self.global = self.uuid();
            let uuid = self.global;
            self.describe(uuid, |b| wire::bytes(b, t::NAME, b"clxfer"));
        }
        self.global
    }

    fn counter_track(&mut self, pid: u32, name: &str, key: &str) -> u64 {
        if let Some(&u) = self.counters.get(&(pid, name.into())) {
            return u;
        }
        let parent = self.process(pid, None, None);
        let uuid = self.uuid();
        self.counters.insert((pid, name.into()), uuid);
        self.describe(uuid, |b| {
            wire::bytes(b, t::NAME, name.as_bytes());
            wire::uint(b, t::PARENT, parent);
            let at = wire::open(b, t::COUNTER);
            if key == "bytes" {
                wire::uint(b, t::COUNTER_UNIT, t::UNIT_SIZE_BYTES);
            }
            wire::bytes(b, t::COUNTER_UNIT_NAME, key.as_bytes());
            wire::close(b, at);
        });
        uuid
    }

    /// A process's name and order (`process_name`, `process_sort_index`).
    pub fn name_process(&mut self, pid: u32, name: Option<&str>, rank: Option<i64>) {
        self.process(pid, name, rank);
    }

    /// A thread's name and order (`thread_name`, `thread_sort_index`).
    pub fn name_thread(&mut self, pid: u32, tid: u32, name: Option<&str>, rank: Option<i64>) {
        self.thread(pid, tid, name, rank);
    }

    // The annotations of the next event: a key, then its value (or a container, closed after
    // its members).

    pub fn key(&mut self, key: &str) -> &mut Self {
        self.key_text.clear();
        self.key_text.push_str(key);
        self.key = Key::Text;
        self
    }

    /// [`Encoder::key`] for one of clxfer's own words.
    pub fn key_static(&mut self, key: &'static str) -> &mut Self {
        self.key = Key::Static(key);
        self
    }

    /// Opens one annotation in what is open, named by the pending key.
    fn annotation(&mut self) -> usize {
        let within = self.open.last().copied().unwrap_or(In::Event);
        let field = match within {
            In::Event => ev::DEBUG_ANNOTATIONS,
            In::Dict(_) => a::DICT,
            In::Array(_) => a::ARRAY,
        };
        let key = std::mem::replace(&mut self.key, Key::None);
        let at = wire::open(&mut self.args, field);
        if matches!(within, In::Array(_)) || key == Key::None {
            return at;
        }
        let text = match key {
            Key::Static(k) => k,
            _ => self.key_text.as_str(),
        };
        let iid = match (within, key) {
            (In::Event, Key::Static(k)) if !self.inline => {
                self.keys
                    .iid_static(k, i::ANNOTATION_NAMES, &mut self.interned)
            }
            (In::Event, _) if !self.inline => {
                self.keys.iid(text, i::ANNOTATION_NAMES, &mut self.interned)
            }
            _ => None,
        };
        match iid {
            Some(id) => wire::uint(&mut self.args, a::NAME_IID, id),
            None => wire::bytes(&mut self.args, a::NAME, text.as_bytes()),
        }
        at
    }

    pub fn u64(&mut self, v: u64) -> &mut Self {
        let at = self.annotation();
        wire::uint(&mut self.args, a::UINT, v);
        wire::close(&mut self.args, at);
        self
    }

    pub fn i64(&mut self, v: i64) -> &mut Self {
        let at = self.annotation();
        wire::int(&mut self.args, a::INT, v);
        wire::close(&mut self.args, at);
        self
    }

    pub fn f64(&mut self, v: f64) -> &mut Self {
        let at = self.annotation();
        wire::double(&mut self.args, a::DOUBLE, v);
        wire::close(&mut self.args, at);
        self
    }

    pub fn bool(&mut self, v: bool) -> &mut Self {
        let at = self.annotation();
        wire::uint(&mut self.args, a::BOOL, u64::from(v));
        wire::close(&mut self.args, at);
        self
    }

    /// A pointer or handle (the JSON's hex strings).
    pub fn pointer(&mut self, v: u64) -> &mut Self {
        let at = self.annotation();
        wire::uint(&mut self.args, a::POINTER, v);
        wire::close(&mut self.args, at);
        self
    }

    /// [`Encoder::str`] for one of clxfer's own words.
    pub fn str_static(&mut self, v: &'static str) -> &mut Self {
        let id = (!self.inline)
            .then(|| self.strings.iid_static(v, i::STRINGS, &mut self.interned))
            .flatten();
        self.string(v, id)
    }

    pub fn str(&mut self, v: &str) -> &mut Self {
        let id = (v.len() <= INTERN_LEN && !self.inline)
            .then(|| self.strings.iid(v, i::STRINGS, &mut self.interned))
            .flatten();
        self.string(v, id)
    }

    /// A string annotation: by its interned id, or in full.
    fn string(&mut self, v: &str, id: Option<u64>) -> &mut Self {
        let at = self.annotation();
        match id {
            Some(id) => wire::uint(&mut self.args, a::STRING_IID, id),
            None => wire::bytes(&mut self.args, a::STRING, v.as_bytes()),
        }
        wire::close(&mut self.args, at);
        self
    }

    /// A whole JSON value as text (the run's report: one annotation, not thousands).
    pub fn json(&mut self, text: &str) -> &mut Self {
        let at = self.annotation();
        wire::bytes(&mut self.args, a::JSON, text.as_bytes());
        wire::close(&mut self.args, at);
        self
    }

    pub fn open_dict(&mut self) -> &mut Self {
        let at = self.annotation();
        self.open.push(In::Dict(at));
        self
    }

    pub fn open_array(&mut self) -> &mut Self {
        let at = self.annotation();
        self.open.push(In::Array(at));
        self
    }

    pub fn close(&mut self) -> &mut Self {
        if let Some(In::Dict(at) | In::Array(at)) = self.open.pop() {
            wire::close(&mut self.args, at);
        }
        self
    }

    // The events, each taking the annotations written since the last.

    /// A `TrackEvent` packet of `kind` at `ts_ns` on `track`, named `name` in `cat` (both
    /// optional: an end needs neither), with the annotations written since the last event and
    /// what `more` adds.
    fn track_event(
        &mut self,
        kind: u64,
        track: u64,
        ts_ns: u64,
        name_cat: Option<(&str, &str)>,
        more: impl FnOnce(&mut Vec<u8>),
    ) {
        let ids = name_cat.map(|(name, cat)| {
            let n = self.names.iid(name, i::NAMES, &mut self.interned);
            let c = self.categories.iid(cat, i::CATEGORIES, &mut self.interned);
            (n, c, name)
        });
        self.open.clear();
        // Straight into the file's bytes: the packet's length goes in front once it is written.
        let b = &mut self.out;
        let packet = wire::open(b, f::TRACE_PACKET);
        wire::uint(b, p::TIMESTAMP, ts_ns);
        wire::uint(b, p::SEQUENCE_ID, self.seq);
        if !self.interned.is_empty() {
            wire::bytes(b, p::INTERNED_DATA, &self.interned);
            self.interned.clear();
        }
        // What refers to interned names says so; a slice's end refers to none.
        if name_cat.is_some() {
            wire::uint(b, p::SEQUENCE_FLAGS, p::NEEDS_INCREMENTAL_STATE);
        }
        let at = wire::open(b, p::TRACK_EVENT);
        wire::uint(b, ev::TYPE, kind);
        wire::uint(b, ev::TRACK_UUID, track);
        if let Some((name, cat, text)) = ids {
            match name {
                Some(id) => wire::uint(b, ev::NAME_IID, id),
                None => wire::bytes(b, ev::NAME, text.as_bytes()),
            }
            if let Some(c) = cat {
                wire::uint(b, ev::CATEGORY_IIDS, c);
            }
        }
        more(b);
        b.extend_from_slice(&self.args);
        self.args.clear();
        wire::close(b, at);
        wire::close(b, packet);
    }

    /// A complete slice (`X`): a begin with the annotations, an end `dur_ns` later.
    pub fn slice(
        &mut self,
        name: &str,
        cat: &str,
        (pid, tid): (u32, u32),
        ts_ns: u64,
        dur_ns: u64,
    ) {
        let track = self.thread(pid, tid, None, None);
        self.track_event(ev::SLICE_BEGIN, track, ts_ns, Some((name, cat)), |_| {});
        self.track_event(
            ev::SLICE_END,
            track,
            ts_ns.saturating_add(dur_ns),
            None,
            |_| {},
        );
    }

    pub fn instant(
        &mut self,
        name: &str,
        cat: &str,
        scope: Scope,
        (pid, tid): (u32, u32),
        ts_ns: u64,
    ) {
        let track = match scope {
            Scope::Thread => self.thread(pid, tid, None, None),
            Scope::Process => self.process(pid, None, None),
            Scope::Global => self.global_track(),
        };
        self.track_event(ev::INSTANT, track, ts_ns, Some((name, cat)), |_| {});
    }

    /// One end of an arrow (`s`: `start`, or `f`), flow `id` across the trace.
    pub fn flow(
        &mut self,
        name: &str,
        cat: &str,
        start: bool,
        id: u64,
        (pid, tid): (u32, u32),
        ts_ns: u64,
    ) {
        let track = self.thread(pid, tid, None, None);
        let field = if start {
            ev::FLOW_IDS
        } else {
            ev::TERMINATING_FLOW_IDS
        };
        self.track_event(ev::INSTANT, track, ts_ns, Some((name, cat)), |b| {
            wire::key(b, field, f::FIXED64);
            b.extend_from_slice(&id.to_le_bytes());
        });
    }

    /// A counter sample (`C`) of `name`, whose one `args` key is `key`.
    pub fn counter(&mut self, name: &str, cat: &str, key: &str, pid: u32, ts_ns: u64, value: i64) {
        let track = self.counter_track(pid, name, key);
        self.args.clear();
        self.track_event(ev::COUNTER, track, ts_ns, Some((name, cat)), |b| {
            wire::int(b, ev::COUNTER_VALUE, value);
        });
    }
}

/// Nanoseconds of a JSON `ts` or `dur` (microseconds), as Perfetto rounds them.
fn ns(us: &serde_json::Value) -> u64 {
    (us.as_f64().unwrap_or(0.0) * 1000.0).round().max(0.0) as u64
}

/// A JSON hex string (a pointer or handle, as clxfer writes them): its value.
fn hex(s: &str) -> Option<u64> {
    let digits = s.strip_prefix("0x")?;
    let plain = !digits.is_empty() && digits.len() <= 16 && !digits.starts_with('0');
    let lower = digits
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    (plain && lower)
        .then(|| u64::from_str_radix(digits, 16).ok())
        .flatten()
}

/// One value of `args`, named by the pending key.
fn arg(enc: &mut Encoder, key: Option<&str>, v: &serde_json::Value) {
    use serde_json::Value as V;
    if let Some(k) = key {
        enc.key(k);
    }
    match v {
        V::Bool(b) => {
            enc.bool(*b);
        }
        V::Number(n) => {
            match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => enc.u64(u),
                (None, Some(i)) => enc.i64(i),
                _ => enc.f64(n.as_f64().unwrap_or(0.0)),
            };
        }
        V::String(s) => {
            match hex(s) {
                Some(p) => enc.pointer(p),
                None => enc.str(s),
            };
        }
        // The run's report: one annotation of JSON text.
        V::Object(_) if key == Some(crate::vocab::schema::REPORT.name) => {
            enc.json(&v.to_string());
        }
        V::Object(m) => {
            enc.open_dict();
            for (k, x) in m {
                arg(enc, Some(k), x);
            }
            enc.close();
        }
        V::Array(xs) => {
            enc.open_array();
            for x in xs {
                arg(enc, None, x);
            }
            enc.close();
        }
        V::Null => {
            enc.str("");
        }
    }
}

/// One JSON event of clxfer's trace, as packets (the module's opening comment says how each
/// kind maps).
pub fn event(enc: &mut Encoder, e: &serde_json::Value) {
    use super::fields::{RACE_FLOW_BIT, WAIT_FLOW_BIT};
    let s = |k: &str| e.get(k).and_then(serde_json::Value::as_str).unwrap_or("");
    let n = |k: &str| e.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0) as u32;
    let (name, cat, at) = (s("name"), s("cat"), (n("pid"), n("tid")));
    let ts = e.get("ts").map_or(0, ns);
    let args = e.get("args").and_then(serde_json::Value::as_object);
    let annotate = |enc: &mut Encoder| {
        for (k, v) in args.into_iter().flatten() {
            arg(enc, Some(k), v);
        }
    };
    match s("ph") {
        "X" => {
            annotate(enc);
            enc.slice(name, cat, at, ts, e.get("dur").map_or(0, ns));
        }
        "i" | "I" => {
            annotate(enc);
            let scope = match s("s") {
                "g" => Scope::Global,
                "p" => Scope::Process,
                _ => Scope::Thread,
            };
            enc.instant(name, cat, scope, at, ts);
        }
        ph @ ("s" | "f") => {
            let id = e.get("id").and_then(serde_json::Value::as_u64).unwrap_or(0);
            let id = match name {
                crate::vocab::schema::WAIT_FLOW_NAME => id | WAIT_FLOW_BIT,
                crate::vocab::schema::RACE_FLOW_NAME => id | RACE_FLOW_BIT,
                _ => id,
            };
            enc.flow(name, cat, ph == "s", id, at, ts);
        }
        "C" => {
            if let Some((k, v)) = args.and_then(|a| a.iter().next()) {
                let value = v.as_i64().unwrap_or(v.as_f64().unwrap_or(0.0) as i64);
                enc.counter(name, cat, k, at.0, ts, value);
            }
        }
        "M" => {
            let a = |k: &str| args.and_then(|a| a.get(k));
            let text = a("name").and_then(serde_json::Value::as_str);
            let rank = a("sort_index").and_then(serde_json::Value::as_i64);
            match name {
                "process_name" | "process_sort_index" => enc.name_process(at.0, text, rank),
                "thread_name" | "thread_sort_index" => enc.name_thread(at.0, at.1, text, rank),
                _ => {}
            }
        }
        _ => {}
    }
}
