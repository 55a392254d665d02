//! Savings by replay (issue #26): what a fix would take off the run's wall time, found by running
//! the command graph forward again with the fixed commands' durations, against the same graph run
//! forward with the durations as they are (or, under forced rules, as the cost model projects
//! them). A command starts when its enqueue call, the commands it depends on and its original
//! slack allow; a host synchronisation point ends when what it waited for ends, plus its original
//! tail; a thread's later calls move with its synchronisation points. A transfer that overlaps
//! others, or that nothing waits for, saves what the replay says: often nothing. Pure: fed the
//! items of one stretch of the graph (`bounds.rs` walks and replays the same stretches).

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// The fixes replayed: each finding that shortens commands names one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fix {
    /// Staged transfers from pageable memory made pinned, by direction.
    PinnedH2D = 0,
    PinnedD2H = 1,
    /// The copy of a map for WRITE removed (`CL_MAP_WRITE_INVALIDATE_REGION`).
    MapInvalidate = 2,
    /// Small transfers batched into one large one: each takes its bytes' share of it.
    Batched = 3,
    /// The host side pinned: staged transfers of both directions pinned, and the calls they
    /// held the host in return at once (one fix: one saving, issue #57).
    Pinned = 4,
    /// A command that an in-order queue held behind one waiting for another queue: that one
    /// (and any just before it that wait for another queue too) moved to a queue of its own, so
    /// the command follows the one before them instead ([`Item::Command::reorder`]). Its
    /// duration does not change.
    Reordered = 5,
}

pub const FIXES: usize = 6;

/// The ported pipeline's command graph (tests/programs/pipeline.c, four chunks), for the tests
/// of the replay and of the graph that marks what its queue's order held: (number, its queue's
/// previous command, its wait, its queue, its time, the command it follows under
/// [`Fix::Reordered`], 0 where its queue held it behind nothing). Uploads (100) and read-backs
/// (100) on queue 1, kernels (1,000) on queue 2; each kernel waits for its upload, each
/// read-back for its kernel, and an upload reusing a slot for the slot's read-back.
#[cfg(test)]
pub const PIPELINE: [(u64, u64, u64, u32, u64, u64); 12] = [
    (1, 0, 0, 1, 100, 0),
    (2, 0, 1, 2, 1_000, 0),
    (3, 1, 2, 1, 100, 0),
    (4, 3, 0, 1, 100, 1),
    (5, 2, 4, 2, 1_000, 0),
    (6, 4, 5, 1, 100, 0),
    (7, 6, 3, 1, 100, 4),
    (8, 5, 7, 2, 1_000, 0),
    (9, 7, 8, 1, 100, 0),
    (10, 9, 6, 1, 100, 7),
    (11, 8, 10, 2, 1_000, 0),
    (12, 10, 11, 1, 100, 0),
];

/// What each fix covers, in [`Durations::covered`]'s bits.
const MASKS: [u8; FIXES] = [1, 2, 4, 8, 3, 32];

impl Fix {
    /// The bits of [`Durations::covered`] the fix applies to.
    pub fn mask(self) -> u8 {
        MASKS[self as usize]
    }
}

/// What a command takes in each replay, ns (u32: a single command of over 4 s is held at 4 s).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Durations {
    /// As it is (measured, or projected under forced rules).
    pub base: u32,
    /// Bit `Fix as u8` of the single fixes (H2D and D2H pinned, map, batched, reordered): the fix covers
    /// it; [`Fix::Pinned`] covers both pinned bits.
    pub covered: u8,
    /// Its time with a pinned host side, and its share of one batched transfer.
    pub pinned: u32,
    pub batched: u32,
    /// Of `base`, a kernel launch's projected move of its arguments, which comes before its
    /// kernel runs: transfer time in the projected device's busy time, not kernel time.
    pub moved: u32,
}

