//! What bounds the run: an approximate critical path through the command graph, walked back from
//! the run's end. On a host thread the time between synchronisation points is the host's (the
//! program's own work and its OpenCL calls). A synchronisation point (a blocking call,
//! `clFinish`, `clWaitForEvents`, a status query that saw `CL_COMPLETE`) that really waited hands
//! the path to the command it waited for that ended last; from a command the path goes to the
//! command it depended on (queue order or wait list) that ended last, if that one ended after
//! the command's enqueue call began (it held the command back), else back to the host thread at
//! the end of the enqueue call. Each stretch is charged to what ran on the path then: a kernel by name, a transfer
//! by kind, direction and path, the host, or the device waiting (between dependent commands, or
//! from an enqueue to its command's start).
//!
//! Bounded: the walk sees the last [`WINDOW`] commands and synchronisation points; what lies
//! before the oldest of them is charged as not followed.

use super::builder::Kind;
use crate::model::classification::{Direction, Path};
use serde::Serialize;
use smallvec::SmallVec;
use std::collections::HashMap;
use std::sync::Arc;

/// Commands, and synchronisation points, the walk keeps at most.
pub const WINDOW: usize = 1 << 16;
/// Contributors the report lists; the rest are summed as one.
pub const TOP: usize = 6;

/// Where a command sits in the graph: its number, its enqueue call (thread and times since the
/// run's start) and the commands it depends on. `id` 0: not a node (no graph was recorded).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Link {
    pub id: u64,
    pub tid: u32,
    pub begin: u64,
    pub end: u64,
    /// The command its queue orders it after (0: none).
    pub after: u64,
    /// Its wait list's commands.
    pub waits: SmallVec<[u64; 2]>,
}

/// What a stretch of the path is charged to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Label {
    Transfer(Kind, Direction, Path),
    Kernel(Arc<str>),
    /// The host: the program's own work and its OpenCL calls, outside waits.
    Host,
    /// A device command waiting for the one it depended on to end and start it.
    Dependency,
    /// From an enqueue call's end to its command's start.
    Launch,
    /// Before the oldest command or synchronisation point the walk kept.
    NotFollowed,
}

impl Label {
    pub fn describe(&self) -> String {
        match self {
            Label::Transfer(k, d, p) => format!("{} {} {}", k.as_str(), d.as_str(), p.as_str()),
            Label::Kernel(name) => format!("kernel {name}"),
            Label::Host => "host (the program and its calls, outside waits)".into(),
            Label::Dependency => "device idle between dependent commands".into(),
            Label::Launch => "device idle from enqueue to start".into(),
            Label::NotFollowed => "not followed (before the graph window)".into(),
        }
    }
}

/// What a synchronisation point waited for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum On {
    Commands(SmallVec<[u64; 2]>),
    /// Every command of queue (device, queue) up to command `last`.
    Queue {
        queue: (u32, u32),
        last: u64,
    },
}

/// A host synchronisation point: thread, call times since the run's start, what it waited for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sync {
    pub tid: u32,
    pub begin: u64,
    pub end: u64,
    pub on: On,
}

#[derive(Debug, Clone)]
struct Node {
    link: Link,
    queue: (u32, u32),
    /// Device start and end since the run's start.
    ran: (u64, u64),
    label: Label,
}

/// One contributor to the wall time.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Contributor {
    pub what: String,
    pub ns: u64,
}

/// The critical path, summarised.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Bounds {
    /// The time the path covers: the run's wall time.
    pub wall_ns: u64,
    /// The largest contributors, largest first; the last one sums the rest (`others`).
    pub top: Vec<Contributor>,
    /// Commands and synchronisation points the walk went through.
    pub steps: u64,
}

/// A ring of the newest items: the oldest is overwritten.
#[derive(Debug)]
struct Ring<T> {
    items: Vec<T>,
    next: usize,
    /// Items overwritten, and the latest time one of them reached.
    lost: u64,
    lost_until: u64,
}

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            items: Vec::new(),
            next: 0,
            lost: 0,
            lost_until: 0,
        }
    }
}

impl<T> Ring<T> {
    /// Adds `item`; an item overwritten reached `until` (its end).
    fn push(&mut self, item: T, until: impl Fn(&T) -> u64) {
        if self.items.len() < WINDOW {
            self.items.push(item);
            return;
        }
        let old = std::mem::replace(&mut self.items[self.next], item);
        self.next = (self.next + 1) % WINDOW;
        self.lost += 1;
        self.lost_until = self.lost_until.max(until(&old));
    }
}

/// The graph the walk needs: the newest commands with a device time, and synchronisation points.
#[derive(Debug, Default)]
pub struct Graph {
    nodes: Ring<Node>,
    syncs: Ring<Sync>,
}

