//! The registry: every live memory object and every host range the driver treats as pinned or
//! registered, with where each object's contents last were. Handles and pointers are plain numbers
//! here: nothing in this module ever dereferences program memory.
//!
//! Lookups are O(log n): objects by handle in a hash map (FxHash: keys are addresses), host ranges through a map of disjoint
//! address segments (each listing the ranges that cover it), so nested and overlapping ranges (a
//! mapping inside a USE_HOST_PTR range) cost no scan. Both are bounded by [`MAX_ENTRIES`].

use super::classification::{ObjRef, RangeRef};
use super::kinds::{MemKind, RangeKind};
use opencl_sys::CL_MEM_ALLOC_HOST_PTR;
use rangemap::RangeMap;
use rustc_hash::FxHashMap as HashMap;
use smallvec::{SmallVec, smallvec};
use std::cell::Cell;
use std::ops::Range;

/// At most this many objects and this many host ranges are tracked; beyond, new ones are counted
/// as untracked and their transfers classify as `unknown`.
pub const MAX_ENTRIES: usize = 1 << 20;

/// Where an object's contents are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Never written: no contents yet.
    Nowhere,
    Host,
    Device(usize),
}

/// What the last command that touched an object did with its contents, for the hand-off
/// reasons (`rules::common`: HOST_HOP, IDLE_MIGRATION, WRITTEN_TWICE). Any other use clears it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Since {
    #[default]
    Nothing,
    /// A HOST migration took the contents off device `.0` to the host.
    ToHost(usize),
    /// A migration to device `.0` moved nothing: the contents already were there.
    IdleMigration(usize),
    /// Written whole on device `.0` (a write or fill of every byte).
    Written(usize),
}

/// What the intercept learned about a new memory object.
#[derive(Clone, Debug, PartialEq)]
pub struct NewObject {
    pub kind: MemKind,
    pub context: usize,
    pub flags: u64,
    pub size: u64,
    pub host_ptr: usize,
    /// Bytes per pixel of an image; 1 for buffers.
    pub element_size: u64,
    /// Sub-buffers: the parent's handle and the offset in it.
    pub parent: Option<(usize, u64)>,
    /// The context's only device, if it has one (contents start there when copied in).
    pub sole_device: Option<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MemObject {
    /// `#7`: numbered in creation order, never reused.
    pub id: u64,
    pub kind: MemKind,
    pub context: usize,
    pub flags: u64,
    pub size: u64,
    pub host_ptr: usize,
    pub element_size: u64,
    pub parent: Option<(usize, u64)>,
    /// Where the contents last were (on the parent for sub-buffers).
    pub residence: Place,
    /// What the last command did with them (on the parent for sub-buffers).
    pub since: Since,
    /// Devices besides `residence` where the contents are valid too (0: an empty slot): those
    /// whose kernels only read them, where the vendor keeps such a copy (`read_copy`).
    pub copies: [usize; 2],
    /// The device whose memory this object occupies (counted in [`Registry::device_bytes`]).
    pub occupies: Option<usize>,
}

impl MemObject {
    /// Whether the contents are valid on `device`: they were last put there, or a copy was
    /// kept there.
    pub fn valid_on(&self, device: usize) -> bool {
        self.residence == Place::Device(device) || (device != 0 && self.copies.contains(&device))
    }

