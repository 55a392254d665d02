//! The registry: every live memory object and every host range the driver treats as pinned or
//! registered, with where each object's contents last were. Handles and pointers are plain numbers
//! here: nothing in this module ever dereferences program memory.
//!
//! Lookups are O(log n): objects by handle in a hash map (FxHash: keys are addresses), host ranges through a map of disjoint
//! address segments (each listing the ranges that cover it), so nested and overlapping ranges (a
//! mapping inside a USE_HOST_PTR range) cost no scan. Both are bounded by [`MAX_ENTRIES`].
//!
//! `entries.rs` holds what is registered; here, the registry and its objects; `ranges.rs` its
//! host ranges and pointer lookups; `usage.rs` the memory they take.

mod entries;
mod ranges;
mod staged;
mod usage;

pub use entries::*;

use super::kinds::RangeKind;
use rangemap::RangeMap;
use rustc_hash::FxHashMap as HashMap;
use std::cell::Cell;
use std::ops::Range;

/// At most this many objects and this many host ranges are tracked; beyond, new ones are counted
/// as untracked and their transfers classify as `unknown`.
pub const MAX_ENTRIES: usize = 1 << 20;

pub struct Registry {
    /// [`MAX_ENTRIES`], smaller in tests.
    limit: usize,
    objects: HashMap<usize, MemObject>,
    next_object: u64,
    ranges: HashMap<u64, HostRange>,
    next_range: u64,
    /// Disjoint address segments → the ids of the ranges covering them.
    cover: RangeMap<usize, Ids>,
    /// Addresses outside these bounds are in no segment: most transfers are from `malloc` memory,
    /// away from every range, and this answers them without a tree search. Widened as segments
    /// are added, reset when none is left.
    bounds: Range<usize>,
    /// The last segment [`Registry::host_range`] looked up, and the range it answered: a program
    /// moves from the same few ranges over and over, and this answers them without a tree
    /// search. Forgotten at any change of the segments or of a mapping's dormancy.
    last: Cell<Option<(usize, usize, u64)>>,
    /// The mappings of each (object, pointer), live and ended ([`Region`]).
    mappings: HashMap<(usize, usize), Region>,
    /// SVM/USM allocations by start pointer: their range, and the device whose memory they
    /// take (with their size).
    allocations: HashMap<usize, (u64, Option<Taken>)>,
    /// Objects and ranges not tracked because the registry was full.
    pub untracked: u64,
    pinned: Usage,
    devices: HashMap<usize, Resident>,
    /// Per device, the host bytes its staged transfers from pageable memory reached.
    staged: HashMap<usize, staged::Staged>,
}

/// What an allocation takes of a device's memory: the device, the bytes, and whether the host
/// uses it too (SVM, USM host or shared memory, judged as ALLOC_HOST_PTR buffers are; not USM
/// device memory).
type Taken = (usize, u64, bool);

impl Registry {
    pub fn new() -> Registry {
        Registry::with_limit(MAX_ENTRIES)
    }

    pub fn with_limit(limit: usize) -> Registry {
        Registry {
            limit,
            objects: HashMap::default(),
            next_object: 0,
            ranges: HashMap::default(),
            next_range: 0,
            cover: RangeMap::new(),
            bounds: 0..0,
            last: Cell::new(None),
            mappings: HashMap::default(),
            allocations: HashMap::default(),
            untracked: 0,
            pinned: Usage::default(),
            devices: HashMap::default(),
            staged: HashMap::default(),
        }
    }

    pub fn object(&self, handle: usize) -> Option<&MemObject> {
        self.objects.get(&handle)
    }

    pub fn objects(&self) -> usize {
        self.objects.len()
    }

    /// Ranges that answer lookups (dormant ones are kept but not counted). A walk over the
    /// regions: only tests and benchmarks ask.
    pub fn ranges(&self) -> usize {
        let dormant = self.mappings.values().filter(|r| r.dormant.is_some());
        self.ranges.len() - dormant.count()
    }