impl Graph {
    /// A command that ran from `start` to `end` (since the run's start) on `queue`.
    pub fn command(&mut self, link: Link, queue: (u32, u32), ran: (u64, u64), label: Label) {
        if link.id == 0 {
            return;
        }
        let node = Node {
            link,
            queue,
            ran,
            label,
        };
        self.nodes.push(node, |n| n.ran.1.max(n.link.end));
    }

    pub fn sync(&mut self, s: Sync) {
        self.syncs.push(s, |s| s.end);
    }

    /// The critical path over a run of `wall_ns`; `None` when no command or synchronisation
    /// point was seen.
    pub fn bounds(&self, wall_ns: u64) -> Option<Bounds> {
        let mut w = Walk::new(self)?;
        w.run(wall_ns);
        let mut by: Vec<(Label, u64)> = w.charged.into_iter().filter(|c| c.1 > 0).collect();
        by.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut top: Vec<Contributor> = by
            .iter()
            .take(TOP)
            .map(|(l, ns)| Contributor {
                what: l.describe(),
                ns: *ns,
            })
            .collect();
        let rest: u64 = by.iter().skip(TOP).map(|c| c.1).sum();
        if rest > 0 {
            top.push(Contributor {
                what: "others".into(),
                ns: rest,
            });
        }
        Some(Bounds {
            wall_ns,
            top,
            steps: w.steps,
        })
    }
}

/// One walk back from the end.
struct Walk<'a> {
    /// Commands by number.
    nodes: Vec<&'a Node>,
    /// Per queue: (command number, the number of the command ending last up to it) by number.
    queues: HashMap<(u32, u32), Vec<(u64, u64)>>,
    /// Per thread: its synchronisation points by end.
    threads: HashMap<u32, Vec<&'a Sync>>,
    /// Before this time, items were overwritten: the path is not followed there.
    horizon: u64,
    charged: HashMap<Label, u64>,
    steps: u64,
}

impl<'a> Walk<'a> {
    fn new(g: &'a Graph) -> Option<Walk<'a>> {
        if g.nodes.items.is_empty() && g.syncs.items.is_empty() {
            return None;
        }
        let mut nodes: Vec<&Node> = g.nodes.items.iter().collect();
        nodes.sort_by_key(|n| n.link.id);
        let mut queues: HashMap<(u32, u32), Vec<(u64, u64)>> = HashMap::new();
        let mut latest: HashMap<(u32, u32), (u64, u64)> = HashMap::new();
        for n in &nodes {
            let best = latest.entry(n.queue).or_insert((n.link.id, n.ran.1));
            if n.ran.1 >= best.1 {
                *best = (n.link.id, n.ran.1);
            }
            queues.entry(n.queue).or_default().push((n.link.id, best.0));
        }
        let mut threads: HashMap<u32, Vec<&Sync>> = HashMap::new();
        for s in &g.syncs.items {
            threads.entry(s.tid).or_default().push(s);
        }
        for t in threads.values_mut() {
            t.sort_by_key(|s| (s.end, s.begin));
        }
        let horizon = g.nodes.lost_until.max(g.syncs.lost_until);
        Some(Walk {
            nodes,
            queues,
            threads,
            horizon,
            charged: HashMap::new(),
            steps: 0,
        })
    }

    fn charge(&mut self, label: Label, from: u64, to: u64) {
        // What lies before the horizon is not followed: the items there are gone.
        let from_seen = from.max(self.horizon);
        if to > from_seen {
            *self.charged.entry(label).or_default() += to - from_seen;
        }
        let lost_to = to.min(self.horizon);
        if lost_to > from {
            *self.charged.entry(Label::NotFollowed).or_default() += lost_to - from;
        }
    }

    fn node(&self, id: u64) -> Option<&'a Node> {
        let at = self.nodes.binary_search_by_key(&id, |n| n.link.id).ok()?;
        Some(self.nodes[at])
    }

