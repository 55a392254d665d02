//! The facts a report is made of, and nothing judged: what summary mode's layer sends and what a
//! trace's reader makes of its events (an enqueue, its device time, a kernel's run, a command's
//! place in the graph, a host wait, the end's counts). The bottom of `report/`: the builder
//! accumulates them, the graph walks them, the findings judge what they add up to.

use super::kernels::KernelRun;
use super::overhead::{OwnFacts, TimingFacts};
use crate::model::classification::{Direction, HandOff, Path, When};
use crate::model::rules;
use smallvec::SmallVec;

/// The kind of command a transfer is, by its entry point's verb (an enum, not the verb: the
/// writer compares it for every enqueue).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Write,
    Read,
    Copy,
    Fill,
    Map,
    Unmap,
    Migrate,
    Memcpy,
    Kernel,
    /// The copy a buffer's creation made (`CL_MEM_COPY_HOST_PTR`).
    Create,
    Other,
}

impl Kind {
    /// How many kinds there are.
    pub const COUNT: usize = Self::ALL.len();
    pub(super) const ALL: [Kind; 11] = [
        Kind::Write,
        Kind::Read,
        Kind::Copy,
        Kind::Fill,
        Kind::Map,
        Kind::Unmap,
        Kind::Migrate,
        Kind::Memcpy,
        Kind::Kernel,
        Kind::Create,
        Kind::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Write => "Write",
            Kind::Read => "Read",
            Kind::Copy => "Copy",
            Kind::Fill => "Fill",
            Kind::Map => "Map",
            Kind::Unmap => "Unmap",
            Kind::Migrate => "Migrate",
            Kind::Memcpy => "Memcpy",
            Kind::Kernel => "Kernel",
            Kind::Create => "Create",
            Kind::Other => "Other",
        }
    }
}

/// The kind of command an entry point enqueues, `Other` for the rest.
pub fn kind(api: &str) -> Kind {
    let verb = crate::vocab::api::verb_name(api);
    Kind::ALL
        .into_iter()
        .find(|k| k.as_str() == verb)
        .unwrap_or(Kind::Other)
}

/// [`kind`] of an entry point clxfer intercepts (looked up: every enqueue asks).
pub fn kind_of(api: crate::vocab::Api) -> Kind {
    static KIND: std::sync::LazyLock<Vec<Kind>> = std::sync::LazyLock::new(|| {
        crate::vocab::Api::ALL
            .iter()
            .map(|a| kind(a.name()))
            .collect()
    });
    KIND[api as usize]
}

/// Flags as [`Enqueue::flags`] keeps them.
pub fn small_flags(f: u64) -> u32 {
    u32::try_from(f).unwrap_or(u32::MAX)
}

/// What the host side knows of one classified enqueue.
#[derive(Debug, Clone, PartialEq)]
pub struct Enqueue {
    pub device: u32,
    /// Its queue's number (`queue #Q`).
    pub queue: u32,
    pub kind: Kind,
    pub direction: Direction,
    pub path: Path,
    pub bytes: u64,
    pub blocking: bool,
    /// Time inside the call (inside all of them, when it stands for several).
    pub host_ns: u64,
    /// How many calls it stands for: 1, or more where summary mode folded repeats of an untimed
    /// one together ([`Fact::absorb`]); every count and byte total of the report scales by it.
    /// (u32: it keeps summary mode's fact within its record's size.)
    pub calls: u32,
    /// The host side is pageable (`malloc`) memory.
    pub pageable: bool,
    /// A rule about pointer alignment was cited: the pointer was misaligned for this device.
    pub misaligned: bool,
    /// A rule saying that non-blocking pageable transfers hold the host was cited.
    pub holds_host: bool,
    /// A hand-off between devices gone wrong.
    pub hand_off: Option<HandOff>,
    /// The host side was locked with mlock.
    pub locked: bool,
    /// The host side is memory the driver hands the host: a live mapping, SVM or USM (the
    /// program's staging region).
    pub mapped: bool,
    /// Map flags, for maps; migration flags, for migrations (u32: every flag defined fits; a
    /// larger value the driver accepted becomes `u32::MAX`). Kept small: the fact travels in
    /// every record of summary mode.
    pub flags: Option<u32>,
    /// Sampled device timing left it untimed (`timing::sample`): its device time is
    /// extrapolated, not missing.
    pub sampled: bool,
    /// A migration's: when its bytes moved.
    pub when: Option<When>,
}

/// What a command's completion says: its device time, and when it started after its enqueue call
/// began (the time a blocking call waited for the commands ahead of it, when shorter than the
/// call; 0 when a trace does not say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ran {
    pub ns: u64,
    pub after_call_ns: u64,
    /// Its start on the host clock, since the run's start: for the device's busy time and
    /// overlap, and the critical path.
    pub start_ns: u64,
}

/// The host side of a command the report counts: what it is, and where it sits in the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    pub work: Work,
    pub link: Link,
}

