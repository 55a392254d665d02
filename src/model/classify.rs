//! The classifier: `(request, registry, device profile, rules) → Classification`. A pure function:
//! it reads the registry and never changes it (the intercept applies the effects afterwards).

use super::classification::*;
use super::device::DeviceProfile;
use super::kinds::RangeKind;
use super::memory::{Place, Registry, Since, View};
use super::rules::{CrossDevice, Pageable, Placement, Rule, RuleSet, common as any};
use opencl_sys::{
    CL_MAP_READ, CL_MAP_WRITE, CL_MAP_WRITE_INVALIDATE_REGION,
    CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, CL_MIGRATE_MEM_OBJECT_HOST,
};
use smallvec::SmallVec;

/// One command, with handles and pointers as plain numbers.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Read (`to_device: false`) or write between host memory and a buffer or image, rect too.
    Host {
        mem: usize,
        to_device: bool,
        ptr: usize,
        bytes: u64,
        span: u64,
        rect: bool,
    },
    /// Copy between two memory objects (buffer, rect, image, image↔buffer).
    Copy {
        src: usize,
        dst: usize,
        bytes: u64,
    },
    Fill {
        mem: usize,
        bytes: u64,
    },
    /// Map of `bytes` of a memory object, which the driver returned at `ptr`.
    Map {
        mem: usize,
        flags: u64,
        bytes: u64,
        ptr: usize,
    },
    Unmap {
        mem: usize,
        ptr: usize,
    },
    Migrate {
        mems: Vec<usize>,
        flags: u64,
    },
    /// SVM or USM memcpy.
    PtrCopy {
        dst: usize,
        src: usize,
        bytes: u64,
    },
    /// SVM or USM fill/memset.
    PtrFill {
        ptr: usize,
        bytes: u64,
    },
    /// SVM map; the unmap of an SVM pointer.
    PtrMap {
        ptr: usize,
        flags: u64,
        bytes: u64,
    },
    PtrUnmap {
        ptr: usize,
    },
    /// SVM or USM migrate: (pointer, bytes) pairs.
    PtrMigrate {
        ptrs: Vec<(usize, u64)>,
        flags: u64,
    },
    /// A kernel launch: its memory-object arguments, which move if their contents are elsewhere;
    /// bit `i` of `reads` is set when it only reads `mems[i]` (a `const` or `__constant`
    /// argument, a READ_ONLY buffer), which lets a vendor keep a copy where they were.
    Kernel {
        mems: Vec<usize>,
        reads: u64,
    },
}

/// Whether bit `i` of a kernel's `reads` says it only reads its `i`-th memory argument (past
/// 64 arguments: taken as written).
pub fn only_reads(reads: u64, i: usize) -> bool {
    i < 64 && reads & (1 << i) != 0
}

impl Op {
    /// The memory objects the command names.
    pub fn objects(&self) -> impl Iterator<Item = usize> + '_ {
        let (a, b, rest): (Option<usize>, Option<usize>, &[usize]) = match self {
            Op::Host { mem, .. }
            | Op::Fill { mem, .. }
            | Op::Map { mem, .. }
            | Op::Unmap { mem, .. } => (Some(*mem), None, &[]),
            Op::Copy { src, dst, .. } => (Some(*src), Some(*dst), &[]),
            Op::Migrate { mems, .. } | Op::Kernel { mems, .. } => (None, None, mems),
            _ => (None, None, &[]),
        };
        a.into_iter().chain(b).chain(rest.iter().copied())
    }
}

/// A command on a queue of `device`.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub op: Op,
    pub device: usize,
    pub blocking: bool,
}

/// The handle SVM mappings are recorded under (they belong to no memory object).
pub const SVM_MAPPINGS: usize = 0;

/// What one classification is being built from.
struct Ctx<'a> {
    mem: &'a Registry,
    dev: &'a DeviceProfile,
    rules: &'a RuleSet,
    device: usize,
    out: &'a mut Classification,
}

