//! Facts in, report out. From a trace, an enqueue's host facts arrive first and its device time
//! when the command completes (joined by the command's id), or never; in summary mode the layer
//! sends both at once ([`Builder::add`]). Memory stays constant: sums and log histograms per
//! (device, kind, direction, path), and at most [`PARKED`] enqueues waiting.

use super::acc::*;
use super::bounds::{Graph, Of};
use super::device_report::device_report;
use super::facts::*;
use super::overhead::TimingFacts;
use super::replay::Durations;
use super::sampled::RowKey;
use super::timeline::Class;
use super::{DeviceReport, KernelRun, Report, findings};
use crate::model::classification::{Direction, Path};
use crate::model::rules::{self, RuleSet};
use rustc_hash::FxHashMap;

mod replayed;

/// Enqueues waiting for their device time at most; beyond, they count without one.
pub const PARKED: usize = 1 << 16;

/// Builds a [`Report`].
#[derive(Debug, Default)]
pub struct Builder {
    pub program: String,
    pub pid: u32,
    pub start_time: String,
    /// Its place in a parallel job (`crate::job`), and its host.
    pub job: super::JobPlace,
    /// By index, in order (a few: a list, searched once per fact).
    devices: Vec<(u32, DeviceAcc)>,
    parked: FxHashMap<u64, Fact>,
    /// Completions that came before their enqueue (summary mode: a blocking call's completion
    /// can reach the writer first).
    early: FxHashMap<u64, Option<Ran>>,
    /// Commands that failed, whose facts have not come yet.
    failed: rustc_hash::FxHashSet<u64>,
    end: Option<EndFacts>,
    /// A trace cut short: how far it reached (its wall time, with no end facts).
    last_ns: u64,
    /// The command graph's recent window, for what bounds the run.
    graph: Graph,
    /// Possible data races, as found (at most [`RACES`]), and how many more came.
    races: Vec<super::RaceFact>,
    more_races: u64,
    /// Functions the program asked for and did not get, in order (at most [`RACES`]).
    missing: Vec<String>,
    /// `clxfer report --project`: the set to project devices it describes onto, beside their
    /// measured figures.
    project: Option<&'static RuleSet>,
    /// The program's calls per entry point, from a cut trace's slices ([`Builder::host_calls`]).
    host_calls: Vec<super::HostCall>,
}

/// Races kept; the feed says at most one per pair of call sites, 1024 pairs.
const RACES: usize = 1 << 10;

impl Builder {
    pub fn new(program: &str, pid: u32, start_time: &str) -> Builder {
        Builder {
            program: program.into(),
            pid,
            start_time: start_time.into(),
            ..Builder::default()
        }
    }

    /// Device `index`'s figures (new ones go to their place in order).
    #[inline]
    fn device_mut(&mut self, index: u32) -> &mut DeviceAcc {
        match self.devices.iter().position(|d| d.0 == index) {
            Some(at) => &mut self.devices[at].1,
            None => self.new_device(index),
        }
    }

    #[cold]
    fn new_device(&mut self, index: u32) -> &mut DeviceAcc {
        let at = self.devices.partition_point(|d| d.0 < index);
        self.devices.insert(at, (index, DeviceAcc::default()));
        &mut self.devices[at].1
    }

    /// The program asked for function `name` and did not get it.
    pub fn missing(&mut self, name: &str) {
        if self.missing.len() < RACES && !self.missing.iter().any(|m| m == name) {
            self.missing.push(name.to_string());
        }
    }

    /// A possible data race (`races.rs`).
    pub fn race(&mut self, r: super::RaceFact) {
        if self.races.len() < RACES {
            self.races.push(r);
        } else {
            self.more_races += 1;
        }
    }

    /// Project the devices `set` describes onto its cost model, beside their measured figures
    /// (devices under forced rules are projected whatever this says). Before the devices.
    pub fn project(&mut self, set: &'static RuleSet) {
        self.project = Some(set);
    }

    pub fn device(&mut self, facts: DeviceFacts) {
        let index = facts.index;
        let set = rules::by_name(&facts.rules);
        let replaces = facts.forced();
        let asked = self.project.zip(set).is_some_and(|(p, s)| p.name == s.name);
        // Beside the measurement only with a model; in place of it (forced rules) always.
        let projecting = set
            .filter(|s| replaces || (asked && s.cost.is_some()))
            .map(|set| Projecting {
                set,
                cost: set.cost.as_ref(),
                replaces,
            });
        // The run as projected, where a cost model gives the durations (AMD's and the
        // host-memory sets have none: their runs stay this device's).
        if replaces && projecting.is_some_and(|p| p.cost.is_some()) {
            self.graph.projects(index);
        }
        let d = self.device_mut(index);
        d.facts = facts;
        d.projecting = projecting;
        d.set = set;
        d.forced = replaces;
    }

    /// An enqueue outside the graph; `id` is its command number, 0 when it will get no device
    /// time.
    pub fn enqueue(&mut self, id: u64, e: Enqueue) {
        let link = Link::default();
        self.fact(
            id,
            Fact {
                work: Work::Transfer(e),
                link,
            },
        );
    }

