//! Compact traces read back whole (docs/TRACE.md, *Compact*): the writer says what repeats once
//! (`crate::sink::chrome`'s `classes.rs`), and clxfer's readers put it back on every event, so
//! the report, the CSV and the tests see each host slice with its whole classification and each
//! device slice with its direction, path, bytes and enqueue-to-start, as if nothing were left out.

use crate::event::Event;
use crate::vocab::schema as s;
use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

/// A host slice's keys that vary per call; the rest of a class's first slice are its members (any
/// other key makes a slice its class's first: the viewer's index, `super::index::colour`).
pub const PER_CALL: &[&str] = &[
    s::CLASS.name,
    s::COMMAND.name,
    s::WAITS.name,
    s::WAITS_UNKNOWN.name,
    s::AFTER.name,
    s::AFTER_ALL.name,
    s::BYTES.name,
    s::HOST_PTR.name,
    s::PROJECTED_US.name,
    s::PROJECTED_GBPS.name,
    s::HOST_GBPS.name,
    s::REGION.name,
];

/// Host slices waiting for their device slice, at most (then forgotten: their device slices keep
/// what they say themselves).
const WAITING: usize = 1 << 20;

/// What a device slice takes from its host slice.
struct Host {
    ts: u64,
    class: Vec<(&'static str, Value)>,
}

/// Reads a trace's events back whole, one after another in file order.
#[derive(Default)]
pub struct Expand {
    /// (pid, class) → the class's members; of each process, the newest [`s::CLASSES`] (no
    /// slice names an older one), in the order said.
    classes: FxHashMap<(u64, u64), Map<String, Value>>,
    said: FxHashMap<u64, std::collections::VecDeque<u64>>,
    /// (host pid, command) → what its device slice leaves to it.
    hosts: FxHashMap<(u64, u64), Host>,
}

impl Expand {
    pub fn event(&mut self, e: &mut Event) {
        if !e.is_slice() {
            return;
        }
        let (pid, ts) = (u64::from(e.pid), e.ts);
        let on_device = e.on_device();
        let args = &mut e.args;
        let command = args.get(s::COMMAND.name).and_then(Value::as_u64);
        if !on_device {
            self.host(pid, ts, command, args);
        } else if let Some(command) = command {
            self.device(pid, ts, command, args);
        }
    }