impl Fact {
    /// A key of what [`Fact::absorb`] compares (its size, kind and path), for finding a like
    /// fact among its thread's last few (`sink::buffer::push_fact`), of an untimed,
    /// non-blocking transfer; `None` for what never folds. Two facts of one key may still
    /// differ: the fold compares them whole.
    #[inline]
    pub fn fold_key(&self) -> Option<u64> {
        match &self.work {
            Work::Transfer(e) if e.folds() => {
                Some(e.bytes ^ (e.kind as u64) << 58 ^ (e.path as u64) << 52)
            }
            _ => None,
        }
    }

    /// How many calls it stands for.
    pub fn calls(&self) -> u64 {
        match &self.work {
            Work::Transfer(e) => e.calls.into(),
            Work::Kernel(_) | Work::Launch(..) => 1,
        }
    }

    /// Folds `o` into this fact where both are the same untimed, non-blocking transfer (every
    /// field alike but the host time): the report adds them alike, and neither has a place in
    /// the graph (no device time, no host wait), so one fact with their count and summed host
    /// time stands for both. Summary mode folds a thread's repeats before they reach the writer
    /// (`sink::buffer::push_fact`): a storm's four kinds of small transfer become four facts a
    /// batch.
    #[inline]
    pub fn absorb(&mut self, o: &Fact) -> bool {
        let (Work::Transfer(a), Work::Transfer(b)) = (&mut self.work, &o.work) else {
            return false;
        };
        if !(a.folds() && a.same_call(b)) {
            return false;
        }
        let Some(calls) = a.calls.checked_add(b.calls) else {
            return false;
        };
        a.calls = calls;
        a.host_ns = a.host_ns.saturating_add(b.host_ns);
        true
    }
}

/// Where a thread's last few foldable facts lie in its buffer, by [`Fact::fold_key`] and
/// position: [`Folds::KEPT`] of them, so that a loop of as many different transfers folds whole.
#[derive(Clone, Copy, Debug)]
pub struct Folds {
    recent: [(u64, u32); Folds::KEPT],
    next: usize,
}

impl Default for Folds {
    fn default() -> Folds {
        Folds {
            recent: [(0, u32::MAX); Folds::KEPT],
            next: 0,
        }
    }
}

impl Folds {
    pub const KEPT: usize = 8;

    /// Folds `f` (of key `h`) into a like fact of `buf`, where `fact` finds an element's
    /// untimed fact; `false`: none there (push `f`, then say where, [`Folds::noted`]).
    #[inline]
    pub fn fold<T>(
        &self,
        buf: &mut [T],
        f: &Fact,
        h: u64,
        fact: impl Fn(&mut T) -> Option<&mut Fact>,
    ) -> bool {
        self.recent.iter().any(|&(key, at)| {
            key == h
                && buf
                    .get_mut(at as usize)
                    .and_then(&fact)
                    .is_some_and(|g| g.absorb(f))
        })
    }

    /// The fact of key `h` went to position `at`.
    #[inline]
    pub fn noted(&mut self, h: u64, at: usize) {
        self.recent[self.next] = (h, u32::try_from(at).unwrap_or(u32::MAX));
        self.next = (self.next + 1) % Folds::KEPT;
    }
}

impl Enqueue {
    /// Whether summary mode may fold it with a like one ([`Fact::absorb`]): untimed and not
    /// blocking, so that it has no place in the graph.
    #[inline]
    fn folds(&self) -> bool {
        self.sampled && !self.blocking
    }

    /// Every field alike but the host time and the count.
    #[inline]
    fn same_call(&self, o: &Enqueue) -> bool {
        let Enqueue {
            device,
            queue,
            kind,
            direction,
            path,
            bytes,
            blocking,
            host_ns: _,
            calls: _,
            pageable,
            misaligned,
            holds_host,
            hand_off,
            locked,
            mapped,
            flags,
            sampled,
            when,
        } = *o;
        self.bytes == bytes
            && self.device == device
            && self.queue == queue
            && self.kind == kind
            && self.direction == direction
            && self.path == path
            && self.blocking == blocking
            && self.pageable == pageable
            && self.misaligned == misaligned
            && self.holds_host == holds_host
            && self.hand_off == hand_off
            && self.locked == locked
            && self.mapped == mapped
            && self.flags == flags
            && self.sampled == sampled
            && self.when == when
    }

    /// It moved bytes between host and device memory (not nothing, not in place, not a memcpy
    /// within host memory, not unknown): what a held host, a map's copy or a migration to the
    /// host is about.
    pub fn moves(&self) -> bool {
        !matches!(
            self.path,
            Path::None | Path::ZeroCopy | Path::HostCopy | Path::Unknown
        ) && self.bytes > 0
    }

    /// Its bytes, over all the calls it stands for.
    pub(super) fn total_bytes(&self) -> u64 {
        self.bytes.saturating_mul(self.calls.into())
    }
}

/// A classified transfer, a kernel launch, or a kernel launch whose arguments moved (its move
/// classified: a transfer row, and a launch in its kernel's row). The last is boxed: rarer than
/// the others (a pull at launch), it keeps every record as small as it was.
#[derive(Debug, Clone, PartialEq)]
pub enum Work {
    Transfer(Enqueue),
    Kernel(KernelRun),
    Launch(Box<(Enqueue, std::sync::Arc<str>)>),
}

