//! The host slices of the program's calls: an enqueue's, with what varies per call and its class
//! (`classes.rs`); any other call's, with what it waited for.

use super::*;

impl<W: TraceOut, E: Emit> Chrome<W, E> {
    pub(super) fn call(&mut self, c: Call) {
        if !self.tracks.threads.get(&c.tid).is_some_and(|t| t.1) {
            self.name_thread(c.tid);
        }
        let (ts, dur) = (self.ts(c.begin), c.end.saturating_sub(c.begin));
        let Some(e) = c.command else {
            let j = self.begin(
                Name::Words(&[c.api.name()]),
                s::CAT_CALL,
                Kind::Slice { dur },
                self.host_pid,
                c.tid,
                ts,
            );
            // A call about a user event names it, as its waiters' `waits` do; a
            // synchronisation point names what it waited for.
            if c.node != 0 || c.waited.is_some() {
                j.args();
                if c.node != 0 {
                    j.field(s::COMMAND).u64(c.node);
                }
                match c.waited.as_ref() {
                    Some(On::Commands(ids)) => {
                        j.field(s::WAITED_FOR).open_array();
                        for &id in ids {
                            j.u64(id);
                        }
                        j.close_array();
                    }
                    Some(&On::Queue { queue, last }) => {
                        let (device, queue) = queue;
                        queue_field(j, QueueRef { device, queue });
                        j.field(s::FINISHED_UP_TO).u64(last);
                    }
                    None => {}
                }
                j.close();
            }
            self.end_event();
            return;
        };
        let cat = if e.timed { s::CAT_ENQUEUE } else { s::CAT_CALL };
        let api = [c.api.name()];
        let classed =
            (e.class.as_ref()).map(|cl| [c.api.name(), cl.direction.as_str(), cl.path.as_str()]);
        let words: &[&'static str] = classed.as_ref().map_or(&api, |w| w);
        let slice = Kind::Slice { dur };
        self.begin(Name::Words(words), cat, slice, self.host_pid, c.tid, ts);
        // Borrowed apart from the caches below.
        let j = &mut self.j;
        j.args();
        // What varies per call first, then the class (`classes.rs`).
        j.field(s::COMMAND).u64(e.id);
        if !e.deps.waits.is_empty() {
            j.field(s::WAITS).open_array();
            for &w in &e.deps.waits {
                j.u64(w);
            }
            j.close_array();
        }
        if e.deps.unknown > 0 {
            j.field(s::WAITS_UNKNOWN).u64(e.deps.unknown as u64);
        }
        if self.tracks.out_of_order.contains(&e.queue)
            && let Some(after) = e.deps.after
        {
            j.field(s::AFTER).u64(after);
        }
        if e.deps.all_before {
            j.field(s::AFTER_ALL).bool(true);
        }
        if let Some(cl) = &e.class {
            args::per_call(j, cl);
            // Under forced rules this device's time is not the rules' devices': the cost model's
            // stands in. A non-blocking call's time says nothing of its transfer (issue #26).
            match self.tracks.projecting.get(&e.queue.device) {
                Some(cost) => {
                    let migration = c.api.verb() == "Migrate";
                    let projected =
                        cost.and_then(|c| c.command_ns(migration, cl.direction, cl.path, cl.bytes));
                    if let Some(ns) = projected.filter(|_| e.kernel.is_none()) {
                        j.field(s::PROJECTED_US).us(ns);
                        j.field(s::PROJECTED_GBPS).f3(gbps(cl.bytes, ns));
                    }
                }
                None if cl.blocking => {
                    j.field(s::HOST_GBPS).f3(gbps(cl.bytes, dur));
                }
                None => {}
            }
        }
        if let Some((offset, size)) = e.region {
            j.field(s::REGION).open();
            j.qkey(quoted!("offset")).u64(offset);
            j.qkey(quoted!("size")).u64(size);
            j.close();
        }
        // A call like the last of its entry point (a loop's) names that class without rendering;
        // one per kind of device timing, which sampling varies from call to call.
        if self.last_class.is_empty() {
            self.last_class
                .resize_with(crate::vocab::Api::ALL.len() * 3, || None);
        }
        let slot = c.api as usize * 3 + device_slice_of(&e) as usize;
        let last = &mut self.last_class[slot];
        let same = self.classes.current(last)
            && last.as_ref().is_some_and(|l| {
                let (queue, kernel, flags, mems, uses, class) = &l.key;
                *queue == e.queue
                    && *kernel == e.kernel
                    && *flags == e.flags
                    && *mems == e.mems
                    && *uses == e.uses
                    && *class == e.class
            });
        if let Some(l) = last.as_ref().filter(|_| same) {
            self.classes.reuse(j, l);
        } else {
            self.class(&e, c.api, slot);
        }
        let j = &mut self.j;
        j.close();
        self.end_event();
        let (id, timed) = (e.id, e.timed);
        crate::sink::buffer::unbox(e);
        if timed {
            match self.arrows.early.remove(&id) {
                Some(c) => self.device_slice(c, true),
                None => self.bare(id),
            }
        }
    }

    /// A host slice's class (`classes.rs`), rendered and numbered, and remembered as its entry
    /// point's last.
    pub(super) fn class(&mut self, e: &Enqueued, api: crate::vocab::Api, slot: usize) {
        let c_api = api;
        let j = &mut self.j;
        let (rendered, flag_cache) = (&mut self.rendered, &mut self.flag_names);
        self.classes.write(j, |j| {
            j.field(s::API).word(c_api.name());
            queue_field(j, e.queue);
            match device_slice_of(e) {
                DeviceSlice::Timed => {}
                DeviceSlice::Sampled => {
                    j.field(s::DEVICE_TIME).word("sampled");
                }
                DeviceSlice::Untimed => {
                    j.field(s::DEVICE_TIME).word("untimed");
                }
            }
            if let Some(k) = &e.kernel {
                j.field(s::KERNEL).str(k);
            }
            if let Some(cl) = &e.class {
                classification(j, c_api, cl, rendered);
            }
            match e.flags {
                CallFlags::None => {}
                CallFlags::Map(f) => {
                    j.field(s::MAP_FLAGS)
                        .raw_bytes(flag_names::<E>(flag_cache, f, MAP_FLAGS));
                }
                CallFlags::Migrate(f) => {
                    j.field(s::MIGRATION_FLAGS).raw_bytes(flag_names::<E>(
                        flag_cache,
                        f,
                        MIGRATION_FLAGS,
                    ));
                    if let Some(cl) = &e.class {
                        let ids = cl.reasons.iter().map(|r| r.rule);
                        let when = crate::model::classification::When::of(cl.bytes, ids);
                        j.field(s::MOVED).word(when.as_str());
                    }
                }
            }
            if !e.mems.is_empty() {
                j.field(s::MEM_OBJECTS).open_array();
                for (i, m) in e.mems.iter().enumerate() {
                    j.open();
                    j.qkey(quoted!("id")).u64(m.id);
                    j.qkey(quoted!("kind")).word(m.kind_name());
                    j.qkey(quoted!("size")).u64(m.size);
                    j.qkey(quoted!("flags"))
                        .raw_bytes(flag_names::<E>(flag_cache, m.flags, MEM_FLAGS));
                    // A kernel's use of its arguments, as its races are judged.
                    if e.kernel.is_some() {
                        let (use_, how) = e.uses.of(i);
                        j.qkey(quoted!("access")).word(how.label(use_));
                    }
                    j.close();
                }
                j.close_array();
            }
        });
        let key = (
            e.queue,
            e.kernel.clone(),
            e.flags,
            e.mems.clone(),
            e.uses,
            e.class.clone(),
        );
        self.last_class[slot] = Some(self.classes.remember(key));
    }
}
