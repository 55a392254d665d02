//! Reading Perfetto's protobuf trace back as the events it stands for ([`super::encode`] maps
//! them one way, this the other), so that every reader of traces (`check`, `report`, `merge`,
//! `view`, the CSV) reads both formats. Interned names, track descriptors and flow ids
//! are resolved per sequence as Perfetto resolves them; a file cut short (a killed program) is
//! read up to its last whole packet.

use super::clocks::{self, Clocks, Stamp};
use super::fields::{
    self as f, annotation as a, event as ev, interned as i, packet as p, track as t,
};
use super::wire::{self, Malformed, Value as W};
use crate::event::{self, Event, FlowId, Kind, Meta, Scope};
use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

/// A track as its descriptor says.
#[derive(Clone, Debug, Default)]
struct Track {
    pid: u32,
    tid: Option<u32>,
    /// A counter's name and its `args` key.
    counter: Option<(String, String)>,
    global: bool,
}

/// One sequence's interning tables (the index of a trace keeps each sequence's, to read a
/// packet's args again: `crate::trace::index`).
#[derive(Default)]
pub struct Interned {
    names: FxHashMap<u64, String>,
    categories: FxHashMap<u64, String>,
    keys: FxHashMap<u64, String>,
    strings: FxHashMap<u64, String>,
}

/// What a file held, beyond its events.
#[derive(Debug, Default, Clone, Copy)]
pub struct Shape {
    pub packets: usize,
    /// The last packet was cut short (a killed program): dropped.
    pub truncated: bool,
}

/// A slice begun: its name, category, start (ns) and args.
type Begun = (String, String, u64, Map<String, Value>);

#[derive(Default)]
struct Decoder {
    sequences: FxHashMap<u64, Interned>,
    /// Each sequence's clocks (its timestamps may be deltas).
    clocks: FxHashMap<u64, Clocks>,
    tracks: FxHashMap<u64, Track>,
    /// Slices begun and not yet ended, per track.
    open: FxHashMap<u64, Vec<Begun>>,
    /// The pid of the first process described: a global instant's.
    host_pid: u32,
}

/// Whether `b` looks like a protobuf trace (a `Trace.packet` field first) rather than JSON.
pub fn is_protobuf(b: &[u8]) -> bool {
    b.first() == Some(&((f::TRACE_PACKET as u8) << 3 | f::LEN))
}

/// Hands each event the trace stands for to `out`, in order.
pub fn events(
    b: &[u8],
    mut out: impl FnMut(Event),
    mut read: impl FnMut(usize),
) -> Result<Shape, Malformed> {
    let mut d = Decoder::default();
    let mut shape = Shape::default();
    for field in wire::fields(b) {
        let (number, value) = match field {
            Ok(fv) => fv,
            // Cut short inside its last packet: what came before stands.
            Err(_) if shape.packets > 0 => {
                shape.truncated = true;
                break;
            }
            Err(e) => return Err(e),
        };
        if number != f::TRACE_PACKET {
            continue;
        }
        shape.packets += 1;
        let packet = value.bytes();
        d.packet(packet, &mut out)?;
        // Where the packet ends in `b`: how far the reading has got (a packet that is not a
        // message, in a malformed trace, lies nowhere in `b`: it says nothing).
        let at = (packet.as_ptr() as usize).checked_sub(b.as_ptr() as usize);
        if let Some(at) = at.filter(|&at| at <= b.len()) {
            read(at + packet.len());
        }
    }
    Ok(shape)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

impl Interned {
    /// A packet's `InternedData`, added.
    pub fn add(&mut self, b: &[u8]) -> Result<(), Malformed> {
        for field in wire::fields(b) {
            let (n, v) = field?;
            let table = match n {
                i::NAMES => &mut self.names,
                i::CATEGORIES => &mut self.categories,
                i::ANNOTATION_NAMES => &mut self.keys,
                i::STRINGS => &mut self.strings,
                _ => continue,
            };
            let (mut iid, mut name) = (0, String::new());
            for entry in wire::fields(v.bytes()) {
                match entry? {
                    (i::IID, v) => iid = v.uint(),
                    (i::TEXT, v) => name = text(v.bytes()),
                    _ => {}
                }
            }
            table.insert(iid, name);
        }
        Ok(())
    }

    /// An event name's text.
    pub fn name(&self, iid: u64) -> Option<&str> {
        self.names.get(&iid).map(String::as_str)
    }

    /// An annotation name's text.
    pub fn key(&self, iid: u64) -> Option<&str> {
        self.keys.get(&iid).map(String::as_str)
    }

    /// An interned string value.
    pub fn string(&self, iid: u64) -> Option<&str> {
        self.strings.get(&iid).map(String::as_str)
    }
}

/// A trace packet's fields as clxfer's readers of protobuf take them (this decoder, and the
/// viewer's index, `crate::trace::index::proto`): its sequence, whether it clears the sequence's
/// interned state, its parts, and its timestamp's fields.
pub struct Packet<'a> {
    pub seq: u64,
    pub cleared: bool,
    pub interned: Option<&'a [u8]>,
    pub event: Option<&'a [u8]>,
    pub descriptor: Option<&'a [u8]>,
    stamp: Stamp<'a>,
}

