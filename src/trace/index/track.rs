//! One track of the index: its slices sorted by start in flat columns, and what a view of it
//! shows: the slices in a window of time at the detail `px` pixels need, those narrower than a
//! pixel merged into one group per pixel column that says how many it stands for, so that an
//! answer is bounded by the pixels, not by the events.
//!
//! Per slice the columns take 29 bytes: start (8), duration (4: durations of 2^32 ns or more, a
//! few seconds, are kept apart), name id (4), colour (1), where its details are (8: the byte
//! offset of its JSON event, or of its protobuf packet) and its command (4: the other side of an
//! enqueue, found on a click). Every [`BLOCK`] slices share two aggregates (the latest end in the
//! block, and in it and every block before), so that a window's first slice and a group's extent
//! are found without walking every slice of it.

use rustc_hash::FxHashMap;

/// Slices per block of aggregates.
pub const BLOCK: usize = 64;

/// Most pixels a view is drawn at (a wider request is answered at this detail).
pub const MAX_PX: u32 = 16384;

/// A duration of `u32::MAX` ns or more: kept in [`Track::long`].
const LONG: u32 = u32::MAX;

/// One slice as indexed, before the track is sorted.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Slice {
    pub start: u64,
    pub dur: u64,
    pub name: u32,
    pub colour: u8,
    pub at: u64,
    pub command: u32,
}

/// A track's slices in columns, sorted by start (the order of the file among equal starts, as the
/// page sorts them).
#[derive(Debug, Default)]
pub struct Track {
    pub pid: u32,
    pub tid: u32,
    start: Vec<u64>,
    dur: Vec<u32>,
    long: FxHashMap<u32, u64>,
    name: Vec<u32>,
    colour: Vec<u8>,
    at: Vec<u64>,
    command: Vec<u32>,
    /// Per block: its latest end, and the latest end of it and every block before.
    block_end: Vec<u64>,
    block_reach: Vec<u64>,
}

/// Slices of a group whose colours are looked at: as the page's own drawing does, the most
/// telling (the least index: a path before a kernel, a wait, another call) of its first few.
const TELLING: usize = 8;

/// What a view shows of a track in one pixel column (or a slice wide enough to be its own): the
/// slices `first..first + count` (in start order) merged, from the earliest start to the latest
/// end among them, in the most telling colour of its first few ([`TELLING`]). A group of one is
/// the slice itself. (The group of those begun before the view counts only those that reach into
/// it, `first` the first of them.)
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Group {
    pub first: u32,
    pub count: u32,
    pub start: u64,
    pub end: u64,
    pub colour: u8,
}

/// A view: from `from` to `to` ns, `px` pixels wide (`from` may be before the trace's start).
#[derive(Clone, Copy, Debug)]
pub struct View {
    pub from: f64,
    pub to: f64,
    pub px: u32,
}

impl Track {
    /// The track of `slices` (in the file's order), sorted by start.
    pub fn new(pid: u32, tid: u32, mut slices: Vec<Slice>) -> Track {
        // Stable: equal starts keep the file's order.
        slices.sort_by_key(|s| s.start);
        let n = slices.len();
        let mut t = Track {
            pid,
            tid,
            start: Vec::with_capacity(n),
            dur: Vec::with_capacity(n),
            name: Vec::with_capacity(n),
            colour: Vec::with_capacity(n),
            at: Vec::with_capacity(n),
            command: Vec::with_capacity(n),
            ..Track::default()
        };
        for (i, s) in slices.into_iter().enumerate() {
            t.start.push(s.start);
            if s.dur >= u64::from(LONG) {
                t.dur.push(LONG);
                t.long.insert(i as u32, s.dur);
            } else {
                t.dur.push(s.dur as u32);
            }
            t.name.push(s.name);
            t.colour.push(s.colour);
            t.at.push(s.at);
            t.command.push(s.command);
        }
        let mut reach = 0;
        for b in 0..n.div_ceil(BLOCK) {
            let (lo, hi) = (b * BLOCK, ((b + 1) * BLOCK).min(n));
            let end = (lo..hi).map(|i| t.end(i)).max().unwrap_or(0);
            reach = reach.max(end);
            t.block_end.push(end);
            t.block_reach.push(reach);
        }
        t
    }