    /// A host synchronisation point.
    pub fn sync(&mut self, s: Sync) {
        self.graph.sync(s);
    }

    /// A transfer or a kernel launch; `id` as for [`Builder::enqueue`].
    pub fn fact(&mut self, id: u64, f: Fact) {
        if let Some(ran) = self.early.remove(&id) {
            self.add_fact(&f, ran);
        } else if id != 0 && self.parked.len() < PARKED {
            self.parked.insert(id, f);
        } else {
            self.add_fact(&f, None);
        }
    }

    /// Command `id` failed: its fact, when it comes, moved nothing (a few are kept: failures are
    /// rare, and one past the bound counts as if it had run).
    pub fn failed(&mut self, id: u64) {
        if id != 0 && self.failed.len() < PARKED {
            self.failed.insert(id);
        }
    }

    /// Command `id` completed; `ran` is `None` when its device time was unavailable.
    pub fn completed(&mut self, id: u64, ran: Option<Ran>) {
        match self.parked.remove(&id) {
            Some(f) => self.add_fact(&f, ran),
            None if id != 0 && self.early.len() < PARKED => {
                self.early.insert(id, ran);
            }
            None => {}
        }
    }

    /// A fact with its completion, both known.
    pub fn add_fact(&mut self, f: &Fact, ran: Option<Ran>) {
        let Fact { work, link } = f;
        if link.id != 0 && self.failed.remove(&link.id) {
            // It moved nothing and ran no kernel: counted as failed, in no row.
            self.device_mut(work.device()).failed += 1;
            return;
        }
        let ran = ran.filter(|r| self.plausible(work, r.ns));
        let (queue, label, blocking) = match (work.moved(), work) {
            (Some(e), _) => (
                (e.device, e.queue),
                Of::Transfer(e.kind, e.direction, e.path),
                e.blocking,
            ),
            (None, Work::Kernel(k)) => ((k.device, k.queue), Of::Kernel(&k.name), false),
            (None, _) => return,
        };
        if link.id != 0 {
            if blocking {
                self.graph.sync(Sync {
                    tid: link.tid,
                    begin: link.begin,
                    end: link.end,
                    on: On::Commands([link.id].into_iter().collect()),
                });
            }
            if let Some(Ran {
                ns, start_ns: s, ..
            }) = ran
            {
                let dur = match work.moved() {
                    Some(e) => self.durations(e, ns),
                    None => Durations {
                        base: Durations::ns(ns),
                        ..Durations::default()
                    },
                };
                self.graph
                    .command(link, queue, (s, s.saturating_add(ns)), label, dur);
            } else if let Some(e) = work.moved()
                && (self.device_mut(e.device).projecting).is_some_and(|p| p.replaces)
            {
                // Under forced rules a move the driver gave no time (NVIDIA's migrations) still
                // takes its projected time in the projected run, after what it waited for.
                let dur = self.durations(e, 0);
                if dur.base > 0 {
                    self.graph
                        .command(link, queue, (link.end, link.end), label, dur);
                }
            }
            if let Some(e) = work.moved() {
                self.held(e, link, ran);
                self.in_flight(e, ran);
            }
        }
        match work {
            Work::Transfer(e) => self.add(e, ran),
            Work::Launch(l) => {
                let (e, name) = &**l;
                self.add(e, ran);
                // In its kernel's row too: every launch is in its device's kernel table.
                let k = KernelRun {
                    device: e.device,
                    queue: e.queue,
                    name: name.clone(),
                    host_ns: e.host_ns,
                    sampled: e.sampled,
                };
                self.device_mut(e.device).kernel(&k, ran);
            }
            Work::Kernel(k) => {
                let d = self.device_mut(k.device);
                d.facts.index = k.device;
                d.kernel(k, ran);
                if let Some(Ran {
                    ns, start_ns: s, ..
                }) = ran
                {
                    d.timeline
                        .add(k.queue, s, s.saturating_add(ns), Class::Kernel);
                }
            }
        }
    }

    /// Whether a command's device time can be a measurement; one that cannot is counted on its
    /// device and used nowhere (no table, bandwidth, busy time, path or saving rests on it).
    fn plausible(&mut self, work: &Work, ns: u64) -> bool {
        let device = work.device();
        let (bytes, transfer) = work.moved().map_or((0, false), |e| (e.bytes, true));
        // Under forced rules a transfer's bytes are what the rules' device would move, and its
        // time the projection's: this device's time is of something else.
        if transfer
            && self
                .device_mut(device)
                .projecting
                .is_some_and(|p| p.replaces)
        {
            return true;
        }
        let Some(why) = crate::model::device::implausible(bytes, ns) else {
            return true;
        };
        let i = &mut self.device_mut(device).implausible;
        i.commands += 1;
        i.transfers += u64::from(transfer);
        match why {
            crate::model::device::Implausible::Resolution => i.instant += 1,
            crate::model::device::Implausible::Bandwidth(gbps) => {
                if i.fastest.is_none_or(|(g, _, _)| gbps > g) {
                    i.fastest = Some((gbps, bytes, ns));
                }
            }
        }
        false
    }

    pub fn end(&mut self, end: EndFacts) {
        self.end = Some(end);
    }

