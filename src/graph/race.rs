//! Possible data races (issue #25): two commands that touch overlapping bytes of one memory
//! object, at least one writing, with no happens-before path between them ([`super::clock`]).
//! PoCL's maintainer proposed the check when a pyopencl test raced across queues (pocl/pocl#594).
//!
//! Checked as each command is enqueued, against the accesses remembered for the object: a few
//! per object, and an access is forgotten once a later one covers its bytes and comes after it
//! (a race with the forgotten one would be a race with the later one too). False alarms make
//! people turn a checker off, so what is unsure is not reported as sure, and what cannot be
//! judged is skipped:
//! - a gated command ([`super::clock`]) is neither checked nor remembered;
//! - an access older than the clocks' window is not judged (what ordered it may be forgotten);
//! - a use clxfer does not know is taken as a write, and the race says so ([`Certainty`]).

use super::Id;
use super::clock::{Seen, Stamp, WINDOW};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// How a command touches an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    Read,
    Write,
}

/// How clxfer knows a use; a race is as certain as its less certain use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Certainty {
    /// Taken as a write, with nothing to go by (a kernel argument, and the driver keeps no
    /// argument information).
    Assumed,
    /// Taken as a write because the program declared it writable: a kernel argument that is
    /// a pointer to neither `const` nor `__constant` memory, in a buffer not read-only.
    Declared,
    /// What the command does: a transfer's, a migration's, a read-only buffer's.
    Known,
}

impl Certainty {
    /// How a use reads to a user, the same in the trace's arguments and in a race's sides.
    pub fn label(self, use_: Use) -> &'static str {
        match (use_, self) {
            (Use::Read, _) => "reads",
            (Use::Write, Certainty::Known) => "writes",
            (Use::Write, Certainty::Declared) => "may write",
            (Use::Write, Certainty::Assumed) => "may write (assumed)",
        }
    }
}

/// A kernel's uses of its memory arguments, bit `i` for argument `i` (past 64: taken as
/// assumed writes): what the trace labels each with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Uses {
    /// Only read.
    pub reads: u64,
    /// Written, known.
    pub writes: u64,
    /// Taken as written because declared writable ([`Certainty::Declared`]).
    pub declared: u64,
}

impl Uses {
    /// Argument `i`'s use and how it is known.
    pub fn of(&self, i: usize) -> (Use, Certainty) {
        let bit = |m: u64| i < 64 && m & (1 << i) != 0;
        if bit(self.reads) {
            (Use::Read, Certainty::Known)
        } else if bit(self.writes) {
            (Use::Write, Certainty::Known)
        } else if bit(self.declared) {
            (Use::Write, Certainty::Declared)
        } else {
            (Use::Write, Certainty::Assumed)
        }
    }

    /// Notes argument `i`'s use.
    pub fn set(&mut self, i: usize, use_: Use, how: Certainty) {
        if i >= 64 {
            return;
        }
        let mask = match (use_, how) {
            (Use::Read, _) => &mut self.reads,
            (Use::Write, Certainty::Known) => &mut self.writes,
            (Use::Write, Certainty::Declared) => &mut self.declared,
            (Use::Write, Certainty::Assumed) => return,
        };
        *mask |= 1 << i;
    }
}

/// One command's access to an object: bytes `range` (start, end), and how clxfer knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub id: Id,
    pub stamp: Stamp,
    pub range: (u64, u64),
    pub use_: Use,
    pub how: Certainty,
}

/// Two accesses no order separates: `first` enqueued before `second`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Race {
    pub object: usize,
    pub first: Access,
    pub second: Access,
    pub certainty: Certainty,
}

/// Accesses remembered per object; objects followed at most.
const KEPT: usize = 8;
const OBJECTS: usize = 1 << 16;

#[derive(Debug, Default)]
pub struct Races {
    objects: FxHashMap<usize, SmallVec<[Access; 4]>>,
}

impl Races {
    /// Command `id`, placed as `by`, touches bytes `range` of `object` as `use_`: the races with
    /// the accesses before it go to `out`.
    pub fn access(
        &mut self,
        object: usize,
        (id, by): (Id, Seen),
        range: (u64, u64),
        (use_, how): (Use, Certainty),
        out: &mut Vec<Race>,
    ) {
        if by.gate.is_some() || range.0 >= range.1 {
            return;
        }
        let a = Access {
            id,
            stamp: by.stamp,
            range,
            use_,
            how,
        };
        if self.objects.len() >= OBJECTS && !self.objects.contains_key(&object) {
            return;
        }
        let list = self.objects.entry(object).or_default();
        // One pass, in place (every enqueue that touches memory comes here): each earlier
        // access is judged, then forgotten if the new one covers its bytes and comes after it
        // (a write covers any use, a read only reads).
        let mut kept = 0;
        // One slice for the pass (each index into the small vector asks where it lives).
        let all = list.as_mut_slice();
        for i in 0..all.len() {
            let p = &all[i];
            let knows = p.id == id || by.clock.knows(p.stamp);
            let judged = p.id + WINDOW as u64 > id;
            let overlap = p.range.0 < range.1 && range.0 < p.range.1;
            let conflict = p.use_ == Use::Write || use_ == Use::Write;
            if !knows && judged && overlap && conflict {
                out.push(Race {
                    object,
                    first: *p,
                    second: a,
                    certainty: p.how.min(how),
                });
            }
            let covered = range.0 <= p.range.0 && p.range.1 <= range.1;
            if !(covered && knows && (use_ == Use::Write || p.use_ == Use::Read)) {
                // Moved down only past a forgotten one (most lists keep their order as is).
                if kept != i {
                    all[kept] = all[i];
                }
                kept += 1;
            }
        }
        list.truncate(kept);
        if list.len() >= KEPT {
            list.remove(0);
        }
        list.push(a);
    }

