//! What reading a part of a trace gives the index, in the part's file order: each track's slices,
//! the arrows' ends, the classes said (a compact trace's), and the few events kept whole (track
//! names, each process's start and end). A JSON trace is read in parts on every core; a protobuf
//! trace, one part. `super::build` puts the parts together.

use super::colour;
use super::scan::{Id, Line, Said};
use super::track::Slice;
use crate::event::{End, Event, FlowId, Kind};
use crate::vocab::schema::{self as s, DEVICE_PID_BASE};
use rustc_hash::FxHashMap;
use serde_json::Value;

/// Names, each once: a part's, then the index's.
#[derive(Debug, Default)]
pub struct Names {
    ids: FxHashMap<Box<[u8]>, u32>,
    pub list: Vec<Box<str>>,
}

impl Names {
    pub fn id(&mut self, name: &str) -> u32 {
        self.id_of_bytes(name.as_bytes())
    }

    /// The id of a name as read (UTF-8 checked once, when first met).
    pub fn id_of_bytes(&mut self, name: &[u8]) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.list.len() as u32;
        let text: Box<str> = String::from_utf8_lossy(name).into();
        self.ids.insert(name.into(), id);
        self.list.push(text);
        id
    }

    pub fn bytes(&self) -> usize {
        self.list.iter().map(|n| n.len() * 2 + 40).sum()
    }
}

/// One end of an arrow, as read.
#[derive(Clone, Debug)]
pub struct FlowEnd {
    pub start: bool,
    /// Its name's id in the part's names.
    pub name: u32,
    pub id: FlowId<Box<str>>,
    pub pid: u32,
    pub tid: u32,
    pub ts: u64,
}

/// A compact host slice whose class was said before this part: its colour is its class's, once
/// the parts before are known.
#[derive(Clone, Copy, Debug)]
pub struct Pending {
    pub track: u32,
    pub slice: u32,
    pub pid: u32,
    pub class: u64,
}

/// A slice's colour words, from its own args; a compact slice's class may say them instead.
pub struct Colouring {
    pub said: Option<u8>,
    pub class: Option<u64>,
    /// It is its class's first slice (it carries the members).
    pub members: bool,
}

#[derive(Debug, Default)]
pub struct Part {
    pub names: Names,
    /// Each track's (pid, tid) and its slices, in the order met.
    pub tracks: Vec<((u32, u32), Vec<Slice>)>,
    track_of: FxHashMap<(u32, u32), u32>,
    pub flows: Vec<FlowEnd>,
    /// (pid, class) → what the class's latest first slice in this part says of its colour.
    pub classes: FxHashMap<(u32, u64), Option<u8>>,
    /// Each class's first slices, in order: (pid, class, where its details are).
    pub said: Vec<(u32, u64, u64)>,
    pub pending: Vec<Pending>,
    /// Track names and each process's start and end, whole.
    pub kept: Vec<Event>,
    /// Events read (what the reader takes as events).
    pub events: u64,
    /// What each name says of its slice's colour ([`colour::of_name`]), on the host and on a
    /// device, by name id.
    name_colours: [Vec<Option<(bool, u8)>>; 2],
}

/// An event kept whole: a track's name, a process's start or end.
pub fn kept(name: &str, ph: u8) -> bool {
    ph == b'M' || (matches!(ph, b'i' | b'I') && (name == s::TRACE_START || name == s::TRACE_END))
}

impl Part {
    fn track(&mut self, pid: u32, tid: u32) -> u32 {
        if let Some(&t) = self.track_of.get(&(pid, tid)) {
            return t;
        }
        let t = self.tracks.len() as u32;
        self.track_of.insert((pid, tid), t);
        self.tracks.push(((pid, tid), Vec::new()));
        t
    }

    /// A slice, and where its details are (`at`).
    #[allow(clippy::too_many_arguments)]
    pub fn slice(
        &mut self,
        track: (u32, u32),
        start: u64,
        dur: u64,
        name: &str,
        c: Colouring,
        command: Option<u64>,
        at: u64,
    ) {
        let name = self.names.id(name);
        self.slice_named(track, start, dur, name, c, command, at);
    }

