//! What a transfer costs on the kind of device a rule set describes: the cost model the report
//! projects a run with (issue #26). A command of `bytes` over a path takes the path's floor plus
//! the bytes at the path's bandwidth for that size, in device time. Each figure cites where it was
//! measured, as every rule does; a path the model has no figure for is not projected (`None`),
//! never guessed.

use super::classification::{Direction, Path};

/// One figure of a model, with its source.
#[derive(Debug, Clone, Copy)]
pub struct Figure {
    pub value: f64,
    pub source: &'static str,
}

/// What one path costs: a floor, µs (the latency small commands are bound by), plus the bytes at
/// a bandwidth, GB/s (10^9 bytes/s) of device time, that may change with the size: measured at
/// some sizes (ascending), interpolated between them on a log scale of the size, and held flat
/// beyond the first and the last.
#[derive(Debug, Clone, Copy)]
pub struct Link {
    pub floor_us: f64,
    pub gbps: &'static [(u64, f64)],
    pub source: &'static str,
}

impl Link {
    /// The bandwidth at `bytes`.
    pub fn gbps_at(&self, bytes: u64) -> f64 {
        let points = self.gbps;
        let (Some(first), Some(last)) = (points.first(), points.last()) else {
            return 0.0;
        };
        if bytes <= first.0 {
            return first.1;
        }
        if bytes >= last.0 {
            return last.1;
        }
        let at = points.partition_point(|p| p.0 <= bytes);
        let ((x0, g0), (x1, g1)) = (points[at - 1], points[at]);
        let f = ((bytes as f64).ln() - (x0 as f64).ln()) / ((x1 as f64).ln() - (x0 as f64).ln());
        g0 + (g1 - g0) * f
    }

    /// A command of `bytes` over it, ns: the floor plus the bytes at the bandwidth for that
    /// size (`None`: no bandwidth).
    pub fn time_ns(&self, bytes: u64) -> Option<f64> {
        let bw = self.gbps_at(bytes);
        (bw > 0.0).then(|| self.floor_us * 1e3 + bytes as f64 / bw)
    }

    /// The fastest it goes.
    pub fn peak(&self) -> f64 {
        self.gbps.iter().map(|p| p.1).fold(0.0, f64::max)
    }

    /// `2.5 µs + 55.3 GB/s` or `2.5 µs + 47.6 GB/s at 1 MiB … 6.2 GB/s at 256 MiB`.
    pub fn describe(&self) -> String {
        let points: Vec<String> = (self.gbps.iter())
            .map(|&(b, g)| match self.gbps.len() {
                1 => format!("{g} GB/s"),
                _ => format!("{g} GB/s at {}", crate::units::bytes(b)),
            })
            .collect();
        format!("{} µs + {}", self.floor_us, points.join(", "))
    }
}

/// A rule set's cost model.
#[derive(Debug, Clone, Copy)]
pub struct Cost {
    /// The device the figures were measured on.
    pub on: &'static str,
    /// DMA from or to pinned host memory, by direction (H2D, D2H).
    pub pinned: [Option<Link>; 2],
    /// Through the driver's bounce buffer, by direction.
    pub staged: [Option<Link>; 2],
    /// A copy or fill inside device memory.
    pub device: Option<Link>,
    /// A migration's legs through the host, by direction: to the device (H2D: a migration from
    /// the host, or a command pulling a buffer a HOST migration left there) and to the host
    /// (D2H: a HOST migration), at the time the program waits for them (the driver's device
    /// times of migrations are not their own). A move between two devices through the host is
    /// both legs in turn, whatever flags made it: one model for every form of a hand-off
    /// (issue #41).
    pub legs: [Option<Link>; 2],
    /// A non-blocking enqueue's own time in the call, µs (no tool): what a call costs that
    /// moves nothing while the program waits.
    pub enqueue_us: Option<Figure>,
    /// The device memory of the card the figures were measured on, bytes: what the findings
    /// judge memory against when the rules are forced and the user gave no size.
    pub memory: Option<Figure>,
}