impl Durations {
    /// The command's duration with `fix` applied (`None`: as it is).
    pub fn under(&self, fix: Option<usize>) -> u64 {
        let hit = fix.map_or(0, |f| self.covered & MASKS[f]);
        let d = if hit & 3 != 0 {
            self.pinned
        } else if hit & 4 != 0 {
            0
        } else if hit & 8 != 0 {
            self.batched
        } else {
            self.base
        };
        u64::from(d)
    }

    /// `ns` held in a u32.
    pub fn ns(ns: u64) -> u32 {
        u32::try_from(ns).unwrap_or(u32::MAX)
    }
}

/// One item of a stretch, in the order of its call's start (a command before a synchronisation
/// point that starts with it: a blocking call's own command comes first).
#[derive(Clone, Debug)]
pub enum Item {
    Command {
        id: u64,
        device: u32,
        tid: u32,
        /// Its enqueue call's start.
        begin: u64,
        /// Where it ran, and the commands it depends on (0: none).
        ran: (u64, u64),
        before: [u64; 3],
        dur: Durations,
        /// Under [`Fix::Reordered`], the command that stands for `before[0]` (0: none).
        reorder: u64,
    },
    Sync {
        tid: u32,
        begin: u64,
        end: u64,
        /// The commands it waited for (those known).
        ids: SmallVec<[u64; 2]>,
        /// A non-blocking call that held the host for its own command (staged from pageable
        /// memory): the device, the fixes' bits under which it returns at once, and its own
        /// time then.
        released: Option<Release>,
    },
}

/// A call that waits only because of what a fix removes ([`Item::Sync::released`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    pub device: u32,
    /// Bits of [`Durations::covered`].
    pub bits: u8,
    /// The call's time had it not waited.
    pub own: u64,
}

/// Where the stretch ends: on a host thread at a time, or at a command's end.
#[derive(Clone, Copy, Debug)]
pub enum End {
    Host(u32, u64),
    Command(u64),
}

/// A command older than the stretch: when it ended (it does not move).
pub type Older<'a> = &'a dyn Fn(u64) -> Option<u64>;