    /// The object was released: its accesses go.
    pub fn released(&mut self, object: usize) {
        self.objects.remove(&object);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::clock::Clocks;
    use crate::graph::{Deps, Kind};

    /// (command, queue, out of order, its wait list, object, range, use) of each access in order
    /// of enqueue; the races expected, as (first command, second command).
    type Case = (
        &'static str,
        &'static [(Id, u32, bool, &'static [Id], (u64, u64), Use)],
        &'static [(Id, Id)],
    );

    #[test]
    fn races_are_unordered_conflicting_overlapping_accesses() {
        use Use::*;
        let cases: &[Case] = &[
            (
                "one in-order queue",
                &[
                    (1, 1, false, &[], (0, 8), Write),
                    (2, 1, false, &[], (0, 8), Read),
                ],
                &[],
            ),
            (
                "two queues, no wait",
                &[
                    (1, 1, false, &[], (0, 8), Write),
                    (2, 2, false, &[], (0, 8), Read),
                ],
                &[(1, 2)],
            ),
            (
                "two queues, a wait",
                &[
                    (1, 1, false, &[], (0, 8), Write),
                    (2, 2, false, &[1], (0, 8), Read),
                ],
                &[],
            ),
            (
                "two reads never race",
                &[
                    (1, 1, false, &[], (0, 8), Read),
                    (2, 2, false, &[], (0, 8), Read),
                ],
                &[],
            ),
            (
                "disjoint bytes",
                &[
                    (1, 1, false, &[], (0, 8), Write),
                    (2, 2, false, &[], (8, 16), Write),
                ],
                &[],
            ),
            (
                "out of order, unordered",
                &[
                    (1, 1, true, &[], (0, 8), Write),
                    (2, 1, true, &[], (0, 8), Write),
                ],
                &[(1, 2)],
            ),
            (
                "out of order, a wait",
                &[
                    (1, 1, true, &[], (0, 8), Write),
                    (2, 1, true, &[1], (0, 8), Write),
                ],
                &[],
            ),
            (
                "a read since the write races with the next write",
                &[
                    (1, 1, false, &[], (0, 8), Write),
                    (2, 2, false, &[1], (0, 8), Read),
                    (3, 1, false, &[], (0, 8), Write),
                ],
                &[(2, 3)],
            ),
            (
                "ordered through a third queue",
                &[
                    (1, 1, false, &[], (0, 8), Write),
                    (2, 2, false, &[1], (8, 9), Read),
                    (3, 3, false, &[2], (0, 8), Read),
                ],
                &[],
            ),
            (
                "a covered write is forgotten, its race is the later one's",
                &[
                    (1, 1, false, &[], (0, 8), Write),
                    (2, 1, false, &[], (0, 16), Write),
                    (3, 2, false, &[], (0, 8), Read),
                ],
                &[(2, 3)],
            ),
        ];
        for (what, accesses, want) in cases {
            let (mut clocks, mut races, mut got) =
                (Clocks::default(), Races::default(), Vec::new());
            for &(id, queue, ooo, waits, range, use_) in *accesses {
                let deps = Deps {
                    waits: waits.iter().copied().collect(),
                    ..Deps::default()
                };
                let p = clocks.command(id, (queue, ooo), Kind::Work, &deps, true);
                races.access(7, (id, p), range, (use_, Certainty::Known), &mut got);
            }
            let got: Vec<(Id, Id)> = got.iter().map(|r| (r.first.id, r.second.id)).collect();
            assert_eq!(got, *want, "{what}");
        }
    }

    #[test]
    fn a_race_is_as_certain_as_its_less_certain_use_and_a_gated_command_is_not_judged() {
        let (mut clocks, mut races, mut got) = (Clocks::default(), Races::default(), Vec::new());
        let d = Deps::default();
        let p = clocks.command(1, (1, false), Kind::Work, &d, true);
        races.access(
            7,
            (1, p),
            (0, 8),
            (Use::Write, Certainty::Declared),
            &mut got,
        );
        let p = clocks.command(2, (2, false), Kind::Work, &d, true);
        races.access(7, (2, p), (0, 8), (Use::Read, Certainty::Known), &mut got);
        let p = clocks.command(3, (3, false), Kind::Work, &d, true);
        races.access(
            7,
            (3, p),
            (0, 8),
            (Use::Write, Certainty::Assumed),
            &mut got,
        );
        let certainty: Vec<_> = got
            .iter()
            .map(|r| (r.first.id, r.second.id, r.certainty))
            .collect();
        assert_eq!(
            certainty,
            [
                (1, 2, Certainty::Declared),
                (1, 3, Certainty::Assumed),
                (2, 3, Certainty::Assumed)
            ]
        );
        got.clear();
        // Gated by user event 3: not judged, not remembered.
        clocks.user_event(3);
        let gated = Deps {
            waits: [3].into_iter().collect(),
            ..Deps::default()
        };
        let p = clocks.command(4, (3, false), Kind::Work, &gated, true);
        races.access(7, (4, p), (0, 8), (Use::Write, Certainty::Known), &mut got);
        assert!(got.is_empty());
        assert!(races.objects[&7].iter().all(|a| a.id != 4));
    }
}