    /// How reasons name it: `buffer #7 (READ_WRITE|ALLOC_HOST_PTR)`.
    pub fn obj_ref(&self) -> ObjRef {
        ObjRef {
            id: self.id,
            flags: self.flags,
            kind: self.kind,
            sub: self.parent.is_some(),
            size: self.size,
        }
    }
}

/// A memory object with its parent resolved.
#[derive(Clone, Copy, Debug)]
pub struct View<'a> {
    pub obj: &'a MemObject,
    /// The object itself, or the parent of a sub-buffer.
    pub root: &'a MemObject,
    /// Offset of `obj` inside `root`.
    pub offset: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct HostRange {
    pub id: u64,
    pub start: usize,
    pub len: u64,
    pub kind: RangeKind,
    /// The memory object it belongs to: (handle, id, flags).
    pub owner: Option<(usize, ObjRef)>,
    /// An ended mapping kept for the next map of the same region ([`Registry::end_mapping`]):
    /// it answers no lookup.
    dormant: bool,
    /// When it was added or revived: of two ranges of one length holding a pointer, the newer
    /// answers.
    seq: u64,
}

impl HostRange {
    /// How reasons name it: "the live WRITE mapping of buffer #7 (ALLOC_HOST_PTR)".
    pub fn range_ref(&self) -> RangeRef {
        RangeRef {
            kind: self.kind,
            owner: self.owner.map(|(_, o)| o),
        }
    }
}

/// Which range a host pointer falls in.
#[derive(Clone, Copy, Debug)]
pub struct Hit<'a> {
    pub range: &'a HostRange,
    /// Bytes from the range's start to the pointer.
    pub offset: u64,
    /// Whether the whole span lies inside the range.
    pub whole: bool,
}

/// Bytes now and at most, per device or for pinned host memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub now: u64,
    pub peak: u64,
}

/// A device's memory taken by buffers: all of them, and those made with ALLOC_HOST_PTR (which
/// some vendors place in device memory too, transfer-rules.md Q2).
#[derive(Debug, Clone, Copy, Default)]
struct Resident {
    all: Usage,
    alloc_host_ptr: Usage,
    /// How many ALLOC_HOST_PTR buffers take its memory (for the staging advice).
    alloc_host_ptr_buffers: Usage,
}

impl Usage {
    fn add(&mut self, n: u64) {
        self.now = self.now.saturating_add(n);
        self.peak = self.peak.max(self.now);
    }
    fn sub(&mut self, n: u64) {
        self.now = self.now.saturating_sub(n);
    }
}

/// Range ids: almost always one or two, kept inline because the registry is updated on every
/// map and unmap, and a heap allocation there costs more than the rest of the update.
type Ids = SmallVec<[u64; 2]>;

/// The mappings of one (object, pointer): the live ones, a stack (a region may be mapped twice),
/// and the last ended one, still in `cover`. Programs map and unmap one region over and over:
/// reviving it costs a hash lookup where adding it anew and removing it again split and merge
/// address segments (about 2,000 instructions a map and unmap, measured); and one entry for
/// both, found once per map or unmap, saves the lookups of two maps (about 100 instructions).
#[derive(Default)]
struct Region {
    live: Ids,
    dormant: Option<u64>,
}

impl Region {
    /// Nothing live and nothing ended: the region's entry goes.
    fn is_empty(&self) -> bool {
        self.live.is_empty() && self.dormant.is_none()
    }
}