    /// [`Part::slice`], its name's id in [`Part::names`] given.
    #[allow(clippy::too_many_arguments)]
    pub fn slice_named(
        &mut self,
        (pid, tid): (u32, u32),
        start: u64,
        dur: u64,
        name: u32,
        c: Colouring,
        command: Option<u64>,
        at: u64,
    ) {
        let on_device = pid >= DEVICE_PID_BASE;
        let mut said = c.said;
        let mut pending = false;
        if let (false, Some(class)) = (on_device, c.class) {
            if c.members {
                self.classes.insert((pid, class), said);
                self.said.push((pid, class, at));
            } else if said.is_none() {
                match self.classes.get(&(pid, class)) {
                    Some(&from_class) => said = from_class,
                    None => pending = true,
                }
            }
        }
        let track = self.track(pid, tid);
        let slices = &mut self.tracks[track as usize].1;
        if pending {
            self.pending.push(Pending {
                track,
                slice: slices.len() as u32,
                pid,
                class: c.class.unwrap_or(0),
            });
        }
        // What the name says, once per name and side.
        let cache = &mut self.name_colours[usize::from(on_device)];
        if cache.len() <= name as usize {
            cache.resize(name as usize + 1, None);
        }
        let by_name = *cache[name as usize]
            .get_or_insert_with(|| colour::of_name(on_device, &self.names.list[name as usize]));
        slices.push(Slice {
            start,
            dur,
            name,
            colour: colour::by_name(by_name, said),
            at,
            command: command.and_then(|c| u32::try_from(c).ok()).unwrap_or(0),
        });
    }

    /// An event of a line the fast path read (`at`: where it starts); `false` where it is one
    /// to read whole instead.
    pub fn line(&mut self, l: &Line, at: u64) -> bool {
        if matches!(l.ph, b'M' | b'i' | b'I') {
            let Ok(name) = std::str::from_utf8(l.name) else {
                return false;
            };
            if kept(name, l.ph) {
                return false;
            }
        }
        let (Some(pid), Some(tid), Some(ts)) = (l.pid, l.tid, l.ts) else {
            // Not an event (or a metadata-like one without its track): the reader's to say.
            return false;
        };
        match l.ph {
            b'X' => {
                let Some(dur) = l.dur else { return false };
                self.events += 1;
                let name = self.names.id_of_bytes(l.name);
                let c = colouring(&l.said);
                self.slice_named((pid, tid), ts, dur, name, c, l.said.command, at);
            }
            b's' | b't' | b'f' => {
                let Some(id) = l.id else { return false };
                if l.ph == b'f' && !l.bp_e {
                    // Not an event for the reader.
                    return true;
                }
                self.events += 1;
                if l.ph != b't' {
                    let id = match id {
                        Id::Num(n) => FlowId::Num(n),
                        Id::Text(t) => FlowId::Text(t.into()),
                    };
                    let name = self.names.id_of_bytes(l.name);
                    self.flow_named(l.ph == b's', name, id, pid, tid, ts);
                }
            }
            b'i' | b'I' | b'C' | b'B' | b'E' => self.events += 1,
            _ => return false,
        }
        true
    }

    pub fn flow(
        &mut self,
        start: bool,
        name: &str,
        id: FlowId<Box<str>>,
        pid: u32,
        tid: u32,
        ts: u64,
    ) {
        let name = self.names.id(name);
        self.flow_named(start, name, id, pid, tid, ts);
    }

    pub fn flow_named(
        &mut self,
        start: bool,
        name: u32,
        id: FlowId<Box<str>>,
        pid: u32,
        tid: u32,
        ts: u64,
    ) {
        self.flows.push(FlowEnd {
            start,
            name,
            id,
            pid,
            tid,
            ts,
        });
    }

    /// An event as the trace reader gives it (`at`: where its details are).
    pub fn event(&mut self, e: Event, at: u64) {
        self.events += 1;
        if kept(
            &e.name,
            e.kind.ph().as_bytes().first().copied().unwrap_or(0),
        ) {
            self.kept.push(e);
            return;
        }
        match &e.kind {
            Kind::Slice { dur } => {
                let said = said_of(&e.args);
                let command = e.arg(s::COMMAND).and_then(Value::as_u64);
                let c = colouring(&said);
                self.slice((e.pid, e.tid), e.ts, *dur, &e.name, c, command, at);
            }
            Kind::Flow { end, id } if *end != End::Step => {
                let id = match id {
                    FlowId::Num(n) => FlowId::Num(*n),
                    FlowId::Text(t) => FlowId::Text(t.as_str().into()),
                };
                self.flow(*end == End::Start, &e.name, id, e.pid, e.tid, e.ts);
            }
            _ => {}
        }
    }
}

/// What a slice's args say for its colour.
pub fn colouring(said: &Said) -> Colouring {
    Colouring {
        said: colour::of_args(said.path.and_then(colour::of_path), said.kernel),
        class: said.class,
        members: said.members,
    }
}

/// [`Said`] of args read whole.
pub fn said_of(args: &crate::event::Args) -> Said<'_> {
    let truthy = |v: &Value| match v {
        Value::String(t) => !t.is_empty(),
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|v| v != 0.0),
        Value::Null => false,
        _ => true,
    };
    Said {
        command: args.get(s::COMMAND.name).and_then(Value::as_u64),
        class: args.get(s::CLASS.name).and_then(Value::as_u64),
        path: args
            .get(s::PATH.name)
            .and_then(Value::as_str)
            .map(str::as_bytes),
        kernel: args.get(s::KERNEL.name).is_some_and(truthy),
        members: args.keys().any(|k| !colour::PER_CALL.contains(&k.as_str())),
    }
}
