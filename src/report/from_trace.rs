//! The report of a saved trace: its events turned back into the facts the live summary gets
//! (`sink/summary.rs`), fed to the same [`Builder`].

use super::{
    Builder, DeviceEndFacts, DeviceFacts, EndFacts, Enqueue, Fact, Link, On, RaceFact, RaceSide,
    Ran, Report, Sync, Work, kind,
};
use crate::event::{Event, Kind, Meta};
use crate::model::classification::{Cited, Direction, Path, When};
use crate::model::flags::{self, MAP_FLAGS, MIGRATION_FLAGS};
use crate::model::rules::RuleSet;
use crate::trace::read::{self, ReadError};
use crate::vocab::schema::{self as s, DEVICE_PID_BASE, LANES};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// A time in `args` (microseconds) in nanoseconds; 0 when absent or negative.
fn ns(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_f64)
        .map_or(0, |us| (us * 1000.0).round().max(0.0) as u64)
}

/// An integer: a number, or a decimal string past 2^53 (`crate::json::write`).
fn u64_of(args: &Value, key: s::Key) -> u64 {
    match args.get(key.name) {
        Some(Value::String(text)) => text.parse().unwrap_or(0),
        v => v.and_then(Value::as_u64).unwrap_or(0),
    }
}

fn str_of(args: &Value, key: s::Key) -> &str {
    args.get(key.name).and_then(Value::as_str).unwrap_or("")
}

fn word<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str, w: &str) -> Option<T> {
    all.iter().copied().find(|&x| name(x) == w)
}

/// A host enqueue slice's facts, if it was a classified transfer.
fn enqueue(args: &Value, host_ns: u64) -> Option<Enqueue> {
    let direction = word(
        Direction::ALL,
        Direction::as_str,
        str_of(args, s::DIRECTION),
    )?;
    let path = word(Path::ALL, Path::as_str, str_of(args, s::PATH))?;
    let (device, queue) = queue_of(args)?;
    let rule_ids = args.get(s::RULE_IDS.name).and_then(Value::as_array);
    let cited = Cited::of(rule_ids.into_iter().flatten().filter_map(Value::as_str));
    let flags = match (
        args.get(s::MAP_FLAGS.name),
        args.get(s::MIGRATION_FLAGS.name),
    ) {
        (Some(Value::String(f)), _) => flags::encode(f, MAP_FLAGS),
        (_, Some(Value::String(f))) => flags::encode(f, MIGRATION_FLAGS),
        _ => None,
    }
    .map(super::small_flags);
    Some(Enqueue {
        device,
        queue,
        kind: kind(str_of(args, s::API)),
        direction,
        path,
        bytes: u64_of(args, s::BYTES),
        blocking: args.get(s::BLOCKING.name).and_then(Value::as_bool) == Some(true),
        host_ns,
        calls: 1,
        pageable: str_of(args, s::HOST_MEMORY) == "pageable",
        mapped: crate::model::kinds::staging(str_of(args, s::HOST_MEMORY)),
        misaligned: cited.misaligned,
        holds_host: cited.holds_host,
        hand_off: cited.hand_off,
        locked: cited.locked,
        flags,
        sampled: str_of(args, s::DEVICE_TIME) == "sampled",
        when: word(When::ALL, When::as_str, str_of(args, s::MOVED)),
    })
}

/// A race instant's facts (`sink/chrome.rs` writes them).
fn race(args: &Value) -> Option<RaceFact> {
    let side = |v: &Value| -> Option<RaceSide> {
        let (device, queue) = queue_of(v)?;
        let bytes = v.get("bytes")?.as_array()?;
        Some(RaceSide {
            command: v.get("command")?.as_u64()?,
            api: v.get("api")?.as_str()?.into(),
            device,
            queue,
            thread: v.get("thread")?.as_u64()? as u32,
            access: v.get("access")?.as_str()?.into(),
            bytes: (
                bytes.first()?.as_u64()?,
                bytes.get(1).and_then(Value::as_u64).unwrap_or(u64::MAX),
            ),
        })
    };
    let object = str_of(args, s::MEM_OBJECT).trim_start_matches("0x");
    Some(RaceFact {
        object: u64::from_str_radix(object, 16).ok()?,
        confidence: str_of(args, s::CONFIDENCE).into(),
        first: side(args.get(s::FIRST.name)?)?,
        second: side(args.get(s::SECOND.name)?)?,
    })
}

