//! A protobuf trace read for the index directly, without the events it stands for being made
//! (`crate::perfetto::decode` makes them, args and all): packets in order on one thread (a
//! sequence's timestamps are deltas and its names interned, so a packet needs those before it),
//! each slice's begin and end joined per track, and of its args only what its colour and joins
//! need. Each slice's details are its begin packet, whose offset the index keeps, read again with
//! its sequence's interning tables, which the index keeps too ([`Tables`]: clxfer's writer clears
//! a sequence's state once, at its start, and interns at most 2^16 texts per table).

use super::colour;
use super::part::{Colouring, Part, kept};
use crate::event::{self, Event, FlowId, Kind, Meta};
use crate::perfetto::clocks::Clocks;
use crate::perfetto::decode::{Interned, Packet, annotation};
use crate::perfetto::fields::{self as f, annotation as a, event as ev, packet as p, track as t};
use crate::perfetto::wire::{self, Malformed};
use rustc_hash::FxHashMap;
use serde_json::Map;
use std::sync::atomic::{AtomicU64, Ordering};

/// Each sequence's interning tables, from each clearing of its state on: (the offset of the
/// packet that cleared it, the tables).
#[derive(Default)]
pub struct Tables {
    pub sequences: FxHashMap<u64, Vec<(u64, Interned)>>,
}

impl Tables {
    /// The tables sequence `seq` had at offset `at`.
    pub fn at(&self, seq: u64, at: u64) -> Option<&Interned> {
        let gens = self.sequences.get(&seq)?;
        let i = gens.partition_point(|(from, _)| *from <= at);
        gens.get(i.checked_sub(1)?).map(|(_, t)| t)
    }

    fn current(&mut self, seq: u64) -> &mut Interned {
        let gens = self.sequences.entry(seq).or_default();
        if gens.is_empty() {
            gens.push((0, Interned::default()));
        }
        &mut gens.last_mut().expect("one at least").1
    }
}

/// A track as its descriptor says.
#[derive(Clone, Copy, Default)]
struct Track {
    pid: u32,
    tid: Option<u32>,
}

/// A slice begun: its start, name, colour words, command and begin packet.
struct Begun {
    ts: u64,
    name: u32,
    colouring: Colouring,
    command: Option<u64>,
    at: u64,
}

/// What a slice's annotations say for the index.
#[derive(Default)]
struct Said {
    command: Option<u64>,
    class: Option<u64>,
    path: Option<u8>,
    kernel: bool,
    members: bool,
}

#[derive(Default)]
struct Reader {
    part: Part,
    tables: Tables,
    clocks: FxHashMap<u64, Clocks>,
    tracks: FxHashMap<u64, Track>,
    open: FxHashMap<u64, Vec<Begun>>,
    /// Each sequence's names by iid, as the part's name ids.
    name_ids: FxHashMap<(u64, u64), u32>,
    /// Each sequence's annotation names by iid, as [`kind_of`] words them (0: not yet).
    key_kinds: FxHashMap<u64, Vec<u8>>,
}

const COMMAND: u8 = 1;
const CLASS: u8 = 2;
const PATH: u8 = 3;
const KERNEL: u8 = 4;
const MEMBER: u8 = 5;
const PER_CALL: u8 = 6;

/// What an annotation's name is to the index.
fn kind_of(key: &str) -> u8 {
    use crate::vocab::schema as s;
    match key {
        k if k == s::COMMAND.name => COMMAND,
        k if k == s::CLASS.name => CLASS,
        k if k == s::PATH.name => PATH,
        k if k == s::KERNEL.name => KERNEL,
        k if colour::PER_CALL.contains(&k) => PER_CALL,
        _ => MEMBER,
    }
}

/// The part of protobuf trace `b` (one: it is read in order) and its sequences' tables; `read`
/// counts the bytes read. A file cut short is read up to its last whole packet.
pub fn read(b: &[u8], read: &AtomicU64) -> Result<(Part, Tables), String> {
    let mut r = Reader::default();
    let mut fields = wire::fields(b);
    let mut packets = 0u64;
    loop {
        let at = fields.offset() as u64;
        let Some(field) = fields.next() else { break };
        let (number, value) = match field {
            Ok(fv) => fv,
            Err(_) if packets > 0 => break,
            Err(e) => return Err(format!("not a Perfetto protobuf trace: {}", e.0)),
        };
        if number != f::TRACE_PACKET {
            continue;
        }
        packets += 1;
        r.packet(value.bytes(), at)
            .map_err(|e| format!("not a Perfetto protobuf trace: {}", e.0))?;
        if packets.is_multiple_of(1 << 14) {
            read.store(fields.offset() as u64, Ordering::Relaxed);
        }
    }
    read.store(b.len() as u64, Ordering::Relaxed);
    Ok((r.part, r.tables))
}

