//! Perfetto's protobuf serialiser (`CLXFER_FORMAT=perfetto`): each event's typed head turned
//! into `TrackEvent` packets by [`super::encode`] (a slice is a begin and an
//! end, an instant one packet, an arrow's end an instant carrying its flow id, a counter's sample
//! a counter event, a track's name its descriptor), and its `args` into the packet's debug
//! annotations as they are written.

use super::encode::Encoder;
use super::fields::{RACE_FLOW_BIT, WAIT_FLOW_BIT, event as ev};
use super::intern::{Label, join};
use super::wire;
use crate::event::{Emit, End, FlowId, Head, Heads, Kind, Meta, Name, Part, Scope, Text};
use crate::vocab::schema::{self as s, Key};
use std::fmt::Write as _;

/// Words an event's name is made of at most ([`Name::Words`]).
const WORDS: usize = 3;

pub struct Proto {
    enc: Encoder,
    /// The slice or instant begun: its name (clxfer's words, or text in `name`), category (a
    /// constant, or text in `cat_text`), track, time, scope and duration.
    words: [&'static str; WORDS],
    n_words: usize,
    name: String,
    cat: &'static str,
    cat_text: Option<String>,
    at: (u32, u32),
    ts: u64,
    scope: Scope,
    /// The slice's duration (`None`: an instant, or an event whole at its begin).
    dur: Option<u64>,
    /// An event is begun whose packet is not written yet.
    pending: bool,
    /// How deep in its `args`: closing at 1 closes them (they are the packet's annotations).
    depth: u32,
    /// A fragment's emitter: [`Emit::bytes`] are its annotations.
    fragment: bool,
    /// The track of the event, once its packet is open (its annotations go straight in).
    track: Option<u64>,
}

impl Default for Proto {
    /// An emitter of fragments ([`Encoder::fragments`]); the trace's own one is made by
    /// [`Emit::start`].
    fn default() -> Proto {
        Proto {
            enc: Encoder::fragments(),
            words: [""; WORDS],
            n_words: 0,
            name: String::new(),
            cat: "",
            cat_text: None,
            at: (0, 0),
            ts: 0,
            scope: Scope::Thread,
            dur: None,
            pending: false,
            depth: 0,
            fragment: true,
            track: None,
        }
    }
}

impl Proto {
    /// Opens the packet of the slice or instant begun, on its track: what follows in `args` is
    /// written into it.
    fn open_event(&mut self) {
        if self.track.is_some() || !self.pending {
            return;
        }
        let kind = match self.dur {
            Some(_) => ev::SLICE_BEGIN,
            None => ev::INSTANT,
        };
        let name = label(&self.words[..self.n_words], &self.name);
        let track = match (name, &self.cat_text) {
            (Label::Words(name), None) => {
                (self.enc).open_words(kind, self.scope, self.at, self.ts, name, self.cat, false)
            }
            (name, cat_text) => {
                let track = self.enc.track(self.scope, self.at);
                let cat = match cat_text {
                    Some(c) => Label::Text(c),
                    None => Label::Words(std::slice::from_ref(&self.cat)),
                };
                self.enc.open_event(kind, track, self.ts, (name, cat));
                track
            }
        };
        self.track = Some(track);
    }

    fn set_name(&mut self, name: Name) {
        self.n_words = 0;
        match name {
            Name::Words(w) if w.len() <= WORDS && !w.is_empty() => {
                self.words[..w.len()].copy_from_slice(w);
                self.n_words = w.len();
            }
            Name::Words(w) => join(w, &mut self.name),
            Name::Shown(d) => {
                self.name.clear();
                let _ = write!(self.name, "{d}");
            }
            Name::Text(t) => {
                self.name.clear();
                self.name.push_str(t);
            }
        }
    }
}

/// The event's name: its words (when clxfer's own), or the text it was given.
fn label<'a>(words: &'a [&'static str], text: &'a str) -> Label<'a> {
    if words.is_empty() {
        Label::Text(text)
    } else {
        Label::Words(words)
    }
}

impl Emit for Proto {
    fn begin_event(&mut self, h: &Head, _heads: &mut Heads) {
        self.set_name(h.name);
        (self.at, self.ts) = ((h.pid, h.tid), h.ts);
        (self.cat, self.cat_text) = match h.cat {
            Text::Word(w) => (w, None),
            Text::Str(t) => ("", Some(t.to_string())),
        };
        (self.depth, self.track, self.pending, self.dur) = (0, None, false, None);
        self.enc.clear_args();
        let cat = h.cat.as_str();
        let cats = [self.cat];
        let cat = match h.cat {
            Text::Word(_) => Label::Words(&cats),
            Text::Str(_) => Label::Text(cat),
        };
        match &h.kind {
            Kind::Slice { dur } => {
                (self.scope, self.dur, self.pending) = (Scope::Thread, Some(*dur), true);
            }
            Kind::Instant(scope) => (self.scope, self.pending) = (*scope, true),
            Kind::Flow { end, id } => {
                let name = label(&self.words[..self.n_words], &self.name);
                // Perfetto's flow ids are numbers: a text id (not clxfer's) has none.
                let id = match id {
                    FlowId::Num(n) => *n,
                    FlowId::Text(_) => 0,
                };
                let id = match name {
                    Label::Words([s::WAIT_FLOW_NAME]) | Label::Text(s::WAIT_FLOW_NAME) => {
                        id | WAIT_FLOW_BIT
                    }
                    Label::Words([s::RACE_FLOW_NAME]) | Label::Text(s::RACE_FLOW_NAME) => {
                        id | RACE_FLOW_BIT
                    }
                    _ => id,
                };
                let start = *end == End::Start;
                (self.enc).flow((name, cat), start, id, self.at, self.ts);
            }
            Kind::Counter { key, value } => {
                let name = label(&self.words[..self.n_words], &self.name);
                (self.enc).counter((name, cat), key, self.at.0, self.ts, *value);
            }
            Kind::Track { thread, meta } => {
                let (text, rank) = match meta {
                    Meta::Name(n) => (Some(*n), None),
                    Meta::Rank(r) => (None, Some(*r)),
                };
                if *thread {
                    self.enc.name_thread(self.at.0, self.at.1, text, rank);
                } else {
                    self.enc.name_process(self.at.0, text, rank);
                }
            }
            // Not one Perfetto's protobuf has (`B`, `E` are written as slices by clxfer).
            Kind::Other { .. } => {}
        }
    }

