//! The index's arrows (an enqueue to its device slice, a dependency, a race): each from a time on
//! one track to a time on another, sorted by their earlier end, in columns of 25 bytes an arrow,
//! with every [`BLOCK`] arrows' latest end so far, so that those in a view are found without
//! walking the ones before it.

use super::track::BLOCK;

/// One arrow: from `t0` on track `track0` to `t1` on `track1` (indices of the index's tracks),
/// of kind `kind` (an index of the index's arrow names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrow {
    pub t0: u64,
    pub track0: u32,
    pub t1: u64,
    pub track1: u32,
    pub kind: u8,
}

#[derive(Debug, Default)]
pub struct Arrows {
    t0: Vec<u64>,
    t1: Vec<u64>,
    track0: Vec<u32>,
    track1: Vec<u32>,
    kind: Vec<u8>,
    /// Per block: the latest end of its arrows and every arrow before.
    reach: Vec<u64>,
}

/// The arrows in a view, or how many there were past the most asked for.
#[derive(Debug, PartialEq)]
pub enum InView {
    Arrows(Vec<Arrow>),
    /// More than the most asked for.
    Over(usize),
}

impl Arrows {
    pub fn new(mut arrows: Vec<Arrow>) -> Arrows {
        arrows.sort_by_key(|a| a.t0.min(a.t1));
        let mut out = Arrows::default();
        let mut reach = 0;
        for (i, a) in arrows.iter().enumerate() {
            out.t0.push(a.t0);
            out.t1.push(a.t1);
            out.track0.push(a.track0);
            out.track1.push(a.track1);
            out.kind.push(a.kind);
            reach = reach.max(a.t0.max(a.t1));
            if (i + 1) % BLOCK == 0 || i + 1 == arrows.len() {
                out.reach.push(reach);
            }
        }
        out
    }

    pub fn len(&self) -> usize {
        self.t0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t0.is_empty()
    }

    pub fn bytes(&self) -> usize {
        self.len() * 25 + self.reach.len() * 8
    }

    fn arrow(&self, i: usize) -> Arrow {
        Arrow {
            t0: self.t0[i],
            track0: self.track0[i],
            t1: self.t1[i],
            track1: self.track1[i],
            kind: self.kind[i],
        }
    }

    /// The arrows of the kinds `shown` says that overlap `from..=to`, in order, or how many past
    /// `most` there were (counted to `most + 1`).
    pub fn in_view(&self, from: u64, to: u64, shown: impl Fn(u8) -> bool, most: usize) -> InView {
        let b = self.reach.partition_point(|&r| r < from);
        let mut out = Vec::new();
        for i in b * BLOCK..self.len() {
            let a = self.arrow(i);
            if a.t0.min(a.t1) > to {
                break;
            }
            if a.t0.max(a.t1) < from || !shown(a.kind) {
                continue;
            }
            if out.len() == most {
                return InView::Over(most + 1);
            }
            out.push(a);
        }
        InView::Arrows(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn those_in_view_and_none_past_the_most() {
        let arrows: Vec<Arrow> = (0..1000u64)
            .map(|i| Arrow {
                t0: i * 10,
                track0: 0,
                t1: i * 10 + if i == 3 { 5000 } else { 3 },
                track1: 1,
                kind: (i % 2) as u8,
            })
            .collect();
        let a = Arrows::new(arrows);
        let InView::Arrows(got) = a.in_view(4000, 4025, |_| true, 100) else {
            panic!()
        };
        let starts: Vec<u64> = got.iter().map(|a| a.t0).collect();
        assert_eq!(starts, [30, 4000, 4010, 4020]);
        let InView::Arrows(odd) = a.in_view(4000, 4025, |k| k == 1, 100) else {
            panic!()
        };
        assert_eq!(odd.len(), 2);
        assert_eq!(a.in_view(0, 10_000, |_| true, 100), InView::Over(101));
    }
}
