//! Summary mode's output (and trace mode's, when `CLXFER_REPORT` asks for a report too): records
//! turned into the report's facts as they arrive, the report written at the end. The facts are
//! exactly those a saved trace gives back (`report/from_trace.rs`), so both reports agree.

use super::buffer;
use super::record::{CallFlags, DeviceTime, End, KINDS, QueueRef, Record};
use super::trace_file;
use super::writer::Output;
use crate::model::classification::{Classification, When};
use crate::report::{
    Builder, DeviceEndFacts, DeviceFacts, EndFacts, Enqueue, Fact, Format, Link, Ran, Report, Sync,
    Work,
};
use crate::timing::clock;
use crate::vocab::{Api, word};
use std::io::Write;
use std::path::PathBuf;

/// What the report needs of a classified enqueue on a queue of device `device`: from the calling
/// thread in summary mode, from the call's record when a trace is written too. `sampled`:
/// sampled device timing left it untimed.
#[inline]
pub fn facts(
    api: Api,
    queue: QueueRef,
    c: &Classification,
    (flags, host_ns, sampled): (CallFlags, u64, bool),
) -> Enqueue {
    let cited = c.cited;
    Enqueue {
        device: queue.device,
        queue: queue.queue,
        kind: crate::report::kind_of(api),
        direction: c.direction,
        path: c.path,
        bytes: c.bytes,
        blocking: c.blocking,
        host_ns,
        calls: 1,
        pageable: (c.host.as_ref()).is_some_and(|h| word::is(h.kind, b"pageable")),
        mapped: (c.host.as_ref()).is_some_and(|h| crate::model::kinds::staging(h.kind)),
        misaligned: cited.misaligned,
        holds_host: cited.holds_host,
        hand_off: cited.hand_off,
        locked: cited.locked,
        flags: match flags {
            CallFlags::None => None,
            CallFlags::Map(f) | CallFlags::Migrate(f) => Some(crate::report::small_flags(f)),
        },
        sampled,
        // A migration is a rare call: its reasons are read here.
        when: matches!(flags, CallFlags::Migrate(_))
            .then(|| When::of(c.bytes, c.reasons.iter().map(|r| r.rule))),
    }
}

pub struct Summary {
    b: Option<Builder>,
    start_ns: u64,
    /// `CLXFER_REPORT`; else stderr in summary mode, nowhere beside a trace.
    to: Option<PathBuf>,
    to_stderr: bool,
}

impl Summary {
    pub fn new(program: &str, to: Option<PathBuf>, to_stderr: bool) -> Summary {
        let start = clock::start();
        let mut b = Builder::new(program, std::process::id(), &start.rfc3339());
        let job = crate::job::this();
        b.job = crate::report::JobPlace {
            rank: job.rank,
            ranks: job.ranks,
            host: Some(job.host.clone()),
        };
        Summary {
            b: Some(b),
            start_ns: start.mono_ns,
            to,
            to_stderr,
        }
    }

    /// Takes in one record's facts. Summary mode's own `Transfer` records are taken by value in
    /// [`Output::write`]; a trace carries whole calls instead (as `Chrome` does, it ignores them).
    pub fn observe(&mut self, r: &Record) {
        let Some(b) = &mut self.b else { return };
        match r {
            Record::Call(call) => {
                let rel = |t: u64| t.saturating_sub(self.start_ns);
                let Some(e) = &call.command else {
                    if let Some(w) = &call.waited {
                        b.sync(Sync {
                            tid: call.tid,
                            begin: rel(call.begin),
                            end: rel(call.end),
                            on: w.clone(),
                        });
                    }
                    return;
                };
                // An untimed command's completion never comes: it is counted at once.
                let id = if e.timed { e.id } else { 0 };
                let host_ns = call.end.saturating_sub(call.begin);
                let link = Link {
                    id: e.id,
                    tid: call.tid,
                    begin: rel(call.begin),
                    end: rel(call.end),
                    before: Link::before(e.deps.after.unwrap_or(0), e.deps.waits.iter().copied()),
                };
                let moved = (e.class.as_ref())
                    .map(|c| facts(call.api, e.queue, c, (e.flags, host_ns, e.sampled)));
                let on = (e.queue.device, e.queue.queue);
                let how = (host_ns, e.sampled);
                let Some(work) = Work::of(moved, e.kernel.clone(), on, how) else {
                    return;
                };
                b.fact(id, Fact { work, link });
            }
            Record::Command(c) if c.status < 0 => {
                b.failed(c.id);
                b.completed(c.id, None);
            }
            Record::Command(c) => b.completed(
                c.id,
                (c.time == DeviceTime::Measured).then(|| Ran {
                    ns: c.end.saturating_sub(c.start),
                    after_call_ns: c.start.saturating_sub(c.host_begin),
                    start_ns: c.start.saturating_sub(self.start_ns),
                }),
            ),
            Record::Race(r) => b.race(r.fact.clone()),
            Record::Missing(m) => b.missing(&m.name),
            Record::Failed(id) => b.failed(*id),
            Record::Device(d) => b.device(DeviceFacts {
                index: d.index,
                name: d.name.clone(),
                rules: d.rules.into(),
                auto_rules: d.auto_rules.into(),
                global_mem: d.global_mem,
                memory_given: d.memory_given,
                host_import: d.host_import.into(),
            }),
            _ => {}
        }
    }