impl<'a> Packet<'a> {
    pub fn of(b: &'a [u8]) -> Result<Packet<'a>, Malformed> {
        let (mut seq, mut flags) = (0, 0);
        let (mut interned, mut event, mut descriptor) = (None, None, None);
        let mut stamp: Stamp<'a> = (None, None, None, None);
        for field in wire::fields(b) {
            let (n, v) = field?;
            if clocks::field(&mut stamp, n, &v) {
                continue;
            }
            match n {
                p::SEQUENCE_ID => seq = v.uint(),
                p::SEQUENCE_FLAGS => flags = v.uint(),
                p::INTERNED_DATA => interned = Some(v.bytes()),
                p::TRACK_EVENT => event = Some(v.bytes()),
                p::TRACK_DESCRIPTOR => descriptor = Some(v.bytes()),
                _ => {}
            }
        }
        Ok(Packet {
            seq,
            cleared: flags & p::INCREMENTAL_STATE_CLEARED != 0,
            interned,
            event,
            descriptor,
            stamp,
        })
    }

    /// Its timestamp on its sequence's `clocks`, which it may describe: a timestamp on a clock
    /// the trace never described is taken as it is.
    pub fn ts(&self, clocks: &mut Clocks) -> Result<u64, Malformed> {
        let stamp = &self.stamp;
        clocks.packet(stamp.2, stamp.3)?;
        Ok(stamp
            .0
            .map_or(0, |t| clocks.resolve(t, stamp.1).unwrap_or(t)))
    }
}

impl Decoder {
    fn packet(&mut self, b: &[u8], out: &mut impl FnMut(Event)) -> Result<(), Malformed> {
        let packet = Packet::of(b)?;
        let seq = packet.seq;
        if packet.cleared {
            self.sequences.insert(seq, Interned::default());
        }
        let ts = packet.ts(self.clocks.entry(seq).or_default())?;
        if let Some(b) = packet.interned {
            self.intern(seq, b)?;
        }
        if let Some(b) = packet.descriptor {
            self.describe(b, out)?;
        }
        if let Some(b) = packet.event {
            self.event(seq, ts, b, out)?;
        }
        Ok(())
    }

    fn intern(&mut self, seq: u64, b: &[u8]) -> Result<(), Malformed> {
        self.sequences.entry(seq).or_default().add(b)
    }

