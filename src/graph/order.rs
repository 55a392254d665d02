//! The order a queue imposes, in O(1) per command. An in-order queue orders each command after
//! the one before. An out-of-order queue orders nothing but barriers: every command waits for the
//! last barrier; a marker or barrier without a wait list waits for every earlier command of the
//! queue (OpenCL 3.0, `clEnqueueMarkerWithWaitList`, `clEnqueueBarrierWithWaitList`); with a wait
//! list it waits for the list alone (and the last barrier).

use super::{Deps, Id, Kind};
use crate::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A queue's order as the threads that enqueue to it share it: an in-order queue's is one atomic
/// swap per command (each after the one before, [`Queue`]'s rule), an out-of-order queue's takes a
/// lock (its barriers).
#[derive(Debug)]
pub struct Shared {
    /// The newest command (0: none).
    newest: AtomicU64,
    out_of_order: Option<Mutex<Queue>>,
}

impl Shared {
    pub fn new(out_of_order: bool) -> Shared {
        Shared {
            newest: AtomicU64::new(0),
            out_of_order: out_of_order.then(|| Mutex::new(Queue::new(true))),
        }
    }

    /// [`Queue::place`].
    #[inline]
    pub fn place(&self, id: Id, kind: Kind, deps: &mut Deps) {
        match &self.out_of_order {
            None => {
                let before = self.newest.swap(id, Relaxed);
                deps.after = (before != 0).then_some(before);
            }
            Some(q) => {
                let mut q = q.lock();
                q.place(id, kind, deps);
                self.newest.store(id, Relaxed);
            }
        }
    }

    /// The last command placed.
    pub fn newest(&self) -> Option<Id> {
        Some(self.newest.load(Relaxed)).filter(|&id| id != 0)
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Queue {
    pub out_of_order: bool,
    /// In order: the last command; out of order: the last barrier.
    last: Option<Id>,
}

impl Queue {
    pub fn new(out_of_order: bool) -> Queue {
        Queue {
            out_of_order,
            last: None,
        }
    }

    /// Places command `id` on the queue; `deps` holds its wait list, to which the queue's order
    /// is added.
    pub fn place(&mut self, id: Id, kind: Kind, deps: &mut Deps) {
        deps.after = self.last;
        if !self.out_of_order {
            self.last = Some(id);
            return;
        }
        let listed = !deps.waits.is_empty() || deps.unknown > 0;
        if kind != Kind::Work && !listed {
            deps.all_before = true;
        }
        if kind == Kind::Barrier {
            self.last = Some(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Kind::*;

    /// (kind, wait list) of each command in turn, numbered 1, 2, …; then, for each, its `after`
    /// and `all_before`.
    type Case = (
        &'static str,
        bool,
        &'static [(Kind, &'static [Id])],
        &'static [(Option<Id>, bool)],
    );

    #[test]
    fn each_queue_kind_orders_as_the_spec_says() {
        let cases: &[Case] = &[
            (
                "in order: each after the one before, whatever it is",
                false,
                &[(Work, &[]), (Marker, &[]), (Barrier, &[1]), (Work, &[])],
                &[
                    (None, false),
                    (Some(1), false),
                    (Some(2), false),
                    (Some(3), false),
                ],
            ),
            (
                "out of order: work is unordered",
                true,
                &[(Work, &[]), (Work, &[]), (Work, &[1])],
                &[(None, false), (None, false), (None, false)],
            ),
            (
                "out of order: a marker without a list waits for all before, and holds nothing",
                true,
                &[(Work, &[]), (Marker, &[]), (Work, &[])],
                &[(None, false), (None, true), (None, false)],
            ),
            (
                "out of order: a barrier without a list waits for all before, and holds the rest",
                true,
                &[(Work, &[]), (Barrier, &[]), (Work, &[]), (Work, &[])],
                &[
                    (None, false),
                    (None, true),
                    (Some(2), false),
                    (Some(2), false),
                ],
            ),
            (
                "out of order: a barrier with a list waits for it, and holds the rest",
                true,
                &[
                    (Work, &[]),
                    (Work, &[]),
                    (Barrier, &[1]),
                    (Marker, &[2]),
                    (Work, &[]),
                ],
                &[
                    (None, false),
                    (None, false),
                    (None, false),
                    (Some(3), false),
                    (Some(3), false),
                ],
            ),
        ];
        for (what, out_of_order, commands, want) in cases {
            let (mut q, shared) = (Queue::new(*out_of_order), Shared::new(*out_of_order));
            for (i, ((kind, waits), want)) in commands.iter().zip(*want).enumerate() {
                let mut deps = Deps {
                    waits: waits.iter().copied().collect(),
                    ..Deps::default()
                };
                let mut shared_deps = deps.clone();
                q.place(i as Id + 1, *kind, &mut deps);
                assert_eq!(
                    (deps.after, deps.all_before),
                    *want,
                    "{what}: command {}",
                    i + 1
                );
                // The queue's order as the enqueueing threads share it is the same, and knows
                // the newest command (what clFinish waits for, with all before).
                shared.place(i as Id + 1, *kind, &mut shared_deps);
                assert_eq!(shared_deps, deps, "{what}: shared, command {}", i + 1);
                assert_eq!(shared.newest(), Some(i as Id + 1), "{what}: the newest");
            }
        }
    }

    #[test]
    fn the_shared_order_is_the_queues() {
        for out_of_order in [false, true] {
            let (shared, mut q) = (Shared::new(out_of_order), Queue::new(out_of_order));
            for (id, kind) in [(1, Work), (2, Barrier), (3, Work), (4, Marker)] {
                let (mut a, mut b) = (Deps::default(), Deps::default());
                shared.place(id, kind, &mut a);
                q.place(id, kind, &mut b);
                assert_eq!(a, b, "out of order: {out_of_order}, command {id}");
                assert_eq!(shared.newest(), Some(id));
            }
        }
    }

    #[test]
    fn an_unknown_event_in_the_list_is_a_list() {
        let mut q = Queue::new(true);
        let mut deps = Deps {
            unknown: 1,
            ..Deps::default()
        };
        q.place(1, Marker, &mut deps);
        assert!(!deps.all_before);
    }
}
