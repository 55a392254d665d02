//! How many transfers took each path, and their bytes: a one-line tally at exit with
//! `CLXFER_LOG=info`, beside the call counts (the report, `src/report/`, has the whole picture).
//! Nothing is counted at other log levels.

use crate::model::classification::{Classification, Path};
use crate::units;
use std::sync::atomic::{AtomicU64, Ordering};

const N: usize = Path::ALL.len();
static COUNT: [AtomicU64; N] = [const { AtomicU64::new(0) }; N];
static BYTES: [AtomicU64; N] = [const { AtomicU64::new(0) }; N];

/// Counted only for the tally `CLXFER_LOG=info` prints (two locked adds on shared lines else).
pub fn record(c: &Classification) {
    if !crate::diag::enabled(crate::config::LogLevel::Info) {
        return;
    }
    COUNT[c.path as usize].fetch_add(1, Ordering::Relaxed);
    BYTES[c.path as usize].fetch_add(c.bytes, Ordering::Relaxed);
}

pub fn reset() {
    COUNT
        .iter()
        .chain(&BYTES)
        .for_each(|c| c.store(0, Ordering::Relaxed));
}

/// (path, commands, bytes) for every path taken at least once.
pub fn snapshot() -> Vec<(Path, u64, u64)> {
    Path::ALL
        .iter()
        .map(|&p| {
            (
                p,
                COUNT[p as usize].load(Ordering::Relaxed),
                BYTES[p as usize].load(Ordering::Relaxed),
            )
        })
        .filter(|&(_, n, _)| n > 0)
        .collect()
}

/// `transfers: 12 classified: pinned 3 (12.0 MiB), staged 5 (40.0 MiB), …`, wrapped under 100.
pub fn lines(paths: &[(Path, u64, u64)]) -> Vec<String> {
    if paths.is_empty() {
        return Vec::new();
    }
    let total: u64 = paths.iter().map(|p| p.1).sum();
    let mut lines = vec![format!("transfers: {total} classified:")];
    for &(path, n, bytes) in paths {
        let item = format!(" {} {n} ({})", path.as_str(), units::bytes(bytes));
        if lines.last().is_some_and(|l| l.len() + item.len() > 90) {
            lines.push("transfers:".into());
        }
        if let Some(line) = lines.last_mut() {
            line.push_str(&item);
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_name_every_path_and_stay_short() {
        let all: Vec<_> = Path::ALL
            .iter()
            .map(|&p| (p, 123456, u64::MAX / 2))
            .collect();
        let lines = lines(&all);
        let total = 123456 * Path::ALL.len();
        assert!(lines[0].starts_with(&format!("transfers: {total} classified: pinned 123456 (")));
        for p in Path::ALL {
            assert!(
                lines
                    .iter()
                    .any(|l| l.contains(&format!(" {} 123456 (", p.as_str())))
            );
        }
        assert!(
            lines.iter().all(|l| l.len() + "clxfer: ".len() <= 100),
            "{lines:?}"
        );
        assert!(super::lines(&[]).is_empty());
    }
}
