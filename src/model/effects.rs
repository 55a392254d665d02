//! What a command the driver accepted changes in the registry: where contents now are, which
//! device's memory an object occupies (allocated at first use, following migrations), and which
//! mappings begin or end. Kept apart from the classifier, which only reads.

use super::classify::{Op, Request, SVM_MAPPINGS};
use super::device::DeviceProfile;
use super::memory::{Place, RangeKind, Registry};
use super::rules::{Placement, RuleSet};
use opencl_sys::{CL_MAP_WRITE, CL_MAP_WRITE_INVALIDATE_REGION, CL_MIGRATE_MEM_OBJECT_HOST};

pub fn apply(req: &Request, mem: &mut Registry, rules: &RuleSet, dev: &DeviceProfile) {
    let device = req.device;
    // The contents of `handle` are now on the queue's device.
    let arrive = |mem: &mut Registry, handle: usize| {
        let Some(view) = mem.resolve(handle) else {
            return;
        };
        let r = view.root;
        let on_device = rules.unified.value
            || rules
                .placement(r.flags, r.host_ptr, r.size, dev.base_addr_align)
                .0
                == Placement::Device;
        mem.set_residence(handle, Place::Device(device), on_device.then_some(device));
    };
    match &req.op {
        &Op::Host {
            mem: h,
            to_device: true,
            ..
        }
        | &Op::Fill { mem: h, .. } => arrive(mem, h),
        &Op::Copy { dst, .. } => arrive(mem, dst),
        &Op::Map {
            mem: h,
            flags,
            bytes,
            ptr,
        } => mem.add_mapping(h, ptr, bytes, flags),
        &Op::Unmap { mem: h, ptr } => {
            let ended = mem.end_mapping(h, ptr);
            if ended.is_some_and(|r| writes_back(r.kind)) {
                arrive(mem, h);
            }
        }
        Op::Migrate { mems, flags } => {
            for &h in mems {
                if flags & CL_MIGRATE_MEM_OBJECT_HOST != 0 {
                    if !rules.migrate.value.is_marker(*flags) {
                        mem.set_residence(h, Place::Host, None);
                    }
                } else if !rules.migrate.value.is_marker(*flags) {
                    arrive(mem, h);
                }
            }
        }
        Op::Kernel { mems } => mems.iter().for_each(|&h| arrive(mem, h)),
        &Op::PtrMap { ptr, flags, bytes } => mem.add_mapping(SVM_MAPPINGS, ptr, bytes, flags),
        &Op::PtrUnmap { ptr } => {
            mem.end_mapping(SVM_MAPPINGS, ptr);
        }
        Op::Host { .. } | Op::PtrCopy { .. } | Op::PtrFill { .. } | Op::PtrMigrate { .. } => {}
    }
}