/// What an unmap ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ended {
    pub kind: RangeKind,
    pub len: u64,
}

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
    allocations: HashMap<usize, (u64, Option<(usize, u64)>)>,
    /// Objects and ranges not tracked because the registry was full.
    pub untracked: u64,
    pinned: Usage,
    devices: HashMap<usize, Resident>,
}

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

    /// Adds a pinned or registered range, belonging to the object at handle `owner` if any;
    /// returns its id.
    pub fn add_range(
        &mut self,
        start: usize,
        len: u64,
        kind: RangeKind,
        owner: Option<usize>,
    ) -> Option<u64> {
        let owner = owner.and_then(|h| Some((h, self.objects.get(&h)?.obj_ref())));
        let end = start.checked_add(len as usize)?;
        if len == 0 || self.ranges.len() >= self.limit {
            self.untracked += u64::from(len != 0);
            return None;
        }
        self.next_range += 1;
        let id = self.next_range;
        if covers(kind, owner) {
            self.cover_add(start..end, id);
        }
        if counts_as_pinned(kind, owner) {
            self.pinned.add(len);
        }
        self.ranges.insert(
            id,
            HostRange {
                id,
                start,
                len,
                kind,
                owner,
                dormant: false,
                seq: id,
            },
        );
        Some(id)
    }

    fn remove_range(&mut self, id: u64) -> Option<HostRange> {
        let range = self.ranges.remove(&id)?;
        if covers(range.kind, range.owner) {
            self.cover_remove(range.start..range.start + range.len as usize, id);
        }
        if range.dormant {
            if let Some((handle, _)) = range.owner {
                let key = (handle, range.start);
                if let Some(region) = self.mappings.get_mut(&key)
                    && region.dormant == Some(id)
                {
                    region.dormant = None;
                    if region.is_empty() {
                        self.mappings.remove(&key);
                    }
                }
            }
        } else if counts_as_pinned(range.kind, range.owner) {
            self.pinned.sub(range.len);
        }
        Some(range)
    }

    fn cover_add(&mut self, span: Range<usize>, id: u64) {
        self.last.set(None);
        self.bounds = match self.bounds.is_empty() {
            true => span.clone(),
            false => self.bounds.start.min(span.start)..self.bounds.end.max(span.end),
        };
        let mut pieces: SmallVec<[(Range<usize>, Ids); 4]> = SmallVec::new();
        let mut cursor = span.start;
        for (segment, ids) in self.cover.overlapping(&span) {
            let (start, end) = (segment.start.max(span.start), segment.end.min(span.end));
            if cursor < start {
                pieces.push((cursor..start, smallvec![id]));
            }
            let mut ids = ids.clone();
            ids.push(id);
            pieces.push((start..end, ids));
            cursor = end;
        }
        if cursor < span.end {
            pieces.push((cursor..span.end, smallvec![id]));
        }
        for (range, ids) in pieces {
            self.cover.insert(range, ids);
        }
    }

    fn cover_remove(&mut self, span: Range<usize>, id: u64) {
        self.last.set(None);
        let pieces: SmallVec<[_; 4]> = self
            .cover
            .overlapping(&span)
            .map(|(segment, ids)| {
                let range = segment.start.max(span.start)..segment.end.min(span.end);
                (
                    range,
                    ids.iter().copied().filter(|&i| i != id).collect::<Ids>(),
                )
            })
            .collect();
        for (range, ids) in pieces {
            if ids.is_empty() {
                self.cover.remove(range);
            } else {
                self.cover.insert(range, ids);
            }
        }
        if self.cover.is_empty() {
            self.bounds = 0..0;
        }
    }

    /// The innermost pinned or registered range holding `ptr`, and whether `span` bytes from
    /// `ptr` stay inside it.
    pub fn host_range(&self, ptr: usize, span: u64) -> Option<Hit<'_>> {
        if !self.bounds.contains(&ptr) {
            return None;
        }
        let cached = self.last.get().filter(|&(s, e, _)| (s..e).contains(&ptr));
        let range = match cached.and_then(|(_, _, id)| self.ranges.get(&id)) {
            Some(range) => range,
            None => {
                let (segment, ids) = self.cover.get_key_value(&ptr)?;
                let (id, range) = ids
                    .iter()
                    .filter_map(|id| Some((*id, self.ranges.get(id)?)))
                    .filter(|(_, r)| !r.dormant)
                    .min_by_key(|(_, r)| (r.len, u64::MAX - r.seq))?;
                self.last.set(Some((segment.start, segment.end, id)));
                range
            }
        };
        let offset = (ptr - range.start) as u64;
        Some(Hit {
            range,
            offset,
            whole: offset.saturating_add(span) <= range.len,
        })
    }

    /// A map call returned `ptr` for `len` bytes of `handle`.
    pub fn add_mapping(&mut self, handle: usize, ptr: usize, len: u64, map_flags: u64) {
        self.last.set(None);
        let kind = RangeKind::Mapping { map_flags };
        // The region's ended mapping made live again, if it spans `len` bytes (else it goes).
        if let Some(region) = self.mappings.get_mut(&(handle, ptr))
            && let Some(id) = region.dormant.take()
        {
            let seq = self.next_range + 1;
            match self.ranges.get_mut(&id) {
                Some(range) if range.len == len => {
                    range.seq = seq;
                    range.kind = kind;
                    range.dormant = false;
                    region.live.push(id);
                    self.next_range = seq;
                    if counts_as_pinned(kind, range.owner) {
                        self.pinned.add(len);
                    }
                    return;
                }
                _ => {
                    self.remove_range(id);
                }
            }
        }
        let added = self.add_range(ptr, len, kind, Some(handle));
        let region = self.mappings.entry((handle, ptr)).or_default();
        match added {
            Some(id) => region.live.push(id),
            // Not tracked (the registry is full): no entry is left empty.
            None if region.is_empty() => {
                self.mappings.remove(&(handle, ptr));
            }
            None => {}
        }
    }

    /// The newest live mapping of `handle` at `ptr`.
    pub fn mapping(&self, handle: usize, ptr: usize) -> Option<&HostRange> {
        let id = self.mappings.get(&(handle, ptr))?.live.last()?;
        self.ranges.get(id)
    }

    /// An unmap was enqueued: the mapping ends.
    ///
    /// A buffer's or image's range stays, dormant, for the next map of the same region (the one
    /// dormant before it goes).
    pub fn end_mapping(&mut self, handle: usize, ptr: usize) -> Option<Ended> {
        self.last.set(None);
        let region = self.mappings.get_mut(&(handle, ptr))?;
        let id = region.live.pop()?;
        let Some(range) = self.ranges.get_mut(&id) else {
            if region.is_empty() {
                self.mappings.remove(&(handle, ptr));
            }
            return None;
        };
        let ended = Ended {
            kind: range.kind,
            len: range.len,
        };
        if range.owner.is_none() {
            // An SVM mapping: in no address segment, nothing to keep.
            if region.is_empty() {
                self.mappings.remove(&(handle, ptr));
            }
            self.remove_range(id);
            return Some(ended);
        }
        range.dormant = true;
        if counts_as_pinned(range.kind, range.owner) {
            self.pinned.sub(range.len);
        }
        if let Some(old) = region.dormant.replace(id) {
            self.remove_range(old);
        }
        Some(ended)
    }

    /// An SVM or USM allocation; `occupies`: the device whose memory it takes, by the vendor's
    /// rules (`None`: host memory only, or not known).
    pub fn add_allocation(
        &mut self,
        ptr: usize,
        len: u64,
        kind: RangeKind,
        occupies: Option<usize>,
    ) {
        let Some(id) = self.add_range(ptr, len, kind, None) else {
            return;
        };
        if let Some(device) = occupies {
            self.occupy(device, len, 0, true);
        }
        let taken = occupies.map(|d| (d, len));
        if let Some(old) = self.allocations.insert(ptr, (id, taken)) {
            self.free(old);
        }
    }

    /// An SVM or USM free; false when `ptr` was not an allocation clxfer saw.
    pub fn remove_allocation(&mut self, ptr: usize) -> bool {
        match self.allocations.remove(&ptr) {
            Some(old) => self.free(old),
            None => false,
        }
    }

    fn free(&mut self, (id, taken): (u64, Option<(usize, u64)>)) -> bool {
        if let Some((device, len)) = taken {
            self.occupy(device, len, 0, false);
        }
        self.remove_range(id).is_some()
    }

    /// The object whose contents `handle` shows: itself, or a sub-buffer's parent.
    fn root_of(&self, handle: usize) -> Option<usize> {
        match self.objects.get(&handle)? {
            MemObject {
                parent: Some((parent, _)),
                ..
            } => Some(*parent),
            _ => Some(handle),
        }
    }

    /// A kernel on `device` read the contents of `handle` (its parent, for a sub-buffer), and a
    /// copy stays there as well as where they were. Two copies are kept at most (the oldest
    /// goes).
    pub fn add_copy(&mut self, handle: usize, device: usize) {
        let Some(root) = self.root_of(handle) else {
            return;
        };
        if let Some(obj) = self.objects.get_mut(&root)
            && !obj.valid_on(device)
        {
            obj.copies = [device, obj.copies[0]];
        }
    }

    /// What the last command did with the contents of `handle` (its parent, for a sub-buffer).
    pub fn set_since(&mut self, handle: usize, since: Since) {
        let Some(root) = self.root_of(handle) else {
            return;
        };
        if let Some(obj) = self.objects.get_mut(&root) {
            obj.since = since;
        }
    }

    /// The contents of `handle` (its parent, for a sub-buffer) are now at `place`. When `occupies`
    /// names a device, the object's storage is counted against that device from now on (storage
    /// is allocated at first use, and follows a migration).
    pub fn set_residence(&mut self, handle: usize, place: Place, occupies: Option<usize>) {
        let Some(root) = self.root_of(handle) else {
            return;
        };
        let Some(obj) = self.objects.get_mut(&root) else {
            return;
        };
        obj.residence = place;
        obj.copies = [0; 2];
        if let Some(new) = occupies
            && obj.occupies != occupies
        {
            let (size, flags) = (obj.size, obj.flags);
            if let Some(old) = obj.occupies.replace(new) {
                self.occupy(old, size, flags, false);
            }
            self.occupy(new, size, flags, true);
        }
    }

    fn occupy(&mut self, device: usize, size: u64, flags: u64, add: bool) {
        let d = self.devices.entry(device).or_default();
        let ahp = flags & CL_MEM_ALLOC_HOST_PTR != 0;
        for usage in [Some(&mut d.all), ahp.then_some(&mut d.alloc_host_ptr)]
            .into_iter()
            .flatten()
        {
            if add {
                usage.add(size)
            } else {
                usage.sub(size)
            }
        }
        if ahp {
            match add {
                true => d.alloc_host_ptr_buffers.add(1),
                false => d.alloc_host_ptr_buffers.sub(1),
            }
        }
    }

    /// Pinned or registered host bytes (mappings of USE_HOST_PTR buffers and USM device memory
    /// excluded: they are counted once, or are not host memory).
    pub fn pinned_bytes(&self) -> Usage {
        self.pinned
    }

    /// Bytes of device storage per device, by the vendor rules the caller applied.
    pub fn device_bytes(&self, device: usize) -> Usage {
        self.devices.get(&device).map(|d| d.all).unwrap_or_default()
    }

    /// The part of [`Registry::device_bytes`] that ALLOC_HOST_PTR buffers occupy.
    pub fn alloc_host_ptr_device_bytes(&self, device: usize) -> Usage {
        self.devices
            .get(&device)
            .map(|d| d.alloc_host_ptr)
            .unwrap_or_default()
    }

    /// How many ALLOC_HOST_PTR buffers took device memory at once (`peak`) on `device`.
    pub fn alloc_host_ptr_buffers(&self, device: usize) -> Usage {
        self.devices
            .get(&device)
            .map(|d| d.alloc_host_ptr_buffers)
            .unwrap_or_default()
    }
}

impl Default for Registry {
    fn default() -> Registry {
        Registry::new()
    }
}

/// Whether a range answers pointer lookups: all but SVM mappings (no owner), whose pointers the
/// SVM allocation itself already covers.
fn covers(kind: RangeKind, owner: Option<(usize, ObjRef)>) -> bool {
    !matches!(kind, RangeKind::Mapping { .. }) || owner.is_some()
}

fn counts_as_pinned(kind: RangeKind, owner: Option<(usize, ObjRef)>) -> bool {
    let in_use_host_ptr =
        owner.is_some_and(|(_, o)| o.flags & opencl_sys::CL_MEM_USE_HOST_PTR != 0);
    match kind {
        RangeKind::UsmDevice => false,
        RangeKind::Mapping { .. } => owner.is_some() && !in_use_host_ptr,
        _ => true,
    }
}

#[cfg(test)]
mod tests;
