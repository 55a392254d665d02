//! The registry's host ranges: pinned and registered memory, mappings and SVM/USM allocations,
//! and the lookup of a pointer among them (through disjoint address segments).

use super::super::classification::ObjRef;
use super::super::kinds::RangeKind;
use smallvec::{SmallVec, smallvec};
use std::ops::Range;

use super::*;

impl Registry {
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

    pub(super) fn remove_range(&mut self, id: u64) -> Option<HostRange> {
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

    pub(super) fn cover_add(&mut self, span: Range<usize>, id: u64) {
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

    pub(super) fn cover_remove(&mut self, span: Range<usize>, id: u64) {
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
        // One at the address of an allocation whose free clxfer did not see replaces it: the
        // old one goes first, so that no peak counts both.
        if let Some(old) = self.allocations.remove(&ptr) {
            self.free(old);
        }
        let Some(id) = self.add_range(ptr, len, kind, None) else {
            return;
        };
        let host = !matches!(kind, RangeKind::UsmDevice);
        if let Some(device) = occupies {
            self.occupy_allocation(device, len, host, true);
        }
        let taken = occupies.map(|d| (d, len, host));
        self.allocations.insert(ptr, (id, taken));
    }

    /// An SVM or USM free; false when `ptr` was not an allocation clxfer saw.
    pub fn remove_allocation(&mut self, ptr: usize) -> bool {
        match self.allocations.remove(&ptr) {
            Some(old) => self.free(old),
            None => false,
        }
    }

    pub(super) fn free(&mut self, (id, taken): (u64, Option<super::Taken>)) -> bool {
        if let Some((device, len, host)) = taken {
            self.occupy_allocation(device, len, host, false);
        }
        self.remove_range(id).is_some()
    }
}

/// Whether a range answers pointer lookups: all but SVM mappings (no owner), whose pointers the
/// SVM allocation itself already covers.
pub(super) fn covers(kind: RangeKind, owner: Option<(usize, ObjRef)>) -> bool {
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
