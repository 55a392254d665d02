//! Lanes: the extra tracks of a queue whose commands overlap (an out-of-order queue, concurrent
//! engines), so that no slice on a track overlaps another without nesting (Perfetto would drop
//! or move it).

use std::collections::BTreeMap;

/// The lanes of one queue. Records arrive out of order (callbacks run on several driver threads),
/// so each lane keeps its recent slices, not just its latest end: a slice goes to the first lane
/// where it overlaps nothing.
#[derive(Default)]
pub(super) struct Lanes {
    /// Per lane: start → end of its most recent slices.
    slices: Vec<BTreeMap<u64, u64>>,
    pub(super) label: Option<String>,
    /// Lanes named in the trace so far.
    pub(super) named: usize,
}

/// Slices remembered per lane; older ones are forgotten (records are never that late).
const LANE_MEMORY: usize = 4096;

fn overlaps(lane: &BTreeMap<u64, u64>, start: u64, end: u64) -> bool {
    let before = lane.range(..=start).next_back();
    let after = lane.range(start..).next();
    before.is_some_and(|(&s, &e)| s < end && start < e)
        || after.is_some_and(|(&s, &e)| s < end && start < e)
}

impl Lanes {
    pub(super) fn count(&self) -> usize {
        self.slices.len()
    }

    /// Makes lane 0 exist (a queue shows before its first command).
    pub(super) fn open_first(&mut self) {
        if self.slices.is_empty() {
            self.slices.push(BTreeMap::new());
        }
    }

    /// The first lane free from `start` to `end`, made if none is; the slice is recorded there.
    pub(super) fn place(&mut self, start: u64, end: u64) -> u32 {
        let free = self.slices.iter().position(|l| !overlaps(l, start, end));
        let lane = match free {
            Some(i) => i,
            None if self.slices.len() < super::s::LANES as usize => {
                self.slices.push(BTreeMap::new());
                self.slices.len() - 1
            }
            // Out of lanes (never seen): the last one, overlapping.
            None => self.slices.len() - 1,
        };
        let slices = &mut self.slices[lane];
        slices.insert(start, end.max(slices.get(&start).copied().unwrap_or(0)));
        if slices.len() > LANE_MEMORY {
            slices.pop_first();
        }
        lane as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_go_to_the_first_lane_they_fit_in_whatever_the_order() {
        let mut l = Lanes::default();
        let placed: Vec<u32> = [
            (10, 20),
            (15, 25),
            (30, 40),
            (1, 9),
            (16, 18),
            (20, 30),
            (20, 20),
        ]
        .iter()
        .map(|&(s, e)| l.place(s, e))
        .collect();
        // Touching ends do not overlap; a zero-length slice at another's start nests.
        assert_eq!(placed, [0, 1, 0, 0, 2, 0, 0]);
        assert_eq!(l.count(), 3);
    }
}
