//! The dependency arrows: from the device slice of each command a wait list named to the device
//! slice of the command that waited. Commands complete (and their slices are written) in any
//! order across queues, so each side may wait here for the other. Only commands whose event the
//! program held can be waited on, so only their slices are remembered; both maps are bounded.

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// Slices remembered at most, and waits for a slice not yet written.
const KEPT: usize = 1 << 16;

/// Where a device slice starts: the flow binds there (pid, tid, ts in ns from the trace start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct At {
    pub pid: u32,
    pub tid: u32,
    pub ts: u64,
}

/// One arrow to draw: its flow id, from, to.
pub(super) type Arrow = (u64, At, At);

#[derive(Default)]
pub(super) struct Waits {
    /// Command → where its slice starts (commands whose event the program held).
    placed: FxHashMap<u64, At>,
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
            match self.placed.get(&w) {
                Some(&from) => arrows.push((self.id(), from, at)),
                None => {
                    if self.waiting.len() >= KEPT {
                        self.waiting.clear();
                    }
                    self.waiting.entry(w).or_default().push(at);
                }
            }
        }
        if held {
            if self.placed.len() >= KEPT {
                self.placed.clear();
            }
            self.placed.insert(id, at);
            for to in self.waiting.remove(&id).unwrap_or_default() {
                arrows.push((self.id(), at, to));
            }
        }
        // DevTools' engine keys a flow's ends by timestamp: two ends at one ts are one, and the
        // arrow is lost. Such a pair (a command clamped onto another) is not drawn.
        arrows.retain(|(_, from, to)| from.ts != to.ts);
        arrows
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
}
