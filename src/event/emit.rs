//! What a format's serialiser implements: an event's typed head ([`Head`]: its name, category,
//! kind, track and time) and then, for slices and instants, its `args` through calls shaped like
//! JSON's (objects, arrays, keys, values), which both Chrome's JSON and Perfetto's debug
//! annotations are. An event starts with [`Emit::begin_event`] and ends with
//! [`Emit::end_event`]; between them, if it has any, [`Emit::args`] opens its args, which the
//! caller closes with [`Emit::close`].
//!
//! A fragment rendered into a separate emitter and copied with [`Emit::raw_bytes`] (the cached
//! classification, flag names, a class's members) must come from the same kind of emitter, in
//! the same place: a value after a key, or members inside `args`.

use super::Kind;
use crate::vocab::schema::Key;
use rustc_hash::FxBuildHasher;
use std::collections::HashMap;

/// A piece of a literal string built of words and numbers (`Emit::raw_parts`).
pub enum Part {
    Text(&'static str),
    Num(u64),
}

/// An event's name: clxfer's own words joined by spaces, or text to escape.
#[derive(Clone, Copy)]
pub enum Name<'a> {
    Words(&'a [&'static str]),
    Shown(&'a dyn std::fmt::Display),
    Text(&'a str),
}

/// A category: one of clxfer's words (a constant, which writers may look up by address), or
/// text read from a trace.
#[derive(Clone, Copy)]
pub enum Text<'a> {
    Word(&'static str),
    Str(&'a str),
}

impl Text<'_> {
    pub fn as_str(&self) -> &str {
        match self {
            Text::Word(w) => w,
            Text::Str(s) => s,
        }
    }
}

/// What opens an event. A metadata event's name is its kind's ([`super::track_event_name`]).
#[derive(Clone)]
pub struct Head<'a> {
    pub name: Name<'a>,
    pub cat: Text<'a>,
    pub kind: Kind<&'a str>,
    pub pid: u32,
    pub tid: u32,
    /// Nanoseconds from the trace's start.
    pub ts: u64,
}

/// The JSON writer's cache of what follows an event's name (`"cat":…,"ts":`), by (cat, ph,
/// pid, tid), the strings by address (each is one of clxfer's constants).
pub type Heads = HashMap<((usize, usize), (usize, usize), u32, u32), Box<[u8]>, FxBuildHasher>;

pub trait Emit: Default + Send {
    /// Opens an event. Its kind's own fields are written here (a slice's duration, an arrow's
    /// id); a flow, counter or metadata event is whole with it.
    fn begin_event(&mut self, head: &Head, heads: &mut Heads);
    /// Opens the `args` of the slice or instant begun: the members written next are its, until
    /// [`Emit::close`].
    fn args(&mut self) -> &mut Self;
    /// Closes the event opened last.
    fn end_event(&mut self);
    /// What comes before the first event (clxfer's clock starts at `start_mono_ns`; the
    /// writer flushes at `capacity` bytes, which its buffers hold from the start), and after
    /// the last.
    fn start(&mut self, start_mono_ns: u64, capacity: usize);
    fn finish(&mut self);
    /// A new chunk of a ring begins (`crate::sink::ring`): what follows must stand alone.
    fn restart(&mut self) {}
    /// The bytes written since the last [`Emit::clear`].
    fn bytes(&self) -> &[u8];
    /// Empty again, its buffer kept.
    fn clear(&mut self);
    /// The longest prefix of [`Emit::bytes`] of at most `room` bytes that holds whole events.
    fn fit(&self, room: usize) -> usize;

    fn open(&mut self) -> &mut Self;
    fn close(&mut self) -> &mut Self;
    fn open_array(&mut self) -> &mut Self;
    fn close_array(&mut self) -> &mut Self;
    fn key(&mut self, key: &str) -> &mut Self;
    fn qkey(&mut self, quoted: &'static str) -> &mut Self;
    fn field(&mut self, key: Key) -> &mut Self;
    fn word(&mut self, value: &'static str) -> &mut Self;
    fn words(&mut self, words: &[&'static str]) -> &mut Self;
    fn str(&mut self, value: &str) -> &mut Self;
    fn display(&mut self, value: &dyn std::fmt::Display) -> &mut Self;
    fn u64(&mut self, value: u64) -> &mut Self;
    fn i64(&mut self, value: i64) -> &mut Self;
    /// A number read from a trace that is not an integer.
    fn f64(&mut self, value: f64) -> &mut Self;
    fn bool(&mut self, value: bool) -> &mut Self;
    /// A value read as JSON's `null`.
    fn null(&mut self) -> &mut Self;
    /// Nanoseconds, as microseconds.
    fn us(&mut self, ns: u64) -> &mut Self;
    /// A number to three decimals.
    fn f3(&mut self, value: f64) -> &mut Self;
    /// A pointer or handle.
    fn hex(&mut self, value: u64) -> &mut Self;
    fn raw_bytes(&mut self, bytes: &[u8]) -> &mut Self;
    /// A value given as JSON text (the run's report).
    fn raw_json(&mut self, json: &str) -> &mut Self;
    /// One string value made of clxfer's words and numbers.
    fn raw_parts(&mut self, parts: &[Part]) -> &mut Self;
}
