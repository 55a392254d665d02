//! Writing Perfetto's protobuf trace: the events of clxfer's trace (docs/TRACE.md) as
//! `TrackEvent` packets, with event names, categories, annotation names and short
//! string values interned, a track descriptor for each process, thread, queue lane and counter,
//! arrows by flow ids, and the args as debug annotations.
//!
//! A JSON event maps onto packets one for one (what [`crate::perfetto::decode`] maps back): a
//! complete slice (`X`) is a begin and an end; an instant (`i`) an instant on its thread's,
//! process's or the global track; an arrow's end (`s`, `f`) an instant carrying the arrow's flow
//! id where the JSON binds it (the start of a slice, inside which it sits); a counter sample (`C`)
//! a counter event on a counter track; the metadata (`M`) the descriptors' names and order.
//!
//! Timestamps are deltas: the default clock is an incremental one (Perfetto's sequence-scoped
//! clocks may be), so a packet says how long after the one before it happened, in a byte or two
//! instead of five or six. A delta cannot be negative, and the writer takes the threads' batches
//! in turn, so each track's events go on a sequence of their own (a thread's calls, a queue
//! lane's commands follow each other in time), and the arrows' ends on one more. A packet earlier
//! than the one before on its sequence (an arrow's start, a command that completed late) names
//! clxfer's absolute clock instead. Sequence 1 holds the track descriptors.

use super::fields::{
    self as f, annotation as a, event as ev, interned as i, packet as p, track as t,
};
use super::intern::{Label, Table, join};
use super::wire;
use rustc_hash::FxHashMap;

mod annotations;
mod tracks;

/// Strings longer than this are written in full (reasons, paths): interning pays for words.
const INTERN_LEN: usize = 40;

pub use crate::event::Scope;

