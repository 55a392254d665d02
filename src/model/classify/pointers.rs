//! SVM and USM pointers: copies, maps and migrations of memory named by pointer.

use super::super::classification::*;
use super::super::kinds::RangeKind;
use super::super::rules::{Placement, common as any};
use super::ctx::Ctx;
use opencl_sys::{CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, CL_MIGRATE_MEM_OBJECT_HOST};

impl Ctx<'_> {
    /// The side of an SVM/USM pointer: device memory (where the rules put the allocation's
    /// storage, as the memory totals count it) or host memory. Under unified memory an
    /// allocation the program made for the device counts as its side (the copy is a host memcpy
    /// either way). A coarse-grain SVM pointer cites the rule that placed it.
    pub(super) fn ptr_side(&mut self, ptr: usize) -> bool {
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

    pub(super) fn ptr_copy(mut self, dst: usize, src: usize, bytes: u64) {
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
                Path::HostCopy
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
                Path::HostCopy
            }
        };
        self.set(direction, path, bytes);
    }

    pub(super) fn ptr_map(mut self, ptr: usize, flags: u64, bytes: u64) {
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

    pub(super) fn ptr_migrate(mut self, ptrs: &[(usize, u64)], flags: u64) {
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
}
