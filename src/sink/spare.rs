//! Recycled boxes for enqueue details ([`super::record::Enqueued`], ~900 bytes): filled on the
//! calling threads, emptied by the writer. A box from malloc on one thread freed on another costs
//! more than the record itself (malloc's arena locks), so boxes come back; and they come back
//! last out first, in bundles: a queue handed out the box emptied longest ago, whose lines had
//! left every cache by then, so the calling thread's writes into it missed the last-level cache
//! (callgrind's cache model, the test ICD's storm in trace `all`: 18 of a 2 MiB cache's write
//! misses an enqueue, most of them the box). A box comes back empty (its contents dropped on the
//! writer's thread), so the calling thread only writes it.
//!
//! The writer gathers what it empties into a bundle and publishes a full one; a calling thread
//! keeps a bundle of its own and takes the latest published one when it runs out: one lock per
//! bundle, never waited for (a lock held at a `fork` stays held in the child: it allocates).

use super::record::Enqueued;
use crate::sync::Mutex;
use std::cell::RefCell;
use std::mem::MaybeUninit;

pub type Spare = Box<MaybeUninit<Enqueued>>;

/// Boxes a bundle holds: a calling thread takes the lock once per this many enqueues.
const BUNDLE: usize = 64;
/// Bundles kept, beside those the threads hold (4,096 boxes, ~3.6 MiB): more are freed.
const KEPT: usize = 64;

struct Shelf {
    /// Full bundles, the latest last.
    full: Vec<Vec<Spare>>,
    /// Emptied bundles' vectors, for the writer's next.
    empty: Vec<Vec<Spare>>,
}

static SHELF: Mutex<Shelf> = Mutex::new(Shelf {
    full: Vec::new(),
    empty: Vec::new(),
});

thread_local! {
    /// A calling thread's boxes, or the writer's bundle in the making.
    static HELD: RefCell<Vec<Spare>> = const { RefCell::new(Vec::new()) };
}

/// An empty box: this thread's latest, else the latest published bundle's, else a new one.
#[inline]
pub fn take() -> Spare {
    HELD.try_with(|held| {
        let mut held = held.try_borrow_mut().ok()?;
        if held.is_empty() {
            let mut shelf = SHELF.try_lock()?;
            let bundle = shelf.full.pop()?;
            let empty = std::mem::replace(&mut *held, bundle);
            if empty.capacity() == BUNDLE {
                shelf.empty.push(empty);
            }
        }
        held.pop()
    })
    .ok()
    .flatten()
    .unwrap_or_else(Box::new_uninit)
}

/// Keeps an emptied box (the writer, once it has written the record): a full bundle is
/// published, last out first.
pub fn give(spare: Spare) {
    let _ = HELD.try_with(|held| {
        let Ok(mut held) = held.try_borrow_mut() else {
            return;
        };
        held.push(spare);
        if held.len() < BUNDLE {
            return;
        }
        let Some(mut shelf) = SHELF.try_lock() else {
            return held.clear();
        };
        let next = shelf
            .empty
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(BUNDLE));
        let bundle = std::mem::replace(&mut *held, next);
        if shelf.full.len() < KEPT {
            shelf.full.push(bundle);
        } else {
            drop(shelf);
            drop(bundle);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &Spare) -> usize {
        &**s as *const MaybeUninit<Enqueued> as usize
    }

    #[test]
    fn the_box_emptied_last_comes_back_first() {
        // The writer's thread empties a bundle's worth; another thread takes them back.
        let given = std::thread::spawn(|| {
            let boxes: Vec<Spare> = (0..BUNDLE).map(|_| Box::new_uninit()).collect();
            let addrs: Vec<usize> = boxes.iter().map(addr).collect();
            boxes.into_iter().for_each(give);
            addrs
        })
        .join()
        .unwrap();
        let taken = std::thread::spawn(|| (0..BUNDLE).map(|_| addr(&take())).collect::<Vec<_>>())
            .join()
            .unwrap();
        assert_eq!(taken.first(), given.last());
        let mut sorted = taken.clone();
        sorted.sort();
        let mut want = given.clone();
        want.sort();
        assert_eq!(sorted, want, "every box comes back");
    }
}