    fn host(&mut self, pid: u64, ts: u64, command: Option<u64>, args: &mut Map<String, Value>) {
        let Some(class) = args.get(s::CLASS.name).and_then(Value::as_u64) else {
            return;
        };
        let members: Map<String, Value> = (args.iter())
            .filter(|(k, _)| !PER_CALL.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if members.is_empty() {
            if let Some(m) = self.classes.get(&(pid, class)) {
                for (k, v) in m {
                    args.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        } else {
            let said = self.said.entry(pid).or_default();
            if said.len() as u64 >= s::CLASSES
                && let Some(old) = said.pop_front()
            {
                self.classes.remove(&(pid, old));
            }
            said.push_back(class);
            self.classes.insert((pid, class), members);
        }
        // A timed transfer's device slice follows: it takes the class's words from here.
        let (Some(command), None) = (command, args.get(s::DEVICE_TIME.name)) else {
            return;
        };
        if args.get(s::PATH.name).is_none() {
            return;
        }
        if self.hosts.len() >= WAITING {
            self.hosts.clear();
        }
        let class = [s::DIRECTION, s::PATH, s::BYTES]
            .iter()
            .filter_map(|k| Some((k.name, args.get(k.name)?.clone())))
            .collect();
        self.hosts.insert((pid, command), Host { ts, class });
    }

    fn device(&mut self, pid: u64, ts: u64, command: u64, args: &mut Map<String, Value>) {
        let host_pid = (pid >> 8) & 0x3f_ffff;
        let Some(h) = self.hosts.remove(&(host_pid, command)) else {
            return;
        };
        for (k, v) in h.class {
            args.entry(k).or_insert(v);
        }
        // Measured (no `device_time` says otherwise) and joined: from the enqueue's start to
        // its own.
        if !args.contains_key(s::DEVICE_TIME.name) && !args.contains_key(s::ENQUEUE_TO_START.name) {
            let ns = ts.saturating_sub(h.ts);
            args.insert(
                s::ENQUEUE_TO_START.name.into(),
                Value::from(ns as f64 / 1000.0),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The event a test's short JSON stands for (its thread and duration are not the point).
    fn ev(mut v: Value) -> Event {
        v["tid"] = 1.into();
        if v["ph"] == "X" {
            v["dur"] = 0.into();
        }
        crate::json::read::from_json(v).unwrap()
    }

    /// (events as written, the same events as read back whole).
    #[test]
    fn compact_events_read_back_whole() {
        let dpid = s::device_pid(7, 1) as u64;
        let written = [
            json!({"ph": "X", "pid": 7, "ts": 10.0, "args": {"command": 1, "class": 1, "bytes": 4096, "api": "clEnqueueWriteBuffer", "direction": "H2D", "path": "staged", "reasons": ["[a] b"]}}),
            json!({"ph": "X", "pid": 7, "ts": 20.0, "args": {"command": 2, "class": 1, "bytes": 8192}}),
            json!({"ph": "X", "pid": 7, "ts": 21.0, "args": {"command": 3, "class": 2, "bytes": 8, "api": "clEnqueueWriteBuffer", "device_time": "sampled"}}),
            json!({"ph": "X", "pid": 7, "ts": 22.0, "args": {"command": 4, "class": 2, "bytes": 8}}),
            json!({"ph": "X", "pid": dpid, "ts": 10.5, "args": {"command": 1, "queued_to_submit_us": 0.1, "submit_to_start_us": 0.2}}),
            json!({"ph": "X", "pid": dpid, "ts": 20.25, "args": {"command": 2}}),
            json!({"ph": "X", "pid": 7, "ts": 24.0, "args": {"command": 5, "class": 1, "bytes": 16}}),
            json!({"ph": "X", "pid": dpid, "ts": 25.0, "args": {"command": 5, "device_time": "unavailable"}}),
            json!({"ph": "X", "pid": 8, "ts": 1.0, "args": {"command": 1, "class": 1}}),
            json!({"ph": "X", "pid": dpid, "ts": 30.0, "args": {"command": 9, "direction": "D2H", "path": "pinned", "bytes": 1, "enqueue_to_start_us": 2.0}}),
            json!({"ph": "s", "pid": 7, "ts": 10.0, "id": 1}),
        ];
        let whole = [
            json!({"ph": "X", "pid": 7, "ts": 10.0, "args": {"command": 1, "class": 1, "bytes": 4096, "api": "clEnqueueWriteBuffer", "direction": "H2D", "path": "staged", "reasons": ["[a] b"]}}),
            // A later slice of the class: its members, its own bytes.
            json!({"ph": "X", "pid": 7, "ts": 20.0, "args": {"command": 2, "class": 1, "bytes": 8192, "api": "clEnqueueWriteBuffer", "direction": "H2D", "path": "staged", "reasons": ["[a] b"]}}),
            // Sampled device timing left these untimed: a class of their own.
            json!({"ph": "X", "pid": 7, "ts": 21.0, "args": {"command": 3, "class": 2, "bytes": 8, "api": "clEnqueueWriteBuffer", "device_time": "sampled"}}),
            json!({"ph": "X", "pid": 7, "ts": 22.0, "args": {"command": 4, "class": 2, "bytes": 8, "api": "clEnqueueWriteBuffer", "device_time": "sampled"}}),
            // The device slice: its host slice's words, and the time from the enqueue's start.
            json!({"ph": "X", "pid": dpid, "ts": 10.5, "args": {"command": 1, "queued_to_submit_us": 0.1, "submit_to_start_us": 0.2, "direction": "H2D", "path": "staged", "bytes": 4096, "enqueue_to_start_us": 0.5}}),
            // Measured without QUEUED and SUBMIT (not asked of most small commands) alike.
            json!({"ph": "X", "pid": dpid, "ts": 20.25, "args": {"command": 2, "direction": "H2D", "path": "staged", "bytes": 8192, "enqueue_to_start_us": 0.25}}),
            // Not measured: no time from the enqueue.
            json!({"ph": "X", "pid": 7, "ts": 24.0, "args": {"command": 5, "class": 1, "bytes": 16, "api": "clEnqueueWriteBuffer", "direction": "H2D", "path": "staged", "reasons": ["[a] b"]}}),
            json!({"ph": "X", "pid": dpid, "ts": 25.0, "args": {"command": 5, "device_time": "unavailable", "direction": "H2D", "path": "staged", "bytes": 16}}),
            // Another process's class 1 is another class (not defined here: left as is).
            json!({"ph": "X", "pid": 8, "ts": 1.0, "args": {"command": 1, "class": 1}}),
            // A device slice without its host slice says everything itself.
            json!({"ph": "X", "pid": dpid, "ts": 30.0, "args": {"command": 9, "direction": "D2H", "path": "pinned", "bytes": 1, "enqueue_to_start_us": 2.0}}),
            json!({"ph": "s", "pid": 7, "ts": 10.0, "id": 1}),
        ];
        let mut x = Expand::default();
        for (e, want) in written.into_iter().zip(whole) {
            let mut e = ev(e);
            x.event(&mut e);
            assert_eq!(e, ev(want));
        }
    }

    /// A reader keeps a process's newest classes, as many as a writer may still name.
    #[test]
    fn only_the_newest_classes_are_kept() {
        let mut x = Expand::default();
        let slice = |class: u64, api: Option<&str>| match api {
            Some(api) => {
                ev(json!({"ph": "X", "pid": 7, "ts": 1.0, "args": {"class": class, "api": api}}))
            }
            None => ev(json!({"ph": "X", "pid": 7, "ts": 1.0, "args": {"class": class}})),
        };
        for class in 1..=s::CLASSES + 1 {
            x.event(&mut slice(class, Some("clFoo")));
        }
        let (mut oldest, mut kept) = (slice(1, None), slice(2, None));
        x.event(&mut oldest);
        x.event(&mut kept);
        assert_eq!(oldest, slice(1, None));
        assert_eq!(kept, slice(2, Some("clFoo")));
    }
}