impl Ctx<'_> {
    fn why(&mut self, rule: &'static str, why: impl Into<Why>) {
        let why = why.into();
        self.out.reasons.push(Reason {
            rule,
            about: None,
            why,
        });
    }

    fn cite<T>(&mut self, rule: &Rule<T>, text: impl Into<Why>) {
        self.why(rule.id, text);
    }

    fn set(&mut self, direction: Direction, path: Path, bytes: u64) {
        self.out.direction = direction;
        self.out.path = path;
        self.out.bytes = bytes;
    }

    fn unknown(mut self, rule: &'static str, text: Why) {
        self.out.path = Path::Unknown;
        self.why(rule, text);
    }

    /// Where a resolved object's storage lives, citing the sub-buffer and flag rules it took.
    fn placement(&mut self, view: View) -> Placement {
        if view.obj.parent.is_some() {
            let (sub, parent) = (view.obj.obj_ref(), view.root.obj_ref());
            let text = Why::SubBuffer {
                sub,
                offset: view.offset,
                parent,
            };
            self.why(any::SUB_BUFFER.id, text);
        }
        let r = view.root;
        if self.rules.unified.value {
            return Placement::Host;
        }
        match self
            .rules
            .own_placement(r.flags, r.host_ptr, r.size, self.dev.base_addr_align)
        {
            Some((placement, rule)) => {
                let host = placement == Placement::Host;
                let text = Why::Placement {
                    obj: r.obj_ref(),
                    host,
                };
                self.why(rule, text);
                placement
            }
            None => Placement::Device,
        }
    }

    /// Says why a host-resident object moves nothing across the bus: `what` happens instead.
    fn host_resident(&mut self, what: &'static str) {
        let unified = self.rules.unified;
        let rule = if unified.value {
            unified.id
        } else {
            any::HOST_RESIDENT.id
        };
        self.why(
            rule,
            Why::HostResident {
                what,
                unified: unified.value,
            },
        );
    }

    /// What kind of host memory `span` bytes at `ptr` are.
    fn host_memory(&mut self, ptr: usize, span: u64) -> HostMemory {
        let Some(hit) = self.mem.host_range(ptr, span) else {
            self.why(
                any::PAGEABLE.id,
                "the pointer is in no pinned or registered range: pageable",
            );
            return HostMemory {
                ptr,
                kind: "pageable",
                pinned: false,
                range: None,
            };
        };
        let (pinned, rule) = match hit.range.kind {
            RangeKind::Mapping { .. } => (true, any::MAPPED.id),
            RangeKind::UseHostPtr => (self.rules.registered.value, self.rules.registered.id),
            RangeKind::Svm { .. } => (true, any::SVM.id),
            RangeKind::UsmHost => (true, any::USM_HOST.id),
            RangeKind::UsmShared => (true, any::USM_SHARED.id),
            RangeKind::UsmDevice => (true, any::USM_DEVICE.id),
            RangeKind::Imported => (true, any::IMPORTED.id),
        };
        let whole = hit.whole;
        let pinned = pinned && whole;
        let (range, offset) = (hit.range.range_ref(), hit.offset);
        if whole {
            self.why(
                rule,
                Why::InRange {
                    range,
                    offset,
                    pinned,
                },
            );
        } else {
            let past = hit
                .offset
                .saturating_add(span)
                .saturating_sub(hit.range.len);
            self.why(
                any::PARTIAL.id,
                Why::Partial {
                    range,
                    offset,
                    past,
                },
            );
        }
        HostMemory {
            ptr,
            kind: hit.range.kind.word(),
            pinned,
            range: Some((range, offset)),
        }
    }

    /// The path of `bytes` between device memory and host memory that is not host-resident.
    fn pageable_or_pinned(&mut self, host: &HostMemory, bytes: u64) -> Path {
        if host.pinned {
            return Path::Pinned;
        }
        let rule = self.rules.pageable;
        match rule.value {
            Pageable::Staged => {
                self.cite(
                    &rule,
                    "the driver stages pageable memory through its pinned bounce buffer",
                );
                Path::Staged
            }
            Pageable::PinnedAbove(limit) if bytes <= limit => {
                self.cite(&rule, Why::StagedUpTo { bytes, limit });
                Path::Staged
            }
            Pageable::PinnedAbove(limit) => {
                self.cite(&rule, Why::PinnedAbove { bytes, limit });
                Path::Pinned
            }
            Pageable::Direct { .. } => {
                self.cite(
                    &rule,
                    "the pages become a userptr object and the GPU copies them directly",
                );
                Path::Pinned
            }
            Pageable::HostCopy => {
                self.cite(&rule, "the device works in host memory: one host memcpy");
                Path::ZeroCopy
            }
        }
    }

    fn notes(&mut self, host: &HostMemory, bytes: u64) {
        let (path, blocking) = (self.out.path, self.out.blocking);
        let nb = self.rules.nonblocking_blocks;
        if !blocking && path == Path::Staged && nb.value {
            self.cite(
                &nb,
                "non-blocking, but staging from pageable memory holds the host anyway",
            );
        }
        let align = self.rules.alignment;
        if let Some(a) = align.value
            && !(host.ptr as u64).is_multiple_of(a)
            && matches!(path, Path::Pinned | Path::Staged)
        {
            let rem = host.ptr as u64 % a;
            self.cite(&align, Why::Misaligned { align: a, rem });
        }
        self.out.alignment = Some(Alignment::of(host.ptr, bytes));
    }

    /// Read or write between host memory and a memory object.
    fn host(mut self, mem: usize, to_device: bool, ptr: usize, bytes: u64, span: u64, rect: bool) {
        let Some(view) = self.mem.resolve(mem) else {
            return self.unknown(any::UNKNOWN_OBJECT.id, Why::UnknownObject { handle: mem });
        };
        let direction = if to_device {
            Direction::H2D
        } else {
            Direction::D2H
        };
        let placement = self.placement(view);
        if to_device {
            self.written_twice(view, bytes);
        }
        if rect {
            self.out.host_span = Some(span);
            self.why(any::RECT.id, Why::Rect { bytes, span });
        }
        let host = self.host_memory(ptr, span);
        let path = match (placement, self.rules.pageable.value) {
            (Placement::Host, Pageable::Direct { cpu_copy_align: a }) => {
                let r = view.root;
                let own =
                    self.rules
                        .own_placement(r.flags, r.host_ptr, r.size, self.dev.base_addr_align);
                let zero_copy_buffer = own.is_some_and(|p| p.0 == Placement::Host);
                let rule = self.rules.pageable;
                if self.out.blocking && (zero_copy_buffer || !(ptr as u64).is_multiple_of(a)) {
                    let rem = ptr as u64 % a;
                    self.cite(&rule, Why::CpuCopy { align: a, rem });
                    Path::ZeroCopy
                } else if host.pinned {
                    Path::Pinned
                } else {
                    self.cite(&rule, "the GPU copies from the user's pages (userptr)");
                    Path::Pinned
                }
            }
            (Placement::Host, _) => {
                self.host_resident("a host memcpy, nothing crosses the bus now");
                Path::ZeroCopy
            }
            (Placement::Device, _) if host.kind == RangeKind::UsmDevice.word() => {
                self.set(Direction::D2D, Path::Device, bytes);
                self.out.host = Some(host);
                return;
            }
            (Placement::Device, _) => self.pageable_or_pinned(&host, bytes),
        };
        self.set(direction, path, bytes);
        self.notes(&host, bytes);
        self.out.host = Some(host);
    }

    /// A write of `bytes` to `view` on this device: whether it makes a whole write on another
    /// device, not used since, wasted (the same buffer initialised on two devices).
    fn written_twice(&mut self, view: View, bytes: u64) {
        if let Since::Written(other) = view.root.since
            && other != self.device
            && bytes >= view.root.size
        {
            self.why(
                any::WRITTEN_TWICE.id,
                "written whole on another device and not used since: one of the two writes is wasted",
            );
        }
    }

    fn copy(mut self, src: usize, dst: usize, bytes: u64) {
        let (Some(s), Some(d)) = (self.mem.resolve(src), self.mem.resolve(dst)) else {
            let missing = if self.mem.resolve(src).is_none() {
                src
            } else {
                dst
            };
            return self.unknown(
                any::UNKNOWN_OBJECT.id,
                Why::UnknownObject { handle: missing },
            );
        };
        if let Place::Device(other) = s.root.residence
            && other != self.device
            && !s.root.valid_on(self.device)
        {
            return self.cross_device(s, bytes);
        }
        let (sp, dp) = (self.placement(s), self.placement(d));
        let unified = self.rules.unified;
        let (direction, path) = match (sp, dp) {
            (Placement::Device, Placement::Device) => {
                self.why(
                    any::DEVICE_COPY.id,
                    "both buffers are in device memory: a device copy",
                );
                (Direction::D2D, Path::Device)
            }
            (Placement::Host, Placement::Host) if unified.value => {
                self.cite(&unified, "device memory is host memory: one copy inside it");
                (Direction::D2D, Path::Device)
            }
            (Placement::Host, Placement::Host) => {
                self.why(any::HOST_COPY.id, "both buffers live in host memory");
                (Direction::H2H, Path::ZeroCopy)
            }
            // The placement reasons above say which side is host memory: the copy is a DMA.
            (Placement::Host, Placement::Device) => (Direction::H2D, Path::Pinned),
            (Placement::Device, Placement::Host) => (Direction::D2H, Path::Pinned),
        };
        self.set(direction, path, bytes);
    }

    /// The contents of `view` are on another device than the queue's.
    fn cross_device(mut self, view: View, bytes: u64) {
        let rule = self.rules.between_devices;
        let path = match rule.value {
            CrossDevice::ViaHost => Path::ViaHost,
            CrossDevice::Peer => Path::Peer,
            CrossDevice::Shared => Path::None,
        };
        self.cite(
            &rule,
            Why::ContentsElsewhere {
                obj: view.root.obj_ref(),
            },
        );
        let moved = if path == Path::None { 0 } else { bytes };
        self.set(Direction::D2D, path, moved);
    }

    fn fill(mut self, mem: Option<usize>, bytes: u64) {
        if let Some(view) = mem.and_then(|m| self.mem.resolve(m)) {
            self.written_twice(view, bytes);
        }
        self.why(any::FILL.id, "the device writes the pattern");
        self.set(Direction::D2D, Path::Device, bytes);
    }

    fn map(mut self, mem: usize, flags: u64, bytes: u64) {
        let Some(view) = self.mem.resolve(mem) else {
            return self.unknown(any::UNKNOWN_OBJECT.id, Why::UnknownObject { handle: mem });
        };
        if self.placement(view) == Placement::Host {
            self.host_resident("map returns host memory without a copy");
            self.set(Direction::D2H, Path::ZeroCopy, 0);
            return;
        }
        self.map_device_memory(flags, bytes)
    }

    fn map_device_memory(mut self, flags: u64, bytes: u64) {
        let flags = if flags == 0 {
            CL_MAP_READ | CL_MAP_WRITE
        } else {
            flags
        };
        let rule = self.rules.map_write_copies;
        if flags & CL_MAP_WRITE_INVALIDATE_REGION != 0 {
            self.why(
                any::INVALIDATE.id,
                "WRITE_INVALIDATE_REGION: nothing is copied at map",
            );
            self.set(Direction::D2H, Path::None, 0);
        } else if flags & CL_MAP_READ != 0 || rule.value {
            self.cite(&rule, Why::MapCopies { flags });
            self.set(Direction::D2H, Path::Pinned, bytes);
        } else {
            self.cite(
                &rule,
                "map for WRITE copies nothing now; unmap copies the region back",
            );
            self.set(Direction::D2H, Path::None, 0);
        }
    }

    fn unmap(mut self, mem: usize, ptr: usize) {
        let placement = if mem == SVM_MAPPINGS {
            if self.rules.unified.value {
                Placement::Host
            } else {
                Placement::Device
            }
        } else {
            let Some(view) = self.mem.resolve(mem) else {
                return self.unknown(any::UNKNOWN_OBJECT.id, Why::UnknownObject { handle: mem });
            };
            let placement = self.placement(view);
            if placement == Placement::Host {
                self.host_resident("unmap copies nothing");
            }
            placement
        };
        let Some(mapping) = self.mem.mapping(mem, ptr) else {
            return self.unknown(any::UNKNOWN_MAPPING.id, Why::NoMapping { ptr });
        };
        let RangeKind::Mapping { map_flags } = mapping.kind else {
            unreachable!()
        };
        let len = mapping.len;
        if placement == Placement::Host {
            self.set(Direction::H2D, Path::ZeroCopy, 0);
        } else if map_flags == 0 || map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0
        {
            let rule = self.rules.map_write_copies;
            self.cite(&rule, Why::UnmapCopies { flags: map_flags });
            self.set(Direction::H2D, Path::Pinned, len);
        } else {
            self.why(
                any::READ_ONLY_UNMAP.id,
                "the mapping was READ-only: nothing to write back",
            );
            self.set(Direction::H2D, Path::None, 0);
        }
    }

    fn migrate(mut self, mems: &[usize], flags: u64) {
        let mut parts: Vec<(Direction, Path, u64)> = Vec::new();
        for &mem in mems {
            let Some(view) = self.mem.resolve(mem) else {
                self.why(any::UNKNOWN_OBJECT.id, Why::UnknownObject { handle: mem });
                parts.push((Direction::H2D, Path::Unknown, 0));
                continue;
            };
            let before = self.out.reasons.len();
            let part = self.migrate_one(view, flags);
            if mems.len() > 1 {
                let about = Some(view.obj.obj_ref());
                for r in &mut self.out.reasons[before..] {
                    r.about = about;
                }
            }
            parts.push(part);
        }
        let bytes = parts.iter().fold(0u64, |n, p| n.saturating_add(p.2));
        let dominant = parts
            .iter()
            .copied()
            .max_by_key(|p| (p.2, p.1 != Path::Unknown));
        let (direction, path) = match dominant {
            Some((d, p, _)) if parts.iter().all(|q| q.1 == p) || bytes > 0 => (d, p),
            Some((d, ..)) => (d, parts[0].1),
            None => (Direction::H2D, Path::None),
        };
        self.set(direction, path, bytes);
        if self.out.reasons.is_empty() {
            self.why(any::ALREADY_THERE.id, Why::NoObjects { flags });
        }
    }

    fn migrate_one(&mut self, view: View, flags: u64) -> (Direction, Path, u64) {
        let rule = self.rules.migrate;
        let to_host = flags & CL_MIGRATE_MEM_OBJECT_HOST != 0;
        let undefined = flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED != 0;
        let direction = if to_host {
            Direction::D2H
        } else {
            Direction::H2D
        };
        let size = view.obj.size;
        let placement = self.placement(view);
        let none = (direction, Path::None, 0);
        if undefined {
            if rule.value.content_undefined_honoured {
                self.why(
                    any::CONTENT_UNDEFINED.id,
                    "CONTENT_UNDEFINED: the contents are not copied",
                );
                return none;
            }
            self.cite(
                &rule,
                "CONTENT_UNDEFINED is ignored: the data is still synced",
            );
        }
        let residence = view.root.residence;
        if placement == Placement::Host
            && !matches!(residence, Place::Device(d) if d != self.device)
        {
            self.host_resident("nothing to move");
            return none;
        }
        if residence == Place::Nowhere {
            self.why(
                any::NO_CONTENTS.id,
                "the buffer has held no data yet: nothing to move",
            );
            return none;
        }
        if to_host {
            if residence == Place::Host {
                self.why(
                    any::ALREADY_THERE.id,
                    "the contents are already on the host",
                );
                return none;
            }
            if rule.value.is_marker(flags) {
                self.cite(&rule, "migration to the host is only a marker here");
                return none;
            }
            self.cite(&rule, "the contents are copied to the host backing store");
            return (Direction::D2H, rule.value.store, size);
        }
        if view.root.valid_on(self.device) {
            self.why(
                any::ALREADY_THERE.id,
                "the contents are already on this device",
            );
            return none;
        }
        if rule.value.is_marker(flags) {
            self.cite(&rule, Why::Marker { flags });
            return none;
        }
        match residence {
            Place::Device(_) => {
                let rule = self.rules.between_devices;
                self.cite(&rule, "the contents are on another device");
                match rule.value {
                    CrossDevice::ViaHost => (Direction::D2D, Path::ViaHost, size),
                    CrossDevice::Peer => (Direction::D2D, Path::Peer, size),
                    CrossDevice::Shared => (Direction::D2D, Path::None, 0),
                }
            }
            _ => {
                self.cite(&rule, "the contents are copied from the host backing store");
                (Direction::H2D, rule.value.store, size)
            }
        }
    }

    /// The side of an SVM/USM pointer: device memory (where the rules put the allocation's
    /// storage, as the memory totals count it) or host memory. Under unified memory an
    /// allocation the program made for the device counts as its side (the copy is a host memcpy
    /// either way). A coarse-grain SVM pointer cites the rule that placed it.
    fn ptr_side(&mut self, ptr: usize) -> bool {
        let kind = self.mem.host_range(ptr, 1).map(|h| h.range.kind);
        let svm = self.rules.svm;
        match kind {
            Some(k @ RangeKind::Svm { flags })
                if flags & opencl_sys::CL_MEM_SVM_FINE_GRAIN_BUFFER == 0 =>
            {
                self.cite(&svm, "a coarse-grain SVM allocation");
                self.rules.unified.value || self.rules.allocation(k) == Placement::Device
            }
            Some(RangeKind::Svm { .. }) => self.rules.unified.value,
            Some(RangeKind::UsmDevice | RangeKind::UsmShared) => true,
            _ => false,
        }
    }

    fn ptr_copy(mut self, dst: usize, src: usize, bytes: u64) {
        let (src_dev, dst_dev) = (self.ptr_side(src), self.ptr_side(dst));
        let (direction, host_ptr) = match (src_dev, dst_dev) {
            (false, true) => (Direction::H2D, Some(src)),
            (true, false) => (Direction::D2H, Some(dst)),
            (true, true) => (Direction::D2D, None),
            (false, false) => (Direction::H2H, None),
        };
        let unified = self.rules.unified;
        let path = match (direction, host_ptr) {
            (_, _) if unified.value => {
                self.cite(&unified, "device memory is host memory: one host memcpy");
                Path::ZeroCopy
            }
            (Direction::D2D, _) => {
                self.why(any::DEVICE_COPY.id, "both pointers are device allocations");
                Path::Device
            }
            (_, Some(ptr)) => {
                let host = self.host_memory(ptr, bytes);
                let path = self.pageable_or_pinned(&host, bytes);
                self.out.path = path;
                self.notes(&host, bytes);
                self.out.host = Some(host);
                path
            }
            _ => {
                self.why(any::HOST_COPY.id, "both pointers are host memory");
                Path::ZeroCopy
            }
        };
        self.set(direction, path, bytes);
    }

    fn ptr_map(mut self, ptr: usize, flags: u64, bytes: u64) {
        let fine = matches!(
            self.mem.host_range(ptr, 1).map(|h| h.range.kind),
            Some(RangeKind::Svm { flags }) if flags & opencl_sys::CL_MEM_SVM_FINE_GRAIN_BUFFER != 0
        );
        if fine {
            self.why(
                any::SVM.id,
                "fine-grain SVM is shared with the host: map copies nothing",
            );
        } else if self.rules.unified.value {
            self.host_resident("SVM map copies nothing");
        }
        if fine || self.rules.unified.value {
            self.set(Direction::D2H, Path::ZeroCopy, 0);
            return;
        }
        self.map_device_memory(flags, bytes)
    }

    fn ptr_migrate(mut self, ptrs: &[(usize, u64)], flags: u64) {
        let bytes = ptrs.iter().fold(0u64, |n, p| n.saturating_add(p.1));
        let direction = if flags & CL_MIGRATE_MEM_OBJECT_HOST != 0 {
            Direction::D2H
        } else {
            Direction::H2D
        };
        let unified = self.rules.unified;
        if flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED != 0 {
            self.why(
                any::CONTENT_UNDEFINED.id,
                "CONTENT_UNDEFINED: the contents are not copied",
            );
            self.set(direction, Path::None, 0);
        } else if unified.value {
            self.cite(&unified, "device memory is host memory: nothing to migrate");
            self.set(direction, Path::None, 0);
        } else {
            self.why(any::SVM.id, "SVM/USM pages migrate by DMA");
            self.set(direction, Path::Pinned, bytes);
        }
    }

    fn kernel(mut self, mems: &[usize], reads: u64) {
        // Bytes pulled from other devices, and from the host.
        let (mut moved, mut pulled) = (0u64, 0u64);
        let rule = self.rules.between_devices;
        for (i, &mem) in mems.iter().enumerate() {
            let Some(view) = self.mem.resolve(mem) else {
                continue;
            };
            let root = view.root;
            let only_read = only_reads(reads, i);
            if root.valid_on(self.device) {
                if root.residence != Place::Device(self.device) {
                    self.cite(
                        &self.rules.read_copy,
                        "a kernel here only read it before: its copy is still valid",
                    );
                }
                continue;
            }
            if only_read && matches!(root.residence, Place::Device(_) | Place::Host) {
                let keeps = self.rules.read_copy;
                match keeps.value {
                    true => self.cite(
                        &keeps,
                        "this kernel only reads it: the copy it leaves stays",
                    ),
                    false => self.cite(&keeps, "the copy it leaves is not kept"),
                }
            }
            match root.residence {
                Place::Device(other) if other != self.device => {
                    if root.since == Since::IdleMigration(other) {
                        self.why(
                            any::IDLE_MIGRATION.id,
                            "its last migration, on the device that already held it, moved \
                             nothing: this kernel pulls it",
                        );
                    }
                    self.why(
                        any::FIRST_USE.id,
                        Why::LastElsewhere {
                            obj: root.obj_ref(),
                        },
                    );
                    moved = root.size.saturating_add(moved);
                }
                Place::Host
                    if !self.rules.unified.value && self.placement(view) == Placement::Device =>
                {
                    if let Since::ToHost(other) = root.since
                        && other != self.device
                    {
                        self.why(
                            any::HOST_HOP.id,
                            "a HOST migration took it off another device: it comes back \
                             through the host",
                        );
                    }
                    self.why(
                        any::ONLY_ON_HOST.id,
                        Why::OnlyOnHost {
                            obj: root.obj_ref(),
                        },
                    );
                    pulled = root.size.saturating_add(pulled);
                }
                _ => {}
            }
        }
        let path = match (moved, rule.value) {
            (0, _) | (_, CrossDevice::Shared) => Path::None,
            (_, CrossDevice::ViaHost) => Path::ViaHost,
            (_, CrossDevice::Peer) => Path::Peer,
        };
        if path != Path::None {
            self.cite(&rule, "the kernel's enqueue moves it");
            return self.set(Direction::D2D, path, moved.saturating_add(pulled));
        }
        if pulled > 0 {
            let rule = self.rules.migrate;
            self.cite(&rule, "the contents are copied from the host backing store");
            return self.set(Direction::H2D, rule.value.store, pulled);
        }
        self.set(Direction::D2D, Path::None, 0);
    }
}