    pub fn len(&self) -> usize {
        self.start.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    pub fn dur(&self, i: usize) -> u64 {
        match self.dur[i] {
            LONG => self
                .long
                .get(&(i as u32))
                .copied()
                .unwrap_or(u64::from(LONG)),
            d => u64::from(d),
        }
    }

    pub fn end(&self, i: usize) -> u64 {
        self.start[i] + self.dur(i)
    }

    /// Slice `i`, as indexed.
    pub fn slice(&self, i: usize) -> Slice {
        Slice {
            start: self.start[i],
            dur: self.dur(i),
            name: self.name[i],
            colour: self.colour[i],
            at: self.at[i],
            command: self.command[i],
        }
    }

    /// The first slice's start and the latest end (`None`: no slice).
    pub fn span(&self) -> Option<(u64, u64)> {
        Some((*self.start.first()?, *self.block_reach.last()?))
    }

    /// The colours its slices take, each once.
    pub fn colours(&self) -> Vec<u8> {
        let mut seen = [false; 256];
        for &c in &self.colour {
            seen[c as usize] = true;
        }
        (0..=255u8).filter(|&c| seen[c as usize]).collect()
    }

    /// The index of the slice with `command` (the first), if any.
    pub fn find_command(&self, command: u32) -> Option<usize> {
        self.command.iter().position(|&c| c == command)
    }

    /// Bytes its columns and aggregates take.
    pub fn bytes(&self) -> usize {
        self.len() * (8 + 4 + 4 + 1 + 8 + 4) + self.block_end.len() * (8 + 8) + self.long.len() * 16
    }

    /// The first slice that ends at or after `t` (none before it does): [`Track::len`] if none.
    fn first_reaching(&self, t: u64) -> usize {
        let b = self.block_reach.partition_point(|&r| r < t);
        let lo = b * BLOCK;
        let hi = ((b + 1) * BLOCK).min(self.len());
        (lo..hi).find(|&i| self.end(i) >= t).unwrap_or(self.len())
    }

    /// Of slices `lo..hi`, those that end at or after `from` (all of them for `None`): their
    /// latest end, the most telling colour of the first [`TELLING`], how many they are and the
    /// first of them, a block's aggregates standing for its slices where the range covers it
    /// whole.
    fn extent(&self, lo: usize, hi: usize, from: Option<u64>) -> (u64, u8, u32, usize) {
        let (mut end, mut colour, mut count, mut first) = (0, u8::MAX, 0, usize::MAX);
        let mut i = lo;
        while i < hi {
            if i.is_multiple_of(BLOCK) && i + BLOCK <= hi {
                let b = i / BLOCK;
                match from {
                    None if count as usize >= TELLING => {
                        end = end.max(self.block_end[b]);
                        count += BLOCK as u32;
                        i += BLOCK;
                        continue;
                    }
                    // No slice of this block reaches `from`.
                    Some(f) if self.block_end[b] < f => {
                        i += BLOCK;
                        continue;
                    }
                    _ => {}
                }
            }
            let e = self.end(i);
            if from.is_none_or(|f| e >= f) {
                end = end.max(e);
                if (count as usize) < TELLING {
                    colour = colour.min(self.colour[i]);
                }
                count += 1;
                first = first.min(i);
            }
            i += 1;
        }
        (end, colour, count, first)
    }

    /// What `view` shows of the track: every slice that overlaps it (starts at or before its end
    /// and ends at or after its start), in groups, at most one per pixel column (and one for those
    /// begun before the view), each of the slices starting in that column.
    pub fn window(&self, view: View) -> Vec<Group> {
        let px = view.px.clamp(1, MAX_PX);
        let span = view.to - view.from;
        if self.is_empty() || span.is_nan() || span <= 0.0 || view.to < 0.0 {
            return Vec::new();
        }
        let scale = f64::from(px) / span;
        let from = view.from.max(0.0).ceil() as u64;
        let to = view.to.floor() as u64;
        let mut out = Vec::new();
        // Those begun before the view that reach into it.
        let mut j = self.first_reaching(from);
        let begun = self.start.partition_point(|&s| s < from).max(j);
        if begun > j {
            let (end, colour, count, first) = self.extent(j, begun, Some(from));
            if count > 0 {
                out.push(Group {
                    first: first as u32,
                    count,
                    start: self.start[first],
                    end,
                    colour,
                });
            }
            j = begun;
        }
        // Then one group per pixel column: the slices that start in it.
        while j < self.len() && self.start[j] <= to {
            let column = ((self.start[j] as f64 - view.from) * scale).floor();
            let next = view.from + (column + 1.0) / scale;
            let k = j + 1 + self.start[j + 1..].partition_point(|&s| (s as f64) < next);
            let (end, colour, count, _) = self.extent(j, k, None);
            out.push(Group {
                first: j as u32,
                count,
                start: self.start[j],
                end,
                colour,
            });
            j = k;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn track(slices: &[(u64, u64, u8)]) -> Track {
        let slices = slices
            .iter()
            .enumerate()
            .map(|(i, &(start, dur, colour))| Slice {
                start,
                dur,
                colour,
                at: i as u64,
                ..Slice::default()
            })
            .collect();
        Track::new(1, 2, slices)
    }

    /// Slices overlapping `from..=to`, counted one by one.
    fn overlapping(slices: &[(u64, u64, u8)], from: u64, to: u64) -> u32 {
        (slices.iter())
            .filter(|&&(s, d, _)| s <= to && s + d >= from)
            .count() as u32
    }

    #[test]
    fn slices_narrower_than_a_pixel_are_merged_per_column_and_counted() {
        // 10 000 slices of 1 ns every 10 ns: at 100 pixels over them, 100 groups of 100.
        let slices: Vec<(u64, u64, u8)> = (0..10_000).map(|i| (i * 10, 1, (i % 7) as u8)).collect();
        let t = track(&slices);
        let view = View {
            from: 0.0,
            to: 100_000.0,
            px: 100,
        };
        let groups = t.window(view);
        assert_eq!(groups.len(), 100);
        assert!(groups.iter().all(|g| g.count == 100), "{groups:?}");
        assert_eq!(groups.iter().map(|g| g.count).sum::<u32>(), 10_000);
        // Each group: its column's extent, and the least colour of its slices.
        assert_eq!((groups[3].start, groups[3].end), (3000, 3991));
        assert!(groups.iter().all(|g| g.colour == 0));
        // Zoomed in: slices wide enough are their own group, each exact.
        let near = t.window(View {
            from: 995.0,
            to: 1045.0,
            px: 500,
        });
        let got: Vec<(u32, u32, u64, u64)> = (near.iter())
            .map(|g| (g.first, g.count, g.start, g.end))
            .collect();
        assert_eq!(
            got,
            [
                (100, 1, 1000, 1001),
                (101, 1, 1010, 1011),
                (102, 1, 1020, 1021),
                (103, 1, 1030, 1031),
                (104, 1, 1040, 1041)
            ]
        );
    }

    #[test]
    fn a_window_holds_exactly_the_slices_that_overlap_it_whatever_its_detail() {
        // Long and short slices, overlapping, unevenly spaced; one longer than u32 ns.
        let mut slices = Vec::new();
        let mut x = 12345u64;
        for i in 0..5000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let dur = match x >> 60 {
                0 => 50_000,
                1 => 5_000_000_000,
                _ => (x >> 40) % 300,
            };
            slices.push((i * 97 + (x >> 50) % 50, dur, (x >> 33) as u8 % 12));
        }
        let t = track(&slices);
        for (from, to) in [
            (0, 500_000),
            (1000, 1200),
            (250_000, 250_040),
            (480_000, 10_000_000_000),
            (100, 100),
        ] {
            for px in [1, 7, 100, 1000, 100_000] {
                let view = View {
                    from: from as f64,
                    to: to as f64 + 0.5,
                    px,
                };
                let groups = t.window(view);
                let count: u32 = groups.iter().map(|g| g.count).sum();
                assert_eq!(
                    count,
                    overlapping(&slices, from, to),
                    "{from}..{to} at {px} px"
                );
                // Bounded by the pixels: a group per column at most, and one for those begun
                // before the view.
                assert!(groups.len() <= px.min(MAX_PX) as usize + 2, "{px}");
                for g in groups.iter().filter(|g| g.count == 1) {
                    let s = t.slice(g.first as usize);
                    assert_eq!((g.start, g.end), (s.start, s.start + s.dur));
                }
            }
        }
    }

    #[test]
    fn slices_begun_before_the_view_that_reach_into_it_are_one_group() {
        // A long slice, then short ones that end before the view, then one that reaches it.
        let slices = [
            (0, 1000, 5),
            (10, 1, 3),
            (20, 1, 3),
            (30, 600, 4),
            (700, 10, 2),
        ];
        let t = track(&slices);
        let groups = t.window(View {
            from: 500.0,
            to: 800.0,
            px: 300,
        });
        assert_eq!(
            groups[0],
            Group {
                first: 0,
                count: 2,
                start: 0,
                end: 1000,
                colour: 4
            }
        );
        assert_eq!((groups[1].first, groups[1].count), (4, 1));
        assert_eq!(groups.len(), 2);
        // The long slice keeps its duration past u32.
        let long = track(&[(5, 6_000_000_000, 1)]);
        assert_eq!(long.end(0), 6_000_000_005);
        assert_eq!(long.span(), Some((5, 6_000_000_005)));
    }
}
