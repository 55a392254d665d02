//! What the registry holds: memory objects, host ranges, where contents are, and the usage
//! counts of memory they take.

use super::super::classification::{ObjRef, RangeRef};
use super::super::kinds::{MemKind, RangeKind};
use smallvec::SmallVec;

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
    pub(super) dormant: bool,
    /// When it was added or revived: of two ranges of one length holding a pointer, the newer
    /// answers.
    pub(super) seq: u64,
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
/// some vendors place in device memory too, docs/sources/transfer-rules.md Q2).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Resident {
    pub(super) all: Usage,
    pub(super) alloc_host_ptr: Usage,
    /// How many ALLOC_HOST_PTR buffers take its memory (for the staging advice).
    pub(super) alloc_host_ptr_buffers: Usage,
    /// SVM and USM allocations that take its memory (issue #57: judged as ALLOC_HOST_PTR is).
    pub(super) svm: Usage,
}

impl Usage {
    pub(super) fn add(&mut self, n: u64) {
        self.now = self.now.saturating_add(n);
        self.peak = self.peak.max(self.now);
    }
    pub(super) fn sub(&mut self, n: u64) {
        self.now = self.now.saturating_sub(n);
    }
}

/// Range ids: almost always one or two, kept inline because the registry is updated on every
/// map and unmap, and a heap allocation there costs more than the rest of the update.
pub(super) type Ids = SmallVec<[u64; 2]>;

/// The mappings of one (object, pointer): the live ones, a stack (a region may be mapped twice),
/// and the last ended one, still in `cover`. Programs map and unmap one region over and over:
/// reviving it costs a hash lookup where adding it anew and removing it again split and merge
/// address segments (about 2,000 instructions a map and unmap, measured); and one entry for
/// both, found once per map or unmap, saves the lookups of two maps (about 100 instructions).
#[derive(Default)]
pub(super) struct Region {
    pub(super) live: Ids,
    pub(super) dormant: Option<u64>,
}

impl Region {
    /// Nothing live and nothing ended: the region's entry goes.
    pub(super) fn is_empty(&self) -> bool {
        self.live.is_empty() && self.dormant.is_none()
    }
}

/// What an unmap ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ended {
    pub kind: RangeKind,
    pub len: u64,
}
