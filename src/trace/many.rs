//! Many traces read at once (`clxfer report`, `diff`, `merge`, `check` of a job's ranks): one
//! worker per core takes the next file when it is done with one, so a directory of 64 ranks'
//! traces is read on every core. Each file is streamed as when read alone, so memory is what
//! reading one file holds, times the workers; the results come back in the files' order.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Workers at most: the cores this process may run on (`CLXFER_TEST_*` has no say: the same
/// answer comes whatever the count).
pub fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// `f` of each item, on up to [`workers`] threads, in the items' order. `f` runs on the calling
/// thread alone for one item, or on a one-core machine.
pub fn each<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let n = workers().min(items.len());
    if n <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..n {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    done.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                }
            });
        }
    });
    let done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    // Every slot was filled: each index was taken once, and a worker that panicked took the
    // whole scope down with it.
    done.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order() {
        let items: Vec<u64> = (0..200).collect();
        // Uneven work, so that workers finish out of order.
        let out = each(&items, |&i| {
            let spin: u64 = (0..(i % 7) * 1000).map(std::hint::black_box).sum();
            i + spin - spin
        });
        assert_eq!(out, items);
        assert!(each(&[] as &[u64], |&i| i).is_empty());
    }
}