/// The stretch's end in each replay, in one pass over its items: `scenarios[k]` is the fix applied
/// to one device's commands in replay `k` (`None`: as it is).
fn run(
    items: &[Item],
    end: End,
    older: Older,
    scenarios: &[Option<(u32, usize)>],
    mut record: Option<&mut Replayed>,
) -> Vec<u64> {
    let w = scenarios.len();
    let ids = items.iter().filter_map(|i| match i {
        Item::Command { id, .. } => Some(*id),
        Item::Sync { .. } => None,
    });
    let (first, last) = ids.fold((u64::MAX, 0), |(a, b), id| (a.min(id), b.max(id)));
    // Numbers span at most the graph's window; a wider span (not from the graph) is clipped.
    let span = last.saturating_sub(first).saturating_add(1).min(1 << 16) as usize;
    // Per command from `first`: its original end (0: not replayed), then its end in each replay.
    let mut ends = vec![0u64; span * (w + 1)];
    // Per thread: how far each replay moved it.
    let mut shifts: FxHashMap<u32, usize> = FxHashMap::default();
    let mut shift: Vec<i64> = Vec::new();
    let mut thread = |tid: u32, shift: &mut Vec<i64>| -> usize {
        *shifts.entry(tid).or_insert_with(|| {
            shift.resize(shift.len() + w, 0);
            shift.len() - w
        })
    };
    let slot = |id: u64| {
        (id.checked_sub(first))
            .map(|i| i as usize)
            .filter(|&i| i < span)
            .map(|i| i * (w + 1))
    };
    let moved = |t: u64, by: i64| t.saturating_add_signed(by);
    let mut was_now = vec![0u64; w];
    for item in items {
        match item {
            Item::Command {
                id,
                device,
                tid,
                begin,
                ran,
                before,
                dur,
                reorder,
            } => {
                let at = thread(*tid, &mut shift);
                let mut was = *begin;
                for (k, now) in was_now.iter_mut().enumerate() {
                    *now = moved(*begin, shift[at + k]);
                }
                // Under `Reordered` on its device, a covered command follows `reorder` in place
                // of its queue's previous command (`before[0]`): its end in replay `k`.
                let held = dur.covered & MASKS[Fix::Reordered as usize] != 0;
                let reordered = |k: usize| scenarios[k] == Some((*device, Fix::Reordered as usize));
                let instead = |k: usize| match slot(*reorder).filter(|&s| ends[s] != 0) {
                    _ if *reorder == 0 => 0,
                    Some(s) => ends[s + 1 + k],
                    None => older(*reorder).unwrap_or(0),
                };
                for (i, &p) in before.iter().enumerate().filter(|(_, p)| **p != 0) {
                    let held = held && i == 0;
                    // Replayed in this stretch (its end in each replay), or older (one end).
                    let at = slot(p).filter(|&s| ends[s] != 0);
                    let Some(e) = at.map(|s| ends[s]).or_else(|| older(p)) else {
                        continue;
                    };
                    was = was.max(e);
                    for (k, now) in was_now.iter_mut().enumerate() {
                        let e = match held && reordered(k) {
                            true => instead(k),
                            false => at.map_or(e, |s| ends[s + 1 + k]),
                        };
                        *now = (*now).max(e);
                    }
                }
                // Its slack after what allowed it to start (the launch), as it was.
                let slack = ran.0.saturating_sub(was);
                if let Some(s) = slot(*id) {
                    ends[s] = ran.1.max(1);
                    for (k, fix) in scenarios.iter().enumerate() {
                        let fix = fix.filter(|f| f.0 == *device).map(|f| f.1);
                        ends[s + 1 + k] = was_now[k]
                            .saturating_add(slack)
                            .saturating_add(dur.under(fix));
                    }
                }
                if let Some(r) = record.as_deref_mut() {
                    let start = was_now[0].saturating_add(slack);
                    let by = shift[at];
                    r.items.push(Moved {
                        call: (moved(*begin, by), by),
                        ran: (start, start.saturating_add(dur.under(None))),
                    });
                }
            }
            Item::Sync {
                tid,
                begin,
                end,
                ids,
                released,
            } => {
                let at = thread(*tid, &mut shift);
                // The awaited command that ended last, as it was.
                let awaited = (ids.iter())
                    .filter_map(|&id| match slot(id).filter(|&s| ends[s] != 0) {
                        Some(s) => Some((ends[s], Some(s))),
                        None => older(id).map(|e| (e, None)),
                    })
                    .max();
                for k in 0..w {
                    let by = shift[at + k];
                    let freed = released.filter(|r| {
                        scenarios[k].is_some_and(|(d, f)| d == r.device && MASKS[f] & r.bits != 0)
                    });
                    let new_end = match awaited {
                        // The fix lets the call return at once.
                        _ if freed.is_some() => {
                            moved(*begin, by).saturating_add(freed.map_or(0, |r| r.own))
                        }
                        // It waited: it ends when that one ends, after its own tail. One
                        // that had ended before the call waits in a replay where it ends later
                        // (a fix that let the thread run ahead), then takes its own time.
                        Some((e, s)) => {
                            let e2 = s.map_or(e, |s| ends[s + 1 + k]);
                            moved(*begin, by)
                                .max(e2)
                                .saturating_add(end.saturating_sub(e.max(*begin)))
                        }
                        None => moved(*end, by),
                    };
                    if k == 0
                        && let Some(r) = record.as_deref_mut()
                    {
                        r.items.push(Moved {
                            call: (moved(*begin, by), by),
                            ran: (moved(*begin, by), new_end),
                        });
                    }
                    // Saturating: a trace's times are whatever it says (a damaged one's too).
                    let delta = i128::from(new_end) - i128::from(*end);
                    shift[at + k] = delta.clamp(i64::MIN.into(), i64::MAX.into()) as i64;
                }
            }
        }
    }
    if let Some(r) = record {
        r.shifts = shifts.iter().map(|(&tid, &at)| (tid, shift[at])).collect();
    }
    (0..w)
        .map(|k| match end {
            End::Host(tid, t) => {
                let by = shifts.get(&tid).map_or(0, |&at| shift[at + k]);
                moved(t, by)
            }
            End::Command(id) => slot(id).map_or(0, |s| ends[s + 1 + k]),
        })
        .collect()
}