/// The figure's index for a direction across the bus.
fn bus(dir: Direction) -> Option<usize> {
    match dir {
        Direction::H2D => Some(0),
        Direction::D2H => Some(1),
        Direction::D2D | Direction::H2H => None,
    }
}

impl Cost {
    /// The link a transfer of `dir` by `path` moves over; `None`: the model has none (peer,
    /// zero-copy, host-copy and unknown paths, and what it did not measure).
    pub fn link(&self, dir: Direction, path: Path) -> Option<Link> {
        match path {
            Path::Pinned => self.pinned[bus(dir)?],
            Path::Staged => self.staged[bus(dir)?],
            Path::Device => self.device,
            // Two legs, not one link (`via_host_ns`).
            Path::ViaHost => None,
            Path::ZeroCopy | Path::HostCopy | Path::Peer | Path::None | Path::Unknown => None,
        }
    }

    /// A move between devices through the host: to the host, then to the other device.
    pub fn via_host_ns(&self, bytes: u64) -> Option<u64> {
        let leg = |l: Option<Link>| l?.time_ns(bytes);
        Some((leg(self.legs[1])? + leg(self.legs[0])?).round() as u64)
    }

    /// The projected time of a migration's move, or of the move a kernel makes at its launch
    /// (`migration`), else of a transfer: a migration to or from the host takes its leg, one
    /// between devices both.
    pub fn command_ns(
        &self,
        migration: bool,
        dir: Direction,
        path: Path,
        bytes: u64,
    ) -> Option<u64> {
        let moves = matches!(path, Path::Pinned | Path::Staged);
        match (migration, bus(dir)) {
            (true, Some(i)) if moves => Some(self.legs[i]?.time_ns(bytes)?.round() as u64),
            _ => self.time_ns(dir, path, bytes),
        }
    }

    /// The projected device time, ns, of a command moving `bytes` of `dir` by `path`: the
    /// link's floor plus the bytes at its bandwidth for that size (`None` where there is no
    /// link: a command that moves nothing, or over a path the model did not measure, has no
    /// bandwidth to show).
    pub fn time_ns(&self, dir: Direction, path: Path, bytes: u64) -> Option<u64> {
        if path == Path::ViaHost {
            return self.via_host_ns(bytes);
        }
        Some(self.link(dir, path)?.time_ns(bytes)?.round() as u64)
    }

    /// The fastest host↔device figure: no projected transfer across the bus goes faster.
    pub fn link_gbps(&self) -> f64 {
        (self.pinned.iter().chain(&self.staged))
            .flatten()
            .map(Link::peak)
            .fold(0.0, f64::max)
    }

