//! The trace's one event, typed: what the trace writer (`crate::sink::chrome`) says, what each
//! format serialises ([`Emit`]: Chrome's JSON in `crate::json::write`, Perfetto's protobuf in
//! `crate::perfetto::emit`), and what each format's decoder gives back (`crate::json::read`,
//! `crate::perfetto::decode`; `crate::trace::format` picks them). Every reader of traces (the
//! report, the CSV, `check`, `merge`, `convert`) takes [`Event`]s, so writers and readers cannot
//! disagree on what an event is; JSON is one serialisation of it, not the internal form.
//!
//! An event's kind carries what that kind needs (a slice's duration, an instant's scope, an
//! arrow's id, a counter's value, a track's name); its `args` are the trace schema's keys
//! (`crate::vocab::schema`), read through the typed accessors below.

mod emit;
mod write;

pub use emit::{Emit, Head, Heads, Name, Part, Text};
pub use write::write;

use crate::vocab::schema::{DEVICE_PID_BASE, Key};
use serde_json::Value;

/// An event's `args`: the trace schema's keys and their values.
pub type Args = serde_json::Map<String, Value>;

/// Where an instant sits: its thread's track, its process's, or the trace's global track.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    Thread,
    Process,
    Global,
}

impl Scope {
    /// Chrome's letter for it (`s`).
    pub fn letter(self) -> &'static str {
        match self {
            Scope::Thread => "t",
            Scope::Process => "p",
            Scope::Global => "g",
        }
    }
}

/// Which end of an arrow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// `s`: where it starts.
    Start,
    /// `t`: a step between (Perfetto takes it; clxfer writes none).
    Step,
    /// `f`: where it ends, bound to the slice it sits in.
    Finish,
}

/// An arrow's id: a number (clxfer's) or a string (Chrome allows them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlowId<S> {
    Num(u64),
    Text(S),
}

/// What a metadata event says of its track.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Meta<S> {
    /// `process_name` / `thread_name`.
    Name(S),
    /// `process_sort_index` / `thread_sort_index`.
    Rank(i64),
}

/// What an event is, with what its kind carries. `S` is how it holds text: borrowed when
/// written (a [`Head`]), owned when read (an [`Event`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Kind<S = String> {
    /// `X`: a complete slice, `dur` ns long.
    Slice { dur: u64 },
    /// `i`: an instant.
    Instant(Scope),
    /// `s`, `t`, `f`: an arrow's end.
    Flow { end: End, id: FlowId<S> },
    /// `C`: a counter's sample; `key` names its value in `args`.
    Counter { key: S, value: i64 },
    /// `M`: a process's (`thread` false) or a thread's name or place.
    Track { thread: bool, meta: Meta<S> },
    /// Any other phase Perfetto imports (`B`, `E`, other metadata), carried as read.
    Other { ph: S },
}

impl<S: AsRef<str>> Kind<S> {
    /// Chrome's phase letter of each kind clxfer writes, as a constant (the JSON writer's cache
    /// of event heads keys on its address); `None` for [`Kind::Other`], whose letter is its own.
    pub fn letter(&self) -> Option<&'static str> {
        Some(match self {
            Kind::Slice { .. } => "X",
            Kind::Instant(_) => "i",
            Kind::Flow {
                end: End::Start, ..
            } => "s",
            Kind::Flow { end: End::Step, .. } => "t",
            Kind::Flow {
                end: End::Finish, ..
            } => "f",
            Kind::Counter { .. } => "C",
            Kind::Track { .. } => "M",
            Kind::Other { .. } => return None,
        })
    }

    /// Chrome's phase letter.
    pub fn ph(&self) -> &str {
        match self {
            Kind::Other { ph } => ph.as_ref(),
            kind => kind.letter().unwrap_or(""),
        }
    }

    /// The same kind, its text borrowed.
    pub fn borrowed(&self) -> Kind<&str> {
        match self {
            Kind::Slice { dur } => Kind::Slice { dur: *dur },
            Kind::Instant(s) => Kind::Instant(*s),
            Kind::Flow { end, id } => Kind::Flow {
                end: *end,
                id: match id {
                    FlowId::Num(n) => FlowId::Num(*n),
                    FlowId::Text(t) => FlowId::Text(t.as_ref()),
                },
            },
            Kind::Counter { key, value } => Kind::Counter {
                key: key.as_ref(),
                value: *value,
            },
            Kind::Track { thread, meta } => Kind::Track {
                thread: *thread,
                meta: match meta {
                    Meta::Name(n) => Meta::Name(n.as_ref()),
                    Meta::Rank(r) => Meta::Rank(*r),
                },
            },
            Kind::Other { ph } => Kind::Other { ph: ph.as_ref() },
        }
    }
}

/// A metadata event's name, for its track and what it says.
pub fn track_event_name<S>(thread: bool, meta: &Meta<S>) -> &'static str {
    match (thread, meta) {
        (false, Meta::Name(_)) => "process_name",
        (false, Meta::Rank(_)) => "process_sort_index",
        (true, Meta::Name(_)) => "thread_name",
        (true, Meta::Rank(_)) => "thread_sort_index",
    }
}

/// One event as read: the event, or why it is not one (which `clxfer check` reports, and the
/// other readers leave out).
pub type Read = Result<Event, String>;

/// How a trace's events ended, as its decoder found them.
#[derive(Debug, Default, Clone, Copy)]
pub struct Ended {
    /// Its end was written (a JSON array's `]`; a protobuf's last packet whole).
    pub closed: bool,
    /// The last event was cut short and dropped (a killed program).
    pub truncated: bool,
}

/// One event of a trace, as read back from either format.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub name: String,
    pub cat: String,
    pub kind: Kind,
    pub pid: u32,
    pub tid: u32,
    /// Nanoseconds from the trace's start.
    pub ts: u64,
    pub args: Args,
}

impl Event {
    /// The value of `key` in `args`.
    pub fn arg(&self, key: Key) -> Option<&Value> {
        self.args.get(key.name)
    }

    /// `key` as a number (0 when absent or not one).
    pub fn u64(&self, key: Key) -> u64 {
        self.arg(key).and_then(Value::as_u64).unwrap_or(0)
    }

    /// `key` as text ("" when absent or not text).
    pub fn str(&self, key: Key) -> &str {
        self.arg(key).and_then(Value::as_str).unwrap_or("")
    }

    /// A slice's duration, ns (0 for any other kind).
    pub fn dur(&self) -> u64 {
        match self.kind {
            Kind::Slice { dur } => dur,
            _ => 0,
        }
    }

    pub fn is_slice(&self) -> bool {
        matches!(self.kind, Kind::Slice { .. })
    }

    pub fn is_instant(&self) -> bool {
        matches!(self.kind, Kind::Instant(_))
    }

    /// On one of the synthetic processes that stand for devices (`crate::vocab::schema`).
    pub fn on_device(&self) -> bool {
        self.pid >= DEVICE_PID_BASE
    }

    /// A flow's numeric id.
    pub fn flow_id(&self) -> Option<u64> {
        match self.kind {
            Kind::Flow {
                id: FlowId::Num(id),
                ..
            } => Some(id),
            _ => None,
        }
    }

    /// What a metadata event names its track, with whether the track is a thread's.
    pub fn track_name(&self) -> Option<(bool, &str)> {
        match &self.kind {
            Kind::Track {
                thread,
                meta: Meta::Name(n),
            } => Some((*thread, n)),
            _ => None,
        }
    }
}
