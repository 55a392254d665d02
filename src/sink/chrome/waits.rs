//! The dependency arrows: from the device slice of each command a wait list named to the device
//! slice of the command that waited. Commands complete (and their slices are written) in any
//! order across queues, so each side may wait here for the other. Only commands whose event the
//! program held can be waited on, so only their slices are remembered, in a ring by command
//! number (a wait reaches back [`PLACED`] commands at most); the waits not yet joined are
//! bounded too.

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// Commands back a slice is remembered (the ring: 24 bytes each, 384 KiB once the program
/// holds an event).
const PLACED: usize = 1 << 14;
/// Commands not yet written that are waited for, at most (each, the slices that waited).
const WAITING: usize = 1 << 14;

/// Where a device slice starts: the flow binds there (pid, tid, ts in ns from the trace start).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct At {
    pub pid: u32,
    pub tid: u32,
    pub ts: u64,
}

/// One arrow to draw: its flow id, from, to.
pub(super) type Arrow = (u64, At, At);

#[derive(Default)]
pub(super) struct Waits {
    /// By command number modulo [`PLACED`]: (number, where its slice starts), of commands
    /// whose event the program held (number 0: an empty slot).
    placed: Vec<(u64, At)>,
    /// Command not yet written → the slices that waited for it.
    waiting: FxHashMap<u64, SmallVec<[At; 2]>>,
    next: u64,
}

impl Waits {
    /// Command `id`'s slice is at `at`; it waited for `waits`, and its event was the program's
    /// (`held`). Returns the arrows now complete.
    pub(super) fn slice(&mut self, id: u64, at: At, held: bool, waits: &[u64]) -> Vec<Arrow> {
        let mut arrows = Vec::new();
        for &w in waits {
            match self.placed(w) {
                Some(from) => arrows.push((self.id(), from, at)),
                None => {
                    if self.waiting.len() >= WAITING {
                        self.waiting.clear();
                    }
                    self.waiting.entry(w).or_default().push(at);
                }
            }
        }
        if held {
            if self.placed.is_empty() {
                self.placed.resize(PLACED, (0, At::default()));
            }
            self.placed[id as usize % PLACED] = (id, at);
            for to in self.waiting.remove(&id).unwrap_or_default() {
                arrows.push((self.id(), at, to));
            }
        }
        // DevTools' engine keys a flow's ends by timestamp: two ends at one ts are one, and the
        // arrow is lost. Such a pair (a command clamped onto another) is not drawn.
        arrows.retain(|(_, from, to)| from.ts != to.ts);
        arrows
    }

    fn placed(&self, id: u64) -> Option<At> {
        match self.placed.get(id as usize % PLACED) {
            Some(&(n, at)) if n == id && id != 0 => Some(at),
            _ => None,
        }
    }

    fn id(&mut self) -> u64 {
        self.next += 1;
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ts: u64) -> At {
        At {
            pid: 1,
            tid: 1024,
            ts,
        }
    }

    #[test]
    fn arrows_join_whichever_slice_comes_first() {
        // (id, ts, held, waits) of each slice as written; the arrows each one completes.
        type Case = (
            &'static str,
            &'static [(u64, u64, bool, &'static [u64])],
            &'static [&'static [(u64, u64)]],
        );
        let cases: &[Case] = &[
            (
                "the waited-on slice first",
                &[(1, 10, true, &[]), (2, 20, false, &[1])],
                &[&[], &[(10, 20)]],
            ),
            (
                "the waiting slice first",
                &[(2, 20, false, &[1]), (1, 10, true, &[])],
                &[&[], &[(10, 20)]],
            ),
            (
                "two waiters, one waited-on",
                &[
                    (1, 10, true, &[]),
                    (2, 20, false, &[1]),
                    (3, 30, false, &[1]),
                ],
                &[&[], &[(10, 20)], &[(10, 30)]],
            ),
            (
                "an event the program did not hold is never waited on",
                &[(1, 10, false, &[]), (2, 20, false, &[1])],
                &[&[], &[]],
            ),
            (
                "ends at one timestamp are not drawn",
                &[(1, 10, true, &[]), (2, 10, false, &[1])],
                &[&[], &[]],
            ),
        ];
        for (what, slices, want) in cases {
            let mut w = Waits::default();
            for (&(id, ts, held, waits), want) in slices.iter().zip(*want) {
                let got: Vec<(u64, u64)> = w
                    .slice(id, at(ts), held, waits)
                    .iter()
                    .map(|(_, f, t)| (f.ts, t.ts))
                    .collect();
                assert_eq!(&got, want, "{what}");
            }
        }
        // Flow ids are unique.
        let mut w = Waits::default();
        w.slice(1, at(1), true, &[]);
        let a = w.slice(2, at(2), false, &[1]);
        let b = w.slice(3, at(3), false, &[1]);
        assert_ne!(a[0].0, b[0].0);
    }

    #[test]
    fn a_slice_is_remembered_for_the_ring_of_commands_after_it() {
        let mut w = Waits::default();
        w.slice(1, at(1), true, &[]);
        let late = PLACED as u64;
        w.slice(late, at(2), true, &[]);
        assert_eq!(w.slice(late + 1, at(3), false, &[1]).len(), 1, "still kept");
        w.slice(late + 1, at(4), true, &[]);
        assert!(
            w.slice(late + 2, at(5), false, &[1]).is_empty(),
            "its slot reused"
        );
        assert_eq!(w.waiting.len(), 1, "left waiting, bounded");
    }
}