    /// The end: the report goes to `CLXFER_REPORT` or stderr, and is returned.
    pub fn end(&mut self, end: &End, dropped: [u64; KINDS.len()]) -> Option<Report> {
        let mut b = self.b.take()?;
        b.end(EndFacts {
            at_ns: end.at.saturating_sub(self.start_ns),
            devices: end
                .devices
                .iter()
                .map(|d| DeviceEndFacts {
                    index: d.index,
                    clock: d.clock.into(),
                    resident_peak: d.resident_peak,
                    alloc_host_ptr_peak: d.alloc_host_ptr_peak,
                    alloc_host_ptr_buffers: d.alloc_host_ptr_buffers,
                    svm_peak: d.svm_peak,
                    staged_region: d.staged_region,
                    timing: d.timing,
                })
                .collect(),
            pinned_peak: end.pinned_peak,
            incomplete: end.incomplete,
            dropped: dropped.iter().sum(),
            own: end.own,
            signal: end.signal.clone(),
            host_calls: end.host_calls.clone(),
        });
        let report = b.report();
        match &self.to {
            Some(path) => {
                let text = report.render(Format::for_path(path));
                let mut stream = match trace_file::report_target(path) {
                    // `-`: stderr, as it is.
                    trace_file::Target::Stderr => {
                        Some(Box::new(std::io::stderr()) as Box<dyn Write>)
                    }
                    trace_file::Target::Stream(f) => Some(Box::new(f) as Box<dyn Write>),
                    trace_file::Target::New => None,
                };
                if let Some(out) = stream.as_mut() {
                    if let Err(e) = out.write_all(text.as_bytes()) {
                        crate::warn!("writing the report to {} failed ({e})", path.display());
                    }
                    trace_file::note("report", path);
                    return Some(report);
                }
                // Past RLIMIT_FSIZE a write would raise SIGXFSZ: the report is not started.
                let created = if (text.len() as u64) <= trace_file::room() {
                    trace_file::create_new(path)
                } else {
                    Err("the file size limit (RLIMIT_FSIZE) is reached".into())
                };
                match created {
                    Ok((mut f, at)) => match f.write_all(text.as_bytes()) {
                        Ok(()) => {
                            trace_file::note("report", &at);
                            crate::info!("report: {}", at.display())
                        }
                        Err(e) => crate::warn!("writing the report {} failed ({e})", at.display()),
                    },
                    Err(why) => {
                        crate::warn!(
                            "cannot create the report {} ({why}); it goes to stderr",
                            path.display()
                        );
                        let _ = std::io::stderr().write_all(text.as_bytes());
                    }
                }
            }
            None if self.to_stderr => {
                let _ = std::io::stderr().write_all(report.render(Format::Text).as_bytes());
                trace_file::note("report", std::path::Path::new("-"));
            }
            None => {}
        }
        Some(report)
    }
}

impl Output for Summary {
    fn write(&mut self, records: &mut Vec<Record>) {
        for r in records.iter_mut() {
            match r {
                // Summary mode's own records, read where they lie; their times are made relative
                // to the run's start here, off the program's threads.
                Record::Fact(fact, ran) => {
                    if let Some(b) = &mut self.b {
                        let l = &mut fact.link;
                        l.begin = l.begin.saturating_sub(self.start_ns);
                        l.end = l.end.saturating_sub(self.start_ns);
                        if let Some(r) = ran.as_mut() {
                            r.start_ns = r.start_ns.saturating_sub(self.start_ns);
                        }
                        b.add_fact(fact, *ran);
                    }
                }
                r => {
                    self.observe(r);
                    if let Record::Call(c) = r
                        && let Some(e) = c.command.take()
                    {
                        buffer::unbox(e);
                    }
                }
            }
        }
        records.clear();
    }

    fn finish(&mut self, end: &End, dropped: [u64; KINDS.len()]) {
        self.end(end, dropped);
    }
}

/// The trace, with the report in its last event (and beside it, with `CLXFER_REPORT`).
pub struct Both<T: Output> {
    pub trace: T,
    pub summary: Summary,
}

impl<T: Output> Output for Both<T> {
    fn write(&mut self, records: &mut Vec<Record>) {
        for r in records.iter() {
            self.summary.observe(r);
        }
        self.trace.write(records);
    }

    fn tick(&mut self) {
        self.trace.tick();
    }

    fn finish(&mut self, end: &End, dropped: [u64; KINDS.len()]) {
        if let Some(report) = self.summary.end(end, dropped) {
            self.trace
                .embed_report(serde_json::to_string(&report).unwrap_or_default());
        }
        self.trace.finish(end, dropped);
    }
}
