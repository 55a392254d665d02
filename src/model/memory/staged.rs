//! The host bytes a device's staged transfers from pageable memory reached: the union of their
//! host ranges, which sizes the region a fix would pin (a loop that writes one 16 MiB block nine
//! times moved 145 MiB from 16 MiB of memory). Bounded: past [`SPANS`] separate ranges no more
//! are added, and the figure is a lower bound.

use rangemap::RangeSet;
use std::ops::Range;

/// Separate ranges kept at most per device.
pub const SPANS: usize = 4096;

#[derive(Debug, Default)]
pub(super) struct Staged {
    set: RangeSet<u64>,
    /// The last range added: a program stages from the same block over and over, and this
    /// answers it without a tree search.
    last: Range<u64>,
}

impl Staged {
    pub(super) fn add(&mut self, start: u64, len: u64) {
        let r = start..start.saturating_add(len);
        if r.is_empty() || (self.last.start <= r.start && r.end <= self.last.end) {
            return;
        }
        if self.set.len() >= SPANS && !self.set.overlaps(&r) {
            return;
        }
        self.set.insert(r.clone());
        self.last = r;
    }

    /// The bytes the ranges cover.
    pub(super) fn bytes(&self) -> u64 {
        self.set.iter().map(|r| r.end - r.start).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_union_of_the_ranges_counts_each_byte_once() {
        let mut s = Staged::default();
        // One 16-byte block nine times, a smaller one inside it, one overlapping its end, and a
        // separate one: 16 + 8 more + 4.
        for _ in 0..9 {
            s.add(100, 16);
        }
        s.add(104, 4);
        s.add(108, 16);
        s.add(1000, 4);
        s.add(2000, 0);
        assert_eq!(s.bytes(), 28);
        // Past the bound, only ranges that touch the kept ones still count.
        let mut full = Staged::default();
        for i in 0..SPANS as u64 + 10 {
            full.add(i * 10, 1);
        }
        assert_eq!(full.bytes(), SPANS as u64);
        full.add(0, 5);
        assert_eq!(full.bytes(), SPANS as u64 + 4);
    }
}
