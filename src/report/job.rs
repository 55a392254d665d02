//! A parallel job's reports side by side (`clxfer report DIR` of its ranks' traces): a row per
//! rank (wall, its transfers' device time, the share of its bytes staged, bytes, what to change
//! first, in brief: a saving may exceed the device time, where staged calls held the host), and
//! what sets ranks apart: one that stages while the others do not, and the slowest, with what
//! bounds it.

use super::{Format, Report};
use crate::units::{bytes, duration};

/// One rank's row.
#[derive(Debug, Clone, PartialEq)]
pub struct RankRow {
    pub rank: u32,
    pub host: String,
    pub pid: u32,
    pub wall_ns: u64,
    /// Its transfers' device time, whole (every device, every direction).
    pub transfer_ns: u64,
    pub bytes: u64,
    /// Of `bytes`, those staged through a driver's bounce buffer.
    pub staged: u64,
    /// The verdict's headline: what to change first.
    pub top: String,
    /// The same in a few words: the finding's name and its saving.
    pub change: String,
}

impl RankRow {
    fn of(r: &Report, rank: u32) -> RankRow {
        let rows = r.devices.iter().flat_map(|d| &d.transfers);
        let (mut transfer_ns, mut all, mut staged) = (0, 0, 0);
        for row in rows {
            transfer_ns += row.total_ns;
            all += row.bytes;
            if row.path == "staged" {
                staged += row.bytes;
            }
        }
        RankRow {
            rank,
            host: r.job.host.clone().unwrap_or_default(),
            pid: r.pid,
            wall_ns: r.wall_ns,
            transfer_ns,
            bytes: all,
            staged,
            top: r.verdict.headline.clone(),
            change: super::verdict::change_in_brief(r),
        }
    }

    /// The share of its bytes staged, 0 to 1 (0 when it moved none).
    pub fn staged_share(&self) -> f64 {
        if self.bytes == 0 {
            0.0
        } else {
            self.staged as f64 / self.bytes as f64
        }
    }
}

/// The rows of the reports that carry a rank, by rank; `None` unless two or more do (a job).
pub fn rows(reports: &[Report]) -> Option<Vec<RankRow>> {
    let mut rows: Vec<RankRow> = (reports.iter())
        .filter_map(|r| Some(RankRow::of(r, r.job.rank?)))
        .collect();
    rows.sort_by_key(|r| (r.rank, r.pid));
    (rows.len() >= 2).then_some(rows)
}

/// The median of `xs` (of an even count, the mean of the two middle ones).
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => xs[n / 2],
        _ => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

/// A share of the ranks' median at which a rank's staging or wall time sets it apart.
const APART: f64 = 0.5;
/// The slowest rank is named when its wall time is this much over the ranks' median.
const SLOWER: f64 = 0.10;

/// What sets ranks apart, a line each: each rank whose staged share is half the bytes or more
/// from the ranks' median (one staged while the others are pinned), then the slowest rank and
/// what bounds it, or that the ranks took about as long.
pub fn apart(rows: &[RankRow], reports: &[Report]) -> Vec<String> {
    // First, what transfers are of the job's time: a rank's staging matters as much as that.
    let wall: u64 = rows.iter().map(|r| r.wall_ns).sum();
    let moving: u64 = rows.iter().map(|r| r.transfer_ns).sum();
    let mut lines = vec![format!(
        "transfers are {:.1}% of the ranks' time ({} of {}, summed over the ranks)",
        moving as f64 * 100.0 / wall.max(1) as f64,
        duration(moving),
        duration(wall)
    )];
    let typical = median(rows.iter().map(RankRow::staged_share).collect());
    for r in rows {
        let share = r.staged_share();
        let said = (share * 100.0, typical * 100.0);
        if share - typical >= APART {
            lines.push(format!(
                "rank {} stages {:.0}% of its bytes through a driver bounce buffer where the \
                 ranks' median is {:.0}%: {}",
                r.rank, said.0, said.1, r.top
            ));
        } else if typical - share >= APART {
            lines.push(format!(
                "rank {} stages {:.0}% of its bytes where the ranks' median is {:.0}%: the others \
                 could move theirs as it does",
                r.rank, said.0, said.1
            ));
        }
    }
    let walls = median(rows.iter().map(|r| r.wall_ns as f64).collect());
    let Some(slowest) = rows.iter().max_by_key(|r| r.wall_ns) else {
        return lines;
    };
    let over = slowest.wall_ns as f64 / walls.max(1.0) - 1.0;
    if over < SLOWER {
        lines.push(format!(
            "the ranks took about as long: the slowest (rank {}, {}) is {:.0}% over their median",
            slowest.rank,
            duration(slowest.wall_ns),
            over * 100.0
        ));
        return lines;
    }
    let bound = (reports.iter())
        .find(|r| r.job.rank == Some(slowest.rank) && r.pid == slowest.pid)
        .and_then(|r| {
            let b = r.bounds.as_ref()?;
            let top = b.top.first()?;
            let share = top.ns as f64 / b.wall_ns.max(1) as f64;
            Some(format!(
                "; its critical path is {:.0}% {}",
                share * 100.0,
                top.what
            ))
        })
        .unwrap_or_default();
    lines.push(format!(
        "rank {} is the slowest: {}, {:.0}% over the ranks' median {}{bound}",
        slowest.rank,
        duration(slowest.wall_ns),
        over * 100.0,
        duration(walls as u64)
    ));
    lines
}