/// (D, Q) of `device #D queue #Q`.
fn queue_of(args: &Value) -> Option<(u32, u32)> {
    let on = str_of(args, s::QUEUE).strip_prefix("device #")?;
    match on.split_once(" queue #") {
        Some((d, q)) => Some((d.parse().ok()?, q.parse().ok()?)),
        // On no queue (a creation's copy): queue 0.
        None => Some((on.parse().ok()?, 0)),
    }
}

/// Reads a trace's events one at a time into the report's facts.
#[derive(Default)]
pub struct Reader {
    b: Builder,
    end: Option<EndFacts>,
    /// Events the writer left out past CLXFER_TRACE_LIMIT_MIB (its end event says).
    left_out: u64,
    last_ts: u64,
    /// Events read, and whether one was clxfer's start event.
    events: u64,
    started: bool,
    /// The start event's `ts`: 0, or in a merge the process's shift on the merged timeline.
    start_ts: u64,
    /// Out-of-order queues, (device, queue), from their tracks' names.
    out_of_order: HashSet<(u32, u32)>,
    /// Each queue's last command so far: an in-order queue's next command is ordered after it.
    last_on: HashMap<(u32, u32), u64>,
    /// The program's calls per entry point, from its call slices: the table of a trace cut short
    /// (the end event carries the layer's).
    calls: crate::report::FromSlices,
}

impl Reader {
    /// A host enqueue slice's place in the graph; `at` and `dur` are its times.
    fn link(&mut self, tid: u32, args: &Value, id: u64, (at, dur): (u64, u64)) -> Link {
        let queue = queue_of(args).unwrap_or_default();
        let previous = self.last_on.insert(queue, id).unwrap_or(0);
        let after = match args.get(s::AFTER.name).and_then(Value::as_u64) {
            Some(a) => a,
            None if self.out_of_order.contains(&queue) => 0,
            None => previous,
        };
        let waits = args.get(s::WAITS.name).and_then(Value::as_array);
        Link {
            id,
            tid,
            begin: at,
            end: at.saturating_add(dur),
            before: Link::before(after, waits.into_iter().flatten().filter_map(Value::as_u64)),
        }
    }

    /// A host synchronisation point's slice.
    fn sync(&mut self, e: &Event, on: On) {
        let begin = e.ts.saturating_sub(self.start_ts);
        self.b.sync(Sync {
            tid: e.tid,
            begin,
            end: begin.saturating_add(e.dur()),
            on,
        });
    }