    /// The object and, for a sub-buffer, its parent.
    pub fn resolve(&self, handle: usize) -> Option<View<'_>> {
        let obj = self.objects.get(&handle)?;
        match obj.parent {
            Some((parent, offset)) => Some(View {
                obj,
                root: self.objects.get(&parent)?,
                offset,
            }),
            None => Some(View {
                obj,
                root: obj,
                offset: 0,
            }),
        }
    }

    /// Records a new object (replacing a stale entry with the same handle); returns its id.
    pub fn add_object(&mut self, handle: usize, new: NewObject) -> Option<u64> {
        if let Some(old) = self.objects.get(&handle) {
            let id = old.id;
            self.remove_object(handle, id);
        }
        if self.objects.len() >= self.limit {
            self.untracked += 1;
            return None;
        }
        self.next_object += 1;
        let id = self.next_object;
        let copies_in =
            new.flags & (opencl_sys::CL_MEM_COPY_HOST_PTR | opencl_sys::CL_MEM_USE_HOST_PTR) != 0;
        let residence = match (new.parent, copies_in, new.sole_device) {
            (Some(_), ..) => Place::Nowhere,
            (None, true, Some(device)) => Place::Device(device),
            (None, true, None) => Place::Host,
            (None, false, _) => Place::Nowhere,
        };
        let registers = new.flags & opencl_sys::CL_MEM_USE_HOST_PTR != 0
            && new.parent.is_none()
            && new.host_ptr != 0;
        self.objects.insert(
            handle,
            MemObject {
                id,
                kind: new.kind,
                context: new.context,
                flags: new.flags,
                size: new.size,
                host_ptr: new.host_ptr,
                element_size: new.element_size.max(1),
                parent: new.parent,
                residence,
                since: Since::Nothing,
                copies: [0; 2],
                occupies: None,
            },
        );
        if registers {
            self.add_range(new.host_ptr, new.size, RangeKind::UseHostPtr, Some(handle));
        }
        Some(id)
    }

    /// Forgets an object when the driver really destroys it, if `id` still names that handle.
    pub fn remove_object(&mut self, handle: usize, id: u64) {
        if self.objects.get(&handle).is_none_or(|o| o.id != id) {
            return;
        }
        let Some(obj) = self.objects.remove(&handle) else {
            return;
        };
        if let Some(device) = obj.occupies {
            self.occupy(device, obj.size, obj.flags, false);
        }
        let owned: Vec<u64> = self
            .ranges
            .values()
            .filter(|r| r.owner.is_some_and(|(h, o)| h == handle && o.id == id))
            .map(|r| r.id)
            .collect();
        for range in owned {
            self.remove_range(range);
        }
        self.mappings.retain(|&(h, _), _| h != handle);
    }

    /// Runs `f` on the object whose contents `handle` shows: itself, or a sub-buffer's parent.
    /// One lookup for an object that is no sub-buffer (every transfer's effects come here).
    fn change_root<R>(&mut self, handle: usize, f: impl FnOnce(&mut MemObject) -> R) -> Option<R> {
        let obj = self.objects.get_mut(&handle)?;
        match obj.parent {
            None => Some(f(obj)),
            Some((parent, _)) => self.objects.get_mut(&parent).map(f),
        }
    }

    /// A kernel on `device` read the contents of `handle` (its parent, for a sub-buffer), and a
    /// copy stays there as well as where they were. Two copies are kept at most (the oldest
    /// goes).
    pub fn add_copy(&mut self, handle: usize, device: usize) {
        self.change_root(handle, |obj| {
            if !obj.valid_on(device) {
                obj.copies = [device, obj.copies[0]];
            }
        });
    }

    /// What the last command did with the contents of `handle` (its parent, for a sub-buffer).
    pub fn set_since(&mut self, handle: usize, since: Since) {
        self.change_root(handle, |obj| obj.since = since);
    }

    /// The contents of `handle` (its parent, for a sub-buffer) are now at `place`. When `occupies`
    /// names a device, the object's storage is counted against that device from now on (storage
    /// is allocated at first use, and follows a migration).
    pub fn set_residence(&mut self, handle: usize, place: Place, occupies: Option<usize>) {
        let moved = self.change_root(handle, |obj| {
            obj.residence = place;
            obj.copies = [0; 2];
            let new = occupies.filter(|_| obj.occupies != occupies)?;
            Some((obj.occupies.replace(new), new, obj.size, obj.flags))
        });
        if let Some(Some((old, new, size, flags))) = moved {
            if let Some(old) = old {
                self.occupy(old, size, flags, false);
            }
            self.occupy(new, size, flags, true);
        }
    }
}

impl Default for Registry {
    fn default() -> Registry {
        Registry::new()
    }
}

#[cfg(test)]
mod tests;
