//! One slice's details, for a click: its event read again from the file where the index says it
//! is (a JSON event's offset; a protobuf slice's begin packet, with its sequence's tables), read
//! back whole as every reader reads it (`crate::trace::compact`: a compact slice gets its class's
//! members, a device slice its host slice's words), with the command's other slice beside it.

use super::build::Index;
use super::json::NOWHERE;
use super::proto::{self, Tables};
use super::track::Slice;
use crate::event::{Event, Kind};
use crate::json::read::{from_json, to_json};
use crate::trace::compact::Expand;
use crate::vocab::schema::{self as s, DEVICE_PID_BASE};
use serde_json::{Value, json};

/// What the index's offsets point into.
pub enum Source {
    Json,
    /// Protobuf: each sequence's interning tables.
    Perfetto(Tables),
}

/// The event of slice `slice` of track `track`.
fn event(
    index: &Index,
    source: &Source,
    b: &[u8],
    track: usize,
    slice: &Slice,
) -> Result<Event, String> {
    let t = &index.tracks[track];
    let shape = Event {
        name: index.names[slice.name as usize].to_string(),
        cat: String::new(),
        kind: Kind::Slice { dur: slice.dur },
        pid: t.pid,
        tid: t.tid,
        ts: slice.start,
        args: Default::default(),
    };
    read_at(source, b, slice.at, shape)
}

/// The event at `at`: a JSON event as written; a protobuf packet's args, on `shape` (its name,
/// track and times as the index has them).
fn read_at(source: &Source, b: &[u8], at: u64, mut shape: Event) -> Result<Event, String> {
    if at == NOWHERE {
        return Err(
            "this trace is one JSON object, read whole: the index keeps no place for \
                    each event, so a slice's details are not at hand (`clxfer convert` to \
                    protobuf, or a JSON array, keeps them)"
                .into(),
        );
    }
    let rest = usize::try_from(at).ok().and_then(|at| b.get(at..));
    let rest = rest.ok_or("past the file's end")?;
    match source {
        Source::Json => {
            let start = (rest.iter())
                .position(|c| !(c.is_ascii_whitespace() || *c == b',' || *c == b'['))
                .unwrap_or(rest.len());
            let mut stream =
                serde_json::Deserializer::from_slice(&rest[start..]).into_iter::<Value>();
            match stream.next() {
                Some(Ok(v)) => from_json(v),
                Some(Err(e)) => Err(format!("the event at byte {at} is not JSON: {e}")),
                None => Err(format!("no event at byte {at}")),
            }
        }
        Source::Perfetto(tables) => {
            let packet = match crate::perfetto::wire::fields(rest).next() {
                Some(Ok((_, v))) => v.bytes(),
                _ => return Err(format!("no packet at byte {at}")),
            };
            let (seq, body) = proto::packet_event(packet).map_err(|e| e.0.to_string())?;
            let tables = tables
                .at(seq, at)
                .ok_or("the packet's sequence is not known")?;
            if let Some(body) = body {
                shape.args = proto::args(tables, body).map_err(|e| e.0.to_string())?;
            }
            Ok(shape)
        }
    }
}

/// The host pid a track's process stands for (its own, or its device's host's).
fn host_pid(pid: u32) -> u32 {
    if pid >= DEVICE_PID_BASE {
        (pid >> 8) & 0x3f_ffff
    } else {
        pid
    }
}

/// Slice `i` of track `track`, read back whole, and its command's host and device slices:
/// `{"event", "host", "device"}` (either side `null` where there is none).
pub fn details(
    index: &Index,
    source: &Source,
    b: &[u8],
    track: usize,
    i: usize,
) -> Result<Value, String> {
    let t = index.tracks.get(track).ok_or("no such track")?;
    if i >= t.len() {
        return Err("no such slice".into());
    }
    let slice = t.slice(i);
    let e = event(index, source, b, track, &slice)?;
    let pid = host_pid(t.pid);
    // The command's other side: the first slice with its number on the process's other tracks.
    let other = |device: bool| -> Option<(usize, Slice)> {
        (slice.command != 0).then_some(())?;
        index.tracks.iter().enumerate().find_map(|(k, o)| {
            let same_side = (o.pid >= DEVICE_PID_BASE) == device;
            if !same_side || host_pid(o.pid) != pid || k == track {
                return None;
            }
            o.find_command(slice.command).map(|j| (k, o.slice(j)))
        })
    };
    let on_device = t.pid >= DEVICE_PID_BASE;
    let (host, device) = if on_device {
        let h = other(false).map(|(k, s)| Ok::<_, String>((event(index, source, b, k, &s)?, s.at)));
        (h.transpose()?, Some(e))
    } else {
        let d = other(true)
            .map(|(k, s)| event(index, source, b, k, &s))
            .transpose()?;
        (Some((e, slice.at)), d)
    };
    // Read back whole, as the readers read them: the class's first slice, the host slice, then
    // the device slice.
    let mut x = Expand::default();
    let mut host = host;
    if let Some((h, at)) = host.as_mut() {
        if let Some(mut first) = class_first(index, source, b, h, *at)? {
            x.event(&mut first);
        }
        x.event(h);
    }
    let host = host.map(|(h, _)| h);
    let mut device = device;
    if let Some(d) = device.as_mut() {
        x.event(d);
    }
    let shown = |e: &Option<Event>| e.as_ref().map_or(Value::Null, to_json);
    let event = if on_device {
        shown(&device)
    } else {
        shown(&host)
    };
    Ok(json!({"event": event, "host": shown(&host), "device": shown(&device)}))
}

/// A compact host slice's class's first slice before it (at `at`): the one that says its members.
fn class_first(
    index: &Index,
    source: &Source,
    b: &[u8],
    e: &Event,
    at: u64,
) -> Result<Option<Event>, String> {
    let Some(class) = e.arg(s::CLASS).and_then(Value::as_u64) else {
        return Ok(None);
    };
    let Some(firsts) = index.classes.get(&(e.pid, class)) else {
        return Ok(None);
    };
    let k = firsts.partition_point(|&f| f < at);
    let Some(&first) = k.checked_sub(1).and_then(|k| firsts.get(k)) else {
        return Ok(None);
    };
    let shape = Event {
        args: Default::default(),
        ..e.clone()
    };
    read_at(source, b, first, shape).map(Some)
}
