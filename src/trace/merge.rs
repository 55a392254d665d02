//! Several processes' traces as one timeline: each trace's timestamps are shifted by its
//! wall-clock start (`start_time` of its first event) against the earliest, pids that two traces
//! share are renumbered (with their device pids), and flow ids are offset so they stay unique.
//! Each file is read twice, event by event (its start and largest flow id, then its events), so
//! traces of any size merge in the memory of one event per core.

use super::read::{ReadError, read_file_with};
use crate::event::{self, Emit, Event, FlowId, Heads, Kind};
use crate::json::Json;
use crate::vocab::schema::{self as s, DEVICE_PID_BASE, device_pid};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

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

/// The first pass over one trace: its start and largest flow id.
fn first_pass(path: &Path) -> Result<Found, String> {
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
            "{}: no `{}` event with an RFC 3339 start_time: not a clxfer trace, or it cannot be \
             aligned",
            path.display(),
            s::TRACE_START
        ));
    }
    Ok(f)
}

/// Where one trace's events go on the merged timeline.
#[derive(Clone, Copy)]
struct Place {
    shift_ns: u64,
    pid: u32,
    new_pid: u32,
    id_base: u64,
}

/// Merges `paths` into `out` as a closed bare array, one event per line; returns the number of
/// events, or why a trace cannot be read or aligned. Both passes read the traces on every core
/// (`super::many`); the second writes each trace's events to a part of its own in a temporary
/// directory, and the parts are joined in the traces' order.
pub fn merge_files(paths: &[PathBuf], mut out: impl Write) -> Result<usize, String> {
    let mut found: Vec<Found> = Vec::new();
    for (path, f) in paths
        .iter()
        .zip(super::many::each(paths, |p| first_pass(p)))
    {
        let f = f?;
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
    let mut places = Vec::new();
    for f in &found {
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
        places.push(Place {
            shift_ns,
            pid,
            new_pid,
            id_base,
        });
        id_base = id_base.saturating_add(f.max_id);
    }
    let parts = Parts::new()?;
    let jobs: Vec<(usize, &PathBuf, Place)> = (paths.iter().zip(places).enumerate())
        .map(|(i, (p, place))| (i, p, place))
        .collect();
    let written = super::many::each(&jobs, |&(i, path, place)| parts.write(i, path, place));
    let mut events = 0;
    let mut sizes = Vec::new();
    for w in written {
        let (n, size) = w?;
        events += n;
        sizes.push(size);
    }
    parts.join(&sizes, &mut out).map_err(|e| e.to_string())?;
    Ok(events)
}

/// The second pass's parts: a temporary directory, removed when done.
struct Parts(std::path::PathBuf);

impl Parts {
    fn new() -> Result<Parts, String> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "clxfer-merge-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        Ok(Parts(dir))
    }

    fn part(&self, i: usize) -> std::path::PathBuf {
        self.0.join(format!("{i}.json"))
    }

    /// Trace `path`'s events placed on the merged timeline, into part `i`, each followed by
    /// `,\n`: how many, and the part's bytes.
    fn write(&self, i: usize, path: &Path, place: Place) -> Result<(usize, u64), String> {
        let part = self.part(i);
        let failed = |e: std::io::Error| format!("writing {}: {e}", part.display());
        let mut out = std::fs::File::create(&part).map_err(failed)?;
        let (mut j, mut heads) = (Json::default(), Heads::default());
        let (mut n, mut size, mut error) = (0, 0u64, None);
        read_file_with(path, |_, e| {
            let Ok(mut e) = e else { return };
            place_event(&mut e, place);
            event::write(&mut j, &e, &mut heads);
            n += 1;
            if j.bytes().len() >= FLUSH_AT && error.is_none() {
                size += j.bytes().len() as u64;
                error = out.write_all(j.bytes()).err();
                j.clear();
            }
        })
        .map_err(|ReadError(e)| e)?;
        if error.is_none() {
            size += j.bytes().len() as u64;
            error = out.write_all(j.bytes()).err();
        }
        match error {
            Some(e) => Err(failed(e)),
            None => Ok((n, size)),
        }
    }

    /// The parts, in order, as one closed array (the last event's separator left out).
    fn join(&self, sizes: &[u64], out: &mut impl Write) -> std::io::Result<()> {
        out.write_all(b"[\n")?;
        let last = sizes.iter().rposition(|&s| s > 0);
        for (i, &size) in sizes.iter().enumerate() {
            let file = std::fs::File::open(self.part(i))?;
            let keep = if Some(i) == last { size - 2 } else { size };
            std::io::copy(&mut std::io::Read::take(file, keep), out)?;
        }
        out.write_all(if last.is_some() { b"\n]\n" } else { b"]\n" })
    }
}

impl Drop for Parts {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One event on the merged timeline.
fn place_event(e: &mut Event, place: Place) {
    let Place {
        shift_ns,
        pid,
        new_pid,
        id_base,
    } = place;
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
