//! The trace writer as the writer thread drives it: batches of records in, a tick between them,
//! and at exit the trace's last event with the run's report.

use super::*;

impl<W: TraceOut, E: Emit> Output for Chrome<W, E> {
    fn embed_report(&mut self, json: String) {
        self.report = Some(json);
    }

    fn write(&mut self, records: &mut Vec<Record>) {
        for r in records.drain(..) {
            self.record(r);
        }
    }

    fn tick(&mut self) {
        let now = clock::now_ns();
        for (c, v) in crate::sink::counters::current() {
            if self.tracks.counters.get(&c).copied().unwrap_or(0) != v {
                self.counter(now, c, v);
            }
        }
        self.flush();
    }

    fn finish(&mut self, end: &End, dropped: [u64; KINDS.len()]) {
        // Commands whose enqueue record never came (dropped): their device slices, without arrows.
        let mut early: Vec<Command> = self.arrows.early.drain().map(|(_, c)| c).collect();
        early.sort_by_key(|c| c.id);
        for c in early {
            self.device_slice(c, false);
        }
        self.tick();
        self.name_the_rest();
        let (pid, ts) = (self.host_pid, self.ts(end.at));
        let report = self.report.take();
        // Written whatever the limit, with the events before it still waiting.
        self.flush();
        self.file.closing = true;
        let (events, left_out) = (self.events + 1 - self.file.left_out, self.file.left_out);
        let j = self.begin(
            Name::Words(&[s::TRACE_END]),
            s::CAT_CLXFER,
            Kind::Instant(Scope::Global),
            pid,
            pid,
            ts,
        );
        j.args();
        j.field(s::DEVICES).open_array();
        for d in &end.devices {
            j.open();
            j.field(s::DEVICE_INDEX).u64(d.index as u64);
            j.field(s::NAME).str(&d.name);
            j.field(s::RULES).word(d.rules);
            j.field(s::CLOCK).word(d.clock);
            j.field(s::CORRECTIONS).u64(d.corrections);
            j.field(s::UNAVAILABLE).u64(d.unavailable);
            j.field(s::UNTIMED).u64(d.untimed);
            j.field(s::TIMED).u64(d.timing.timed);
            j.field(s::OWN_EVENTS).u64(d.timing.own_events);
            j.field(s::CALLBACKS).u64(d.timing.callbacks);
            j.field(s::TOGGLES).u64(d.timing.toggles);
            j.field(s::TOGGLE_NS).u64(d.timing.toggle_ns);
            j.field(s::DRIVER_NS).u64(d.timing.driver_ns);
            j.field(s::SAMPLED).u64(d.timing.sampled);
            j.field(s::RESIDENT_PEAK).u64(d.resident_peak);
            j.field(s::AHP_PEAK).u64(d.alloc_host_ptr_peak);
            j.field(s::AHP_BUFFERS).u64(d.alloc_host_ptr_buffers);
            j.field(s::SVM_PEAK).u64(d.svm_peak);
            j.field(s::STAGED_REGION).u64(d.staged_region);
            j.close();
        }
        j.close_array();
        j.field(s::HOST_CALLS).open_array();
        for c in &end.host_calls {
            j.open_array().str(&c.api);
            for v in [c.calls, c.total_ns, c.wait_ns, c.median_ns, c.max_ns] {
                j.u64(v);
            }
            if !c.failed.is_empty() {
                j.open_array();
                for f in &c.failed {
                    j.open_array();
                    match f.code {
                        Some(code) => j.i64(code as i64),
                        None => j.null(),
                    };
                    j.u64(f.calls);
                    j.close_array();
                }
                j.close_array();
            }
            j.close_array();
        }
        j.close_array();
        j.field(s::PINNED_PEAK).u64(end.pinned_peak);
        j.field(s::INCOMPLETE).u64(end.incomplete);
        if let Some(sig) = &end.signal {
            j.field(s::SIGNAL).str(sig);
        }
        j.field(s::OWN_CALLS).u64(end.own.calls);
        j.field(s::OWN_MEASURED).open_array();
        j.u64(end.own.measured);
        j.u64(end.own.measured_ns);
        j.close_array();
        j.field(s::WRITER_CPU).u64(end.own.writer_cpu_ns);
        j.field(s::WRITER_WAITED).u64(end.own.held_ns);
        j.field(s::WRITER_WAITS).u64(end.own.held);
        j.field(s::DROPPED).open();
        for (kind, n) in KINDS.iter().zip(dropped) {
            j.key(kind).u64(n);
        }
        j.close();
        j.field(s::EVENTS).u64(events);
        j.field(s::LEFT_OUT).u64(left_out);
        if let Some(report) = report {
            j.field(s::REPORT).raw_json(&report);
        }
        j.close();
        self.end_event();
        self.j.finish();
        self.flush();
        if self.file.failed.is_none() {
            crate::info!("trace: {} ({events} events)", self.file.what);
        }
        let lost: u64 = dropped.iter().sum();
        if lost > 0 {
            crate::warn!(
                "the trace writer fell behind: {lost} records were dropped ({}); the count is \
                 in the trace's last event",
                KINDS
                    .iter()
                    .zip(dropped)
                    .filter(|&(_, n)| n > 0)
                    .map(|(k, n)| format!("{n} {k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
}