    pub fn event(&mut self, mut e: Event) {
        let b = &mut self.b;
        let (ts, dur) = (e.ts, e.dur());
        // The schema's keys, read as JSON values (nested ones are: a race's sides, devices).
        let args = Value::Object(std::mem::take(&mut e.args));
        let name = e.name.as_str();
        self.last_ts = self.last_ts.max(ts);
        self.events += 1;
        if e.is_slice() && !e.on_device() {
            let api = args
                .get(s::API.name)
                .and_then(Value::as_str)
                .unwrap_or(name);
            if api.starts_with("cl") {
                let waited = args.get(s::WAITED_FOR.name).is_some()
                    || args.get(s::FINISHED_UP_TO.name).is_some()
                    || args.get(s::BLOCKING.name) == Some(&Value::Bool(true));
                self.calls.add(api, dur, waited);
            }
        }
        let args = &args;
        match &e.kind {
            Kind::Instant(_) => match name {
                s::TRACE_START => {
                    self.started = true;
                    self.start_ts = ts;
                    b.program = str_of(args, s::PROGRAM).into();
                    b.pid = u64_of(args, s::PID) as u32;
                    b.start_time = str_of(args, s::START_TIME).into();
                    let number = |k: s::Key| args.get(k.name)?.as_u64().map(|n| n as u32);
                    b.job = super::JobPlace {
                        rank: number(s::RANK),
                        ranks: number(s::RANKS),
                        host: args
                            .get(s::HOST.name)
                            .and_then(Value::as_str)
                            .map(Into::into),
                    };
                }
                s::FUNCTION_NOT_FOUND => b.missing(str_of(args, s::FUNCTION)),
                s::RACE => {
                    if let Some(r) = race(args) {
                        b.race(r);
                    }
                }
                s::DEVICE_INFO => b.device(DeviceFacts {
                    index: u64_of(args, s::DEVICE_INDEX) as u32,
                    name: str_of(args, s::NAME).into(),
                    rules: str_of(args, s::RULES).into(),
                    auto_rules: str_of(args, s::AUTO_RULES).into(),
                    global_mem: u64_of(args, s::GLOBAL_MEM),
                    memory_given: u64_of(args, s::MEMORY_GIVEN),
                    host_import: str_of(args, s::HOST_IMPORT).into(),
                }),
                s::TRACE_END => {
                    self.left_out = u64_of(args, s::LEFT_OUT);
                    self.end = Some(end_facts(args, ts.saturating_sub(self.start_ts)))
                }
                _ => {}
            },
            // A queue's first lane is named for its kind: `queue #Q (out-of-order) · …`.
            Kind::Track {
                thread: true,
                meta: Meta::Name(track),
            } if e.on_device()
                && e.tid.is_multiple_of(LANES)
                && track.contains("(out-of-order)") =>
            {
                self.out_of_order.insert((e.pid & 0xff, e.tid / LANES));
            }
            Kind::Slice { .. }
                if e.cat == s::CAT_ENQUEUE
                    || args.get(s::PATH.name).is_some()
                    || args.get(s::KERNEL.name).is_some() =>
            {
                // An untimed command (no device slice will come) is reported at once.
                let untimed = matches!(str_of(args, s::DEVICE_TIME), "untimed" | "sampled");
                let command = u64_of(args, s::COMMAND);
                let id = if untimed { 0 } else { command };
                let at = ts.saturating_sub(self.start_ts);
                if e.on_device() {
                    let unavailable = args.get(s::DEVICE_TIME.name).is_some();
                    let after_call = args.get(s::ENQUEUE_TO_START.name).map(|us| ns(Some(us)));
                    let ran = Ran {
                        ns: dur,
                        // Written with every measured device time (0 in a trace without it).
                        after_call_ns: after_call.unwrap_or(0),
                        start_ns: at,
                    };
                    if args
                        .get(s::STATUS.name)
                        .and_then(Value::as_i64)
                        .is_some_and(|st| st < 0)
                    {
                        b.failed(id);
                    }
                    b.completed(id, (!unavailable).then_some(ran));
                    return;
                }
                let link = self.link(e.tid, args, command, (at, dur));
                let kernel = args.get(s::KERNEL.name).and_then(Value::as_str);
                let sampled = str_of(args, s::DEVICE_TIME) == "sampled";
                let work = queue_of(args).and_then(|on| {
                    Work::of(
                        enqueue(args, dur),
                        kernel.map(Into::into),
                        on,
                        (dur, sampled),
                    )
                });
                if let Some(work) = work {
                    self.b.fact(id, Fact { work, link });
                }
            }
            Kind::Slice { .. } if args.get(s::WAITED_FOR.name).is_some() => {
                let ids = args[s::WAITED_FOR.name].as_array().into_iter().flatten();
                let on = On::Commands(ids.filter_map(Value::as_u64).collect());
                self.sync(&e, on);
            }
            Kind::Slice { .. } if args.get(s::FINISHED_UP_TO.name).is_some() => {
                if let Some(queue) = queue_of(args) {
                    let last = u64_of(args, s::FINISHED_UP_TO);
                    self.sync(&e, On::Queue { queue, last });
                }
            }
            _ => {}
        }
    }