/// Classifies one command the driver accepted.
pub fn classify(
    req: &Request,
    mem: &Registry,
    dev: &DeviceProfile,
    rules: &RuleSet,
) -> Classification {
    let mut slot = None;
    classify_in(req, mem, dev, rules, &mut slot);
    slot.unwrap_or_else(|| blank(rules, req.blocking))
}

/// [`classify`], built where it is kept: a classification is some 600 bytes, and moving it
/// out of the classifier and into the call's record cost two copies per enqueue.
pub fn classify_in<'s>(
    req: &Request,
    mem: &Registry,
    dev: &DeviceProfile,
    rules: &RuleSet,
    slot: &'s mut Option<Classification>,
) -> &'s Classification {
    let out = slot.insert(blank(rules, req.blocking));
    let ctx = Ctx {
        mem,
        dev,
        rules,
        device: req.device,
        out: &mut *out,
    };
    match &req.op {
        &Op::Host {
            mem,
            to_device,
            ptr,
            bytes,
            span,
            rect,
        } => ctx.host(mem, to_device, ptr, bytes, span, rect),
        &Op::Copy { src, dst, bytes } => ctx.copy(src, dst, bytes),
        &Op::Fill { mem, bytes } => ctx.fill(Some(mem), bytes),
        &Op::PtrFill { bytes, .. } => ctx.fill(None, bytes),
        &Op::Map {
            mem, flags, bytes, ..
        } => ctx.map(mem, flags, bytes),
        &Op::Unmap { mem, ptr } => ctx.unmap(mem, ptr),
        Op::Migrate { mems, flags } => ctx.migrate(mems, *flags),
        &Op::PtrCopy { dst, src, bytes } => ctx.ptr_copy(dst, src, bytes),
        &Op::PtrMap { ptr, flags, bytes } => ctx.ptr_map(ptr, flags, bytes),
        &Op::PtrUnmap { ptr } => ctx.unmap(SVM_MAPPINGS, ptr),
        Op::PtrMigrate { ptrs, flags } => ctx.ptr_migrate(ptrs, *flags),
        Op::Kernel { mems, reads } => ctx.kernel(mems, *reads),
    }
    out
}

/// A staged transfer whose host side the process locked with `mlock` (the layer looks that up,
/// `layer/locked.rs`): the reason says the lock does not make it pinned.
pub fn locked(c: &mut Classification) {
    c.reasons.push(Reason {
        rule: any::MLOCKED.id,
        about: None,
        why: Why::Text(
            "locked with mlock, but the driver is not told of it: staged like any pageable memory",
        ),
    });
}

/// A command the driver refused (`code`, when it said which error): nothing was enqueued.
pub fn refused(code: Option<i32>, blocking: bool, rules: &RuleSet) -> Classification {
    let mut out = blank(rules, blocking);
    out.path = Path::Unknown;
    out.error = code;
    let why = Why::DriverError { code };
    out.reasons.push(Reason {
        rule: any::DRIVER_ERROR.id,
        about: None,
        why,
    });
    out
}

fn blank(rules: &RuleSet, blocking: bool) -> Classification {
    Classification {
        direction: Direction::H2D,
        path: Path::None,
        bytes: 0,
        host_span: None,
        host: None,
        alignment: None,
        blocking,
        rules: rules.name,
        reasons: SmallVec::new(),
        error: None,
    }
}

#[cfg(test)]
mod tests;