    /// A track descriptor: the track, and the metadata events for its name and order.
    fn describe(&mut self, b: &[u8], out: &mut impl FnMut(Event)) -> Result<(), Malformed> {
        let (mut uuid, mut name, mut rank) = (0, None, None);
        let mut track = Track::default();
        let (mut process, mut thread) = (false, false);
        let mut unit_name = String::new();
        for field in wire::fields(b) {
            let (n, v) = field?;
            match n {
                t::UUID => uuid = v.uint(),
                t::NAME => name = Some(text(v.bytes())),
                t::ORDER_RANK => rank = Some(v.uint() as i64 as i32),
                t::PROCESS | t::THREAD => {
                    for inner in wire::fields(v.bytes()) {
                        match (n, inner?) {
                            (t::PROCESS, (t::PROCESS_PID, v)) => track.pid = v.uint() as u32,
                            (t::PROCESS, (t::PROCESS_NAME, v)) => name = Some(text(v.bytes())),
                            (t::THREAD, (t::THREAD_PID, v)) => track.pid = v.uint() as u32,
                            (t::THREAD, (t::THREAD_TID, v)) => track.tid = Some(v.uint() as u32),
                            (t::THREAD, (t::THREAD_NAME, v)) => name = Some(text(v.bytes())),
                            _ => {}
                        }
                    }
                    process |= n == t::PROCESS;
                    thread |= n == t::THREAD;
                }
                t::COUNTER => {
                    for inner in wire::fields(v.bytes()) {
                        if let (t::COUNTER_UNIT_NAME, v) = inner? {
                            unit_name = text(v.bytes());
                        }
                    }
                    track.counter = Some((String::new(), String::new()));
                }
                t::PARENT => {
                    if let Some(parent) = self.tracks.get(&v.uint()) {
                        track.pid = parent.pid;
                    }
                }
                _ => {}
            }
        }
        if track.counter.is_some() {
            track.counter = Some((name.clone().unwrap_or_default(), unit_name));
        } else if !process && !thread {
            track.global = true;
        }
        if process && self.host_pid == 0 {
            self.host_pid = track.pid;
        }
        let (pid, tid) = (track.pid, track.tid.unwrap_or(0));
        self.tracks.insert(uuid, track);
        if !(process || thread) {
            return Ok(());
        }
        let meta = |meta| Event {
            name: event::track_event_name(thread, &meta).into(),
            cat: "__metadata".into(),
            kind: Kind::Track { thread, meta },
            pid,
            tid,
            ts: 0,
            args: Map::new(),
        };
        if let Some(n) = name {
            out(meta(Meta::Name(n)));
        }
        if let Some(r) = rank {
            out(meta(Meta::Rank(r.into())));
        }
        Ok(())
    }