    pub fn report(mut self) -> Report {
        // A trace cut short (a killed program) has no end: the run lasted until its last event.
        match self.end {
            Some(end) => self.b.end(end),
            None => {
                self.b.cut_short(self.last_ts.saturating_sub(self.start_ts));
                self.b.host_calls(std::mem::take(&mut self.calls).rows());
            }
        }
        self.b.report()
    }
}

/// The process an event belongs to: its pid, or the host pid a device track's pid holds
/// ([`s::device_pid`]). A merged trace holds several processes, each reported on its own.
pub fn process_of(pid: u64) -> u64 {
    if pid >= DEVICE_PID_BASE as u64 {
        (pid >> 8) & 0x3f_ffff
    } else {
        pid & 0x3f_ffff
    }
}

/// One [`Reader`] per process, in the order of their first events.
#[derive(Default)]
struct Processes {
    each: Vec<(u64, Reader)>,
    /// `clxfer report --project`.
    project: Option<&'static RuleSet>,
}

impl Processes {
    fn event(&mut self, e: Event) {
        let p = process_of(e.pid.into());
        let at = match self.each.iter().position(|(q, _)| *q == p) {
            Some(at) => at,
            None => {
                let mut r = Reader::default();
                if let Some(set) = self.project {
                    r.b.project(set);
                }
                self.each.push((p, r));
                self.each.len() - 1
            }
        };
        self.each[at].1.event(e);
    }
}

/// The report of each process in a trace's events (one, unless the trace is a merge).
pub fn report(events: impl IntoIterator<Item = Event>) -> Vec<Report> {
    let mut ps = Processes::default();
    for e in events {
        ps.event(e);
    }
    ps.each.into_iter().map(|(_, r)| r.report()).collect()
}

/// A process's report from a trace file, and a warning when its trace was cut short (no end
/// event: the program was killed, or the file was cut).
pub struct FileReport {
    pub report: Report,
    /// Why the report is not the whole run's: the trace was cut short, or left events out.
    pub warning: Option<String>,
}

/// The report of each process in a trace file (one, unless it is a merge), read event by event
/// (any size). A file with no events, or whose events are not clxfer's (another tool's trace), is
/// an error: no report that looks complete. Events of a process with no start event of clxfer's
/// are left out.
///
/// `project`: devices the set describes are projected onto its cost model beside their measured
/// figures (devices under forced rules are projected anyway).
pub fn report_file(
    path: &std::path::Path,
    project: Option<&'static RuleSet>,
) -> Result<Vec<FileReport>, ReadError> {
    let mut ps = Processes {
        project,
        ..Processes::default()
    };
    read::read_expanded_with(path, |_, e| ps.event(e))?;
    let events: u64 = ps.each.iter().map(|(_, r)| r.events).sum();
    if events == 0 {
        return Err(ReadError(format!(
            "{}: an empty trace (no events)",
            path.display()
        )));
    }
    ps.each.retain(|(_, r)| r.started);
    if ps.each.is_empty() {
        return Err(ReadError(format!(
            "{}: not a clxfer trace: {events} events, none of them `{}` (another tool's trace?)",
            path.display(),
            s::TRACE_START
        )));
    }
    let processes = ps.each.len();
    Ok(ps
        .each
        .into_iter()
        .map(|(pid, r)| {
            let whose = if processes > 1 {
                format!(" (process {pid})")
            } else {
                String::new()
            };
            let cut_short = r.end.is_none().then(|| {
                format!(
                    "{}{whose} was cut short (no `{}` event): the report covers its first {} \
                     and {} events; memory peaks, the clock mapping and the commands left \
                     incomplete are not known",
                    path.display(),
                    s::TRACE_END,
                    crate::units::duration(r.last_ts.saturating_sub(r.start_ts)),
                    r.events
                )
            });
            let limited = (r.left_out > 0).then(|| {
                format!(
                    "{}{whose} left out {} events past CLXFER_TRACE_LIMIT_MIB: this report covers \
                     the {} it holds; the whole run's report is the one its last event carries \
                     (`args.{}`, as clxfer wrote it at exit; `clxfer view` shows it)",
                    path.display(),
                    r.left_out,
                    r.events,
                    s::REPORT.name
                )
            });
            FileReport {
                report: r.report(),
                warning: cut_short.or(limited),
            }
        })
        .collect())
}