    /// Every link, named, for docs/RULES.md.
    pub fn links(&self) -> Vec<(&'static str, Link)> {
        let named = [
            ("pinned H2D", self.pinned[0]),
            ("pinned D2H", self.pinned[1]),
            ("staged H2D", self.staged[0]),
            ("staged D2H", self.staged[1]),
            ("device copy or fill", self.device),
            ("migration from the host (H2D leg)", self.legs[0]),
            ("migration to the host (D2H leg)", self.legs[1]),
        ];
        named
            .into_iter()
            .filter_map(|(n, l)| Some((n, l?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn flat(floor_us: f64, gbps: &'static [(u64, f64)]) -> Option<Link> {
        Some(Link {
            floor_us,
            gbps,
            source: "test",
        })
    }

    fn model() -> Cost {
        Cost {
            on: "a test device",
            pinned: [flat(2.0, &[(1, 50.0)]), flat(2.0, &[(1, 40.0)])],
            staged: [flat(0.0, &[(MIB, 40.0), (16 * MIB, 10.0)]), None],
            device: flat(5.0, &[(1, 1000.0)]),
            legs: [flat(0.0, &[(1, 2.0)]), flat(0.0, &[(1, 2.0)])],
            enqueue_us: None,
            memory: None,
        }
    }

    #[test]
    fn a_command_takes_the_floor_plus_its_bytes_at_the_link_s_bandwidth_for_its_size() {
        use Direction::*;
        let m = model();
        // (direction, path, bytes, projected ns)
        for (dir, path, bytes, want) in [
            (H2D, Path::Pinned, 50_000, Some(3_000)),
            (D2H, Path::Pinned, 40_000, Some(3_000)),
            // Staged: 40 GB/s up to 1 MiB, 10 from 16 MiB, 25 at 4 MiB (half way on a log scale).
            (H2D, Path::Staged, 4_000, Some(100)),
            (H2D, Path::Staged, 4 * MIB, Some(167_772)), // 4 MiB at 25 GB/s
            (H2D, Path::Staged, 64 * MIB, Some((64 * MIB) / 10)),
            (D2H, Path::Staged, 1, None), // no link: not projected
            (D2D, Path::Device, 1_000_000, Some(6_000)),
            // Both legs: 500 ns to the host, 500 back.
            (D2D, Path::ViaHost, 1_000, Some(1_000)),
            (H2D, Path::None, 1 << 30, None),
            (H2D, Path::ZeroCopy, 1, None),
            (H2D, Path::HostCopy, 1 << 20, None),
            (D2D, Path::Peer, 1, None),
            (H2D, Path::Unknown, 1, None),
            (H2H, Path::Pinned, 1, None),
            (D2D, Path::Staged, 1, None),
        ] {
            assert_eq!(
                m.time_ns(dir, path, bytes),
                want,
                "{dir:?} {path:?} {bytes}"
            );
        }
    }

    #[test]
    fn nothing_projected_goes_faster_than_the_link() {
        let m = model();
        assert_eq!(m.link_gbps(), 50.0);
        // A transfer between host and device is pinned, staged, zero-copy, none or unknown (the
        // device and via-host paths are D2D: classify.rs).
        for path in [
            Path::Pinned,
            Path::Staged,
            Path::ZeroCopy,
            Path::HostCopy,
            Path::None,
            Path::Unknown,
        ] {
            for dir in [Direction::H2D, Direction::D2H] {
                for bytes in [1u64, 4096, MIB, 3 * MIB, 1 << 30] {
                    if let Some(ns) = m.time_ns(dir, path, bytes).filter(|&t| t > 0) {
                        assert!(
                            bytes as f64 / ns as f64 <= m.link_gbps(),
                            "{path:?} {bytes}"
                        );
                    }
                }
            }
        }
        assert_eq!(m.links().len(), 6);
        assert_eq!(
            m.staged[0].unwrap().describe(),
            "0 µs + 40 GB/s at 1.00 MiB, 10 GB/s at 16.0 MiB"
        );
    }

    #[test]
    fn a_migration_takes_its_leg_and_a_move_between_devices_both_whatever_its_flags() {
        use Direction::*;
        let m = model();
        // A HOST migration (D2H) and the pull back (H2D) each take one leg at 2 GB/s, not the
        // pinned link; a transfer of the same bytes does.
        assert_eq!(m.command_ns(true, D2H, Path::Pinned, 2_000), Some(1_000));
        assert_eq!(m.command_ns(true, H2D, Path::Pinned, 2_000), Some(1_000));
        assert_eq!(m.command_ns(false, D2H, Path::Pinned, 40_000), Some(3_000));
        // Between devices: both legs, the sum of the two hops above.
        assert_eq!(m.command_ns(true, D2D, Path::ViaHost, 2_000), Some(2_000));
        assert_eq!(m.command_ns(true, H2D, Path::None, 2_000), None);
        let no_legs = Cost {
            legs: [None, None],
            ..model()
        };
        assert_eq!(no_legs.time_ns(D2D, Path::ViaHost, 2_000), None);
    }

    #[test]
    fn every_set_s_bandwidths_ascend_in_size() {
        for set in super::super::rules::SETS {
            for (name, link) in set.cost.iter().flat_map(|c| c.links()) {
                assert!(!link.gbps.is_empty(), "{} {name}", set.name);
                assert!(
                    link.gbps.windows(2).all(|w| w[0].0 < w[1].0),
                    "{} {name}",
                    set.name
                );
                assert!(link.gbps.iter().all(|p| p.1 > 0.0), "{} {name}", set.name);
            }
        }
    }
}