impl Work {
    /// What an enqueue did, as every source of facts tells it (the layer in summary mode, the
    /// trace writer's records, a saved trace): a classified move (`moved`), with the kernel whose
    /// launch made it; a kernel's launch alone, on queue `on`; or nothing the report counts.
    #[inline]
    pub fn of(
        moved: Option<Enqueue>,
        kernel: Option<std::sync::Arc<str>>,
        on: (u32, u32),
        (host_ns, sampled): (u64, bool),
    ) -> Option<Work> {
        Some(match (moved, kernel) {
            (Some(e), Some(name)) => Work::Launch(Box::new((e, name))),
            (Some(e), None) => Work::Transfer(e),
            (None, Some(name)) => Work::Kernel(KernelRun {
                device: on.0,
                queue: on.1,
                name,
                host_ns,
                sampled,
            }),
            (None, None) => return None,
        })
    }

    /// Its classified move: a transfer's, or a launch's whose arguments moved.
    pub fn moved(&self) -> Option<&Enqueue> {
        match self {
            Work::Transfer(e) => Some(e),
            Work::Launch(l) => Some(&l.0),
            Work::Kernel(_) => None,
        }
    }

    /// Its device.
    pub fn device(&self) -> u32 {
        match self {
            Work::Kernel(k) => k.device,
            _ => self.moved().map_or(0, |e| e.device),
        }
    }
}

/// A device as the trace start or the layer describes it.
#[derive(Debug, Clone, Default)]
pub struct DeviceFacts {
    pub index: u32,
    pub name: String,
    pub rules: String,
    /// The set `auto` would pick; another than `rules` when they were forced.
    pub auto_rules: String,
    pub global_mem: u64,
    /// `CLXFER_DEVICE_MEMORY` (0: not given).
    pub memory_given: u64,
    /// A host-memory import extension the device reports ("": none).
    pub host_import: String,
}

impl DeviceFacts {
    pub fn forced(&self) -> bool {
        rules::forced(&self.rules, &self.auto_rules)
    }

    /// The device memory the findings judge against, and whose it is (issue #57): the size the
    /// user gave (`CLXFER_DEVICE_MEMORY`), else under forced rules the card their cost model
    /// was measured on, else the device's own; 0 where none is known.
    pub fn memory(&self, set: &rules::RuleSet) -> (u64, String) {
        let card = (set.cost.as_ref().and_then(|c| c.memory))
            .filter(|_| self.forced())
            .map(|m| (m.value as u64, set));
        match (self.memory_given, card) {
            (0, Some((bytes, set))) => (bytes, format!("the {} rules' card", set.name)),
            (0, None) => (self.global_mem, "this device's".into()),
            (given, _) => (given, "as given".into()),
        }
    }
}

/// What is known only at the end.
#[derive(Debug, Clone, Default)]
pub struct EndFacts {
    pub at_ns: u64,
    /// The signal that ended the run (`SIGTERM`), where one did.
    pub signal: Option<String>,
    pub devices: Vec<DeviceEndFacts>,
    pub pinned_peak: u64,
    pub incomplete: u64,
    pub dropped: u64,
    pub own: OwnFacts,
    pub host_calls: Vec<super::HostCall>,
}

#[derive(Debug, Clone, Default)]
pub struct DeviceEndFacts {
    pub index: u32,
    pub clock: String,
    pub resident_peak: u64,
    pub alloc_host_ptr_peak: u64,
    pub alloc_host_ptr_buffers: u64,
    pub svm_peak: u64,
    /// The host bytes its staged transfers from pageable memory reached (0: none, or a trace
    /// from before it was kept).
    pub staged_region: u64,
    pub timing: TimingFacts,
}

/// Where a command sits in the graph: its number, its enqueue call (thread and times since the
/// run's start) and the commands it depends on. `id` 0: not a node (no graph was recorded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Link {
    pub id: u64,
    pub tid: u32,
    pub begin: u64,
    pub end: u64,
    /// The command its queue orders it after, and the first two of its wait list (0: none): the
    /// walk follows no more ([`Link::before`]).
    pub before: [u64; 3],
}

impl Link {
    /// What a link keeps of a command's queue order (0: none) and its wait list.
    pub fn before(after: u64, waits: impl IntoIterator<Item = u64>) -> [u64; 3] {
        let mut w = waits.into_iter();
        [after, w.next().unwrap_or(0), w.next().unwrap_or(0)]
    }
}

/// What a synchronisation point waited for (or learnt was done).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum On {
    /// These commands (or user events), by number: `clWaitForEvents`, a status query.
    Commands(SmallVec<[u64; 2]>),
    /// Every command of queue (device, queue) up to command `last`: `clFinish` (`last` 0: none
    /// was enqueued).
    Queue { queue: (u32, u32), last: u64 },
}

/// A host synchronisation point: thread, call times since the run's start, what it waited for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sync {
    pub tid: u32,
    pub begin: u64,
    pub end: u64,
    pub on: On,
}