    /// The trace was cut short at `at_ns`: no end facts will come.
    pub fn cut_short(&mut self, at_ns: u64) {
        self.last_ns = at_ns;
    }

    /// The program's calls per entry point, where no end facts give them (a trace cut short).
    pub fn host_calls(&mut self, rows: Vec<super::HostCall>) {
        self.host_calls = rows;
    }

    /// An enqueue with its completion, both known (`None`: unavailable or not timed).
    /// `e` may stand for several untimed calls ([`Enqueue::calls`]; a timed one is one call):
    /// what is per call (its bytes, a projected time) counts that many times.
    pub fn add(&mut self, e: &Enqueue, ran: Option<Ran>) {
        let n = u64::from(e.calls);
        let device_ns = ran.map(|r| r.ns);
        // A blocking call's wait for the commands ahead of it: until its own command started.
        let waited = match ran {
            Some(r) if e.blocking => r.after_call_ns.min(e.host_ns),
            _ => 0,
        };
        let d = self.device_mut(e.device);
        d.facts.index = e.device;
        if let Some(Ran {
            ns, start_ns: s, ..
        }) = ran
        {
            // A launch whose arguments moved is its kernel's time on the device, as in the
            // kernel table.
            let class = match e.kind {
                Kind::Kernel => Class::Kernel,
                _ => Class::Transfer,
            };
            d.timeline.add(e.queue, s, s.saturating_add(ns), class);
        }
        // Under forced rules the projection stands in for this device's time (issue #26); a
        // kernel's row is the move at its launch.
        let projected = d.projecting.and_then(|p| p.time(e));
        let replaces = d.projecting.is_some_and(|p| p.replaces);
        let (time, on_device) = if replaces {
            (projected, projected.is_some())
        } else {
            let t = device_ns.or(e.blocking.then_some(e.host_ns));
            (t, device_ns.is_some())
        };
        let time = time.filter(|&t| t > 0);
        // A command that moves nothing needs no time (NVIDIA's idle maps and migrations have
        // none of their own), and under forced rules a projected time stands in: no time is
        // missing.
        let stands_in = e.path == Path::None || (replaces && projected.is_some());
        // An untimed call's projection, where it stands in (none for a move the model has no
        // link for, as for the row's timed calls).
        let untimed_projected_ns = match replaces {
            true => projected.unwrap_or(0).saturating_mul(n),
            false => 0,
        };
        if device_ns.is_none() {
            if e.sampled {
                d.sampled += n;
                // A launch's share is its kernel row's (`DeviceAcc::kernel`), but for the move
                // a projection replays apart (`device_report`).
                if e.kind != Kind::Kernel || replaces {
                    let key = RowKey::Transfer(e.direction, e.path);
                    d.untimed.add(e.queue, key, n, untimed_projected_ns);
                }
            } else if !stands_in {
                d.without_device_time += n;
                d.host_time_used += n * u64::from(time.is_some());
            }
        }
        let gbps = time
            .filter(|_| e.bytes > 0)
            .map(|t| e.bytes as f64 / t as f64);
        let acc = d.rows.get(e.kind, e.direction, e.path);
        acc.calls += n;
        acc.bytes = acc.bytes.saturating_add(e.total_bytes());
        acc.device_ns = acc.device_ns.saturating_add(device_ns.unwrap_or(0));
        match device_ns {
            Some(ns) => {
                acc.timed += 1;
                acc.sample.timed(e.bytes, ns);
            }
            // Under forced rules its projection stands in, as every other call's does.
            None if e.sampled && replaces => acc.sample.projected(n, untimed_projected_ns),
            None if e.sampled => acc.sample.untimed(n),
            None => {}
        }
        acc.host_ns = acc.host_ns.saturating_add(e.host_ns);
        acc.waited_ns = acc.waited_ns.saturating_add(waited);
        if let Some(g) = gbps {
            acc.gbps.add_times(g, n);
        }
        if let Some(p) = projected {
            acc.projected_ns = acc.projected_ns.saturating_add(p.saturating_mul(n));
            if let Some(m) = device_ns.filter(|_| e.bytes >= BANDWIDTH_BOUND) {
                acc.compared.add(e.bytes, m, p);
            }
        }
        let dir = e.direction as usize;
        // What a transfer reaches: a migration's or a kernel's pull is priced as the move it
        // is (both legs of NVIDIA's, ~1.1 GB/s), not as the link a read or write gets.
        let a_transfer = !matches!(e.kind, Kind::Migrate | Kind::Kernel);
        if let Some(g) = gbps.filter(|_| e.bytes >= BANDWIDTH_BOUND && on_device && a_transfer) {
            let keep = |best: &mut Option<f64>| *best = Some(best.map_or(g, |b| b.max(g)));
            keep(&mut d.best_any[dir]);
            if e.path == Path::Pinned {
                keep(&mut d.best_pinned[dir]);
            }
        }
        let moves = e.moves();
        if e.mapped && e.bytes > 0 {
            d.from_mapped.add(e, time);
        }
        if e.path == Path::Staged && e.pageable {
            // What the same call would take pinned, where it is projected.
            let pinned = (d.projecting.filter(|p| p.replaces))
                .and_then(|p| p.cost?.time_ns(e.direction, Path::Pinned, e.bytes));
            d.staged_pageable[dir].add_pinned(e, time, pinned);
            if e.locked {
                d.staged_locked[dir].add(e, time);
            }
        }
        // Under forced rules this device's call times say nothing of the vendor's: the rule
        // decides (issue #26).
        let forced = d.forced;
        let held = match device_ns {
            Some(t) if !forced => e.host_ns.saturating_mul(2) >= t,
            _ => e.holds_host,
        };
        if !e.blocking && e.pageable && moves && held {
            d.held_host.add(e, time);
        }
        // The enqueue's own cost, which pinned memory would not remove: non-blocking calls of
        // this device that stage nothing.
        if !e.blocking && !e.pageable && e.path != Path::Staged {
            d.enqueue_floor.count += n;
            d.enqueue_floor.host_ns = d.enqueue_floor.host_ns.saturating_add(e.host_ns);
        }
        if map_write(e) {
            d.map_write.add(e, time);
        }
        if let Some(h) = e.hand_off {
            d.hand_offs[h as usize].add(e, time);
        }
        if let Some(when) = e.when {
            let m = &mut d.migrations[when as usize];
            m.0 += n;
            m.1 = m.1.saturating_add(e.total_bytes());
        }
        if e.kind == Kind::Migrate {
            if e.direction == Direction::D2H && moves {
                d.to_host_migrations.add(e, time);
            }
            if e.path == Path::ViaHost {
                d.via_host_migrations.add(e, time);
            } else if e.path == Path::None && e.flags == Some(0) {
                d.empty_migrations.add(e, time);
            }
        }
        if small(e) {
            d.small.add(e, time);
            if d.small_run.0 == e.bytes {
                d.small_run.1 += n;
            } else {
                d.count_small_run();
                d.small_run = (e.bytes, n);
            }
        }
        if e.misaligned {
            d.misaligned.add(e, time);
        }
    }

