//! What bounds the run: an approximate critical path through the command graph, walked back in
//! time. On a host thread the time between synchronisation points is the host's (the program's
//! own work and its OpenCL calls). A synchronisation point (a blocking call, `clFinish`,
//! `clWaitForEvents`, a status query that saw `CL_COMPLETE`) that really waited hands the path to
//! the command it waited for that ended last; from a command the path goes to the command it
//! depended on (queue order or wait list) that ended last, if that one ended after the command's
//! enqueue call began (it held the command back), else back to the host thread at the end of the
//! enqueue call. Each stretch is charged to what ran on the path then: a kernel by name, a
//! transfer by kind, direction and path, the host, or the device waiting (between dependent
//! commands, or from an enqueue to its command's start).
//!
//! Bounded: the graph keeps the newest [`WINDOW`] commands, and the synchronisation points since
//! the last walk (those before it cannot change a later walk: it stops there). Every [`EPOCH`]
//! items, the stretch since the last walk is walked from the newest
//! synchronisation point (else the newest command) back to where the last walk began, and its
//! charges are kept; the report's walk starts at the run's end. So the stretches tile the run,
//! each a path through its own stretch: exact where the path crosses a stretch's start on the
//! host thread that synchronised last, an approximation elsewhere. A command whose predecessor
//! is older than the window charges the rest of its stretch as not followed.
//!
//! Each stretch is also replayed before it is walked (`replay.rs`): run forward again with each fix
//! its commands are covered by, for the findings' savings.

use super::facts::{Kind, Link, On, Sync};
use super::replay::{self, Durations, End, FIXES, Fix, Item, Release};
pub use order::OrderHeld;
use project::Projection;

mod labels;
mod order;
mod project;

use labels::{DEPENDENCY, HOST, HOST_BETWEEN, LAUNCH, Labels, NOT_FOLLOWED};
pub use labels::{Label, Of};

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::collections::VecDeque;

/// Commands the graph keeps (by number), and synchronisation points per thread.
pub const WINDOW: usize = 1 << 15;
/// Items (commands and synchronisation points) between two walks.
pub const EPOCH: usize = WINDOW / 2;
/// Queues the graph follows at most, and threads with synchronisation points since the last walk
/// (later ones' commands still count; their synchronisation points, and their queues' `clFinish`
/// shortcut, do not).
pub const QUEUES: usize = 1 << 12;
pub const THREADS: usize = 1 << 10;
/// Contributors the text report lists; the rest are summed as one line (`others`).
pub const TOP: usize = 6;

/// One contributor to the wall time.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Contributor {
    pub what: String,
    pub ns: u64,
}

/// The critical path, summarised.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Bounds {
    /// The time the path covers: the run's wall time.
    pub wall_ns: u64,
    /// Every contributor, largest first (the text lists [`TOP`] and sums the rest; `clxfer
    /// diff` weighs a fix by the time its transfers take on the path).
    pub top: Vec<Contributor>,
    /// The path is through the run as the cost model projects it (some device's rules were
    /// forced): `wall_ns` is that run's end, not this machine's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub projected: bool,
    /// Commands and synchronisation points the walk went through.
    pub steps: u64,
}

/// A synchronisation point as a thread keeps it: the call's times and the commands it waited for
/// (a queue's resolved when it came, [`Graph::sync`]).
#[derive(Debug)]
struct Held {
    begin: u64,
    end: u64,
    ids: SmallVec<[u64; 2]>,
    /// A call that held the host only for what a fix removes (`replay.rs`).
    released: Option<Release>,
    /// As for [`Node::fresh`].
    fresh: bool,
}

impl Held {
    /// Thread `tid`'s synchronisation point as the replay takes it.
    fn item(&self, tid: u32) -> Item {
        Item::Sync {
            tid,
            begin: self.begin,
            end: self.end,
            ids: self.ids.clone(),
            released: self.released,
        }
    }
}

/// A command as the walk needs it: copied into the window (no allocation, nothing to drop),
/// its label interned. `id` 0: an empty slot.
#[derive(Debug, Clone, Copy, Default)]
struct Node {
    id: u64,
    /// Its enqueue call.
    begin: u64,
    end: u64,
    /// The command its queue orders it after, and the first two of its wait list (0: none).
    before: [u64; 3],
    /// Device start and end since the run's start.
    ran: (u64, u64),
    tid: u32,
    label: u32,
    device: u32,
    queue: u32,
    /// What it takes in the replays of the fixes (`replay.rs`).
    dur: Durations,
    /// Under [`Fix::Reordered`]: the command it would follow ([`Graph::held_by_order`]).
    reorder: u64,
    /// Its times are as measured, not yet replayed onto the projected run ([`Graph::projects`]).
    fresh: bool,
}