fn writes_back(kind: RangeKind) -> bool {
    matches!(kind, RangeKind::Mapping { map_flags } if map_flags == 0
        || map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::memory::{MemKind, NewObject, Usage};
    use crate::model::rules::{AMD, CPU, NVIDIA};
    use opencl_sys::*;

    fn world() -> Registry {
        let mut r = Registry::new();
        let obj = |flags| NewObject {
            kind: MemKind::Buffer,
            context: 1,
            flags,
            size: 100,
            host_ptr: 0,
            element_size: 1,
            parent: None,
            sole_device: None,
        };
        r.add_object(1, obj(0));
        r.add_object(2, obj(CL_MEM_ALLOC_HOST_PTR));
        r
    }

    fn run(r: &mut Registry, rules: &RuleSet, device: usize, op: Op) {
        apply(
            &Request {
                op,
                device,
                blocking: false,
            },
            r,
            rules,
            &DeviceProfile::unknown(1),
        );
    }

    #[test]
    fn writes_place_contents_and_allocate_by_the_rules() {
        let write = |mem| Op::Host {
            mem,
            to_device: true,
            ptr: 0,
            bytes: 1,
            span: 1,
            rect: false,
        };
        let mut r = world();
        run(&mut r, &NVIDIA, 7, write(2));
        assert_eq!(r.object(2).unwrap().residence, Place::Device(7));
        assert_eq!(
            r.device_bytes(7).now,
            100,
            "NVIDIA: ALLOC_HOST_PTR takes device memory"
        );
        let mut r = world();
        run(&mut r, &AMD, 7, write(2));
        assert_eq!(
            r.device_bytes(7).now,
            0,
            "AMD: ALLOC_HOST_PTR is system memory"
        );
        run(&mut r, &AMD, 7, Op::Fill { mem: 1, bytes: 1 });
        assert_eq!(r.device_bytes(7).now, 100);
        // A read leaves everything as it was.
        let mut r = world();
        run(
            &mut r,
            &CPU,
            7,
            Op::Host {
                mem: 1,
                to_device: false,
                ptr: 0,
                bytes: 1,
                span: 1,
                rect: false,
            },
        );
        assert_eq!(r.object(1).unwrap().residence, Place::Nowhere);
    }

    #[test]
    fn map_unmap_and_migrate() {
        let mut r = world();
        run(
            &mut r,
            &NVIDIA,
            7,
            Op::Map {
                mem: 1,
                flags: CL_MAP_READ,
                bytes: 50,
                ptr: 0x1000,
            },
        );
        assert!(r.mapping(1, 0x1000).is_some());
        run(
            &mut r,
            &NVIDIA,
            7,
            Op::Unmap {
                mem: 1,
                ptr: 0x1000,
            },
        );
        assert!(r.mapping(1, 0x1000).is_none());
        assert_eq!(
            r.object(1).unwrap().residence,
            Place::Nowhere,
            "READ map writes nothing back"
        );
        run(
            &mut r,
            &NVIDIA,
            7,
            Op::Map {
                mem: 1,
                flags: CL_MAP_WRITE,
                bytes: 50,
                ptr: 0x1000,
            },
        );
        run(
            &mut r,
            &NVIDIA,
            7,
            Op::Unmap {
                mem: 1,
                ptr: 0x1000,
            },
        );
        assert_eq!(r.object(1).unwrap().residence, Place::Device(7));
        // NVIDIA migrates at once; the storage follows.
        run(
            &mut r,
            &NVIDIA,
            8,
            Op::Migrate {
                mems: vec![1],
                flags: 0,
            },
        );
        assert_eq!(r.object(1).unwrap().residence, Place::Device(8));
        assert_eq!(
            (r.device_bytes(7), r.device_bytes(8).now),
            (Usage { now: 0, peak: 100 }, 100)
        );
        run(
            &mut r,
            &NVIDIA,
            8,
            Op::Migrate {
                mems: vec![1],
                flags: CL_MIGRATE_MEM_OBJECT_HOST,
            },
        );
        assert_eq!(r.object(1).unwrap().residence, Place::Host);
        // AMD flags 0 is a marker: nothing changes until a kernel uses the buffer.
        run(
            &mut r,
            &AMD,
            9,
            Op::Migrate {
                mems: vec![1],
                flags: 0,
            },
        );
        assert_eq!(r.object(1).unwrap().residence, Place::Host);
        run(&mut r, &AMD, 9, Op::Kernel { mems: vec![1] });
        assert_eq!(r.object(1).unwrap().residence, Place::Device(9));
        // SVM mappings are recorded apart from buffers.
        run(
            &mut r,
            &NVIDIA,
            7,
            Op::PtrMap {
                ptr: 0x5000,
                flags: CL_MAP_WRITE,
                bytes: 10,
            },
        );
        assert!(r.mapping(SVM_MAPPINGS, 0x5000).is_some());
        run(&mut r, &NVIDIA, 7, Op::PtrUnmap { ptr: 0x5000 });
        assert!(r.mapping(SVM_MAPPINGS, 0x5000).is_none());
    }
}