/// The job's table and what sets its ranks apart, in `format` (text or Markdown; JSON readers
/// have each report's `rank` and `host`): `None` for fewer than two ranks.
pub fn render(reports: &[Report], format: Format) -> Option<String> {
    let rows = rows(reports)?;
    let head = [
        "rank",
        "host",
        "pid",
        "wall",
        "transfer device time",
        "staged",
        "bytes",
        "first change",
    ];
    let cells: Vec<[String; 8]> = (rows.iter())
        .map(|r| {
            [
                r.rank.to_string(),
                r.host.clone(),
                r.pid.to_string(),
                duration(r.wall_ns),
                duration(r.transfer_ns),
                format!("{:.0}%", r.staged_share() * 100.0),
                bytes(r.bytes),
                r.change.clone(),
            ]
        })
        .collect();
    let apart = apart(&rows, reports);
    // Under forced rules the transfers' times are the rules' cost model's, as each report says.
    let projected = (reports.iter().flat_map(|r| &r.devices))
        .any(|d| d.projection.as_ref().is_some_and(|p| p.replaces));
    let mut head = head;
    if projected {
        head[4] = "transfer device time (projected)";
    }
    let title = format!("clxfer job · {} ranks", rows.len());
    let mut out = String::new();
    match format {
        Format::Markdown => {
            out.push_str(&format!("# {title}\n\n"));
            for line in &apart {
                out.push_str(&format!("- {line}\n"));
            }
            out.push_str(&format!("\n| {} |\n|", head.join(" | ")));
            out.push_str(&"---|".repeat(head.len()));
            out.push('\n');
            for c in &cells {
                out.push_str(&format!("| {} |\n", c.join(" | ")));
            }
        }
        _ => {
            out.push_str(&format!("{title}\n"));
            for line in &apart {
                // Wrapped under its own text, two spaces in, so that each line reads as one.
                let mut w = String::new();
                super::render::wrapped("    ", line, &mut w);
                out.push_str(&w[2..]);
            }
            let mut widths = head.map(str::len);
            for c in &cells {
                for (w, cell) in widths.iter_mut().zip(c) {
                    *w = (*w).max(cell.chars().count());
                }
            }
            let line = |cells: &[String]| {
                let last = cells.len() - 1;
                let padded: Vec<String> = (cells.iter().enumerate())
                    .map(|(i, c)| match i {
                        i if i == last => c.clone(),
                        0 | 2..=6 => format!("{c:>w$}", w = widths[i]),
                        _ => format!("{c:<w$}", w = widths[i]),
                    })
                    .collect();
                format!("  {}\n", padded.join("  "))
            };
            out.push_str(&line(&head.map(String::from)));
            for c in &cells {
                out.push_str(&line(c));
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(rank: u32, wall_ms: u64, staged: u64) -> RankRow {
        RankRow {
            rank,
            host: "n".into(),
            pid: 100 + rank,
            wall_ns: wall_ms * 1_000_000,
            transfer_ns: 0,
            bytes: 100,
            staged,
            top: format!("top of {rank}"),
            change: String::new(),
        }
    }

    #[test]
    fn the_rank_that_stages_and_the_slowest_are_named() {
        let rows = [
            row(0, 100, 0),
            row(1, 100, 0),
            row(2, 150, 100),
            row(3, 101, 0),
        ];
        let lines = apart(&rows, &[]);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(
            lines[0].starts_with("transfers are 0.0% of the ranks' time"),
            "{lines:?}"
        );
        assert!(lines[1].starts_with("rank 2 stages 100%"), "{lines:?}");
        assert!(lines[1].ends_with("median is 0%: top of 2"), "{lines:?}");
        // The median of 100, 100, 101 and 150 ms is 100.5.
        assert!(
            lines[2].starts_with("rank 2 is the slowest: 150 ms, 49% over"),
            "{lines:?}"
        );
        // One rank of four pinned where the others stage: it is named.
        let rows = [
            row(0, 100, 100),
            row(1, 100, 0),
            row(2, 100, 100),
            row(3, 100, 100),
        ];
        let lines = apart(&rows, &[]);
        let want = "rank 1 stages 0% of its bytes where the ranks' median is 100%";
        assert!(lines[1].starts_with(want), "{lines:?}");
    }

    #[test]
    fn ranks_alike_are_said_to_be() {
        let rows = [row(0, 100, 50), row(1, 105, 60)];
        let lines = apart(&rows, &[]);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[1].starts_with("the ranks took about as long"),
            "{lines:?}"
        );
    }
}