    /// The report; enqueues still waiting for their device time count without one.
    pub fn report(mut self) -> Report {
        let mut parked: Vec<(u64, Fact)> = self.parked.drain().collect();
        parked.sort_by_key(|(id, _)| *id);
        for (_, f) in parked {
            self.add_fact(&f, None);
        }
        // No end facts: the trace was cut short; what only its end says is not known.
        let end = self.end.take();
        for de in end.iter().flat_map(|e| &e.devices) {
            let d = self.device_mut(de.index);
            d.facts.index = de.index;
            d.end = Some(de.clone());
        }
        for (_, d) in &mut self.devices {
            d.count_small_run();
        }
        let wall_ns = end.as_ref().map_or(self.last_ns, |e| e.at_ns);
        // The path first: the findings' savings are what of them lies on it.
        let bounds = self.graph.bounds(wall_ns);
        // A race can make the results wrong however fast the run: races rank first.
        let (mut findings, unjudged) = super::races::findings(&self.races, self.more_races);
        let races = (self.races.iter())
            .filter(|r| r.confidence != "assumed")
            .count() as u64
            + self.more_races;
        findings.extend(findings::all(
            self.devices.iter().map(|d| &d.1),
            &self.graph,
        ));
        findings.extend(unjudged);
        findings.extend(findings::missing(&self.missing));
        // What the program does wrong before what costs time (stable: races stay first).
        findings.sort_by_key(|f| !f.misuse);
        // Under forced rules the busy line is the projected run's, as the tables are.
        let devices: Vec<DeviceReport> = (self.devices.iter_mut())
            .map(|(_, d)| {
                let projected = self.graph.projected_busy(d.facts.index);
                device_report(d, projected)
            })
            .collect();
        let weighed_against = super::Scale::of_run(wall_ns, &devices);
        let minor = (weighed_against.ns as f64 * super::MINOR) as u64;
        for f in &mut findings {
            f.minor = !f.misuse && (f.weighed || f.saving_ns > 0) && f.saving_ns < minor;
        }
        let overhead = end.as_ref().map(|e| {
            let timing: Vec<(String, TimingFacts)> = (self.devices.iter())
                .filter_map(|(_, d)| Some((d.facts.rules.clone(), d.end.as_ref()?.timing)))
                .collect();
            super::Overhead::new(&e.own, &timing)
        });
        let mut report = Report {
            program: self.program,
            pid: self.pid,
            job: self.job,
            start_time: self.start_time,
            wall_ns,
            cut_short: end.is_none(),
            signal: end.as_ref().and_then(|e| e.signal.clone()),
            bounds,
            devices,
            races: Some(races),
            host_calls: match &end {
                Some(e) => e.host_calls.clone(),
                None => std::mem::take(&mut self.host_calls),
            },
            weighed_against,
            pinned_host_peak_bytes: end.as_ref().map(|e| e.pinned_peak),
            findings,
            incomplete_at_exit: end.as_ref().map(|e| e.incomplete),
            dropped_records: end.as_ref().map(|e| e.dropped),
            overhead,
            verdict: super::Verdict::default(),
        };
        report.verdict = super::Verdict::of(&report);
        report
    }
}

