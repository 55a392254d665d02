//! The encoder's track descriptors: a process's, a thread's (a host thread or a queue lane), the
//! trace's global track and the counters', each described before an event is put on it (and
//! again in each chunk of a ring).

use super::*;

impl Encoder {
    /// A track descriptor packet: `uuid`, what it describes (written by `body`).
    pub(super) fn describe(&mut self, uuid: u64, body: impl FnOnce(&mut Vec<u8>)) {
        self.described.insert(uuid);
        let b = &mut self.packet;
        wire::uint(b, p::SEQUENCE_ID, 1);
        let at = wire::open(b, p::TRACK_DESCRIPTOR);
        wire::uint(b, t::UUID, uuid);
        body(b);
        wire::close(b, at);
        self.emit();
    }

    pub(super) fn process(&mut self, pid: u32, name: Option<&str>, rank: Option<i64>) -> u64 {
        let known = self.processes.get(&pid).copied();
        let uuid = match known {
            Some(u) if name.is_none() && rank.is_none() && self.described.contains(&u) => {
                return u;
            }
            Some(u) => u,
            None => self.uuid(),
        };
        self.processes.insert(pid, uuid);
        self.describe(uuid, |b| {
            let at = wire::open(b, t::PROCESS);
            // `int32`: a device's pid (2^31 and up) is a negative one, sign-extended.
            wire::int(b, t::PROCESS_PID, i64::from(pid as i32));
            if let Some(n) = name {
                wire::bytes(b, t::PROCESS_NAME, n.as_bytes());
            }
            wire::close(b, at);
            if let Some(r) = rank {
                wire::int(b, t::ORDER_RANK, r);
            }
        });
        uuid
    }

    pub(super) fn thread(
        &mut self,
        pid: u32,
        tid: u32,
        name: Option<&str>,
        rank: Option<i64>,
    ) -> u64 {
        let known = self.threads.get(&(pid, tid)).copied();
        let uuid = match known {
            Some(u) if name.is_none() && rank.is_none() && self.described.contains(&u) => {
                return u;
            }
            Some(u) => u,
            None => self.uuid(),
        };
        self.threads.insert((pid, tid), uuid);
        self.describe(uuid, |b| {
            let at = wire::open(b, t::THREAD);
            wire::int(b, t::THREAD_PID, i64::from(pid as i32));
            wire::uint(b, t::THREAD_TID, u64::from(tid));
            if let Some(n) = name {
                wire::bytes(b, t::THREAD_NAME, n.as_bytes());
            }
            wire::close(b, at);
            if let Some(r) = rank {
                wire::int(b, t::ORDER_RANK, r);
            }
        });
        uuid
    }

    pub(super) fn global_track(&mut self) -> u64 {
        if self.global == 0 {
            self.global = self.uuid();
        }
        if !self.described.contains(&self.global) {
            let uuid = self.global;
            self.describe(uuid, |b| wire::bytes(b, t::NAME, b"clxfer"));
        }
        self.global
    }

    pub(super) fn counter_track(&mut self, pid: u32, name: &str, key: &str) -> u64 {
        let known = self.counters.get(&(pid, name.into())).copied();
        if let Some(u) = known.filter(|u| self.described.contains(u)) {
            return u;
        }
        let parent = self.process(pid, None, None);
        let uuid = known.unwrap_or_else(|| self.uuid());
        self.counters.insert((pid, name.into()), uuid);
        self.describe(uuid, |b| {
            wire::bytes(b, t::NAME, name.as_bytes());
            wire::uint(b, t::PARENT, parent);
            let at = wire::open(b, t::COUNTER);
            if key == "bytes" {
                wire::uint(b, t::COUNTER_UNIT, t::UNIT_SIZE_BYTES);
            }
            wire::bytes(b, t::COUNTER_UNIT_NAME, key.as_bytes());
            wire::close(b, at);
        });
        uuid
    }

    /// A process's name and order (`process_name`, `process_sort_index`).
    pub fn name_process(&mut self, pid: u32, name: Option<&str>, rank: Option<i64>) {
        self.process(pid, name, rank);
    }

    /// A thread's name and order (`thread_name`, `thread_sort_index`).
    pub fn name_thread(&mut self, pid: u32, tid: u32, name: Option<&str>, rank: Option<i64>) {
        self.thread(pid, tid, name, rank);
    }

    /// The track of an event at `scope`, described first if new.
    pub fn track(&mut self, scope: Scope, (pid, tid): (u32, u32)) -> u64 {
        match scope {
            Scope::Thread => self.thread(pid, tid, None, None),
            Scope::Process => self.process(pid, None, None),
            Scope::Global => self.global_track(),
        }
    }
}
