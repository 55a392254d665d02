//! The report of a saved trace: its events turned back into the facts the live summary gets
//! (`sink/summary.rs`), fed to the same [`Builder`].

use super::{Builder, DeviceEndFacts, DeviceFacts, EndFacts, Enqueue, Report, cited, kind};
use crate::model::classification::{Direction, Path};
use crate::model::flags::{self, MAP_FLAGS, MIGRATION_FLAGS};
use crate::sink::schema::{self as s, DEVICE_PID_BASE};
use crate::trace::read::{self, ReadError, Trace, read_file_with};
use serde_json::Value;

/// A `ts` or `dur` in nanoseconds; 0 when absent or negative.
fn ns(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_f64)
        .map_or(0, |us| read::ns(us).max(0) as u64)
}

/// An integer: a number, or a decimal string past 2^53 (`sink::json`).
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
    // `device #D queue #Q`
    let device = str_of(args, s::QUEUE)
        .strip_prefix("device #")?
        .split(' ')
        .next()?
        .parse()
        .ok()?;
    let rule_ids = args.get(s::RULE_IDS.name).and_then(Value::as_array);
    let (misaligned, holds_host) = cited(rule_ids.into_iter().flatten().filter_map(Value::as_str));
    let flags = match (
        args.get(s::MAP_FLAGS.name),
        args.get(s::MIGRATION_FLAGS.name),
    ) {
        (Some(Value::String(f)), _) => flags::encode(f, MAP_FLAGS),
        (_, Some(Value::String(f))) => flags::encode(f, MIGRATION_FLAGS),
        _ => None,
    };
    Some(Enqueue {
        device,
        kind: kind(str_of(args, s::API)),
        direction,
        path,
        bytes: u64_of(args, s::BYTES),
        blocking: args.get(s::BLOCKING.name).and_then(Value::as_bool) == Some(true),
        host_ns,
        pageable: str_of(args, s::HOST_MEMORY) == "pageable",
        misaligned,
        holds_host,
        flags,
    })
}

/// Reads a trace's events one at a time into the report's facts.
#[derive(Default)]
pub struct Reader {
    b: Builder,
    end: Option<EndFacts>,
    last_ts: u64,
    /// Events read, and whether one was clxfer's start event.
    events: u64,
    started: bool,
}

impl Reader {
    pub fn event(&mut self, e: &Value) {
        let b = &mut self.b;
        let no_args = Value::Null;
        let name = e.get("name").and_then(Value::as_str).unwrap_or("");
        let ph = e.get("ph").and_then(Value::as_str).unwrap_or("");
        let pid = e.get("pid").and_then(Value::as_u64).unwrap_or(0);
        let ts = ns(e.get("ts"));
        let args = e.get("args").unwrap_or(&no_args);
        self.last_ts = self.last_ts.max(ts);
        self.events += 1;
        match (ph, name) {
            ("i", s::TRACE_START) => {
                self.started = true;
                b.program = str_of(args, s::PROGRAM).into();
                b.pid = u64_of(args, s::PID) as u32;
                b.start_time = str_of(args, s::START_TIME).into();
            }
            ("i", s::DEVICE_INFO) => b.device(DeviceFacts {
                index: u64_of(args, s::DEVICE_INDEX) as u32,
                name: str_of(args, s::NAME).into(),
                rules: str_of(args, s::RULES).into(),
                auto_rules: str_of(args, s::AUTO_RULES).into(),
                global_mem: u64_of(args, s::GLOBAL_MEM),
            }),
            ("i", s::TRACE_END) => self.end = Some(end_facts(args, ts)),
            ("X", _)
                if e.get("cat").and_then(Value::as_str) == Some(s::CAT_ENQUEUE)
                    || args.get(s::PATH.name).is_some() =>
            {
                let id = u64_of(args, s::COMMAND);
                let dur = ns(e.get("dur"));
                if pid >= DEVICE_PID_BASE as u64 {
                    let unavailable = args.get(s::DEVICE_TIME.name).is_some();
                    b.completed(id, (!unavailable).then_some(dur));
                } else if let Some(facts) = enqueue(args, dur) {
                    b.enqueue(id, facts);
                }
            }
            _ => {}
        }
    }

    pub fn report(mut self) -> Report {
        // A trace cut short (a killed program) has no end: the run lasted until its last event.
        let last_ts = self.last_ts;
        self.b.end(self.end.unwrap_or(EndFacts {
            at_ns: last_ts,
            ..EndFacts::default()
        }));
        self.b.report()
    }
}

pub fn report(trace: &Trace) -> Report {
    let mut r = Reader::default();
    for e in &trace.events {
        r.event(e);
    }
    r.report()
}

/// A trace file's report, and a warning when the trace was cut short (no end event: the program
/// was killed, or the file was cut).
pub struct FileReport {
    pub report: Report,
    pub cut_short: Option<String>,
}

/// The report of a trace file, read event by event (any size). A file with no events, or whose
/// events are not clxfer's (another tool's trace), is an error: no report that looks complete.
pub fn report_file(path: &std::path::Path) -> Result<FileReport, ReadError> {
    let mut r = Reader::default();
    read_file_with(path, |_, e| r.event(&e))?;
    if r.events == 0 {
        return Err(ReadError(format!(
            "{}: an empty trace (no events)",
            path.display()
        )));
    }
    if !r.started {
        return Err(ReadError(format!(
            "{}: not a clxfer trace: {} events, none of them `{}` (another tool's trace?)",
            path.display(),
            r.events,
            s::TRACE_START
        )));
    }
    let cut_short = r.end.is_none().then(|| {
        format!(
            "{} was cut short (no `{}` event): the report covers its first {} and {} events; \
             memory peaks, the clock mapping and the commands left incomplete are not known",
            path.display(),
            s::TRACE_END,
            crate::units::duration(r.last_ts),
            r.events
        )
    });
    Ok(FileReport {
        report: r.report(),
        cut_short,
    })
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
        devices,
        pinned_peak: u64_of(args, s::PINNED_PEAK),
        incomplete: u64_of(args, s::INCOMPLETE),
        dropped,
    }
}
