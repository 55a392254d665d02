//! What the devices did: a command's device slice on its queue's lane, joined to its host slice
//! by an arrow; dependency and race arrows; counters.

use super::*;

impl<W: TraceOut, E: Emit> Chrome<W, E> {
    /// A completed command: drawn once its enqueue's host slice is written, so that the arrow
    /// always has both ends, even in the trace of a program killed with records in flight.
    pub(super) fn command(&mut self, c: Command) {
        if let Some(chunk) = self.arrows.hosts.remove(&c.id) {
            self.device_slice(c, chunk == self.file.chunk);
        } else if self.arrows.early.len() < JOIN_LIMIT {
            self.arrows.early.insert(c.id, c);
        } else {
            self.device_slice(c, false);
        }
    }

    /// A host slice whose command has not completed yet.
    pub(super) fn bare(&mut self, id: u64) {
        if self.arrows.hosts.len() >= JOIN_LIMIT {
            self.arrows.hosts.clear();
        }
        self.arrows.hosts.insert(id, self.file.chunk);
    }

    pub(super) fn device_slice(&mut self, c: Command, flow: bool) {
        let dpid = device_pid(self.host_pid, c.queue.device);
        self.ensure_device(c.queue.device);
        let lane = self.lane(c.queue, c.start, c.end);
        let tid = queue_tid(c.queue.queue, lane);
        let (ts, dur) = (self.ts(c.start), c.end.saturating_sub(c.start));
        let verb = c.api.verb();
        let shown = CommandName(&c);
        let name = match (&c.kernel, c.class) {
            (None, Some((dir, path))) => Name::Words(&[verb, dir.as_str(), path.as_str()]),
            (None, None) => Name::Words(&[verb]),
            (Some(_), _) => Name::Shown(&shown),
        };
        let projected = self.tracks.projecting.contains_key(&c.queue.device);
        let j = self.begin(name, s::CAT_ENQUEUE, Kind::Slice { dur }, dpid, tid, ts);
        // The call's own details are on the host slice, one arrow away: with the arrow, what
        // the host slice says (the class, the bytes) and what follows from its start is not
        // said again (`crate::trace::compact` restores it).
        j.args();
        j.field(s::COMMAND).u64(c.id);
        if let Some((dir, path)) = c.class.filter(|_| !flow) {
            j.field(s::DIRECTION).word(dir.as_str());
            j.field(s::PATH).word(path.as_str());
            j.field(s::BYTES).u64(c.bytes);
        }
        if c.time == DeviceTime::Measured {
            if let Some((queued, submit)) = c.phases {
                j.field(s::QUEUED_TO_SUBMIT)
                    .us(submit.saturating_sub(queued));
                j.field(s::SUBMIT_TO_START)
                    .us(c.start.saturating_sub(submit));
            }
            if !flow {
                j.field(s::ENQUEUE_TO_START)
                    .us(c.start.saturating_sub(c.host_begin));
            }
            if c.class.is_some() && !projected {
                j.field(s::DEVICE_GBPS).f3(gbps(c.bytes, dur));
            }
        } else if c.time == DeviceTime::Untrusted {
            j.field(s::DEVICE_TIME).word("untrusted");
        } else {
            j.field(s::DEVICE_TIME).word("unavailable");
        }
        if c.status != 0 {
            j.field(s::STATUS).i64(c.status as i64);
        }
        j.close();
        self.end_event();
        let at = waits::At { pid: dpid, tid, ts };
        if c.held || !c.waits.is_empty() {
            for (id, from, to) in self.arrows.waits.slice(c.id, at, c.held, &c.waits) {
                self.flow(s::WAIT_FLOW_NAME, id, from, to);
            }
        }
        if !flow {
            return;
        }
        // The arrow: from the enqueue slice's start to the device slice's start.
        let host = waits::At {
            pid: self.host_pid,
            tid: c.host_tid,
            ts: self.ts(c.host_begin),
        };
        self.flow(s::FLOW_NAME, c.id, host, at);
    }