/// A packet's sequence and its track event, if it has one (what a slice's details are read from).
pub fn packet_event(b: &[u8]) -> Result<(u64, Option<&[u8]>), Malformed> {
    let (mut seq, mut event) = (0, None);
    for field in wire::fields(b) {
        match field? {
            (p::SEQUENCE_ID, v) => seq = v.uint(),
            (p::TRACK_EVENT, v) => event = Some(v.bytes()),
            _ => {}
        }
    }
    Ok((seq, event))
}

/// A track event's args, read whole with its sequence's tables.
pub fn args(tables: &Interned, event: &[u8]) -> Result<event::Args, Malformed> {
    let mut args = Map::new();
    for field in wire::fields(event) {
        if let (ev::DEBUG_ANNOTATIONS, v) = field? {
            let (k, value) = annotation(tables, v.bytes())?;
            args.insert(k, value);
        }
    }
    Ok(args)
}

impl Reader {
    fn packet(&mut self, b: &[u8], at: u64) -> Result<(), Malformed> {
        let packet = Packet::of(b)?;
        let seq = packet.seq;
        if packet.cleared {
            let gens = self.tables.sequences.entry(seq).or_default();
            gens.push((at, Interned::default()));
            self.name_ids.retain(|(s, _), _| *s != seq);
            self.key_kinds.remove(&seq);
        }
        let ts = packet.ts(self.clocks.entry(seq).or_default())?;
        if let Some(b) = packet.interned {
            self.tables.current(seq).add(b)?;
        }
        if let Some(b) = packet.descriptor {
            self.describe(b)?;
        }
        if let Some(b) = packet.event {
            self.event(seq, ts, b, at)?;
        }
        Ok(())
    }

    /// A track descriptor: the track, and its name.
    fn describe(&mut self, b: &[u8]) -> Result<(), Malformed> {
        let (mut uuid, mut name) = (0, None);
        let mut track = Track::default();
        let (mut process, mut thread) = (false, false);
        for field in wire::fields(b) {
            let (n, v) = field?;
            match n {
                t::UUID => uuid = v.uint(),
                t::NAME => name = Some(String::from_utf8_lossy(v.bytes()).into_owned()),
                t::PROCESS | t::THREAD => {
                    for inner in wire::fields(v.bytes()) {
                        match (n, inner?) {
                            (t::PROCESS, (t::PROCESS_PID, v)) | (t::THREAD, (t::THREAD_PID, v)) => {
                                track.pid = v.uint() as u32
                            }
                            (t::PROCESS, (t::PROCESS_NAME, v))
                            | (t::THREAD, (t::THREAD_NAME, v)) => {
                                name = Some(String::from_utf8_lossy(v.bytes()).into_owned())
                            }
                            (t::THREAD, (t::THREAD_TID, v)) => track.tid = Some(v.uint() as u32),
                            _ => {}
                        }
                    }
                    process |= n == t::PROCESS;
                    thread |= n == t::THREAD;
                }
                t::PARENT => {
                    if let Some(parent) = self.tracks.get(&v.uint()) {
                        track.pid = parent.pid;
                    }
                }
                _ => {}
            }
        }
        self.tracks.insert(uuid, track);
        if let (true, Some(n)) = (process || thread, name) {
            let meta = Meta::Name(n);
            self.part.event(
                Event {
                    name: event::track_event_name(thread, &meta).into(),
                    cat: "__metadata".into(),
                    kind: Kind::Track { thread, meta },
                    pid: track.pid,
                    tid: track.tid.unwrap_or(0),
                    ts: 0,
                    args: Map::new(),
                },
                u64::MAX,
            );
        }
        Ok(())
    }