/// A map for WRITE (not READ, not WRITE_INVALIDATE_REGION) that moved the contents first.
fn map_write(e: &Enqueue) -> bool {
    const WRITE: u32 = opencl_sys::CL_MAP_WRITE as u32;
    const READ_OR_INVALIDATE: u32 =
        (opencl_sys::CL_MAP_READ | opencl_sys::CL_MAP_WRITE_INVALIDATE_REGION) as u32;
    e.kind == Kind::Map
        && e.moves()
        && e.flags
            .is_some_and(|f| f & WRITE != 0 && f & READ_OR_INVALIDATE == 0)
}

/// A write, read or memcpy across the bus under [`SMALL`]: latency-bound.
fn small(e: &Enqueue) -> bool {
    e.bytes > 0
        && e.bytes < SMALL
        && matches!(e.direction, Direction::H2D | Direction::D2H)
        && matches!(e.kind, Kind::Write | Kind::Read | Kind::Memcpy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::classification::HandOff;
    use crate::report::{Finding, Format};

    fn write(bytes: u64, path: Path, blocking: bool) -> Enqueue {
        Enqueue {
            device: 1,
            queue: 1,
            kind: Kind::Write,
            direction: Direction::H2D,
            path,
            bytes,
            blocking,
            host_ns: 1_000,
            calls: 1,
            pageable: path == Path::Staged,
            misaligned: false,
            holds_host: false,
            hand_off: None,
            locked: false,
            mapped: false,
            flags: None,
            sampled: false,
            when: None,
        }
    }

    fn builder() -> Builder {
        let mut b = Builder::new("prog", 42, "2026-01-01T00:00:00Z");
        b.device(DeviceFacts {
            index: 1,
            name: "a device with a name far too long to fit on one line of the report ".repeat(3),
            rules: "nvidia".into(),
            auto_rules: "nvidia".into(),
            global_mem: 1 << 30,
            memory_given: 0,
            host_import: String::new(),
        });
        b
    }

    /// The builder with its device classified by the nvidia rules where `auto` would pick
    /// `auto`'s (forced rules, projected, unless `auto` is "nvidia").
    fn forced(auto: &str) -> Builder {
        let mut b = builder();
        b.device(DeviceFacts {
            index: 1,
            name: "d".into(),
            rules: "nvidia".into(),
            auto_rules: auto.into(),
            global_mem: 1 << 30,
            memory_given: 0,
            host_import: String::new(),
        });
        b
    }

    /// Summary mode folds a thread's repeated untimed transfers into one fact
    /// (`sink::buffer::push_fact`): the report must say exactly what the facts one by one say,
    /// with the device's own rules and under forced ones (whose projection counts per call).
    #[test]
    fn folded_facts_report_what_the_facts_one_by_one_report() {
        let map = |flags| Enqueue {
            kind: Kind::Map,
            direction: Direction::D2H,
            flags: Some(flags),
            ..write(4096, Path::Staged, false)
        };
        let untimed = |e: Enqueue| Enqueue { sampled: true, ..e };
        // A loop's transfers, each seen several times; one timed write and one blocking read
        // among them, which never fold.
        let kinds = [
            untimed(write(4096, Path::Staged, false)),
            untimed(Enqueue {
                misaligned: true,
                holds_host: true,
                ..write(4096, Path::Staged, false)
            }),
            untimed(Enqueue {
                mapped: true,
                pageable: false,
                ..write(1 << 20, Path::Pinned, false)
            }),
            untimed(map(opencl_sys::CL_MAP_WRITE as u32)),
            untimed(Enqueue {
                kind: Kind::Read,
                direction: Direction::D2H,
                locked: true,
                ..write(512, Path::Staged, false)
            }),
            untimed(Enqueue {
                kind: Kind::Migrate,
                direction: Direction::D2D,
                flags: Some(0),
                hand_off: Some(HandOff::HostHop),
                ..write(64 << 20, Path::ViaHost, false)
            }),
        ];
        let timed = write(4096, Path::Staged, false);
        let blocking = Enqueue {
            kind: Kind::Read,
            direction: Direction::D2H,
            ..write(4096, Path::Staged, true)
        };
        let ran = Ran {
            ns: 9_000,
            after_call_ns: 0,
            start_ns: 5,
        };
        let mut facts = Vec::new();
        for round in 0..7u64 {
            for (i, e) in kinds.iter().enumerate() {
                let work = Work::Transfer(Enqueue {
                    host_ns: 1_000 + round * 10 + i as u64,
                    ..e.clone()
                });
                facts.push((work, None));
            }
            if round % 3 == 0 {
                facts.push((Work::Transfer(timed.clone()), Some(ran)));
                facts.push((Work::Transfer(blocking.clone()), None));
            }
        }
        let fact = |(i, (work, ran)): (usize, &(Work, Option<Ran>))| {
            let link = Link {
                id: i as u64 + 1,
                tid: 7,
                begin: i as u64 * 100,
                end: i as u64 * 100 + 50,
                before: [i as u64, 0, 0],
            };
            (
                Fact {
                    work: work.clone(),
                    link,
                },
                *ran,
            )
        };
        for auto in ["nvidia", "cpu"] {
            let report = |fold: bool| {
                let mut b = forced(auto);
                let mut kept: Vec<(Fact, Option<Ran>)> = Vec::new();
                let mut folds = Folds::default();
                fn untimed((g, ran): &mut (Fact, Option<Ran>)) -> Option<&mut Fact> {
                    ran.is_none().then_some(g)
                }
                for (f, ran) in facts.iter().enumerate().map(fact) {
                    let h = f.fold_key().filter(|_| fold && ran.is_none());
                    if let Some(h) = h {
                        if folds.fold(&mut kept, &f, h, untimed) {
                            continue;
                        }
                        folds.noted(h, kept.len());
                    }
                    kept.push((f, ran));
                }
                let n = kept.len();
                for (f, ran) in kept {
                    b.add_fact(&f, ran);
                }
                (n, b.report())
            };
            let ((one_by_one, a), (folded, b)) = (report(false), report(true));
            assert_eq!(one_by_one, facts.len());
            // 6 kinds folded, 6 that never fold.
            assert_eq!(folded, 12, "{auto}");
            for format in [Format::Json, Format::Text] {
                assert_eq!(a.render(format), b.render(format), "{auto}");
            }
        }
    }

    /// 100 commands alike, 10 µs apart on one queue, each 1 µs on the device, one in `every`
    /// (and the last) timed: `work(sampled)` says what each is.
    fn hundred_alike(every: u64, work: impl Fn(bool) -> Work) -> Report {
        let mut b = builder();
        for i in 0..100u64 {
            let timed = i % every == 0 || i == 99;
            let f = Fact {
                work: work(!timed),
                link: Link {
                    id: i + 1,
                    tid: 7,
                    begin: i * 10_000,
                    end: i * 10_000 + 500,
                    before: [i, 0, 0],
                },
            };
            let ran = timed.then_some(Ran {
                ns: 1_000,
                after_call_ns: 0,
                start_ns: i * 10_000 + 600,
            });
            b.add_fact(&f, ran);
        }
        b.report()
    }

    /// Issue #56: every total is whole. A run whose commands each take 1 µs, every one timed,
    /// against the same run with sampling leaving 9 of 10 untimed: the tables, the busy line
    /// and the verdict's time agree (the estimate is exact here: every command is alike).
    #[test]
    fn a_sampled_run_totals_what_the_run_timed_whole_totals() {
        let report = |every: u64| {
            hundred_alike(every, |sampled| {
                Work::Transfer(Enqueue {
                    sampled,
                    ..write(4096, Path::Pinned, false)
                })
            })
        };
        let (all, sampled) = (report(1), report(10));
        let (a, s) = (&all.devices[0], &sampled.devices[0]);
        assert_eq!(a.transfers[0].device_ns, 100_000);
        assert_eq!(
            s.transfers[0].device_ns, 11_000,
            "only the timed ones are measured"
        );
        assert_eq!(s.transfers[0].total_ns, a.transfers[0].total_ns);
        let (ab, sb) = (a.busy.unwrap(), s.busy.unwrap());
        assert_eq!((sb.busy_ns, sb.transfer_ns), (ab.busy_ns, ab.transfer_ns));
        assert_eq!((ab.estimated_ns, sb.estimated_ns), (0, 89_000));
        assert_eq!(
            all.verdict.time,
            sampled.verdict.time.replace(", sampled ones estimated", "")
        );
        let text = sampled.render(Format::Text);
        assert!(text.contains("~100 µs"), "{text}");
        assert!(text.contains("busy: ~100 µs"), "{text}");
    }

    /// A launch that moves its arguments is in its kernel's row and in a transfer row alike; its
    /// device time is its kernel's, once on the busy line: sampled out, it is estimated once too
    /// (its kernel row's part), not again as a transfer.
    #[test]
    fn an_untimed_launch_that_moves_its_arguments_is_estimated_once() {
        let report = |every: u64| {
            hundred_alike(every, |sampled| {
                let moved = Enqueue {
                    kind: Kind::Kernel,
                    sampled,
                    ..write(4096, Path::Pinned, false)
                };
                Work::Launch(Box::new((moved, "k".into())))
            })
        };
        let (all, sampled) = (report(1), report(10));
        let (ab, sb) = (
            all.devices[0].busy.unwrap(),
            sampled.devices[0].busy.unwrap(),
        );
        assert_eq!(
            (ab.busy_ns, ab.kernel_ns, ab.transfer_ns),
            (100_000, 100_000, 0)
        );
        assert_eq!(
            (sb.busy_ns, sb.kernel_ns, sb.transfer_ns),
            (ab.busy_ns, ab.kernel_ns, ab.transfer_ns)
        );
        assert_eq!((sb.estimated_ns, sb.estimated_kernel_ns), (89_000, 89_000));
        let queue = sampled.devices[0].queues[0].busy;
        assert_eq!((queue.busy_ns, queue.estimated_ns), (100_000, 89_000));
    }

    /// Issue #56: a device time no device can take (64 MiB in 68 ns; 1 ns) is set aside and
    /// said once; a plausible one beside it counts.
    #[test]
    fn an_implausible_device_time_is_set_aside_and_said() {
        let mut b = builder();
        let ran = |ns, start_ns| Ran {
            ns,
            after_call_ns: 0,
            start_ns,
        };
        for (i, (bytes, ns)) in [(64u64 << 20, 68u64), (4096, 1), (1 << 20, 100_000)]
            .into_iter()
            .enumerate()
        {
            let f = Fact {
                work: Work::Transfer(write(bytes, Path::Pinned, false)),
                link: Link {
                    id: i as u64 + 1,
                    tid: 7,
                    begin: i as u64 * 1_000_000,
                    end: i as u64 * 1_000_000 + 10,
                    before: [i as u64, 0, 0],
                },
            };
            b.add_fact(&f, Some(ran(ns, i as u64 * 1_000_000 + 20)));
        }
        let r = b.report();
        let d = &r.devices[0];
        assert_eq!(d.transfers[0].device_ns, 100_000);
        assert!(d.transfers[0].p90_gbps.unwrap() < crate::model::device::MAX_GBPS);
        let said: Vec<&Finding> = (r.findings.iter())
            .filter(|f| f.kind == "device-time-implausible")
            .collect();
        assert_eq!(said.len(), 1);
        assert!(
            said[0].title.contains("for 2 commands"),
            "{}",
            said[0].title
        );
        assert!(
            said[0].evidence[0].contains("64.0 MiB in 68 ns"),
            "{:?}",
            said[0].evidence
        );
    }

    #[test]
    fn a_completion_joins_its_enqueue_in_either_order() {
        let mut b = builder();
        b.enqueue(1, write(1 << 20, Path::Staged, true));
        let ran = |ns| Ran {
            ns,
            after_call_ns: 0,
            start_ns: 0,
        };
        b.completed(1, Some(ran(1_000_000)));
        b.completed(2, Some(ran(100_000))); // before its enqueue, as a blocking call's can be
        b.enqueue(2, write(4 << 20, Path::Pinned, true));
        b.enqueue(3, write(1 << 20, Path::Staged, false)); // never completes
        let r = b.report();
        let d = &r.devices[0];
        assert_eq!(d.without_device_time, 1);
        let staged = d.transfers.iter().find(|t| t.path == "staged").unwrap();
        assert_eq!((staged.calls, staged.device_ns), (2, 1_000_000));
        // 4 MiB in 100 µs: 41.9 GB/s, the best pinned H2D figure; the staged MiB at it saves
        // 1 ms - 25 µs.
        let best = d.best_pinned_gbps[0].1;
        assert!((best / 41.94 - 1.0).abs() < 0.01, "{best}");
        let f = &r.findings[0];
        assert_eq!(f.kind, "staged-pageable");
        assert_eq!(f.saving_ns, 1_000_000 - ((1u64 << 20) as f64 / best) as u64);
        assert!(
            f.estimate.contains("this run's best pinned H2D"),
            "{}",
            f.estimate
        );
        for line in r.render(Format::Text).lines() {
            assert!(line.chars().count() <= 100, "{line}");
        }
    }

    #[test]
    fn a_held_host_saves_the_calls_time_less_the_enqueue_s_own() {
        // 30 µs of device time: the 20 µs calls held the host for most of it.
        let ran = Ran {
            ns: 30_000,
            after_call_ns: 0,
            start_ns: 0,
        };
        let cost = rules::NVIDIA.cost.unwrap();
        let rules_floor = (cost.enqueue_us.unwrap().value * 1e3) as u64;
        let projected = cost.time_ns(Direction::H2D, Path::Staged, 1 << 20).unwrap();
        // (the set `auto` picks, whether pinned calls ran, the saving per held call): the run's
        // own floor where it has one, the rules' where it has none, and under forced rules the
        // projected transfer (which the rule says the call holds) less the rules' floor.
        for (auto, pinned_calls, want) in [
            ("nvidia", true, 20_000 - 300),
            ("nvidia", false, 20_000 - rules_floor),
            ("cpu", true, projected - rules_floor),
        ] {
            let mut b = forced(auto);
            for _ in 0..4 {
                // Non-blocking from pageable memory, 20 µs in the call: held (the rule says so
                // too, which decides under forced rules).
                let e = Enqueue {
                    holds_host: true,
                    host_ns: 20_000,
                    ..write(1 << 20, Path::Staged, false)
                };
                b.add(&e, Some(ran));
            }
            if pinned_calls {
                for _ in 0..10 {
                    let e = Enqueue {
                        host_ns: 300,
                        ..write(1 << 20, Path::Pinned, false)
                    };
                    b.add(&e, Some(ran));
                }
            }
            let r = b.report();
            // One fix, one finding (issue #57): the staged writes' finding holds the calls that
            // held the host; not replayed here, the larger of the two savings stands (the
            // held calls').
            assert!(!r.findings.iter().any(|f| f.kind == "nonblocking-held-host"));
            let f = r
                .findings
                .iter()
                .find(|f| f.kind == "staged-pageable")
                .unwrap_or_else(|| panic!("{auto}: no staged finding"));
            assert!(
                f.title
                    .ends_with("all of them non-blocking calls that held the host"),
                "{}",
                f.title
            );
            assert_eq!(f.saving_ns, 4 * want, "{auto} {pinned_calls}: {f:?}");
            if auto == "cpu" {
                assert!(f.estimate.starts_with("projected"), "{}", f.estimate);
                // This device's 20 µs in the calls is not shown as the vendor's.
                assert!(!f.evidence.iter().any(|e| e.contains("inside the calls")));
            }
        }
    }

    #[test]
    fn an_untimed_migration_between_devices_is_projected_at_the_rules_figure_between_them() {
        // NVIDIA's own driver gives migrations no time: the saving is the move by the cost
        // model's two legs through the host, and the evidence says the time is missing.
        let mut b = builder();
        let e = Enqueue {
            kind: Kind::Migrate,
            direction: Direction::D2D,
            flags: Some(0),
            ..write(64 << 20, Path::ViaHost, false)
        };
        b.add(&e, None);
        let r = b.report();
        let f = (r.findings.iter())
            .find(|f| f.kind == "via-host-migration")
            .unwrap();
        let cost = rules::NVIDIA.cost.unwrap();
        let legs = cost.via_host_ns(64 << 20).unwrap();
        // Less the fix's copy through pinned memory, read and write at the pinned links.
        let copy = (cost.pinned[1].unwrap().time_ns(64 << 20).unwrap()
            + cost.pinned[0].unwrap().time_ns(64 << 20).unwrap())
        .round() as u64;
        assert_eq!(f.saving_ns, legs - copy, "{f:?}");
        // 64 MiB at the legs' 0.57 GB/s, as the two-GPU move measured (0.58).
        assert!((110_000_000..125_000_000).contains(&legs), "{legs}");
        assert!(f.estimate.starts_with("projected"), "{f:?}");
        assert!(
            f.evidence
                .iter()
                .any(|e| e.contains("without a device time")),
            "{f:?}"
        );
    }

    #[test]
    fn a_saving_is_what_the_replayed_graph_takes_off_the_run() {
        use super::super::{Link, On, Sync};
        // A staged 1 MiB write (command 1, queue 2, 1 ms) and a long pinned one (command 2,
        // queue 1, 3 ms), then clFinish waiting for command 2. Serial: the staged write is
        // blocking and the long one is enqueued after it returns, so making it pinned (20 µs at
        // NVIDIA's model, the run having measured no pinned transfer yet) ends the run that much
        // sooner. Overlapped: it is non-blocking and runs beside the long one, which the host
        // waits for: the run ends no sooner.
        const MS: u64 = 1_000_000;
        let pinned_ns = rules::NVIDIA
            .cost
            .unwrap()
            .time_ns(Direction::H2D, Path::Pinned, 1 << 20)
            .unwrap();
        for (serial, want) in [(true, MS - 100 - pinned_ns), (false, 0)] {
            let mut b = builder();
            let (call1, ran1) = if serial {
                ((0, MS), (100, MS))
            } else {
                ((0, 10), (10, MS))
            };
            let staged = Enqueue {
                queue: 2,
                ..write(1 << 20, Path::Staged, serial)
            };
            let link = |id, (begin, end), before| Link {
                id,
                tid: 1,
                begin,
                end,
                before,
            };
            let ran = |(s, e): (u64, u64)| {
                Some(Ran {
                    ns: e - s,
                    after_call_ns: 0,
                    start_ns: s,
                })
            };
            b.fact(
                1,
                Fact {
                    work: Work::Transfer(staged),
                    link: link(1, call1, [0; 3]),
                },
            );
            b.completed(1, ran(ran1));
            let call2 = (call1.1, call1.1 + 10);
            let end = call2.1 + 3 * MS;
            let pinned = write(4 << 20, Path::Pinned, false);
            b.fact(
                2,
                Fact {
                    work: Work::Transfer(pinned),
                    link: link(2, call2, [0; 3]),
                },
            );
            b.completed(2, ran((call2.1, end)));
            b.sync(Sync {
                tid: 1,
                begin: call2.1,
                end,
                on: On::Commands([2].into_iter().collect()),
            });
            b.end(EndFacts {
                at_ns: end,
                ..EndFacts::default()
            });
            let r = b.report();
            let f = (r.findings.iter())
                .find(|f| f.kind == "staged-pageable")
                .unwrap();
            assert_eq!(f.saving_ns, want, "{serial}: {f:?}");
            assert!(
                f.estimate
                    .starts_with("replayed: the run's command graph with the fix"),
                "{f:?}"
            );
            assert_eq!(f.minor, want == 0, "{f:?}");
        }
    }

    #[test]
    fn waiting_enqueues_are_bounded() {
        let mut b = builder();
        for id in 1..=(PARKED as u64 + 10) {
            b.enqueue(id, write(4096, Path::Pinned, false));
        }
        assert_eq!(b.parked.len(), PARKED);
        for id in 1..=(PARKED as u64 + 10) {
            b.completed(u64::MAX - id, None);
        }
        assert_eq!(b.early.len(), PARKED);
        let r = b.report();
        assert_eq!(r.devices[0].transfers[0].calls, PARKED as u64 + 10);
    }
}