    /// A possible data race: an instant where the second command's enqueue slice starts, and an
    /// arrow from the first's. The arrow needs both slices of one category (DevTools binds a
    /// flow only to its own): a timed and an untimed enqueue get the instant alone.
    pub(super) fn race(&mut self, r: &Race) {
        let f = &r.fact;
        let [(first, first_timed), (second, second_timed)] = r.calls;
        let (from, to) = (self.ts(first), self.ts(second));
        let pid = self.host_pid;
        let j = self.begin(
            Name::Words(&[s::RACE]),
            s::CAT_CLXFER,
            Kind::Instant(Scope::Thread),
            pid,
            f.second.thread,
            to,
        );
        j.args();
        j.field(s::MEM_OBJECT).hex(f.object);
        j.field(s::CONFIDENCE).str(&f.confidence);
        for (key, side) in [(s::FIRST, &f.first), (s::SECOND, &f.second)] {
            j.field(key).open();
            j.qkey(quoted!("command")).u64(side.command);
            j.qkey(quoted!("api")).str(&side.api);
            queue_field(
                j,
                QueueRef {
                    device: side.device,
                    queue: side.queue,
                },
            );
            j.qkey(quoted!("thread")).u64(side.thread as u64);
            j.qkey(quoted!("access")).str(&side.access);
            j.qkey(quoted!("bytes")).open_array();
            j.u64(side.bytes.0);
            if side.bytes.1 != u64::MAX {
                j.u64(side.bytes.1);
            }
            j.close_array();
            j.close();
        }
        j.close();
        self.end_event();
        if first_timed == second_timed && from != to {
            let cat = if first_timed {
                s::CAT_ENQUEUE
            } else {
                s::CAT_CALL
            };
            self.arrows.races += 1;
            let at = |tid, ts| waits::At { pid, tid, ts };
            let (a, b) = (at(f.first.thread, from), at(f.second.thread, to));
            self.flow_of(s::RACE_FLOW_NAME, cat, self.arrows.races, a, b);
        }
    }

    /// A flow arrow of `name`: `s` at `from`, `f` (bound to its enclosing slice) at `to`.
    pub(super) fn flow(&mut self, name: &'static str, id: u64, from: waits::At, to: waits::At) {
        self.flow_of(name, s::CAT_ENQUEUE, id, from, to)
    }

    pub(super) fn flow_of(
        &mut self,
        name: &'static str,
        cat: &'static str,
        id: u64,
        from: waits::At,
        to: waits::At,
    ) {
        let (id, name) = (FlowId::Num(id), Name::Words(&[name]));
        let start = Kind::Flow {
            end: event::End::Start,
            id: id.clone(),
        };
        self.begin(name, cat, start, from.pid, from.tid, from.ts);
        self.end_event();
        let finish = Kind::Flow {
            end: event::End::Finish,
            id,
        };
        self.begin(name, cat, finish, to.pid, to.tid, to.ts);
        self.end_event();
    }

    /// The lane of `queue` for a slice from `start` to `end`; names new lanes.
    pub(super) fn lane(&mut self, queue: QueueRef, start: u64, end: u64) -> u32 {
        let lane = self
            .tracks
            .queues
            .entry(queue)
            .or_default()
            .place(start, end);
        self.name_lanes(queue);
        lane
    }

    pub(super) fn counter(&mut self, ns: u64, counter: Counter, value: u64) {
        if self.tracks.counters.insert(counter, value) == Some(value) {
            return;
        }
        let ts = self.ts(ns);
        let (pid, name) = match counter {
            Counter::PinnedHost => (self.host_pid, s::PINNED_COUNTER),
            Counter::InFlight => (self.host_pid, s::IN_FLIGHT_COUNTER),
            Counter::DeviceResident(d) => {
                self.ensure_device(d);
                (device_pid(self.host_pid, d), s::RESIDENT_COUNTER)
            }
        };
        // Perfetto plots counters as doubles and takes only numbers: a value past 2^53 (from
        // sizes a driver accepted from a hostile call) is drawn at 2^53.
        let sample = Kind::Counter {
            key: s::BYTES.name,
            value: value.min(json::EXACT) as i64,
        };
        self.begin(Name::Words(&[name]), s::CAT_CLXFER, sample, pid, 0, ts);
        self.end_event();
    }
}
