//! Naming the tracks: the process and thread names and sort indices that put each device under
//! the program and label each queue and lane, written when the record that names them arrives
//! (or at the end, for what never got a name).

use super::*;

impl<W: TraceOut, E: Emit> Chrome<W, E> {
    /// What an `M` event says of the track of (pid, tid): a thread's, or with no tid its
    /// process's.
    fn metadata(&mut self, pid: u32, tid: Option<u32>, meta: Meta<&str>) {
        let kind = Kind::Track {
            thread: tid.is_some(),
            meta,
        };
        let tid = tid.unwrap_or(0);
        self.begin(Name::Words(&[]), "__metadata", kind, pid, tid, 0);
        self.end_event();
    }

    /// The track's name.
    pub(super) fn meta(&mut self, pid: u32, tid: Option<u32>, name: &str) {
        self.metadata(pid, tid, Meta::Name(name));
    }

    pub(super) fn sort_index(&mut self, pid: u32, tid: Option<u32>, index: u32) {
        self.metadata(pid, tid, Meta::Rank(index.into()));
    }

    /// Names a host thread the first time it shows a call.
    pub(super) fn name_thread(&mut self, tid: u32) {
        let entry = self
            .tracks
            .threads
            .entry(tid)
            .or_insert_with(|| (format!("thread {tid}"), false));
        if entry.1 {
            return;
        }
        entry.1 = true;
        let name = entry.0.clone();
        self.meta(self.host_pid, Some(tid), &name);
    }

    pub(super) fn name_lanes(&mut self, queue: QueueRef) {
        let Some(lanes) = self.tracks.queues.get_mut(&queue) else {
            return;
        };
        // Called for every device slice: nothing new to name, almost always.
        if lanes.named == lanes.count() {
            return;
        }
        let Some(label) = lanes.label.clone() else {
            return;
        };
        let (from, to) = (lanes.named, lanes.count());
        lanes.named = to;
        let dpid = device_pid(self.host_pid, queue.device);
        for lane in from..to {
            let tid = queue_tid(queue.queue, lane as u32);
            let name = if lane == 0 {
                label.clone()
            } else {
                format!("{label} · lane {}", lane + 1)
            };
            self.meta(dpid, Some(tid), &name);
            self.sort_index(dpid, Some(tid), tid);
        }
    }

    pub(super) fn queue(&mut self, q: QueueTrack) {
        let label = format!(
            "queue #{} ({}) · {}",
            q.queue.queue,
            if q.out_of_order {
                "out-of-order"
            } else {
                "in-order"
            },
            q.timing.as_str()
        );
        self.ensure_device(q.queue.device);
        if q.out_of_order {
            self.tracks.out_of_order.insert(q.queue);
        }
        self.tracks.queues.entry(q.queue).or_default().label = Some(label);
        // A queue's lane 0 exists from the start, so the queue shows even before its first command.
        self.tracks.queues.entry(q.queue).or_default().open_first();
        self.name_lanes(q.queue);
    }

    pub(super) fn ensure_device(&mut self, index: u32) {
        self.tracks.devices.entry(index).or_insert(false);
    }

    pub(super) fn device(&mut self, d: &DeviceTrack) {
        if self.tracks.devices.get(&d.index) == Some(&true) {
            return;
        }
        self.tracks.devices.insert(d.index, true);
        if !self.tracks.device_tracks.iter().any(|t| t.index == d.index) {
            self.tracks.device_tracks.push(d.clone());
        }
        if let Some(cost) = crate::model::rules::projecting(d.rules, d.auto_rules) {
            self.tracks.projecting.insert(d.index, cost);
        }
        let dpid = device_pid(self.host_pid, d.index);
        // Two devices of one name (two GPUs of a model) are told apart by their numbers.
        let rank = self.tracks.rank.as_deref().unwrap_or("");
        let name = format!("{rank}device #{} · {}", d.index, d.name);
        self.meta(dpid, None, &name);
        self.sort_index(dpid, None, d.index);
        let j = self.begin(
            Name::Words(&[s::DEVICE_INFO]),
            s::CAT_CLXFER,
            Kind::Instant(Scope::Process),
            dpid,
            0,
            0,
        );
        j.args();
        j.field(s::DEVICE_INDEX).u64(d.index as u64);
        j.field(s::NAME).str(&d.name);
        j.field(s::VENDOR).str(&d.vendor);
        j.field(s::DEVICE_TYPE).word(d.kind);
        j.field(s::RULES).word(d.rules);
        j.field(s::AUTO_RULES).word(d.auto_rules);
        j.field(s::GLOBAL_MEM).u64(d.global_mem);
        if d.memory_given > 0 {
            j.field(s::MEMORY_GIVEN).u64(d.memory_given);
        }
        if !d.host_import.is_empty() {
            j.field(s::HOST_IMPORT).word(d.host_import);
        }
        j.close();
        self.end_event();
    }

    /// Names what never got its name (a device or queue whose record was dropped or never came).
    pub(super) fn name_the_rest(&mut self) {
        let mut unnamed: Vec<u32> = self
            .tracks
            .devices
            .iter()
            .filter(|&(_, &named)| !named)
            .map(|(&i, _)| i)
            .collect();
        unnamed.sort();
        for index in unnamed {
            let dpid = device_pid(self.host_pid, index);
            let rank = self.tracks.rank.as_deref().unwrap_or("");
            self.meta(dpid, None, &format!("{rank}device #{index}"));
            self.tracks.devices.insert(index, true);
        }
        let mut queues: Vec<QueueRef> = self.tracks.queues.keys().copied().collect();
        queues.sort_by_key(|q| (q.device, q.queue));
        for q in queues {
            if let Some(lanes) = self.tracks.queues.get_mut(&q) {
                lanes
                    .label
                    .get_or_insert_with(|| format!("queue {}", q.queue));
            }
            self.name_lanes(q);
        }
    }
}
