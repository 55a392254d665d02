//! The index put together from the parts read (`super::part`), in file order: names made one
//! table, compact slices coloured by their class (said in an earlier part), each track's slices
//! gathered and sorted (the tracks on every core), arrows joined end to start, and the track
//! names and processes from the events kept whole.

use super::arrows::{Arrow, Arrows};
use super::part::{FlowEnd, Names, Part};
use super::scan::Id;
use super::track::Track;
use crate::event::{Event, FlowId, Kind, Meta};
use crate::vocab::schema::{self as s, DEVICE_PID_BASE};
use rustc_hash::FxHashMap;
use serde_json::Value;

/// A process of the trace, as its start event says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Process {
    pub pid: u32,
    pub program: String,
    pub rank: Option<u64>,
    pub ranks: Option<u64>,
    pub host: Option<String>,
}

/// The index of a trace: every track with a slice (host threads first, then each device's
/// queues and lanes, by pid and tid), the arrows between them, and what names them.
#[derive(Debug, Default)]
pub struct Index {
    pub tracks: Vec<Track>,
    /// Slice names by id.
    pub names: Vec<Box<str>>,
    pub arrows: Arrows,
    /// The arrows' kinds by index (`enqueue`, `wait`, `race`).
    pub arrow_names: Vec<Box<str>>,
    pub process_names: FxHashMap<u32, String>,
    pub thread_names: FxHashMap<(u32, u32), String>,
    pub processes: Vec<Process>,
    /// (pid, class) → where the class's first slices are, in file order.
    pub classes: FxHashMap<(u32, u64), Vec<u64>>,
    /// The report the trace's end carries, where the trace is part of the run
    /// (`CLXFER_TRACE_LIMIT_MIB` left events out): the whole run's.
    pub limited_report: Option<Value>,
    pub events: u64,
}

impl Index {
    /// The first slice's start and the latest end over every track.
    pub fn span(&self) -> Option<(u64, u64)> {
        let spans = self.tracks.iter().filter_map(Track::span);
        spans.reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
    }

    pub fn slices(&self) -> usize {
        self.tracks.iter().map(Track::len).sum()
    }

    /// Bytes the index takes in memory, about.
    pub fn bytes(&self) -> usize {
        let names: usize = self.names.iter().map(|n| n.len() + 16).sum();
        let classes: usize = self.classes.values().map(|v| v.len() * 8 + 48).sum();
        self.tracks.iter().map(Track::bytes).sum::<usize>() + self.arrows.bytes() + names + classes
    }

    /// The track of (pid, tid), if it has slices.
    pub fn track_of(&self, pid: u32, tid: u32) -> Option<usize> {
        (self.tracks.iter()).position(|t| t.pid == pid && t.tid == tid)
    }
}

/// The order of tracks: host threads first, then devices, each by pid and tid.
fn order(&(pid, tid): &(u32, u32)) -> (bool, u32, u32) {
    (pid >= DEVICE_PID_BASE, pid, tid)
}

/// The index of the parts read, in file order, its tracks sorted on `threads` threads.
pub fn build(mut parts: Vec<Part>, threads: usize) -> Index {
    let mut index = Index::default();
    let mut names = Names::default();
    // Each part's names as the index's.
    let remap: Vec<Vec<u32>> = (parts.iter())
        .map(|p| p.names.list.iter().map(|n| names.id(n)).collect())
        .collect();
    colour_classes(&mut parts);
    // Slices per track, gathered in file order.
    let mut by_track: FxHashMap<(u32, u32), Vec<super::track::Slice>> = FxHashMap::default();
    for (p, part) in parts.iter_mut().enumerate() {
        for (key, slices) in part.tracks.drain(..) {
            let to = by_track.entry(key).or_default();
            to.reserve(slices.len());
            to.extend(slices.into_iter().map(|mut s| {
                s.name = remap[p][s.name as usize];
                s
            }));
        }
    }
    let mut keyed: Vec<((u32, u32), Vec<super::track::Slice>)> = by_track.into_iter().collect();
    keyed.sort_by_key(|(k, _)| order(k));
    index.tracks = sort_tracks(keyed, threads);
    let track_at: FxHashMap<(u32, u32), u32> = (index.tracks.iter().enumerate())
        .map(|(i, t)| ((t.pid, t.tid), i as u32))
        .collect();
    index.arrows = join_arrows(&parts, &remap, &names, &track_at, &mut index.arrow_names);
    for part in parts {
        index.events += part.events;
        for (pid, class, at) in part.said {
            index.classes.entry((pid, class)).or_default().push(at);
        }
        for e in part.kept {
            keep(&mut index, e);
        }
    }
    index.names = names.list;
    index
}

