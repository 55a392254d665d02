//! Several processes' traces as one timeline: each trace's timestamps are shifted by its
//! wall-clock start (`start_time` of its first event) against the earliest, pids that two traces
//! share are renumbered (with their device pids), and flow ids are offset so they stay unique.
//! Each file is read twice, event by event (its start and largest flow id, then its events), so
//! traces of any size merge in the memory of one event.

use super::read::{ReadError, read_file_with};
use crate::event::{self, Emit, Event, FlowId, Heads, Kind};
use crate::json::Json;
use crate::vocab::schema::{self as s, DEVICE_PID_BASE, device_pid};
use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;

/// What the first pass learns of one trace.
struct Found {
    wall: Option<chrono::DateTime<chrono::FixedOffset>>,
    /// The start event's `start_time` as written: with the pid, which process's trace this is.
    started: String,
    pid: u32,
    max_id: u64,
}

/// Bytes of events gathered before a write.
const FLUSH_AT: usize = 1 << 20;

/// Merges `paths` into `out` as a closed bare array, one event per line; returns the number of
/// events, or why a trace cannot be read or aligned.
pub fn merge_files(paths: &[PathBuf], mut out: impl Write) -> Result<usize, String> {
    let mut found = Vec::new();
    for path in paths {
        let mut f = Found {
            wall: None,
            started: String::new(),
            pid: 0,
            max_id: 0,
        };
        read_file_with(path, |_, e| {
            let Ok(e) = e else { return };
            if f.wall.is_none() && e.name == s::TRACE_START {
                let started = e.arg(s::START_TIME).and_then(|v| v.as_str());
                f.started = started.unwrap_or_default().to_string();
                f.wall = started.and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
                f.pid = e.u64(s::PID) as u32;
            }
            if let Some(id) = e.flow_id() {
                f.max_id = f.max_id.max(id);
            }
        })
        .map_err(|ReadError(e)| e)?;
        if f.wall.is_none() {
            return Err(format!(
                "{}: no `{}` event with an RFC 3339 start_time: not a clxfer trace, or it \
                 cannot be aligned",
                path.display(),
                s::TRACE_START
            ));
        }
        // The same process's trace twice (a copy under another name) would double every figure.
        if let Some(at) = found
            .iter()
            .position(|g: &Found| g.pid == f.pid && g.started == f.started)
        {
            return Err(format!(
                "{} and {} are the same trace (pid {}, started {}): give each process's trace once",
                paths[at].display(),
                path.display(),
                f.pid,
                f.started
            ));
        }
        found.push(f);
    }
    let Some(earliest) = found.iter().filter_map(|f| f.wall).min() else {
        out.write_all(b"[\n]\n").map_err(|e| e.to_string())?;
        return Ok(0);
    };
    let mut used: HashSet<u32> = HashSet::new();
    let mut id_base = 0u64;
    let mut written = 0usize;
    let mut failed: Option<std::io::Error> = None;
    let (mut j, mut heads) = (Json::default(), Heads::default());
    j.start(0, FLUSH_AT);
    for (path, f) in paths.iter().zip(&found) {
        let wall = f.wall.unwrap_or(earliest);
        let shift_ns = (wall - earliest).num_nanoseconds().unwrap_or(0).max(0) as u64;
        let pid = f.pid;
        let new_pid = if used.insert(pid) {
            pid
        } else {
            let free = (1..0x3f_ffff).find(|p| !used.contains(p)).unwrap_or(pid);
            used.insert(free);
            free
        };
        read_file_with(path, |_, e| {
            let Ok(mut e) = e else { return };
            place(&mut e, shift_ns, pid, new_pid, id_base);
            event::write(&mut j, &e, &mut heads);
            written += 1;
            if j.bytes().len() >= FLUSH_AT && failed.is_none() {
                failed = out.write_all(j.bytes()).err();
                j.clear();
            }
        })
        .map_err(|ReadError(e)| e)?;
        id_base = id_base.saturating_add(f.max_id);
    }
    j.finish();
    if failed.is_none() {
        failed = out.write_all(j.bytes()).err();
    }
    if let Some(e) = failed {
        return Err(e.to_string());
    }
    Ok(written)
}

/// One event on the merged timeline.
fn place(e: &mut Event, shift_ns: u64, pid: u32, new_pid: u32, id_base: u64) {
    e.ts = e.ts.saturating_add(shift_ns);
    let p = e.pid;
    e.pid = if p == pid {
        new_pid
    } else if p >= DEVICE_PID_BASE && (p >> 8) & 0x3f_ffff == pid & 0x3f_ffff {
        device_pid(new_pid, p & 0xff)
    } else {
        p
    };
    // The trace start and end are instants whose tid is the pid.
    if e.tid == p && p == pid {
        e.tid = new_pid;
    }
    if let Kind::Flow {
        id: FlowId::Num(id),
        ..
    } = &mut e.kind
    {
        *id = id.saturating_add(id_base);
    }
}