/// The pending name of the next annotation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    None,
    Static(&'static str),
    /// A key of clxfer's schema: its index there, and its name.
    Field(u16, &'static str),
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

/// One sequence: its interning tables, and its incremental clock's value (the time of the last
/// packet stamped on it).
#[derive(Default)]
struct Sequence {
    id: u64,
    names: Table,
    categories: Table,
    keys: Table,
    strings: Table,
    /// The iids of clxfer's schema keys by their index (0: not yet interned).
    fields: Vec<u64>,
    last_ts: u64,
}

/// Bytes of a [`Head`]'s fields at most.
const HEAD: usize = 24;

/// What opens a kind of event: its sequence, its track, and its `TrackEvent`'s first fields
/// (type, track, name and category iids).
#[derive(Clone, Copy)]
struct Head {
    seq: usize,
    track: u64,
    fields: [u8; HEAD],
    /// 0: too long to keep (a name written in full), in [`Encoder::long_head`].
    len: u8,
}

/// A kind of event named by clxfer's words: (type, scope, arrow), its track, its name's words and
/// its category, by address.
type HeadKey = (u64, (u32, u32), [(usize, usize); 3], (usize, usize));

/// The sequence key of the arrows' ends ([`Encoder::flow`]); others are their track's uuid.
const ARROWS: u64 = u64::MAX;

pub struct Encoder {
    /// Whole packets, each framed as `Trace.packet`, ready for the file.
    pub out: Vec<u8>,
    /// The sequences, by track (or [`ARROWS`]), and the one being written.
    sequences: Vec<Sequence>,
    by_key: FxHashMap<u64, usize>,
    cur: usize,
    start_mono_ns: u64,
    /// This packet's new interned entries.
    interned: Vec<u8>,
    /// This event's annotations, and where each open container starts. While an event is open
    /// ([`Encoder::open_event`]), the file's bytes themselves, swapped with `out`: annotations
    /// are written once, in their packet, instead of being gathered and copied.
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
    /// The open event: where its packet and its `TrackEvent` start.
    event: Option<(usize, usize)>,
    heads: FxHashMap<HeadKey, Head>,
    long_head: Vec<u8>,
    /// Tracks described since the trace (or its chunk, [`Encoder::restart`]) began.
    described: rustc_hash::FxHashSet<u64>,
    /// The sequences started before the last restart.
    retired: u64,
    /// A name's words joined, when they are written in full.
    scratch: String,
}

impl Encoder {
    /// An encoder of annotations only, with every name and string written in full: for
    /// fragments rendered apart and copied into an event ([`Encoder::raw`]), whose interned ids
    /// would be another table's.
    pub fn fragments() -> Encoder {
        let mut e = Encoder::new(0);
        e.out.clear();
        e.inline = true;
        e
    }

    /// A new chunk of a ring (`CLXFER_TRACE_LIMIT_KEEP=last`): what follows stands alone, on
    /// new sequences (with their own interning), its tracks described again (same uuids) on
    /// first use. Sequence 1, the descriptors', needs no state and stays.
    pub fn restart(&mut self) {
        debug_assert!(self.event.is_none(), "an event is open");
        let kept = self.sequences.drain(1..).count() as u64;
        self.retired += kept;
        self.by_key.retain(|_, n| *n == 0);
        self.heads.clear();
        self.described.clear();
        self.cur = 0;
    }

    /// Room for `bytes` of packets (in both buffers an open event moves them between).
    pub fn reserve(&mut self, bytes: usize) {
        self.out.reserve(bytes);
        self.args.reserve(bytes);
    }

    /// The annotations written since the last event (a fragment's).
    pub fn args(&self) -> &[u8] {
        &self.args
    }

    pub fn clear_args(&mut self) {
        debug_assert!(self.event.is_none(), "an event is open");
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

    /// A new trace whose clock 0 is `start_mono_ns` on `CLOCK_MONOTONIC`.
    pub fn new(start_mono_ns: u64) -> Encoder {
        let mut e = Encoder {
            out: Vec::new(),
            sequences: Vec::new(),
            by_key: FxHashMap::default(),
            cur: 0,
            start_mono_ns,
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
            event: None,
            heads: FxHashMap::default(),
            long_head: Vec::new(),
            described: Default::default(),
            retired: 0,
            scratch: String::new(),
        };
        e.sequence(0);
        e
    }

    /// Starts the sequence of `key` (a track's uuid, [`ARROWS`], or 0 for the descriptors') the
    /// first time, and makes it the current one.
    fn sequence(&mut self, key: u64) {
        if let Some(&n) = self.by_key.get(&key) {
            self.cur = n;
            return;
        }
        let id = self.retired + self.sequences.len() as u64 + 1;
        self.by_key.insert(key, self.sequences.len());
        self.cur = self.sequences.len();
        self.sequences.push(Sequence {
            id,
            ..Sequence::default()
        });
        // Its first packet: it starts afresh; its timestamps are on clxfer's clock (nanoseconds
        // from its start; sequence-scoped, so each sequence says it), which maps onto
        // CLOCK_MONOTONIC, the trace's clock, and by default on that clock's incremental twin
        // (0 at the same instant).
        let b = &mut self.packet;
        wire::uint(b, p::SEQUENCE_ID, id);
        wire::uint(b, p::FIRST_ON_SEQUENCE, 1);
        wire::uint(b, p::SEQUENCE_FLAGS, p::INCREMENTAL_STATE_CLEARED);
        let snap = wire::open(b, p::CLOCK_SNAPSHOT);
        let clocks = [
            (f::clock::CLXFER, 0, false),
            (f::clock::CLXFER_DELTA, 0, true),
            (f::clock::MONOTONIC, self.start_mono_ns, false),
        ];
        for (id, ts, incremental) in clocks {
            let c = wire::open(b, f::clock::SNAPSHOT_CLOCKS);
            wire::uint(b, f::clock::CLOCK_ID, id);
            wire::uint(b, f::clock::CLOCK_TIMESTAMP, ts);
            if incremental {
                wire::uint(b, f::clock::CLOCK_INCREMENTAL, 1);
            }
            wire::close(b, c);
        }
        wire::uint(b, f::clock::SNAPSHOT_PRIMARY, f::clock::MONOTONIC);
        wire::close(b, snap);
        let d = wire::open(b, p::DEFAULTS);
        wire::uint(b, f::clock::DEFAULTS_CLOCK_ID, f::clock::CLXFER_DELTA);
        wire::close(b, d);
        self.emit();
    }

    /// Frames the packet built so far into [`Encoder::out`].
    fn emit(&mut self) {
        debug_assert!(self.event.is_none(), "a descriptor inside an event");
        wire::bytes(&mut self.out, f::TRACE_PACKET, &self.packet);
        self.packet.clear();
    }

    fn uuid(&mut self) -> u64 {
        self.next_uuid += 1;
        self.next_uuid
    }

    // The events: opened, their annotations written, closed.

    /// Opens a `TrackEvent` packet of `kind` at `ts_ns` on `track` (already described), named
    /// `name` in `cat`: the annotations written next are its, until [`Encoder::close_event`].
    pub fn open_event(&mut self, kind: u64, track: u64, ts_ns: u64, label: (Label, Label)) {
        let head = self.head(track, kind, track, label);
        self.open_head(&head, ts_ns);
    }

    /// [`Encoder::open_event`] for an event named by clxfer's own words in category `cat`, on
    /// the track at `scope` (or, for an arrow's end, on the arrows' sequence): what opens it is
    /// looked up once per kind of event and copied after that (the track's descriptor, the
    /// sequence, the name's and category's iids).
    #[allow(clippy::too_many_arguments)]
    pub fn open_words(
        &mut self,
        kind: u64,
        scope: Scope,
        at: (u32, u32),
        ts_ns: u64,
        name: &[&'static str],
        cat: &'static str,
        arrow: bool,
    ) -> u64 {
        let mut words = [(0, 0); 3];
        for (slot, w) in words.iter_mut().zip(name) {
            *slot = (w.as_ptr() as usize, w.len());
        }
        let key = (
            kind | (scope as u64) << 8 | u64::from(arrow) << 16,
            at,
            words,
            (cat.as_ptr() as usize, cat.len()),
        );
        let head = match self.heads.get(&key) {
            Some(h) if name.len() <= 3 => *h,
            _ => {
                let track = self.track(scope, at);
                let seq_key = if arrow { ARROWS } else { track };
                let head = self.head(
                    seq_key,
                    kind,
                    track,
                    (Label::Words(name), Label::Words(&[cat])),
                );
                if head.len > 0 && name.len() <= 3 {
                    self.heads.insert(key, head);
                }
                head
            }
        };
        self.open_head(&head, ts_ns);
        head.track
    }

    /// What opens an event on the sequence of `key`: the sequence started if new, the name and
    /// category interned, the `TrackEvent`'s first fields (`len` 0 when a name written in full
    /// makes them too long to keep: they are in `self.long_head`).
    fn head(&mut self, key: u64, kind: u64, track: u64, (name, cat): (Label, Label)) -> Head {
        self.sequence(key);
        let seq = &mut self.sequences[self.cur];
        let mut b = Vec::with_capacity(HEAD);
        wire::uint(&mut b, ev::TYPE, kind);
        wire::uint(&mut b, ev::TRACK_UUID, track);
        let n = seq
            .names
            .iid_label(name, i::NAMES, &mut self.interned, &mut self.scratch);
        match (n, name) {
            (Some(id), _) => wire::uint(&mut b, ev::NAME_IID, id),
            (None, Label::Text(text)) => wire::bytes(&mut b, ev::NAME, text.as_bytes()),
            // The table is full: the name in full.
            (None, Label::Words(words)) => {
                join(words, &mut self.scratch);
                wire::bytes(&mut b, ev::NAME, self.scratch.as_bytes())
            }
        }
        let c = seq
            .categories
            .iid_label(cat, i::CATEGORIES, &mut self.interned, &mut self.scratch);
        if let Some(c) = c {
            wire::uint(&mut b, ev::CATEGORY_IIDS, c);
        }
        let mut head = Head {
            seq: self.cur,
            track,
            fields: [0; HEAD],
            len: 0,
        };
        if b.len() <= HEAD {
            head.fields[..b.len()].copy_from_slice(&b);
            head.len = b.len() as u8;
        } else {
            self.long_head = b;
        }
        head
    }

    /// Opens the event `head` opens, at `ts_ns`: the annotations written next are its.
    fn open_head(&mut self, head: &Head, ts_ns: u64) {
        debug_assert!(self.event.is_none(), "an event is open");
        self.cur = head.seq;
        let seq = &mut self.sequences[head.seq];
        std::mem::swap(&mut self.out, &mut self.args);
        self.open.clear();
        self.key = Key::None;
        let b = &mut self.args;
        let packet = wire::open(b, f::TRACE_PACKET);
        stamp(b, &mut seq.last_ts, ts_ns);
        wire::uint(b, p::SEQUENCE_ID, seq.id);
        let event = wire::open(b, p::TRACK_EVENT);
        match head.len {
            0 => b.extend_from_slice(&self.long_head),
            n => b.extend_from_slice(&head.fields[..n as usize]),
        }
        self.event = Some((packet, event));
    }

    /// Closes the event [`Encoder::open_event`] opened, with what `more` adds after its
    /// annotations (flow ids, a counter's value), and the names its packet interned.
    pub fn close_event(&mut self, more: impl FnOnce(&mut Vec<u8>)) {
        let Some((packet, event)) = self.event.take() else {
            return;
        };
        self.open.clear();
        self.key = Key::None;
        let b = &mut self.args;
        more(b);
        wire::close(b, event);
        // It refers to interned names (its own, at least).
        wire::uint(b, p::SEQUENCE_FLAGS, p::NEEDS_INCREMENTAL_STATE);
        if !self.interned.is_empty() {
            wire::bytes(b, p::INTERNED_DATA, &self.interned);
            self.interned.clear();
        }
        wire::close(b, packet);
        std::mem::swap(&mut self.out, &mut self.args);
    }

    /// A slice's end: a packet with neither name nor annotations.
    pub fn slice_end(&mut self, track: u64, ts_ns: u64) {
        debug_assert!(self.event.is_none(), "an event is open");
        self.sequence(track);
        let seq = &mut self.sequences[self.cur];
        let b = &mut self.out;
        let packet = wire::open(b, f::TRACE_PACKET);
        stamp(b, &mut seq.last_ts, ts_ns);
        wire::uint(b, p::SEQUENCE_ID, seq.id);
        let event = wire::open(b, p::TRACK_EVENT);
        wire::uint(b, ev::TYPE, ev::SLICE_END);
        wire::uint(b, ev::TRACK_UUID, track);
        wire::close(b, event);
        wire::close(b, packet);
    }

    /// One end of an arrow (`s`: `start`, or `f`), flow `id` across the trace, on a thread.
    pub fn flow(&mut self, label: (Label, Label), start: bool, id: u64, at: (u32, u32), ts: u64) {
        let field = if start {
            ev::FLOW_IDS
        } else {
            ev::TERMINATING_FLOW_IDS
        };
        match label {
            (Label::Words(name), Label::Words(&[cat])) => {
                self.open_words(ev::INSTANT, Scope::Thread, at, ts, name, cat, true);
            }
            _ => {
                let track = self.track(Scope::Thread, at);
                let head = self.head(ARROWS, ev::INSTANT, track, label);
                self.open_head(&head, ts);
            }
        }
        self.close_event(|b| {
            wire::key(b, field, f::FIXED64);
            b.extend_from_slice(&id.to_le_bytes());
        });
    }

    /// A counter sample (`C`) of the counter `label` names, whose one `args` key is `key`.
    pub fn counter(&mut self, label: (Label, Label), key: &str, pid: u32, ts: u64, value: i64) {
        let name = match label.0 {
            Label::Text(t) => t.to_string(),
            Label::Words(w) => {
                let mut text = String::new();
                join(w, &mut text);
                text
            }
        };
        let track = self.counter_track(pid, &name, key);
        self.open_event(ev::COUNTER, track, ts, label);
        self.close_event(|b| wire::int(b, ev::COUNTER_VALUE, value));
    }
}

/// A packet's timestamp: as a delta on the default (incremental) clock when it is not earlier
/// than the last one stamped so, else in full on clxfer's absolute clock, which the packet
/// names (three bytes more, and the incremental clock stays where it was).
fn stamp(b: &mut Vec<u8>, last: &mut u64, ts: u64) {
    if ts >= *last {
        wire::uint(b, p::TIMESTAMP, ts - *last);
        *last = ts;
    } else {
        wire::uint(b, p::TIMESTAMP, ts);
        wire::uint(b, p::TIMESTAMP_CLOCK_ID, f::clock::CLXFER);
    }
}
