//! Lanes: the extra tracks of a queue whose commands overlap (an out-of-order queue, concurrent
//! engines), so that no slice on a track overlaps another without nesting (Perfetto would drop
//! or move it).

use std::collections::VecDeque;

/// The lanes of one queue. Records arrive out of order (callbacks run on several driver threads),
/// so each lane keeps its recent slices, not just its latest end: a slice goes to the first lane
/// where it overlaps nothing.
#[derive(Default)]
pub(super) struct Lanes {
    lanes: Vec<Lane>,
    pub(super) label: Option<String>,
    /// Lanes named in the trace so far.
    pub(super) named: usize,
}

/// One lane's recent slices, sorted by start: they arrive nearly in order, so a slice usually goes
/// at the back after one comparison with the lane's latest end.
#[derive(Default)]
struct Lane {
    slices: VecDeque<(u64, u64)>,
    max_end: u64,
}

/// Slices remembered per lane; older ones are forgotten (records are never that late).
const LANE_MEMORY: usize = 4096;

impl Lane {
    /// Where the slice goes among the lane's slices, found once (half of a storm's completions
    /// arrive a few slices late, from several driver threads).
    fn slot(&self, start: u64) -> usize {
        match self.slices.back() {
            Some(&(s, _)) if start < s => self.slices.partition_point(|&(s, _)| s < start),
            _ => self.slices.len(),
        }
    }

    /// The slice's slot if it overlaps nothing in the lane.
    fn fit(&self, start: u64, end: u64) -> Option<usize> {
        if start >= self.max_end {
            return Some(self.slices.len());
        }
        // The slices of a lane do not overlap: only the neighbours of `start` can.
        let at = self.slot(start);
        let clash = |i: usize| {
            self.slices
                .get(i)
                .is_some_and(|&(s, e)| s < end && start < e)
        };
        (!(clash(at) || (at > 0 && clash(at - 1)))).then_some(at)
    }

    fn insert(&mut self, at: usize, start: u64, end: u64) {
        self.slices.insert(at, (start, end));
        self.max_end = self.max_end.max(end);
        if self.slices.len() > LANE_MEMORY {
            self.slices.pop_front();
        }
    }
}

impl Lanes {
    pub(super) fn count(&self) -> usize {
        self.lanes.len()
    }

    /// Makes lane 0 exist (a queue shows before its first command).
    pub(super) fn open_first(&mut self) {
        if self.lanes.is_empty() {
            self.lanes.push(Lane::default());
        }
    }

    /// The first lane free from `start` to `end`, made if none is; the slice is recorded there.
    pub(super) fn place(&mut self, start: u64, end: u64) -> u32 {
        let mut free = self.lanes.iter().enumerate();
        let (lane, at) = match free.find_map(|(i, l)| Some((i, l.fit(start, end)?))) {
            Some(found) => found,
            None if self.lanes.len() < super::s::LANES as usize => {
                self.lanes.push(Lane::default());
                (self.lanes.len() - 1, 0)
            }
            // Out of lanes (never seen): the last one, overlapping.
            None => {
                let last = self.lanes.len() - 1;
                (last, self.lanes[last].slot(start))
            }
        };
        self.lanes[lane].insert(at, start, end);
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

    #[test]
    fn late_slices_land_in_order_and_clash_with_their_neighbours_only() {
        let mut l = Lanes::default();
        for i in 0..100 {
            l.place(i * 10, i * 10 + 5);
        }
        // Late, in the gaps: lane 0 still.
        assert_eq!((l.place(576, 578), l.place(16, 18)), (0, 0));
        let lane = &l.lanes[0];
        assert_eq!(lane.slices.len(), 102);
        let starts: Vec<u64> = lane.slices.iter().map(|&(s, _)| s).collect();
        assert!(starts.is_sorted());
        assert_eq!(lane.fit(953, 958), None);
        assert_eq!(lane.fit(3, 11), None);
        assert_eq!(lane.fit(17, 19), None);
        assert_eq!(lane.fit(6, 10), Some(1));
        assert_eq!(lane.fit(995, 1000), Some(102));
    }
}