    fn args(&mut self) -> &mut Self {
        self.open_event();
        self.depth = 1;
        self
    }

    fn end_event(&mut self) {
        if self.pending {
            self.open_event();
            self.enc.close_event(|_| {});
            if let (Some(track), Some(dur)) = (self.track, self.dur) {
                self.enc.slice_end(track, self.ts.saturating_add(dur));
            }
        }
        self.pending = false;
    }

    fn start(&mut self, start_mono_ns: u64, capacity: usize) {
        self.enc = Encoder::new(start_mono_ns);
        self.enc.reserve(capacity);
        self.fragment = false;
    }

    fn finish(&mut self) {}

    fn restart(&mut self) {
        self.enc.restart();
    }

    fn bytes(&self) -> &[u8] {
        if self.fragment {
            return self.enc.args();
        }
        &self.enc.out
    }

    fn clear(&mut self) {
        self.enc.out.clear();
        self.enc.clear_args();
    }

    /// Whole packets.
    fn fit(&self, room: usize) -> usize {
        let b = &self.enc.out;
        let mut fields = wire::fields(b);
        let mut fit = 0;
        while let Some(Ok(_)) = fields.next() {
            if fields.offset() > room {
                break;
            }
            fit = fields.offset();
        }
        fit
    }

    fn open(&mut self) -> &mut Self {
        self.depth += 1;
        self.enc.open_dict();
        self
    }

    fn close(&mut self) -> &mut Self {
        match self.depth {
            0 => {}
            // The event's args: its annotations end with the packet.
            1 if self.pending => self.depth = 0,
            _ => {
                self.depth = self.depth.saturating_sub(1);
                self.enc.close();
            }
        }
        self
    }

    fn open_array(&mut self) -> &mut Self {
        self.depth += 1;
        self.enc.open_array();
        self
    }

    fn close_array(&mut self) -> &mut Self {
        self.depth = self.depth.saturating_sub(1);
        self.enc.close();
        self
    }

    fn key(&mut self, key: &str) -> &mut Self {
        // Not clxfer's own word (an option's name, a flag count's kind): never a counter's key.
        self.enc.key(key);
        self
    }

    fn qkey(&mut self, quoted: &'static str) -> &mut Self {
        // `"key":`, as `quoted!` makes it.
        let key = quoted
            .get(1..quoted.len().saturating_sub(2))
            .unwrap_or(quoted);
        self.enc.key_static(key);
        self
    }

    fn field(&mut self, key: Key) -> &mut Self {
        self.enc.key_field(key);
        self
    }

    fn word(&mut self, value: &'static str) -> &mut Self {
        self.enc.str_static(value);
        self
    }

    fn words(&mut self, words: &[&'static str]) -> &mut Self {
        self.enc.str(&words.join(" "));
        self
    }

    fn str(&mut self, value: &str) -> &mut Self {
        self.enc.str(value);
        self
    }

    fn display(&mut self, value: &dyn std::fmt::Display) -> &mut Self {
        self.enc.str(&value.to_string());
        self
    }

    fn u64(&mut self, value: u64) -> &mut Self {
        self.enc.u64(value);
        self
    }

    fn i64(&mut self, value: i64) -> &mut Self {
        self.enc.i64(value);
        self
    }

    fn f64(&mut self, value: f64) -> &mut Self {
        self.enc.f64(value);
        self
    }

    fn bool(&mut self, value: bool) -> &mut Self {
        self.enc.bool(value);
        self
    }

    /// JSON's `null` has no annotation of its own: an empty string.
    fn null(&mut self) -> &mut Self {
        self.enc.str("");
        self
    }

    fn us(&mut self, ns: u64) -> &mut Self {
        // As the JSON has it: whole microseconds are integers.
        if ns.is_multiple_of(1000) {
            self.enc.u64(ns / 1000);
        } else {
            self.enc.f64(ns as f64 / 1000.0);
        }
        self
    }

    fn f3(&mut self, value: f64) -> &mut Self {
        let v = if value.is_finite() { value } else { 0.0 };
        let scaled = (v.abs() * 1000.0 + 0.5) as u64;
        if scaled.is_multiple_of(1000) && v >= 0.0 {
            self.enc.u64(scaled / 1000);
        } else {
            self.enc.f64(v.signum() * scaled as f64 / 1000.0);
        }
        self
    }

    fn hex(&mut self, value: u64) -> &mut Self {
        self.enc.pointer(value);
        self
    }

    fn raw_bytes(&mut self, bytes: &[u8]) -> &mut Self {
        self.enc.raw(bytes);
        self
    }

    fn raw_json(&mut self, json: &str) -> &mut Self {
        self.enc.json(json);
        self
    }

    fn raw_parts(&mut self, parts: &[Part]) -> &mut Self {
        let mut text = String::new();
        for p in parts {
            match *p {
                Part::Text(t) => text.push_str(t),
                Part::Num(n) => {
                    let _ = write!(text, "{n}");
                }
            }
        }
        self.enc.str(&text);
        self
    }
}
