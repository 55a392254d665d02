//! The trace writer's protobuf side (`CLXFER_FORMAT=perfetto`): the JSON-shaped calls of
//! [`Emit`] turned into Perfetto's `TrackEvent` packets by [`crate::perfetto::encode`]. An
//! event's top-level keys are what the packets need (`dur`: the slice's end; `s`: an instant's
//! track; `id`: an arrow's flow id), its `args` are its debug annotations, and the metadata and
//! counter events become track descriptors and counter values.

use super::emit::Part;
use super::emit::{Emit, Heads, Name};
use crate::perfetto::encode::{Encoder, Scope};
use crate::perfetto::fields::{RACE_FLOW_BIT, WAIT_FLOW_BIT, event as ev};
use crate::perfetto::intern::{Label, join};
use crate::perfetto::wire;
use crate::vocab::schema::{self as s, Key};
use std::fmt::Write as _;

/// The top-level key whose value comes next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Top {
    None,
    Dur,
    Scope,
    Id,
    Args,
}

/// Words an event's name is made of at most ([`Name::Words`]).
const WORDS: usize = 3;

pub struct Proto {
    enc: Encoder,
    /// The event being written: its name (clxfer's words, or text in `name`), category, phase,
    /// track and time.
    words: [&'static str; WORDS],
    n_words: usize,
    name: String,
    cat: &'static str,
    ph: &'static str,
    at: (u32, u32),
    ts: u64,
    dur: u64,
    scope: Scope,
    flow: u64,
    top: Top,
    /// How deep in the event: 0 its own keys, 1 its `args`, more inside them.
    depth: u32,
    /// A metadata event's name or order; a counter's key and value.
    meta: (Option<String>, Option<i64>),
    counter: Option<(&'static str, i64)>,
    pending_key: Option<&'static str>,
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
            ph: "",
            at: (0, 0),
            ts: 0,
            dur: 0,
            scope: Scope::Thread,
            flow: 0,
            top: Top::None,
            depth: 0,
            meta: (None, None),
            counter: None,
            pending_key: None,
            fragment: true,
            track: None,
        }
    }
}

impl Proto {
    /// Whether a value now is one of `args` (or a fragment's), not a top-level key's.
    fn in_args(&self) -> bool {
        self.depth >= 1 || self.ph.is_empty()
    }

    /// A value of a metadata or counter event, kept for its end.
    fn captured(&self) -> bool {
        self.depth == 1 && matches!(self.ph, "M" | "C")
    }

    /// Opens the event's packet (a slice's begin or an instant), on its track: what follows in
    /// `args` is written into it.
    fn open_event(&mut self) {
        if self.track.is_some() {
            return;
        }
        let (kind, scope) = match self.ph {
            "X" => (ev::SLICE_BEGIN, Scope::Thread),
            _ => (ev::INSTANT, self.scope),
        };
        let track = match label(&self.words[..self.n_words], &self.name) {
            Label::Words(name) => {
                (self.enc).open_words(kind, scope, self.at, self.ts, name, self.cat, false)
            }
            name => {
                let track = self.enc.track(scope, self.at);
                let label = (name, Label::Words(&[self.cat]));
                self.enc.open_event(kind, track, self.ts, label);
                track
            }
        };
        self.track = Some(track);
    }

    fn set_key(&mut self, key: &'static str) {
        if self.captured() {
            self.pending_key = Some(key);
        } else {
            self.enc.key_static(key);
        }
    }

    fn text(&mut self, v: &str) -> &mut Self {
        match self.top {
            Top::Scope if self.depth == 0 => {
                self.scope = match v {
                    "g" => Scope::Global,
                    "p" => Scope::Process,
                    _ => Scope::Thread,
                };
            }
            _ if self.captured() => self.meta.0 = Some(v.to_string()),
            _ if self.in_args() => {
                self.enc.str(v);
            }
            // `bp`: Perfetto binds a flow's end to the slice it sits in.
            _ => {}
        }
        self
    }

    fn number(&mut self, v: u64) -> &mut Self {
        match self.top {
            Top::Id if self.depth == 0 => self.flow = v,
            _ if self.captured() => {
                match self.pending_key.take() {
                    Some(k) if self.ph == "C" => self.counter = Some((k, v as i64)),
                    _ => self.meta.1 = Some(v as i64),
                };
            }
            _ if self.in_args() => {
                self.enc.u64(v);
            }
            _ => {}
        }
        self
    }
}

/// The event's name: its words (`words`, when clxfer's own), or the text it was given.
fn label<'a>(words: &'a [&'static str], text: &'a str) -> Label<'a> {
    if words.is_empty() {
        Label::Text(text)
    } else {
        Label::Words(words)
    }
}