    /// The command a synchronisation point waited for that ended last.
    fn awaited(&self, on: &On) -> Option<&'a Node> {
        match on {
            On::Commands(ids) => ids
                .iter()
                .filter_map(|&id| self.node(id))
                .max_by_key(|n| (n.ran.1, n.link.id)),
            On::Queue { queue, last } => {
                let q = self.queues.get(queue)?;
                let upto = q.partition_point(|&(id, _)| id <= *last);
                let &(_, best) = q.get(upto.checked_sub(1)?)?;
                self.node(best)
            }
        }
    }

    fn run(&mut self, wall: u64) {
        // The thread whose last synchronisation point (or enqueue) ended last.
        let last_sync = self
            .threads
            .iter()
            .filter_map(|(&tid, s)| s.last().map(|s| (s.end, tid)))
            .max();
        let last_enqueue = self.nodes.iter().map(|n| (n.link.end, n.link.tid)).max();
        let Some((_, mut tid)) = last_sync.max(last_enqueue) else {
            return;
        };
        let mut t = wall;
        // Per thread: synchronisation points at or past this index are behind the walk.
        let mut behind: HashMap<u32, usize> = HashMap::new();
        // Each step moves back in time or to an earlier command; the cap is a guard.
        let cap = 4 * (self.nodes.len() + self.threads.values().map(Vec::len).sum::<usize>()) + 16;
        while self.steps < cap as u64 {
            self.steps += 1;
            // On the host thread `tid` at time `t`: back to its last synchronisation point.
            let syncs = self.threads.get(&tid).map_or(&[][..], Vec::as_slice);
            let limit = behind.get(&tid).copied().unwrap_or(syncs.len());
            let at = syncs[..limit].partition_point(|s| s.end <= t);
            let Some(at) = at.checked_sub(1) else {
                self.charge(Label::Host, 0, t);
                return;
            };
            behind.insert(tid, at);
            let s = syncs[at];
            self.charge(Label::Host, s.end, t);
            t = s.end;
            let Some(mut c) = self.awaited(&s.on).filter(|c| c.ran.1 > s.begin) else {
                // It did not wait: the call is the host's.
                self.charge(Label::Host, s.begin, t);
                t = s.begin;
                continue;
            };
            let e = c.ran.1.min(t);
            self.charge(Label::Host, e, t);
            t = e;
            // On the device, from command `c` back.
            loop {
                self.steps += 1;
                let start = c.ran.0.min(t);
                self.charge(c.label.clone(), start, t);
                t = start;
                let before = (c.link.waits.iter().copied())
                    .chain((c.link.after != 0).then_some(c.link.after))
                    .filter(|&id| id < c.link.id)
                    .filter_map(|id| self.node(id))
                    .max_by_key(|p| (p.ran.1, p.link.id));
                match before {
                    // It held `c` back: it ended after `c`'s enqueue call began.
                    Some(p) if p.ran.1 > c.link.begin && self.steps < cap as u64 => {
                        let pe = p.ran.1.min(t);
                        self.charge(Label::Dependency, pe, t);
                        t = pe;
                        c = p;
                    }
                    _ => {
                        let ready = c.link.end.min(t);
                        self.charge(Label::Launch, ready, t);
                        t = ready;
                        tid = c.link.tid;
                        break;
                    }
                }
            }
        }
        self.charge(Label::NotFollowed, 0, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(id: u64, tid: u32, call: (u64, u64), after: u64, waits: &[u64]) -> Link {
        Link {
            id,
            tid,
            begin: call.0,
            end: call.1,
            after,
            waits: waits.iter().copied().collect(),
        }
    }

    fn kernel(name: &str) -> Label {
        Label::Kernel(name.into())
    }

    fn read() -> Label {
        Label::Transfer(Kind::Read, Direction::D2H, Path::Pinned)
    }

    /// The walk's contributors as (label, ns), largest first.
    fn charged(g: &Graph, wall: u64) -> Vec<(String, u64)> {
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
    fn a_blocking_read_behind_a_kernel_is_bound_by_the_kernel() {
        // Thread 1 enqueues a kernel (10..20), then a blocking read (30..300): the kernel runs
        // 25..250, the read 260..290; the program ends at 400.
        let mut g = Graph::default();
        g.command(link(1, 1, (10, 20), 0, &[]), (1, 1), (25, 250), kernel("k"));
        g.command(link(2, 1, (30, 300), 1, &[]), (1, 1), (260, 290), read());
        g.sync(Sync {
            tid: 1,
            begin: 30,
            end: 300,
            on: On::Commands([2].into_iter().collect()),
        });
        assert_eq!(
            charged(&g, 400),
            want(&[
                (kernel("k"), 225),
                (Label::Host, 100 + 10 + 20),
                (read(), 30),
                (Label::Dependency, 10),
                (Label::Launch, 5),
            ])
        );
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
                g.command(link(id, tid, call, after, waits), queue, ran, kernel("k"));
            }
            for s in syncs {
                g.sync(s);
            }
            let mut want = want(&items);
            want.sort_by_key(|c| std::cmp::Reverse(c.1));
            assert_eq!(charged(&g, wall), want, "{what}");
        }
    }

    #[test]
    fn a_long_run_keeps_a_window_and_charges_the_rest_as_not_followed() {
        // An in-order queue of kernels back to back, each after the one before, and a clFinish
        // at the end: the path runs back through the window, then stops.
        let mut g = Graph::default();
        let n = WINDOW as u64 * 3;
        for id in 1..=n {
            let at = id * 100;
            g.command(
                link(id, 1, (0, 1), id - 1, &[]),
                (1, 1),
                (at, at + 100),
                kernel("k"),
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
        assert_eq!(g.nodes.items.len(), WINDOW);
        let b = g.bounds(end).unwrap();
        let of = |what: &str| b.top.iter().find(|c| c.what == what).map(|c| c.ns);
        assert_eq!(of("kernel k"), Some(WINDOW as u64 * 100));
        assert_eq!(
            of(&Label::NotFollowed.describe()),
            Some(end - WINDOW as u64 * 100)
        );
    }
}