/// Compact slices whose class a part before theirs said take its colour: the parts in order,
/// each one's pending slices looked up in what the parts before it said last.
fn colour_classes(parts: &mut [Part]) {
    let mut said: FxHashMap<(u32, u64), Option<u8>> = FxHashMap::default();
    for part in parts.iter_mut() {
        for p in std::mem::take(&mut part.pending) {
            let slices = &mut part.tracks[p.track as usize].1;
            let slice = &mut slices[p.slice as usize];
            let from_class = said.get(&(p.pid, p.class)).copied().flatten();
            let name = &part.names.list[slice.name as usize];
            slice.colour = super::colour::of_slice(false, name, from_class);
        }
        said.extend(part.classes.drain());
    }
}

/// Each track's slices sorted by start, the tracks shared out over `threads` threads.
fn sort_tracks(keyed: Vec<((u32, u32), Vec<super::track::Slice>)>, threads: usize) -> Vec<Track> {
    let n = keyed.len();
    let mut slots: Vec<Option<Track>> = (0..n).map(|_| None).collect();
    let work = std::sync::Mutex::new(keyed.into_iter().enumerate().collect::<Vec<_>>());
    let done = std::sync::Mutex::new(&mut slots);
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, n.max(1)) {
            scope.spawn(|| {
                loop {
                    let next = work.lock().unwrap_or_else(|e| e.into_inner()).pop();
                    let Some((i, ((pid, tid), slices))) = next else {
                        break;
                    };
                    let track = Track::new(pid, tid, slices);
                    done.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(track);
                }
            });
        }
    });
    slots.into_iter().flatten().collect()
}

/// The arrows: each end joined to the start of the same name and id before it (as the page joins
/// them), both on tracks with slices.
fn join_arrows(
    parts: &[Part],
    remap: &[Vec<u32>],
    names: &Names,
    track_at: &FxHashMap<(u32, u32), u32>,
    kinds: &mut Vec<Box<str>>,
) -> Arrows {
    let mut open: FxHashMap<(u32, Id), (u64, u32)> = FxHashMap::default();
    let mut arrows = Vec::new();
    let mut kind_of: FxHashMap<u32, u8> = FxHashMap::default();
    for (p, part) in parts.iter().enumerate() {
        for f in &part.flows {
            let FlowEnd {
                start,
                name,
                ref id,
                pid,
                tid,
                ts,
            } = *f;
            let Some(&track) = track_at.get(&(pid, tid)) else {
                continue;
            };
            let name = remap[p][name as usize];
            let id = match id {
                FlowId::Num(n) => Id::Num(*n),
                FlowId::Text(t) => Id::Text(t),
            };
            if start {
                open.insert((name, id), (ts, track));
                continue;
            }
            let Some((t0, track0)) = open.remove(&(name, id)) else {
                continue;
            };
            let next = kinds.len().min(255) as u8;
            let kind = *kind_of.entry(name).or_insert_with(|| {
                kinds.push(names.list[name as usize].clone());
                next
            });
            arrows.push(Arrow {
                t0,
                track0,
                t1: ts,
                track1: track,
                kind,
            });
        }
    }
    Arrows::new(arrows)
}

/// What an event kept whole says: a track's name, a process's start (its program, rank and
/// host), or its end (the whole run's report, where the trace is part of it).
fn keep(index: &mut Index, e: Event) {
    match &e.kind {
        Kind::Track {
            thread,
            meta: Meta::Name(n),
        } => {
            if *thread {
                index.thread_names.insert((e.pid, e.tid), n.clone());
            } else {
                index.process_names.insert(e.pid, n.clone());
            }
        }
        _ if e.name == s::TRACE_START => {
            let pid = (e.arg(s::PID).and_then(Value::as_u64))
                .and_then(|p| u32::try_from(p).ok())
                .unwrap_or(e.pid);
            index.processes.push(Process {
                pid,
                program: e.str(s::PROGRAM).to_string(),
                rank: e.arg(s::RANK).and_then(Value::as_u64),
                ranks: e.arg(s::RANKS).and_then(Value::as_u64),
                host: e.arg(s::HOST).and_then(Value::as_str).map(String::from),
            });
        }
        _ if e.name == s::TRACE_END && e.u64(s::LEFT_OUT) > 0 => {
            if let Some(r) = e.args.get("report").filter(|r| r.is_object()) {
                index.limited_report = Some(r.clone());
            }
        }
        _ => {}
    }
}