impl Node {
    /// The command as the replay takes it.
    fn item(&self) -> Item {
        Item::Command {
            id: self.id,
            device: self.device,
            tid: self.tid,
            begin: self.begin,
            ran: self.ran,
            before: self.before,
            dur: self.dur,
            reorder: self.reorder,
        }
    }
}

/// Items in the order of their call's start; a command before a synchronisation point that starts
/// with it (a blocking call's own command comes first).
fn order(i: &Item) -> (u64, u8) {
    match i {
        Item::Command { begin, .. } => (*begin, 0),
        Item::Sync { begin, .. } => (*begin, 1),
    }
}

/// Where the walk is: on a host thread, or at a command.
#[derive(Clone, Copy, Debug)]
enum At {
    Host(u32),
    Command(u64),
}

impl At {
    /// Where a stretch walked back from here at `t` ends, for its replay.
    fn end(self, t: u64) -> End {
        match self {
            At::Host(tid) => End::Host(tid, t),
            At::Command(id) => End::Command(id),
        }
    }
}

/// The command graph's window, and the charges of the stretches walked so far.
#[derive(Debug, Default)]
pub struct Graph {
    /// By number modulo [`WINDOW`].
    nodes: Vec<Node>,
    labels: Labels,
    newest_id: u64,
    /// Per queue: the command that ended last so far, (end, number) (a few queues: a list).
    queues: Vec<((u32, u32), (u64, u64))>,
    /// Per thread: its synchronisation points by end, since the last walk.
    threads: FxHashMap<u32, VecDeque<Held>>,
    /// The synchronisation point that ended last in the run (end, thread).
    last_sync: Option<(u64, u32)>,
    /// Since the last walk: items, the newest synchronisation point (end, thread) and command
    /// (end, number).
    since: usize,
    newest_sync: Option<(u64, u32)>,
    newest_node: Option<(u64, u64)>,
    /// Where the last walk began: the time before it is charged.
    walked_to: u64,
    /// By label.
    charged: Vec<u64>,
    steps: u64,
    /// Per device, what each fix took off the stretches replayed so far, and which fixes some
    /// command was covered by (`replay.rs`).
    saved: Vec<(u32, [u64; FIXES], u8)>,
    /// The run as the cost model projects it, when some device's rules are forced.
    projection: Option<Box<Projection>>,
    /// Per queue (at most [`QUEUES`]): its commands held only by its order ([`OrderHeld`]).
    held: Vec<OrderHeld>,
}

impl Graph {
    /// A command that ran from `start` to `end` (since the run's start) on `queue`.
    #[inline]
    pub fn command(
        &mut self,
        link: &Link,
        queue: (u32, u32),
        ran: (u64, u64),
        label: Of,
        dur: Durations,
    ) {
        let id = link.id;
        if id == 0 {
            return;
        }
        // Where the thread is in the projected run so far.
        let by = self.carried(link.tid);
        let (begin, end) = (
            link.begin.saturating_add_signed(by),
            link.end.saturating_add_signed(by),
        );
        let ran = (
            ran.0.saturating_add_signed(by),
            ran.1.saturating_add_signed(by),
        );
        if self.nodes.is_empty() {
            self.nodes.resize(WINDOW, Node::default());
        }
        let room = self.queues.len() < QUEUES;
        match self.queues.iter_mut().find(|q| q.0 == queue) {
            Some((_, best)) if ran.1 >= best.0 => *best = (ran.1, id),
            Some(_) => {}
            None if room => self.queues.push((queue, (ran.1, id))),
            None => {}
        }
        self.newest_id = self.newest_id.max(id);
        if self.newest_node.is_none_or(|(end, _)| ran.1 >= end) {
            self.newest_node = Some((ran.1, id));
        }
        let label = self.labels.of(label);
        self.covers(queue.0, dur.covered);
        self.nodes[id as usize % WINDOW] = Node {
            id,
            begin,
            end,
            before: link.before,
            ran,
            tid: link.tid,
            label,
            device: queue.0,
            queue: queue.1,
            dur,
            reorder: 0,
            fresh: self.projection.is_some(),
        };
        self.counted();
    }

    /// A host synchronisation point. One on a queue is resolved now, to the queue's last command
    /// and the one of it seen to end last (on an out-of-order queue they may differ).
    pub fn sync(&mut self, s: Sync) {
        self.hold(s, None);
    }