/// An item's times in the replay as it is (the durations' `base`: under forced rules the cost
/// model's), for a report of the run as the rules' device would have run it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Moved {
    /// A command's enqueue call's start, or a synchronisation point's; and how far its thread
    /// had moved by then (what moves the call's end with it).
    pub call: (u64, i64),
    /// A command's start and end on the device; a synchronisation point's start and end.
    pub ran: (u64, u64),
}

/// The stretch replayed as it is: each item's times, in the items' order; how far each thread
/// moved by the stretch's end; and the stretch's end.
#[derive(Clone, Debug, Default)]
pub struct Replayed {
    pub items: Vec<Moved>,
    pub shifts: Vec<(u32, i64)>,
    pub end: u64,
}

/// The stretch replayed with every command's `base` duration: where each item lands.
pub fn replayed(items: &[Item], end: End, older: Older) -> Replayed {
    let mut r = Replayed::default();
    r.end = run(items, end, older, &[None], Some(&mut r))[0];
    r
}

/// What each fix takes off the stretch's end, per device: the replay as it is against the
/// replay with the fix applied to that device's commands, for each (device, fix) some command of
/// the stretch is covered by; the devices in order. All replays run in one pass.
pub fn savings(items: &[Item], end: End, older: Older) -> Vec<(u32, [u64; FIXES])> {
    let mut covered: Vec<(u32, u8)> = Vec::new();
    for i in items {
        if let Item::Command { device, dur, .. } = i
            && dur.covered != 0
        {
            match covered.iter_mut().find(|c| c.0 == *device) {
                Some(c) => c.1 |= dur.covered,
                None => covered.push((*device, dur.covered)),
            }
        }
    }
    covered.sort_unstable();
    if covered.is_empty() {
        return Vec::new();
    }
    let mut scenarios = vec![None];
    for &(device, bits) in &covered {
        for f in (0..FIXES).filter(|&f| bits & MASKS[f] != 0) {
            scenarios.push(Some((device, f)));
        }
    }
    let ends = run(items, end, older, &scenarios, None);
    let mut out: Vec<(u32, [u64; FIXES])> = covered.iter().map(|c| (c.0, [0; FIXES])).collect();
    for (fix, fixed) in scenarios.iter().zip(&ends).skip(1) {
        if let Some((device, f)) = fix
            && let Some(o) = out.iter_mut().find(|o| o.0 == *device)
        {
            o.1[*f] = ends[0].saturating_sub(*fixed);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(id: u64, begin: u64, ran: (u64, u64), after: u64, covered: u8, fixed: u32) -> Item {
        Item::Command {
            id,
            device: 1,
            tid: 1,
            begin,
            ran,
            before: [after, 0, 0],
            dur: Durations {
                base: (ran.1 - ran.0) as u32,
                covered,
                pinned: fixed,
                batched: fixed,
                moved: 0,
            },
            reorder: 0,
        }
    }

    fn sync(begin: u64, end: u64, ids: &[u64]) -> Item {
        Item::Sync {
            tid: 1,
            begin,
            end,
            ids: ids.iter().copied().collect(),
            released: None,
        }
    }

    const H2D: u8 = 1 << Fix::PinnedH2D as u8;

    /// A non-blocking write (command 1) from pageable memory whose call held the host from 0 to
    /// 1,000; pinned, it takes 10.
    fn held_write() -> Item {
        Item::Sync {
            tid: 1,
            begin: 0,
            end: 1_000,
            ids: [1].into_iter().collect(),
            released: Some(Release {
                device: 1,
                bits: H2D,
                own: 10,
            }),
        }
    }
    const NONE: Older = &|_| None;

    #[test]
    fn any_times_a_trace_gives_replay_without_overflowing() {
        // A damaged trace's times (the fuzzer's): a command ending at 2^63 awaited by a wait
        // that ends at 5, one ending at the clock's last tick, a wait from the end of time.
        let far = 1 << 63;
        let cases = [
            vec![command(1, 0, (0, far), 0, H2D, 100), sync(1, 5, &[1])],
            vec![
                command(1, 0, (0, u64::MAX - 1), 0, H2D, u32::MAX),
                command(2, u64::MAX, (u64::MAX, u64::MAX), 1, H2D, u32::MAX),
                sync(u64::MAX, 0, &[2]),
            ],
        ];
        for items in cases {
            for end in [End::Host(1, u64::MAX), End::Command(2), End::Host(1, 0)] {
                let _ = savings(&items, end, NONE);
            }
        }
    }

    /// The ported pipeline ([`PIPELINE`]): every upload after the first follows a read-back
    /// that waits for a kernel; with the read-backs on a queue of their own, it follows the
    /// upload before it, and the uploads overlap the kernels: 4,800 becomes 4,200.
    #[test]
    fn uploads_held_behind_read_backs_are_replayed_following_the_upload_before() {
        let reordered = 1 << Fix::Reordered as u8;
        // As it ran: one after another.
        let mut items = Vec::new();
        let mut t = 0;
        for (id, after, wait, _, took, follows) in PIPELINE {
            items.push(Item::Command {
                id,
                device: 1,
                tid: 1,
                begin: id,
                ran: (t, t + took),
                before: [after, wait, 0],
                dur: Durations {
                    base: took as u32,
                    covered: if follows != 0 { reordered } else { 0 },
                    ..Durations::default()
                },
                reorder: follows,
            });
            t += took;
        }
        items.push(sync(13, t, &[12]));
        let saved = savings(&items, End::Host(1, t), NONE);
        assert_eq!(t, 4_800);
        assert_eq!(saved[0].1[Fix::Reordered as usize], 600);
        // Nothing else is covered: no other fix saves anything.
        assert_eq!(saved[0].1.iter().sum::<u64>(), 600);
    }

    #[test]
    fn a_fix_saves_what_the_replayed_run_ends_sooner() {
        // (what the program does, the saving of making command 1 take 100 instead of 900)
        let cases: [(&str, Vec<Item>, End, u64); 4] = [
            (
                // A blocking staged write, then a kernel the host waits for: serial, all saved.
                "serial",
                vec![
                    command(1, 0, (100, 1_000), 0, H2D, 100),
                    sync(0, 1_000, &[1]),
                    command(2, 1_000, (1_010, 2_000), 1, 0, 0),
                    sync(1_010, 2_000, &[2]),
                ],
                End::Host(1, 2_100),
                800,
            ),
            (
                // A non-blocking write on another queue, beside a long kernel the host waits
                // for: nothing.
                "overlapped",
                vec![
                    command(1, 0, (10, 910), 0, H2D, 100),
                    command(2, 10, (20, 3_000), 0, 0, 0),
                    sync(20, 3_000, &[2]),
                ],
                End::Host(1, 3_000),
                0,
            ),
            (
                // The same, but the kernel waits for the write: what it waited, saved.
                "dependent",
                vec![
                    command(1, 0, (10, 910), 0, H2D, 100),
                    command(2, 10, (910, 3_000), 1, 0, 0),
                    sync(20, 3_000, &[2]),
                ],
                End::Host(1, 3_000),
                800,
            ),
            (
                // A write nothing waits for, the host busy after it: the run ends on the host.
                "unwaited",
                vec![command(1, 0, (10, 910), 0, H2D, 100)],
                End::Host(1, 5_000),
                0,
            ),
        ];
        for (what, items, end, want) in cases {
            let s = savings(&items, end, NONE);
            // The host side pinned covers it as its direction's fix does.
            assert_eq!(s, vec![(1, [want, 0, 0, 0, want, 0])], "{what}");
        }
    }

    /// A non-blocking staged write whose call held the host until it ended (issue #57): pinned,
    /// the call returns at once, so the host's next work (here a kernel it waits for) starts
    /// sooner by the whole hold, not only by the transfer's shorter time.
    #[test]
    fn a_call_that_held_the_host_returns_at_once_when_pinned() {
        let held = held_write();
        let items = vec![
            command(1, 0, (100, 1_000), 0, H2D, 100),
            held,
            command(2, 1_000, (1_010, 2_000), 0, 0, 0),
            sync(1_010, 2_000, &[2]),
        ];
        let s = savings(&items, End::Host(1, 2_000), NONE);
        // Pinned: the call ends at 10, the kernel runs 20..1_010; the write's 100 beside it.
        assert_eq!(s, vec![(1, [990, 0, 0, 0, 990, 0])]);
        // The same call had it not held (a blocking one keeps its wait): the transfer's
        // shorter time only.
        let mut blocking = items.clone();
        blocking[1] = sync(0, 1_000, &[1]);
        let s = savings(&blocking, End::Host(1, 2_000), NONE);
        assert_eq!(s, vec![(1, [800, 0, 0, 0, 800, 0])]);
    }

    /// A wait for a command that had ended before the call, as it was, still waits for it in
    /// a replay where the thread ran ahead of it: pinned, the held call returns at once, but the
    /// program's later clWaitForEvents on a kernel that the hold used to cover does not.
    #[test]
    fn a_thread_freed_by_a_fix_still_waits_for_what_it_waits_on() {
        let held = held_write();
        let items = vec![
            command(1, 0, (0, 1_000), 0, H2D, 100),
            held,
            // A kernel held back by an older command to 1,000 (it does not move), 5,000 long;
            // then a wait that began after it ended and took 100 of its own.
            command(2, 1_000, (1_000, 6_000), 9, 0, 0),
            sync(6_500, 6_600, &[2]),
        ];
        let older: Older = &|id| (id == 9).then_some(1_000);
        let s = savings(&items, End::Host(1, 6_600), older);
        // Pinned: the thread is 990 ahead, so the wait begins at 5,510, before the kernel ends
        // at 6,000: it ends 100 after that, 500 sooner than 6,600. Not 990: the thread may not
        // pass the kernel it waits for.
        assert_eq!(s, vec![(1, [500, 0, 0, 0, 500, 0])]);
    }

    #[test]
    fn later_calls_move_with_the_thread_and_older_commands_stay() {
        // Two blocking writes in a row, each saving 500: the second starts earlier too.
        let items = vec![
            command(1, 0, (0, 1_000), 0, H2D, 500),
            sync(0, 1_000, &[1]),
            command(2, 1_100, (1_100, 2_100), 1, H2D, 500),
            sync(1_100, 2_100, &[2]),
        ];
        assert_eq!(savings(&items, End::Host(1, 2_200), NONE)[0].1[0], 1_000);
        // A command depending on an older one that ended late: held back by it either way.
        let older: Older = &|id| (id == 9).then_some(5_000);
        let items = vec![
            command(1, 0, (5_000, 6_000), 9, H2D, 100),
            sync(0, 6_000, &[1]),
        ];
        assert_eq!(savings(&items, End::Host(1, 6_000), older)[0].1[0], 900);
        // A map for writing whose copy goes: its whole time.
        let map = Item::Command {
            id: 1,
            device: 2,
            tid: 1,
            begin: 0,
            ran: (0, 700),
            before: [0; 3],
            dur: Durations {
                base: 700,
                covered: 1 << Fix::MapInvalidate as u8,
                pinned: 0,
                batched: 0,
                moved: 0,
            },
            reorder: 0,
        };
        let saved = savings(&[map, sync(0, 700, &[1])], End::Host(1, 800), NONE);
        assert_eq!(saved, vec![(2, [0, 0, 700, 0, 0, 0])]);
    }
}
