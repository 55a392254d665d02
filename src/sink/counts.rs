//! How many calls clxfer saw, per entry point and per way in; reported at exit with
//! `CLXFER_LOG=info` (what the demo and the loading tests read); counted only at that level.

use crate::vocab::{Api, Via};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

static CALLS: [AtomicU64; Api::COUNT] = [const { AtomicU64::new(0) }; Api::COUNT];
static VIA: [AtomicU64; 3] = [const { AtomicU64::new(0) }; 3];
static THREADS: AtomicU64 = AtomicU64::new(0);
/// Bumped at fork so the child counts its threads afresh.
static GENERATION: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static COUNTED_IN: Cell<u64> = const { Cell::new(0) };
}

/// One outermost call. Counted only for the tally `CLXFER_LOG=info` prints: otherwise these are
/// two locked adds per call on lines every calling thread shares, for nothing.
#[inline(always)]
pub fn record(api: Api, via: Via) {
    if !crate::diag::enabled(crate::config::LogLevel::Info) {
        return;
    }
    CALLS[api as usize].fetch_add(1, Ordering::Relaxed);
    VIA[via as usize].fetch_add(1, Ordering::Relaxed);
    let generation = GENERATION.load(Ordering::Relaxed);
    let _ = COUNTED_IN.try_with(|seen| {
        if seen.replace(generation) != generation {
            THREADS.fetch_add(1, Ordering::Relaxed);
        }
    });
}

/// Forget everything (in a forked child: the parent's calls are the parent's).
pub fn reset() {
    CALLS
        .iter()
        .chain(VIA.iter())
        .for_each(|c| c.store(0, Ordering::Relaxed));
    THREADS.store(0, Ordering::Relaxed);
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// The counts so far.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counts {
    pub calls: Vec<(Api, u64)>,
    pub via: [u64; 3],
    pub threads: u64,
}

pub fn snapshot() -> Counts {
    Counts {
        calls: Api::ALL
            .iter()
            .map(|&api| (api, CALLS[api as usize].load(Ordering::Relaxed)))
            .filter(|&(_, n)| n > 0)
            .collect(),
        via: [0, 1, 2].map(|i| VIA[i].load(Ordering::Relaxed)),
        threads: THREADS.load(Ordering::Relaxed),
    }
}

impl Counts {
    /// Lines of at most 100 characters, each to be prefixed `clxfer: ` by the caller.
    pub fn lines(&self) -> Vec<String> {
        let total: u64 = self.via.iter().sum();
        let mut lines = vec![format!(
            "saw {total} OpenCL calls on {} thread(s) (via preload {}, layer {}, extension {})",
            self.threads, self.via[0], self.via[1], self.via[2]
        )];
        let mut sorted = self.calls.clone();
        sorted.sort_by_key(|&(api, _)| api.name());
        let mut line = String::from("calls:");
        for (api, n) in sorted {
            let item = format!(" {}={n}", api.name());
            if line.len() + item.len() > 90 {
                lines.push(std::mem::replace(&mut line, String::from("calls:")));
            }
            line.push_str(&item);
        }
        if line.len() > "calls:".len() {
            lines.push(line);
        }
        lines
    }
}

/// At exit: say what was seen (info level). A process that made no calls (a forked child that only
/// exits) says nothing.
pub fn report() {
    let seen = VIA.iter().any(|v| v.load(Ordering::Relaxed) > 0);
    if seen && crate::diag::enabled(crate::config::LogLevel::Info) {
        let transfers = super::transfers::lines(&super::transfers::snapshot());
        for line in snapshot().lines().into_iter().chain(transfers) {
            crate::diag::emit(format_args!("{line}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_short_sorted_and_complete() {
        let counts = Counts {
            calls: Api::ALL.iter().map(|&a| (a, 7)).collect(),
            via: [5, 6, 7],
            threads: 3,
        };
        let lines = counts.lines();
        assert_eq!(
            lines[0],
            "saw 18 OpenCL calls on 3 thread(s) (via preload 5, layer 6, extension 7)"
        );
        let listed: Vec<&str> = lines[1..]
            .iter()
            .flat_map(|l| l["calls:".len()..].split_whitespace())
            .map(|item| item.split('=').next().unwrap())
            .collect();
        assert_eq!(listed.len(), Api::COUNT);
        let mut sorted = listed.clone();
        sorted.sort();
        assert_eq!(listed, sorted);
        assert!(
            lines.iter().all(|l| l.len() + "clxfer: ".len() <= 100),
            "{lines:?}"
        );
    }
}