    fn event(&mut self, seq: u64, ts: u64, b: &[u8], at: u64) -> Result<(), Malformed> {
        let (mut kind, mut uuid, mut name, mut flow) = (0, 0, None::<u32>, None);
        let mut said = Said::default();
        let mut annotated = false;
        for field in wire::fields(b) {
            let (n, v) = field?;
            match n {
                ev::TYPE => kind = v.uint(),
                ev::TRACK_UUID => uuid = v.uint(),
                ev::NAME_IID => {
                    let iid = v.uint();
                    name = Some(match self.name_ids.get(&(seq, iid)) {
                        Some(&id) => id,
                        None => {
                            let text = self.tables.current(seq).name(iid).unwrap_or_default();
                            let id = self.part.names.id(text);
                            self.name_ids.insert((seq, iid), id);
                            id
                        }
                    });
                }
                ev::NAME => name = Some(self.part.names.id(&String::from_utf8_lossy(v.bytes()))),
                ev::FLOW_IDS => flow = Some((true, v.uint())),
                ev::TERMINATING_FLOW_IDS => flow = Some((false, v.uint())),
                ev::DEBUG_ANNOTATIONS => {
                    annotated = true;
                    let kinds = self.key_kinds.entry(seq).or_default();
                    said_by(self.tables.current(seq), kinds, v.bytes(), &mut said)?;
                }
                _ => {}
            }
        }
        let track = self.tracks.get(&uuid).copied().unwrap_or_default();
        let (pid, tid) = (track.pid, track.tid.unwrap_or(track.pid));
        let name = name.unwrap_or_else(|| self.part.names.id(""));
        match kind {
            ev::SLICE_BEGIN => {
                let colouring = Colouring {
                    said: colour::of_args(said.path, said.kernel),
                    class: said.class,
                    members: said.members,
                };
                let begun = Begun {
                    ts,
                    name,
                    colouring,
                    command: said.command,
                    at,
                };
                self.open.entry(uuid).or_default().push(begun);
            }
            ev::SLICE_END => {
                let Some(s) = self.open.get_mut(&uuid).and_then(Vec::pop) else {
                    return Ok(());
                };
                self.part.events += 1;
                let dur = ts.saturating_sub(s.ts);
                self.part
                    .slice_named((pid, tid), s.ts, dur, s.name, s.colouring, s.command, s.at);
            }
            ev::INSTANT => {
                if let Some((start, id)) = flow {
                    self.part.events += 1;
                    let id = FlowId::Num(id & !(f::WAIT_FLOW_BIT | f::RACE_FLOW_BIT));
                    self.part.flow_named(start, name, id, pid, tid, ts);
                    return Ok(());
                }
                let text = &self.part.names.list[name as usize];
                if !(annotated && kept(text, b'i')) {
                    self.part.events += 1;
                    return Ok(());
                }
                // A process's start or end, kept whole.
                let e = Event {
                    name: text.to_string(),
                    cat: String::new(),
                    kind: Kind::Instant(event::Scope::Global),
                    pid,
                    tid,
                    ts,
                    args: args(self.tables.current(seq), b)?,
                };
                self.part.event(e, at);
            }
            _ => self.part.events += 1,
        }
        Ok(())
    }
}

/// What one annotation says for the index: its key's value where the key is one the colour or
/// the joins need, and whether it is a class's member; `kinds` keeps what each interned key is.
fn said_by(
    tables: &Interned,
    kinds: &mut Vec<u8>,
    b: &[u8],
    said: &mut Said,
) -> Result<(), Malformed> {
    let mut kind = MEMBER;
    let (mut uint, mut text, mut truthy) = (None, None::<std::borrow::Cow<str>>, false);
    for field in wire::fields(b) {
        match field? {
            (a::NAME_IID, v) => {
                let iid = v.uint();
                let slot = usize::try_from(iid).ok().filter(|&i| i < 1 << 20);
                kind = match slot.and_then(|i| kinds.get(i).copied()).filter(|&k| k != 0) {
                    Some(k) => k,
                    None => {
                        let k = kind_of(tables.key(iid).unwrap_or_default());
                        if let Some(i) = slot {
                            if kinds.len() <= i {
                                kinds.resize(i + 1, 0);
                            }
                            kinds[i] = k;
                        }
                        k
                    }
                };
            }
            (a::NAME, v) => kind = kind_of(&String::from_utf8_lossy(v.bytes())),
            (a::UINT | a::INT, v) => {
                uint = Some(v.uint());
                truthy = v.uint() != 0;
            }
            (a::BOOL, v) => truthy = v.uint() != 0,
            (a::STRING, v) => {
                truthy = !v.bytes().is_empty();
                text = Some(String::from_utf8_lossy(v.bytes()));
            }
            (a::STRING_IID, v) => {
                let t = tables.string(v.uint());
                truthy = t.is_some_and(|t| !t.is_empty());
                text = t.map(Into::into);
            }
            (a::DOUBLE | a::POINTER | a::DICT | a::ARRAY | a::JSON, _) => truthy = true,
            _ => {}
        }
    }
    match kind {
        COMMAND => said.command = uint,
        CLASS => said.class = uint,
        PATH => said.path = text.and_then(|t| colour::of_path(t.as_bytes())),
        KERNEL => said.kernel = truthy,
        _ => {}
    }
    said.members |= kind == MEMBER || kind == PATH || kind == KERNEL;
    Ok(())
}