impl Emit for Proto {
    fn begin_event(
        &mut self,
        name: Name,
        cat: &'static str,
        ph: &'static str,
        pid: u32,
        tid: u32,
        ts: u64,
        _heads: &mut Heads,
    ) {
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
        }
        (self.cat, self.ph, self.at, self.ts) = (cat, ph, (pid, tid), ts);
        (self.dur, self.scope, self.flow, self.top, self.depth) =
            (0, Scope::Thread, 0, Top::None, 0);
        self.meta = (None, None);
        self.counter = None;
        self.track = None;
        self.enc.clear_args();
    }

    fn end_event(&mut self) {
        let cat = [self.cat];
        let (at, ts) = (self.at, self.ts);
        match self.ph {
            "X" | "i" => {
                self.open_event();
                self.enc.close_event(|_| {});
                if let Some(track) = self.track.filter(|_| self.ph == "X") {
                    self.enc.slice_end(track, ts.saturating_add(self.dur));
                }
            }
            "s" | "f" => {
                let name = label(&self.words[..self.n_words], &self.name);
                let id = match name {
                    Label::Words([s::WAIT_FLOW_NAME]) => self.flow | WAIT_FLOW_BIT,
                    Label::Words([s::RACE_FLOW_NAME]) => self.flow | RACE_FLOW_BIT,
                    _ => self.flow,
                };
                let label = (name, Label::Words(&cat));
                self.enc.flow(label, self.ph == "s", id, at, ts);
            }
            "C" => {
                if let Some((key, value)) = self.counter.take() {
                    let name = label(&self.words[..self.n_words], &self.name);
                    self.enc
                        .counter((name, Label::Words(&cat)), key, at.0, ts, value);
                }
            }
            "M" => {
                let (text, rank) = (self.meta.0.take(), self.meta.1.take());
                let process = match label(&self.words[..self.n_words], &self.name) {
                    Label::Words(w) => w[0].starts_with("process"),
                    Label::Text(t) => t.starts_with("process"),
                };
                if process {
                    self.enc.name_process(at.0, text.as_deref(), rank);
                } else {
                    self.enc.name_thread(at.0, at.1, text.as_deref(), rank);
                }
            }
            _ => {}
        }
        self.ph = "";
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
        if self.depth == 0 && self.top == Top::Args && !self.ph.is_empty() {
            self.depth = 1;
        } else {
            self.depth += 1;
            if !self.captured() {
                self.enc.open_dict();
            }
        }
        self
    }

    fn close(&mut self) -> &mut Self {
        match self.depth {
            0 => {}
            1 if !self.ph.is_empty() => self.depth = 0,
            _ => {
                self.depth -= 1;
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
        if self.depth == 0 && !self.ph.is_empty() {
            self.top = match key {
                "dur" => Top::Dur,
                "s" => Top::Scope,
                "id" => Top::Id,
                "args" => Top::Args,
                _ => Top::None,
            };
            if self.top == Top::Args && matches!(self.ph, "X" | "i") {
                self.open_event();
            }
        } else {
            self.set_key(key);
        }
        self
    }

    fn field(&mut self, key: Key) -> &mut Self {
        if self.captured() {
            self.pending_key = Some(key.name);
        } else {
            self.enc.key_field(key);
        }
        self
    }

    fn word(&mut self, value: &'static str) -> &mut Self {
        if self.in_args() && !self.captured() {
            self.enc.str_static(value);
            self
        } else {
            self.text(value)
        }
    }

    fn words(&mut self, words: &[&'static str]) -> &mut Self {
        self.text(&words.join(" "))
    }

    fn str(&mut self, value: &str) -> &mut Self {
        self.text(value)
    }

    fn display(&mut self, value: &dyn std::fmt::Display) -> &mut Self {
        self.text(&value.to_string())
    }

    fn u64(&mut self, value: u64) -> &mut Self {
        self.number(value)
    }

    fn i64(&mut self, value: i64) -> &mut Self {
        if self.in_args() && !self.captured() {
            self.enc.i64(value);
        } else {
            self.number(value as u64);
        }
        self
    }

    fn bool(&mut self, value: bool) -> &mut Self {
        if self.in_args() {
            self.enc.bool(value);
        }
        self
    }

    fn us(&mut self, ns: u64) -> &mut Self {
        if self.depth == 0 && self.top == Top::Dur {
            self.dur = ns;
        } else if self.in_args() {
            // As the JSON has it: whole microseconds are integers.
            if ns.is_multiple_of(1000) {
                self.enc.u64(ns / 1000);
            } else {
                self.enc.f64(ns as f64 / 1000.0);
            }
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
        self.text(&text)
    }
}
