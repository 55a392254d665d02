//! clxfer's locks: std's futex locks without poisoning, under parking_lot's method names.
//!
//! Not parking_lot's own: with more busy threads than cores (the 4-thread storm, PoCL's workers
//! and the writer on two vCPUs) a lock holder is often preempted, and parking_lot's waiters then
//! spin and call `sched_yield` before they sleep, thousands of times a second on the registry
//! lock every enqueue takes; std's spin briefly and sleep on the futex. On the 4-thread storm
//! that halved clxfer's own cost (untimed summary) in both a slow and a fast period of this VM
//! (docs/PERFORMANCE.md).
//!
//! Poisoning is ignored: a panic in clxfer's code is caught at the entry point and turns clxfer
//! off, and the data behind a lock stays consistent enough for what is left (the end's report).

use std::sync::{self, LockResult, MutexGuard, RwLockReadGuard, RwLockWriteGuard, TryLockError};
use std::time::{Duration, Instant};

#[inline]
fn unpoisoned<G>(r: LockResult<G>) -> G {
    r.unwrap_or_else(|e| e.into_inner())
}

#[derive(Debug, Default)]
pub struct Mutex<T>(sync::Mutex<T>);

impl<T> Mutex<T> {
    pub const fn new(value: T) -> Mutex<T> {
        Mutex(sync::Mutex::new(value))
    }

    #[inline]
    pub fn lock(&self) -> MutexGuard<'_, T> {
        unpoisoned(self.0.lock())
    }

    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        match self.0.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Waits at most `limit`, polling: only for the exit path, where a lock that another thread
    /// held at a `fork`, or that the exiting thread waits for, may stay held forever.
    pub fn try_lock_for(&self, limit: Duration) -> Option<MutexGuard<'_, T>> {
        let until = Instant::now() + limit;
        loop {
            if let Some(guard) = self.try_lock() {
                return Some(guard);
            }
            if Instant::now() >= until {
                return None;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// A value alone on its cache lines (two: adjacent-line prefetch pairs them): for a counter
/// every enqueuing thread writes, beside data every enqueuing thread reads, which would
/// otherwise move between cores with each write.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct Padded<T>(pub T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

#[derive(Debug, Default)]
pub struct RwLock<T>(sync::RwLock<T>);

impl<T> RwLock<T> {
    pub const fn new(value: T) -> RwLock<T> {
        RwLock(sync::RwLock::new(value))
    }

    #[inline]
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        unpoisoned(self.0.read())
    }

    #[inline]
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        unpoisoned(self.0.write())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_timed_try_gives_up_while_another_thread_holds_the_lock_and_succeeds_after() {
        let lock = Arc::new(Mutex::new(0));
        let (held, release) = (sync::Barrier::new(2), sync::Barrier::new(2));
        std::thread::scope(|s| {
            s.spawn(|| {
                let _guard = lock.lock();
                held.wait();
                release.wait();
            });
            held.wait();
            let started = Instant::now();
            assert!(lock.try_lock_for(Duration::from_millis(20)).is_none());
            assert!(started.elapsed() >= Duration::from_millis(20));
            assert!(lock.try_lock().is_none());
            release.wait();
        });
        *lock.try_lock_for(Duration::from_secs(5)).unwrap() += 1;
        assert_eq!(*lock.lock(), 1);
    }

    #[test]
    fn a_panic_while_holding_a_lock_leaves_it_usable() {
        let (m, rw) = (Mutex::new(vec![1]), RwLock::new(2));
        let _ = std::panic::catch_unwind(|| {
            let _m = m.lock();
            let _w = rw.write();
            panic!("inside");
        });
        m.lock().push(2);
        assert_eq!(*m.try_lock().unwrap(), [1, 2]);
        *rw.write() += 1;
        assert_eq!(*rw.read(), 3);
    }
}