fn end_facts(args: &Value, ts: u64) -> EndFacts {
    let devices = args
        .get(s::DEVICES.name)
        .and_then(Value::as_array)
        .map(|ds| {
            ds.iter()
                .map(|d| DeviceEndFacts {
                    index: u64_of(d, s::DEVICE_INDEX) as u32,
                    clock: str_of(d, s::CLOCK).into(),
                    resident_peak: u64_of(d, s::RESIDENT_PEAK),
                    alloc_host_ptr_peak: u64_of(d, s::AHP_PEAK),
                    alloc_host_ptr_buffers: u64_of(d, s::AHP_BUFFERS),
                    svm_peak: u64_of(d, s::SVM_PEAK),
                    staged_region: u64_of(d, s::STAGED_REGION),
                    timing: crate::report::TimingFacts {
                        timed: u64_of(d, s::TIMED),
                        own_events: u64_of(d, s::OWN_EVENTS),
                        callbacks: u64_of(d, s::CALLBACKS),
                        sampled: u64_of(d, s::SAMPLED),
                        toggles: u64_of(d, s::TOGGLES),
                        toggle_ns: u64_of(d, s::TOGGLE_NS),
                        driver_ns: u64_of(d, s::DRIVER_NS),
                    },
                })
                .collect()
        })
        .unwrap_or_default();
    let dropped = args
        .get(s::DROPPED.name)
        .and_then(Value::as_object)
        .map_or(0, |o| o.values().filter_map(Value::as_u64).sum());
    EndFacts {
        at_ns: ts,
        signal: args
            .get(s::SIGNAL.name)
            .and_then(Value::as_str)
            .map(str::to_string),
        devices,
        pinned_peak: u64_of(args, s::PINNED_PEAK),
        incomplete: u64_of(args, s::INCOMPLETE),
        own: {
            let measured = args.get(s::OWN_MEASURED.name).and_then(Value::as_array);
            let at = |i: usize| measured.and_then(|m| m.get(i)?.as_u64()).unwrap_or(0);
            crate::report::OwnFacts {
                calls: u64_of(args, s::OWN_CALLS),
                measured: at(0),
                measured_ns: at(1),
                writer_cpu_ns: u64_of(args, s::WRITER_CPU),
                held_ns: u64_of(args, s::WRITER_WAITED),
                held: u64_of(args, s::WRITER_WAITS),
            }
        },
        dropped,
        host_calls: (args.get(s::HOST_CALLS.name).and_then(Value::as_array))
            .into_iter()
            .flatten()
            .filter_map(|row| {
                let row = row.as_array()?;
                let n = |i: usize| row.get(i).and_then(Value::as_u64).unwrap_or(0);
                Some(crate::report::HostCall {
                    api: row.first()?.as_str()?.to_string(),
                    calls: n(1),
                    total_ns: n(2),
                    wait_ns: n(3),
                    median_ns: n(4),
                    max_ns: n(5),
                    // `[[code or null, calls], …]`, where calls failed.
                    failed: (row.get(6).and_then(Value::as_array).into_iter().flatten())
                        .filter_map(|f| {
                            let f = f.as_array()?;
                            let code = f.first()?.as_i64().and_then(|c| i32::try_from(c).ok());
                            let calls = f.get(1)?.as_u64()?;
                            Some(crate::report::Failed { code, calls })
                        })
                        .collect(),
                })
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn huge_times_do_not_overflow() {
        // Found by the fuzz target: a slice whose start plus duration passes i64.
        let mut events = Vec::new();
        let text = b"[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":9e300,\"dur\":9e300},\n{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1e18}]";
        crate::trace::read::parse_with(text, |_, e| events.extend(e)).unwrap();
        assert_eq!(events.len(), 2);
        let reports = super::report(events);
        assert!(reports.iter().all(|r| r.devices.is_empty()));
    }
}
