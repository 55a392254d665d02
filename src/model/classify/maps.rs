//! Map and unmap of a buffer: whether the map copies, and whether the unmap copies back.

use super::super::classification::*;
use super::super::kinds::RangeKind;
use super::super::rules::{Placement, common as any};
use super::ctx::Ctx;
use super::op::SVM_MAPPINGS;
use opencl_sys::{CL_MAP_READ, CL_MAP_WRITE, CL_MAP_WRITE_INVALIDATE_REGION};

impl Ctx<'_> {
    pub(super) fn map(mut self, mem: usize, flags: u64, bytes: u64) {
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

    pub(super) fn map_device_memory(mut self, flags: u64, bytes: u64) {
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

    pub(super) fn unmap(mut self, mem: usize, ptr: usize) {
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
}