    /// A synchronisation point, and whether a fix would let it return at once (a non-blocking
    /// call that held the host for its own command, [`Release`]).
    pub fn hold(&mut self, mut s: Sync, released: Option<Release>) {
        let by = self.carried(s.tid);
        (s.begin, s.end) = (
            s.begin.saturating_add_signed(by),
            s.end.saturating_add_signed(by),
        );
        let ids = match s.on {
            On::Commands(ids) => ids,
            On::Queue { queue, last } => {
                // The last command enqueued, and the one seen to end last: a completion can
                // come after the wait's own record (summary mode's callbacks), so both.
                let id = match self.queues.iter().find(|q| q.0 == queue) {
                    Some(&(_, (_, id))) if id <= last => id,
                    _ => last,
                };
                let mut ids: SmallVec<[u64; 2]> = [last].into_iter().collect();
                if id != last {
                    ids.push(id);
                }
                ids
            }
        };
        if self.newest_sync.is_none_or(|(end, _)| s.end >= end) {
            self.newest_sync = Some((s.end, s.tid));
        }
        if self.last_sync.is_none_or(|(end, _)| s.end >= end) {
            self.last_sync = Some((s.end, s.tid));
        }
        if self.threads.len() >= THREADS && !self.threads.contains_key(&s.tid) {
            return;
        }
        let t = self.threads.entry(s.tid).or_default();
        if t.len() >= WINDOW {
            t.pop_front();
        }
        // A thread's calls end in order; a record that came late goes to its place.
        let at = t.partition_point(|x| (x.end, x.begin) <= (s.end, s.begin));
        let (begin, end) = (s.begin, s.end);
        let fresh = self.projection.is_some();
        t.insert(
            at,
            Held {
                begin,
                end,
                ids,
                released,
                fresh,
            },
        );
        self.counted();
    }

    /// One more item: every [`EPOCH`], the stretch since the last walk is walked.
    fn counted(&mut self) {
        self.since += 1;
        if self.since < EPOCH {
            return;
        }
        let start = match (self.newest_sync, self.newest_node) {
            (Some((end, tid)), _) => Some((At::Host(tid), end)),
            (None, Some((end, id))) => Some((At::Command(id), end)),
            (None, None) => None,
        };
        if let Some((at, t)) = start.filter(|&(_, t)| t > self.walked_to) {
            self.walk(at, t);
            let t = self.walked_to;
            // What ended before the walk's start, no later walk reaches.
            self.threads.retain(|_, syncs| {
                let gone = syncs.partition_point(|s| !s.fresh && s.end <= t);
                syncs.drain(..gone);
                !syncs.is_empty()
            });
        }
        self.since = 0;
        self.newest_sync = None;
        self.newest_node = None;
    }

    /// The critical path over a run of `wall_ns`; `None` when no command or synchronisation
    /// point was seen.
    pub fn bounds(&mut self, wall_ns: u64) -> Option<Bounds> {
        // The last stretch: from the end, on the thread that synchronised last (else the one
        // that enqueued the command that ended last).
        let tid = match self.last_sync {
            Some((_, tid)) => tid,
            None => {
                (self.newest_node.and_then(|(_, id)| self.node(id)))
                    .or_else(|| self.newest())?
                    .tid
            }
        };
        let wall_ns = wall_ns.saturating_add_signed(self.carried(tid));
        if wall_ns > self.walked_to {
            self.walk(At::Host(tid), wall_ns);
        }
        // Projected, the path covers the run as projected: to where the walk ended it.
        let projected = self.projection.is_some();
        let wall_ns = if projected { self.walked_to } else { wall_ns };
        let labels = &self.labels.all;
        let mut by: Vec<(&Label, u64)> = (self.charged.iter().enumerate())
            .filter(|c| *c.1 > 0)
            .map(|(l, ns)| (&labels[l], *ns))
            .collect();
        by.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let top: Vec<Contributor> = (by.iter())
            .map(|(l, ns)| Contributor {
                what: l.describe(),
                ns: *ns,
            })
            .collect();
        Some(Bounds {
            wall_ns,
            top,
            steps: self.steps,
            projected,
        })
    }

    fn newest(&self) -> Option<&Node> {
        self.node(self.newest_id)
    }

    fn node(&self, id: u64) -> Option<&Node> {
        let n = self.nodes.get(id as usize % WINDOW)?;
        (n.id == id && id != 0).then_some(n)
    }

    /// Whether command `id` is older than the window keeps.
    fn forgotten(&self, id: u64) -> bool {
        id + (WINDOW as u64) <= self.newest_id
    }

    /// Charges `label` with `from..to`, of the part after where the last walk began.
    fn charge(&mut self, label: u32, from: u64, to: u64) {
        let from = from.max(self.walked_to);
        if to > from {
            // Sized to the labels when the walk began: every label charged is older.
            self.charged[label as usize] += to - from;
        }
    }

    /// Some command of `device` is covered by the fixes of `bits` ([`Durations::covered`]): the
    /// replays run them.
    fn covers(&mut self, device: u32, bits: u8) {
        if bits == 0 {
            return;
        }
        match self.saved.iter_mut().find(|s| s.0 == device) {
            Some(s) => s.2 |= bits,
            None => self.saved.push((device, [0; FIXES], bits)),
        }
    }