    fn event(
        &mut self,
        seq: u64,
        ts: u64,
        b: &[u8],
        out: &mut impl FnMut(Event),
    ) -> Result<(), Malformed> {
        let (mut kind, mut uuid, mut name, mut cat) = (0, 0, String::new(), String::new());
        let (mut flow, mut counter, mut args) = (None, 0i64, Map::new());
        let tables = self.sequences.entry(seq).or_default();
        for field in wire::fields(b) {
            let (n, v) = field?;
            match n {
                ev::TYPE => kind = v.uint(),
                ev::TRACK_UUID => uuid = v.uint(),
                ev::NAME_IID => name = tables.names.get(&v.uint()).cloned().unwrap_or_default(),
                ev::NAME => name = text(v.bytes()),
                ev::CATEGORY_IIDS => {
                    cat = tables
                        .categories
                        .get(&v.uint())
                        .cloned()
                        .unwrap_or_default()
                }
                ev::FLOW_IDS => flow = Some((true, v.uint())),
                ev::TERMINATING_FLOW_IDS => flow = Some((false, v.uint())),
                ev::COUNTER_VALUE => counter = v.uint() as i64,
                ev::DEBUG_ANNOTATIONS => {
                    let (k, value) = annotation(tables, v.bytes())?;
                    args.insert(k, value);
                }
                _ => {}
            }
        }
        let track = self.tracks.get(&uuid).cloned().unwrap_or_default();
        let (pid, tid) = (track.pid, track.tid.unwrap_or(track.pid));
        let e = |name, cat, kind, ts, args| Event {
            name,
            cat,
            kind,
            pid,
            tid,
            ts,
            args,
        };
        match kind {
            ev::SLICE_BEGIN => self
                .open
                .entry(uuid)
                .or_default()
                .push((name, cat, ts, args)),
            ev::SLICE_END => {
                let Some((name, cat, begin, args)) = self.open.get_mut(&uuid).and_then(Vec::pop)
                else {
                    return Ok(());
                };
                let dur = ts.saturating_sub(begin);
                out(e(name, cat, Kind::Slice { dur }, begin, args));
            }
            ev::INSTANT => match flow {
                Some((start, id)) => {
                    let end = if start {
                        event::End::Start
                    } else {
                        event::End::Finish
                    };
                    let id = FlowId::Num(id & !(f::WAIT_FLOW_BIT | f::RACE_FLOW_BIT));
                    out(e(name, cat, Kind::Flow { end, id }, ts, Map::new()));
                }
                None => {
                    let scope = match (track.global, track.tid) {
                        (true, _) => Scope::Global,
                        (false, Some(_)) => Scope::Thread,
                        (false, None) => Scope::Process,
                    };
                    let mut instant = e(name, cat, Kind::Instant(scope), ts, args);
                    if track.global {
                        (instant.pid, instant.tid) = (self.host_pid, self.host_pid);
                    }
                    out(instant);
                }
            },
            ev::COUNTER => {
                let (name, key) = track.counter.unwrap_or_default();
                let sample = Kind::Counter {
                    key,
                    value: counter,
                };
                out(Event {
                    tid: 0,
                    ..e(name, cat, sample, ts, Map::new())
                });
            }
            _ => {}
        }
        Ok(())
    }
}

/// A debug annotation: its name (empty for an array's value) and its value as JSON (an empty
/// dictionary or array reads as `null`: the wire does not tell them apart).
pub fn annotation(tables: &Interned, b: &[u8]) -> Result<(String, Value), Malformed> {
    let mut key = String::new();
    let mut value = Value::Null;
    let (mut dict, mut array) = (None::<Map<String, Value>>, None::<Vec<Value>>);
    for field in wire::fields(b) {
        let (n, v) = field?;
        match (n, v) {
            (a::NAME_IID, v) => key = tables.keys.get(&v.uint()).cloned().unwrap_or_default(),
            (a::NAME, v) => key = text(v.bytes()),
            (a::BOOL, v) => value = Value::Bool(v.uint() != 0),
            (a::UINT, v) => {
                let n = v.uint();
                // As the JSON has it: beyond 2^53, a decimal string.
                value = if n > crate::vocab::schema::EXACT {
                    n.to_string().into()
                } else {
                    n.into()
                };
            }
            (a::INT, v) => value = (v.uint() as i64).into(),
            (a::DOUBLE, W::Fixed64(bits)) => value = f64::from_bits(bits).into(),
            (a::STRING, v) => value = text(v.bytes()).into(),
            (a::STRING_IID, v) => {
                value = tables
                    .strings
                    .get(&v.uint())
                    .cloned()
                    .unwrap_or_default()
                    .into()
            }
            (a::POINTER, v) => value = format!("{:#x}", v.uint()).into(),
            (a::JSON, v) => {
                value = serde_json::from_slice(v.bytes()).unwrap_or_else(|_| text(v.bytes()).into())
            }
            (a::DICT, v) => {
                let (k, x) = annotation(tables, v.bytes())?;
                dict.get_or_insert_with(Map::new).insert(k, x);
            }
            (a::ARRAY, v) => array
                .get_or_insert_with(Vec::new)
                .push(annotation(tables, v.bytes())?.1),
            _ => {}
        }
    }
    if let Some(d) = dict {
        value = Value::Object(d);
    } else if let Some(arr) = array {
        value = Value::Array(arr);
    }
    Ok((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace packet that is not a message (field 1 as a varint, as a fuzzed trace had it) is
    /// read past without a panic, and tells the progress hook nothing; the next one does.
    #[test]
    fn a_packet_that_is_not_a_message_tells_no_progress() {
        let mut seen = Vec::new();
        let shape = events(&[0x08, 0x05, 0x0a, 0x00], |_| {}, |at| seen.push(at));
        assert_eq!(shape.map(|s| s.packets), Ok(2));
        assert_eq!(seen, [4]);
    }
}
