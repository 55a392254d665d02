use super::*;

/// A step of a program, as the clocks see it.
#[derive(Clone, Copy)]
enum Step {
    /// (command, queue, out of order, kind, its wait list, waits for every earlier command)
    Cmd(Id, u32, bool, Kind, &'static [Id], bool),
    Finish(u32),
    Waited(&'static [Id]),
    UserEvent(Id),
    SetUser(Id),
}
use Step::*;

const W: Kind = Kind::Work;

/// (what, steps, pairs (a, b, whether a happens before b); gated commands)
type Case = (
    &'static str,
    &'static [Step],
    &'static [(Id, Id, bool)],
    &'static [Id],
);

#[test]
fn happens_before_follows_queues_waits_barriers_the_host_and_user_events() {
    let cases: &[Case] = &[
        (
            "an in-order queue, transitively",
            &[
                Cmd(1, 1, false, W, &[], false),
                Cmd(2, 1, false, W, &[], false),
                Cmd(3, 1, false, W, &[], false),
            ],
            &[(1, 2, true), (1, 3, true), (2, 3, true)],
            &[],
        ),
        (
            "two in-order queues",
            &[
                Cmd(1, 1, false, W, &[], false),
                Cmd(2, 2, false, W, &[], false),
            ],
            &[(1, 2, false)],
            &[],
        ),
        (
            "a wait list, and what the awaited command knew",
            &[
                Cmd(1, 1, false, W, &[], false),
                Cmd(2, 1, false, W, &[], false),
                Cmd(3, 2, false, W, &[2], false),
                Cmd(4, 3, false, W, &[3], false),
            ],
            &[(1, 3, true), (2, 4, true), (1, 4, true)],
            &[],
        ),
        (
            "a wait orders only what came before the awaited command",
            &[
                Cmd(1, 1, false, W, &[], false),
                Cmd(2, 2, false, W, &[1], false),
                Cmd(3, 1, false, W, &[], false),
            ],
            &[(3, 2, false), (1, 2, true)],
            &[],
        ),
        (
            "an out-of-order queue orders nothing by itself",
            &[
                Cmd(1, 1, true, W, &[], false),
                Cmd(2, 1, true, W, &[], false),
            ],
            &[(1, 2, false)],
            &[],
        ),
        (
            "a barrier orders every later command of its queue",
            &[
                Cmd(1, 1, true, W, &[], false),
                Cmd(2, 1, true, Kind::Barrier, &[], true),
                Cmd(3, 1, true, W, &[], false),
                Cmd(4, 1, true, W, &[], false),
            ],
            &[(1, 2, true), (1, 3, true), (1, 4, true), (3, 4, false)],
            &[],
        ),
        (
            "a marker without a wait list is after every earlier command, and orders only its waiters",
            &[
                Cmd(1, 1, true, W, &[], false),
                Cmd(2, 1, true, Kind::Marker, &[], true),
                Cmd(3, 2, false, W, &[2], false),
                Cmd(4, 1, true, W, &[], false),
            ],
            &[(1, 2, true), (1, 3, true), (1, 4, false)],
            &[],
        ),
        (
            "clFinish orders what the host enqueues later, on any queue",
            &[
                Cmd(1, 1, false, W, &[], false),
                Finish(1),
                Cmd(2, 2, false, W, &[], false),
            ],
            &[(1, 2, true)],
            &[],
        ),
        (
            "a wait orders what the host enqueues later, not what it enqueued before",
            &[
                Cmd(1, 1, false, W, &[], false),
                Cmd(2, 2, false, W, &[], false),
                Waited(&[1]),
                Cmd(3, 3, false, W, &[], false),
            ],
            &[(1, 3, true), (1, 2, false), (2, 3, false)],
            &[],
        ),
        (
            "a command behind a user event not yet set is gated, and so is its queue's next",
            &[
                UserEvent(10),
                Cmd(1, 1, false, W, &[10], false),
                Cmd(2, 1, false, W, &[], false),
                Cmd(3, 2, false, W, &[1], false),
                SetUser(10),
                Cmd(4, 1, false, W, &[], false),
                Cmd(5, 3, false, W, &[10], false),
            ],
            &[(1, 2, true), (2, 4, true)],
            &[1, 2, 3],
        ),
    ];
    for (what, steps, pairs, gated) in cases {
        let mut c = Clocks::default();
        let mut placed: FxHashMap<Id, Placed> = FxHashMap::default();
        for step in *steps {
            match *step {
                Cmd(id, queue, ooo, kind, waits, all_before) => {
                    let deps = Deps {
                        waits: waits.iter().copied().collect(),
                        all_before,
                        ..Deps::default()
                    };
                    placed.insert(
                        id,
                        c.command(id, (queue, ooo), kind, &deps, true).to_placed(),
                    );
                }
                Finish(q) => c.host_finished(q),
                Waited(ids) => c.host_waited(ids),
                UserEvent(id) => c.user_event(id),
                SetUser(id) => c.user_event_set(id),
            }
        }
        for &(a, b, want) in *pairs {
            assert_eq!(
                Clocks::ordered(placed[&a].stamp, &placed[&b]),
                want,
                "{what}: {a} before {b}"
            );
        }
        let mut got: Vec<Id> = placed
            .iter()
            .filter(|p| p.1.gate.is_some())
            .map(|p| *p.0)
            .collect();
        got.sort();
        assert_eq!(got, *gated, "{what}: gated");
    }
}

#[test]
fn queues_past_the_slots_share_them_so_that_a_race_may_be_missed_never_invented() {
    let mut c = Clocks::default();
    let d = Deps::default();
    let first = c.command(1, (0, false), W, &d, true).to_placed();
    for q in 1..SLOTS as u32 {
        c.command(u64::from(q) + 1, (q, false), W, &d, true);
    }
    let shared = c
        .command(SLOTS as u64 + 1, (SLOTS as u32, false), W, &d, true)
        .to_placed();
    assert_eq!(
        shared.stamp, first.stamp,
        "queue 0's slot, its first command's number"
    );
    // Its own place stands for what it ran after: so it looks ordered after queue 0's first
    // (a race missed).
    assert!(Clocks::ordered(first.stamp, &shared));
    // Queue 0's next command takes the shared stamp as its own queue's: ordered (a race missed).
    let next = c
        .command(SLOTS as u64 + 2, (0, false), W, &d, true)
        .to_placed();
    assert!(Clocks::ordered(shared.stamp, &next));
}

/// Slots past the clock's in-place ones (on the heap) order as the first ones do.
#[test]
fn queues_in_the_clocks_heap_slots_order_by_their_waits() {
    let mut c = Clocks::default();
    let d = Deps::default();
    // Queues 0..40, one command each (ids 1..=40): slots past the first 8 live on the heap.
    for q in 0..40u32 {
        c.command(u64::from(q) + 1, (q, false), W, &d, true);
    }
    let waits = |ids: &[u64]| Deps {
        waits: ids.iter().copied().collect(),
        ..Deps::default()
    };
    let on_30 = c.command(41, (30, false), W, &d, true).to_placed();
    let after = c
        .command(42, (20, false), W, &waits(&[41]), true)
        .to_placed();
    assert!(
        Clocks::ordered(on_30.stamp, &after),
        "waited for, across heap slots"
    );
    let apart = c.command(43, (35, false), W, &d, true).to_placed();
    assert!(!Clocks::ordered(on_30.stamp, &apart));
    assert!(!Clocks::ordered(after.stamp, &apart));
    // Through a queue in the first slots: 3 waits for 42, then 36 waits for 3's.
    let on_3 = c
        .command(44, (3, false), W, &waits(&[42]), true)
        .to_placed();
    let last = c
        .command(45, (36, false), W, &waits(&[44]), true)
        .to_placed();
    assert!(Clocks::ordered(on_30.stamp, &last) && Clocks::ordered(on_3.stamp, &last));
}

/// A command the program cannot name (no event of its own, not blocking) is not kept: nothing
/// can wait for it by name, and a wait that names its number finds nothing to order by.
#[test]
fn only_commands_the_program_can_name_are_kept_for_their_waiters() {
    let mut c = Clocks::default();
    let d = Deps::default();
    let waits = |ids: &[u64]| Deps {
        waits: ids.iter().copied().collect(),
        ..Deps::default()
    };
    let named = c.command(1, (1, false), W, &d, true).to_placed();
    let unnamed = c.command(2, (2, false), W, &d, false).to_placed();
    let after = c
        .command(3, (3, false), W, &waits(&[1, 2]), true)
        .to_placed();
    assert!(Clocks::ordered(named.stamp, &after));
    assert!(!Clocks::ordered(unnamed.stamp, &after));
    // Its queue's next command knows it all the same, and so does what waits for that one.
    let next = c.command(4, (2, false), W, &d, true).to_placed();
    let last = c.command(5, (3, false), W, &waits(&[4]), true).to_placed();
    assert!(Clocks::ordered(unnamed.stamp, &next) && Clocks::ordered(unnamed.stamp, &last));
    // The host learns it through its queue's finish.
    c.host_finished(2);
    let later = c.command(6, (4, false), W, &d, false).to_placed();
    assert!(Clocks::ordered(unnamed.stamp, &later));
}