    /// What `fix` would take off the run on `device`, by replay; `None` when no command of the
    /// graph was covered by it (they had no device time, or none was seen).
    pub fn saved(&self, device: u32, fix: Fix) -> Option<u64> {
        let s = self.saved.iter().find(|s| s.0 == device)?;
        (s.2 & fix.mask() != 0).then_some(s.1[fix as usize])
    }

    /// Replays the stretch from where the last walk began to `t`, ending at `at`, with each fix
    /// its commands are covered by (`replay.rs`).
    fn replay(&mut self, at: At, t: u64) {
        let stop = self.walked_to;
        let due = |n: &Node| n.id != 0 && !n.fresh && n.begin >= stop && n.begin <= t;
        // One pass marks what the queues' order held and takes the stretch's commands, unless
        // no fix covers any yet: then a pass that only marks, and the items only if it covered
        // some.
        let collect = !self.saved.is_empty();
        let mut items: Vec<Item> = Vec::new();
        for i in 0..self.nodes.len() {
            if due(&self.nodes[i]) {
                self.mark_held(i);
                if collect {
                    items.push(self.nodes[i].item());
                }
            }
        }
        if !collect {
            if self.saved.is_empty() {
                return;
            }
            items.extend(self.nodes.iter().filter(|n| due(n)).map(Node::item));
        }
        for (&tid, syncs) in &self.threads {
            let held = syncs
                .iter()
                .filter(|s| !s.fresh && s.end > stop && s.end <= t);
            items.extend(held.map(|s| s.item(tid)));
        }
        items.sort_by_key(order);
        let end = at.end(t);
        let older = |id: u64| self.node(id).map(|n| n.ran.1);
        for (device, saved) in replay::savings(&items, end, &older) {
            if let Some(s) = self.saved.iter_mut().find(|s| s.0 == device) {
                for (a, b) in s.1.iter_mut().zip(saved) {
                    *a = a.saturating_add(b);
                }
            }
        }
    }

    /// Walks back from `at` at time `t` to where the last walk began (under forced rules, through
    /// the run as projected: [`Graph::project`]); the next walk stops where this one began.
    fn walk(&mut self, at: At, mut t: u64) {
        if self.projection.is_some() {
            t = self.project(at, t);
        }
        self.walk_from(at, t);
        self.walked_to = self.walked_to.max(t);
    }

    fn walk_from(&mut self, mut at: At, mut t: u64) {
        self.replay(at, t);
        let stop = self.walked_to;
        self.charged.resize(self.labels.all.len(), 0);
        // Per thread: synchronisation points at or past this index are behind the walk.
        let mut behind: FxHashMap<u32, usize> = FxHashMap::default();
        // Each step moves back in time or to an earlier command; the cap is a guard.
        let mut cap = 4 * WINDOW + 16;
        // The walk came to the host from a command's enqueue (not from the run's end).
        let mut enqueued = false;
        while t > stop && cap > 0 {
            cap -= 1;
            self.steps += 1;
            match at {
                At::Host(tid) => {
                    let Some(syncs) = self.threads.get(&tid) else {
                        break;
                    };
                    let limit = behind.get(&tid).copied().unwrap_or(syncs.len());
                    let before = syncs.partition_point(|s| s.end <= t).min(limit);
                    let Some(i) = before.checked_sub(1) else {
                        break;
                    };
                    behind.insert(tid, i);
                    let s = &syncs[i];
                    let (begin, s_end) = (s.begin, s.end);
                    let awaited = (self.awaited(&s.ids))
                        .filter(|c| c.ran.1 > begin)
                        .map(|c| (c.id, c.ran.1));
                    let between = match enqueued && awaited.is_some() {
                        true => HOST_BETWEEN,
                        false => HOST,
                    };
                    enqueued = false;
                    self.charge(between, s_end, t);
                    t = s_end;
                    let Some((id, end)) = awaited else {
                        // It did not wait: the call is the host's.
                        self.charge(HOST, begin, t);
                        t = begin;
                        continue;
                    };
                    let e = end.min(t);
                    self.charge(HOST, e, t);
                    t = e;
                    at = At::Command(id);
                }
                At::Command(id) => {
                    let Some(&c) = self.node(id) else {
                        break;
                    };
                    let start = c.ran.0.min(t);
                    self.charge(c.label, start, t);
                    t = start;
                    let listed = c.before.into_iter().filter(|&p| p != 0 && p < id);
                    let mut lost = false;
                    let mut before: Option<(u64, u64)> = None;
                    for p in listed {
                        match self.node(p) {
                            Some(n) if before.is_none_or(|b| (n.ran.1, p) > b) => {
                                before = Some((n.ran.1, p));
                            }
                            Some(_) => {}
                            None => lost |= self.forgotten(p),
                        }
                    }
                    match before {
                        // It held `c` back: it ended after `c`'s enqueue call began.
                        Some((end, p)) if end > c.begin => {
                            let pe = end.min(t);
                            self.charge(DEPENDENCY, pe, t);
                            t = pe;
                            at = At::Command(p);
                        }
                        _ if lost => {
                            self.charge(NOT_FOLLOWED, stop, t);
                            t = stop;
                        }
                        _ => {
                            let ready = c.end.min(t);
                            self.charge(LAUNCH, ready, t);
                            t = ready;
                            at = At::Host(c.tid);
                            enqueued = true;
                        }
                    }
                }
            }
        }
        // Before the thread's first synchronisation point (or past the guard): the host's.
        self.charge(HOST, stop, t);
    }

    /// Of the commands a synchronisation point waited for, the one that ended last.
    fn awaited(&self, ids: &[u64]) -> Option<&Node> {
        (ids.iter())
            .filter_map(|&id| self.node(id))
            .max_by_key(|n| (n.ran.1, n.id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::classification::{Direction, Path};
    use labels::LABELS;

    fn link(id: u64, tid: u32, call: (u64, u64), after: u64, waits: &[u64]) -> Link {
        Link {
            id,
            tid,
            begin: call.0,
            end: call.1,
            before: Link::before(after, waits.iter().copied()),
        }
    }

    fn kernel(name: &str) -> Label {
        Label::Kernel(name.into())
    }

    /// A label as a command gives it.
    fn of(l: &Label) -> Of<'_> {
        match l {
            Label::Transfer(k, d, p) => Of::Transfer(*k, *d, *p),
            Label::Kernel(name) => Of::Kernel(name),
            _ => unreachable!("commands are transfers or kernels"),
        }
    }

    fn read() -> Label {
        Label::Transfer(Kind::Read, Direction::D2H, Path::Pinned)
    }

    /// The walk's contributors as (label, ns), largest first.
    fn charged(mut g: Graph, wall: u64) -> Vec<(String, u64)> {
        let b = g.bounds(wall).unwrap();
        assert_eq!(
            b.top.iter().map(|c| c.ns).sum::<u64>(),
            wall,
            "covers the run"
        );
        b.top.into_iter().map(|c| (c.what, c.ns)).collect()
    }

    fn want(items: &[(Label, u64)]) -> Vec<(String, u64)> {
        items.iter().map(|(l, ns)| (l.describe(), *ns)).collect()
    }

    #[test]
    fn under_forced_rules_the_path_and_the_busy_time_are_the_projected_runs() {
        // A write enqueued at 0..10 ran 20..120 here; the cost model says 1,000. The host waits
        // for it 10..130 and the program ends at 200. Projected, the write ends at 1,020, the
        // wait at 1,030 (its 10 tail kept), and the run at 1,100 (the host's 70 after it kept).
        let write = Label::Transfer(Kind::Write, Direction::H2D, Path::Staged);
        let mut g = Graph::default();
        g.projects(1);
        let dur = Durations {
            base: 1_000,
            ..Durations::default()
        };
        g.command(
            &link(1, 1, (0, 10), 0, &[]),
            (1, 1),
            (20, 120),
            of(&write),
            dur,
        );
        g.sync(Sync {
            tid: 1,
            begin: 10,
            end: 130,
            on: On::Commands([1].into_iter().collect()),
        });
        let b = g.bounds(200).unwrap();
        assert!(b.projected);
        assert_eq!(b.wall_ns, 1_100);
        let got: Vec<(String, u64)> = b.top.into_iter().map(|c| (c.what, c.ns)).collect();
        assert_eq!(
            got,
            want(&[
                (write, 1_000),
                (Label::Host, 10 + 10 + 70),
                (Label::Launch, 10),
            ])
        );
        let (busy, queues) = g.projected_busy(1).unwrap();
        assert_eq!(
            (busy.transfer_ns, busy.span_ns, busy.kernel_ns),
            (1_000, 1_000, 0)
        );
        assert_eq!(queues.len(), 1);
        // A device not projected has no projected busy time.
        assert!(g.projected_busy(2).is_none());

        // A launch that pulls its argument through the host: its projected move (700 of its
        // 1,000) is transfer time, as the device's transfer rows count it; the rest its kernel's.
        let launch = Label::Transfer(Kind::Kernel, Direction::D2D, Path::ViaHost);
        let mut g = Graph::default();
        g.projects(1);
        let dur = Durations {
            base: 1_000,
            moved: 700,
            ..Durations::default()
        };
        g.command(
            &link(1, 1, (0, 10), 0, &[]),
            (1, 1),
            (20, 320),
            of(&launch),
            dur,
        );
        g.bounds(2_000).unwrap();
        let (busy, _) = g.projected_busy(1).unwrap();
        assert_eq!((busy.transfer_ns, busy.kernel_ns), (700, 300));
    }

    #[test]
    fn a_blocking_read_behind_a_kernel_is_bound_by_the_kernel() {
        // Thread 1 enqueues a kernel (10..20), then a blocking read (30..300): the kernel runs
        // 25..250, the read 260..290; the program ends at 400.
        let mut g = Graph::default();
        g.command(
            &link(1, 1, (10, 20), 0, &[]),
            (1, 1),
            (25, 250),
            of(&kernel("k")),
            Durations::default(),
        );
        g.command(
            &link(2, 1, (30, 300), 1, &[]),
            (1, 1),
            (260, 290),
            of(&read()),
            Durations::default(),
        );
        g.sync(Sync {
            tid: 1,
            begin: 30,
            end: 300,
            on: On::Commands([2].into_iter().collect()),
        });
        assert_eq!(
            charged(g, 400),
            want(&[
                (kernel("k"), 225),
                (Label::Host, 100 + 10 + 20),
                (read(), 30),
                (Label::Dependency, 10),
                (Label::Launch, 5),
            ])
        );
    }

    /// Command `id` on queue `queue` of device 1, its call at `id`, after `after` in its queue
    /// and waiting for `wait`, as it `ran`.
    fn add(
        g: &mut Graph,
        (id, after, wait, queue): (u64, u64, u64, u32),
        ran: (u64, u64),
        l: &Label,
    ) {
        g.command(
            &link(id, 1, (id, id + 1), after, &[wait]),
            (1, queue),
            ran,
            of(l),
            Durations {
                base: (ran.1 - ran.0) as u32,
                ..Durations::default()
            },
        );
    }

    /// The ported pipeline (`replay::PIPELINE`), the facts coming in any order. The uploads
    /// after the first followed a read-back that waited for a kernel: marked, and replayed
    /// following the upload before, which saves 600 (as `replay.rs` has them); no kernel and no
    /// read-back is marked.
    #[test]
    fn commands_held_only_by_their_queue_order_are_found_in_any_order() {
        let write = Label::Transfer(Kind::Write, Direction::H2D, Path::Pinned);
        let labels = [write.clone(), kernel("twice"), read()];
        let mut ran = Vec::new();
        let mut t = 100;
        for (id, after, wait, queue, took, _) in replay::PIPELINE {
            ran.push(((id, after, wait, queue), (t, t + took)));
            t += took;
        }
        // Read-backs and kernels complete before the uploads they hold, or after.
        for order in [
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
            [11, 9, 3, 6, 0, 10, 4, 1, 8, 7, 2, 5],
        ] {
            let mut g = Graph::default();
            for i in order {
                let (command, r) = ran[i];
                add(&mut g, command, r, &labels[(command.0 as usize - 1) % 3]);
            }
            g.sync(Sync {
                tid: 1,
                begin: 13,
                end: t,
                on: On::Commands([12].into_iter().collect()),
            });
            let _ = g.bounds(t).unwrap();
            let held: Vec<&OrderHeld> = g.held_by_order_on(1).collect();
            assert_eq!(held.len(), 1, "{order:?}: {held:?}");
            assert_eq!(held[0].queue, (1, 1));
            assert_eq!(held[0].commands, 3, "{order:?}");
            assert_eq!(
                held[0].first,
                [
                    write.describe(),
                    read().describe(),
                    kernel("twice").describe()
                ]
            );
            assert_eq!(held[0].behind, (1, 2));
            assert_eq!(g.saved(1, Fix::Reordered), Some(600), "{order:?}");
        }
    }

    /// Two read-backs in a row on queue 1, each waiting for a kernel of queue 2, then an upload
    /// that waits for nothing: moved to a queue of their own, both leave, and the upload follows
    /// the upload before them (100..200), not the first read-back (which waits for the first
    /// kernel): it ends at 300 instead of 2,400, and the program's wait for it with it.
    #[test]
    fn a_held_command_follows_the_first_before_it_that_stays_on_its_queue() {
        let write = Label::Transfer(Kind::Write, Direction::H2D, Path::Pinned);
        // (id, its queue's previous command, its wait, queue, ran, label)
        let plan = [
            (1, 0, 0, 1, (100, 200), write.clone()),
            (2, 0, 1, 2, (200, 1_200), kernel("k")),
            (3, 1, 2, 1, (1_200, 1_300), read()),
            (4, 2, 1, 2, (1_200, 2_200), kernel("k")),
            (5, 3, 4, 1, (2_200, 2_300), read()),
            (6, 5, 0, 1, (2_300, 2_400), write),
        ];
        let mut g = Graph::default();
        for (id, after, wait, queue, ran, label) in &plan {
            add(&mut g, (*id, *after, *wait, *queue), *ran, label);
        }
        g.sync(Sync {
            tid: 1,
            begin: 7,
            end: 2_400,
            on: On::Commands([6].into_iter().collect()),
        });
        let _ = g.bounds(2_400).unwrap();
        let held: Vec<&OrderHeld> = g.held_by_order_on(1).collect();
        assert_eq!(held.len(), 1, "{held:?}");
        assert_eq!(held[0].commands, 1, "only the upload: {held:?}");
        assert_eq!(g.saved(1, Fix::Reordered), Some(2_100));
    }

    #[test]
    fn each_kind_of_step_is_charged_as_the_walk_goes() {
        // (what, commands (id, tid, call, after, waits, queue, ran, label), syncs, wall, want)
        type Cmd = (
            u64,
            u32,
            (u64, u64),
            u64,
            &'static [u64],
            (u32, u32),
            (u64, u64),
        );
        type Case = (&'static str, Vec<Cmd>, Vec<Sync>, u64, Vec<(Label, u64)>);
        let cases: Vec<Case> = vec![
            (
                "no synchronisation: the host alone bounds the run",
                vec![(1, 1, (10, 20), 0, &[], (1, 1), (30, 500))],
                vec![],
                100,
                vec![(Label::Host, 100)],
            ),
            (
                "clFinish on an out-of-order queue: the command ending last",
                vec![
                    (1, 1, (0, 10), 0, &[], (1, 1), (20, 300)),
                    (2, 1, (10, 20), 0, &[], (1, 1), (30, 100)),
                ],
                vec![Sync {
                    tid: 1,
                    begin: 20,
                    end: 310,
                    on: On::Queue {
                        queue: (1, 1),
                        last: 2,
                    },
                }],
                310,
                vec![
                    (kernel("k"), 280),
                    (Label::Host, 10 + 10),
                    (Label::Launch, 10),
                ],
            ),
            (
                "a wait that did not wait is the host's",
                vec![(1, 1, (0, 10), 0, &[], (1, 1), (20, 30))],
                vec![Sync {
                    tid: 1,
                    begin: 50,
                    end: 60,
                    on: On::Commands([1].into_iter().collect()),
                }],
                100,
                vec![(Label::Host, 100)],
            ),
            (
                "a wait list across queues and threads",
                vec![
                    (1, 2, (0, 10), 0, &[], (1, 1), (15, 200)),
                    (2, 1, (20, 30), 0, &[1], (1, 2), (210, 260)),
                ],
                vec![Sync {
                    tid: 1,
                    begin: 30,
                    end: 270,
                    on: On::Commands([2].into_iter().collect()),
                }],
                300,
                vec![
                    (kernel("k"), 185 + 50),
                    (Label::Host, 30 + 10 + 10),
                    (Label::Dependency, 10),
                    (Label::Launch, 5),
                ],
            ),
        ];
        for (what, cmds, syncs, wall, items) in cases {
            let mut g = Graph::default();
            for (id, tid, call, after, waits, queue, ran) in cmds {
                g.command(
                    &link(id, tid, call, after, waits),
                    queue,
                    ran,
                    of(&kernel("k")),
                    Durations::default(),
                );
            }
            for s in syncs {
                g.sync(s);
            }
            let mut want = want(&items);
            want.sort_by_key(|c| std::cmp::Reverse(c.1));
            assert_eq!(charged(g, wall), want, "{what}");
        }
    }

    #[test]
    fn a_long_run_is_walked_in_stretches_over_a_bounded_window() {
        // An in-order queue of kernels back to back, each after the one before, and a clFinish
        // at the end: the stretches walked as the window fills tile the run.
        let mut g = Graph::default();
        let n = WINDOW as u64 * 3;
        for id in 1..=n {
            let at = id * 100;
            let l = link(id, 1, (0, 1), id - 1, &[]);
            g.command(
                &l,
                (1, 1),
                (at, at + 100),
                of(&kernel("k")),
                Durations::default(),
            );
        }
        let end = n * 100 + 100;
        g.sync(Sync {
            tid: 1,
            begin: 1,
            end,
            on: On::Queue {
                queue: (1, 1),
                last: n,
            },
        });
        assert_eq!(g.nodes.len(), WINDOW);
        assert_eq!(
            charged(g, end),
            want(&[
                (kernel("k"), n * 100),
                (Label::Launch, 99),
                (Label::Host, 1)
            ])
        );
    }

    #[test]
    fn a_long_projected_run_is_replayed_in_stretches_that_join_up() {
        // A thread that writes 100 ns here (projected: 300) and waits for it, 3 windows of times
        // over: each stretch moves the thread, the next starts where it left off, and the path
        // covers the projected run: the writes' projected time and the host's, as measured.
        let write = Label::Transfer(Kind::Write, Direction::H2D, Path::Staged);
        let mut g = Graph::default();
        g.projects(1);
        let n = WINDOW as u64 * 3;
        let dur = Durations {
            base: 300,
            ..Durations::default()
        };
        for id in 1..=n {
            let at = id * 1_000;
            g.command(
                &link(id, 1, (at, at + 10), 0, &[]),
                (1, 1),
                (at + 10, at + 110),
                of(&write),
                dur,
            );
            g.sync(Sync {
                tid: 1,
                begin: at + 10,
                end: at + 110,
                on: On::Commands([id].into_iter().collect()),
            });
        }
        let wall = n * 1_000 + 1_000;
        let b = g.bounds(wall).unwrap();
        assert_eq!(b.wall_ns, wall + n * 200);
        assert_eq!(b.top.iter().map(|c| c.ns).sum::<u64>(), b.wall_ns);
        let of_writes = b.top.iter().find(|c| c.what == write.describe()).unwrap();
        assert_eq!(of_writes.ns, n * 300);
        let (busy, _) = g.projected_busy(1).unwrap();
        assert_eq!(busy.transfer_ns, n * 300);
    }

    #[test]
    fn synchronisation_points_are_kept_only_until_a_walk_passes_them() {
        // Every 10 ns: an enqueue (1 ns), its kernel (3 ns, from 1 ns after the call), a wait for
        // it (until 1 ns after the kernel), the host's own work (4 ns).
        let mut g = Graph::default();
        let n = WINDOW as u64 * 2;
        let mut most = 0;
        for id in 1..=n {
            let t = id * 10;
            let l = link(id, 1, (t, t + 1), id - 1, &[]);
            g.command(
                &l,
                (1, 1),
                (t + 2, t + 5),
                of(&kernel("k")),
                Durations::default(),
            );
            g.sync(Sync {
                tid: 1,
                begin: t + 1,
                end: t + 6,
                on: On::Commands([id].into_iter().collect()),
            });
            most = most.max(g.threads.values().map(VecDeque::len).sum::<usize>());
        }
        assert!(most <= EPOCH, "{most} synchronisation points kept");
        let wall = n * 10 + 10;
        let got = charged(g, wall);
        let of = |l: Label| got.iter().find(|c| c.0 == l.describe()).map(|c| c.1);
        assert_eq!(of(kernel("k")), Some(3 * n), "{got:?}");
        assert_eq!(of(Label::Launch), Some(n), "{got:?}");
        // The host's own work between a wait and the next enqueue is charged as such.
        let host = of(Label::Host).unwrap_or(0) + of(Label::HostBetween).unwrap_or(0);
        assert_eq!(host, wall - 4 * n, "{got:?}");
        assert!(of(Label::HostBetween).unwrap_or(0) > 4 * n, "{got:?}");
    }

    #[test]
    fn a_predecessor_older_than_the_window_is_not_followed() {
        let mut g = Graph::default();
        let fillers = WINDOW as u64 + 10;
        for id in 2..=fillers {
            g.command(
                &link(id, 1, (1, 2), id - 1, &[]),
                (1, 2),
                (2, 3),
                of(&kernel("k")),
                Durations::default(),
            );
        }
        // Waits for command 1, long forgotten.
        let x = fillers + 1;
        g.command(
            &link(x, 1, (10, 11), 0, &[1]),
            (1, 1),
            (50, 60),
            of(&kernel("k")),
            Durations::default(),
        );
        g.sync(Sync {
            tid: 1,
            begin: 11,
            end: 70,
            on: On::Commands([x].into_iter().collect()),
        });
        let got = charged(g, 100);
        let of = |l: Label| got.iter().find(|c| c.0 == l.describe()).map(|c| c.1);
        assert_eq!(of(Label::NotFollowed), Some(50 - 3), "{got:?}");
        assert_eq!(of(kernel("k")), Some(10 + 1), "{got:?}");
    }

    #[test]
    fn labels_are_interned_by_name_and_bounded() {
        let mut l = Labels::default();
        let (a, b) = (kernel("k"), kernel("k"));
        assert_eq!(
            l.of(of(&a)),
            l.of(of(&b)),
            "one name, two allocations: one label"
        );
        assert_ne!(l.of(of(&a)), l.of(of(&kernel("other"))));
        assert_eq!(l.of(of(&read())), l.of(of(&read())));
        assert_eq!(l.all[HOST as usize], Label::Host);
        for i in 0..2 * LABELS {
            l.of(of(&kernel(&format!("k{i}"))));
        }
        assert!(l.all.len() <= LABELS + 1);
        let last = l.of(of(&kernel("yet another")));
        assert_eq!(l.all[last as usize].describe(), "kernel (other kernels)");
    }
}
