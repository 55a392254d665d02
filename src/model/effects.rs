//! What a command the driver accepted changes in the registry: where contents now are, which
//! device's memory an object occupies (allocated at first use, following migrations), and which
//! mappings begin or end. Kept apart from the classifier, which only reads.

use super::classify::{Op, Request, SVM_MAPPINGS};
use super::device::DeviceProfile;
use super::kinds::RangeKind;
use super::memory::{MemObject, Place, Registry, Since};
use super::rules::{Placement, RuleSet};
use opencl_sys::{CL_MAP_WRITE, CL_MAP_WRITE_INVALIDATE_REGION, CL_MIGRATE_MEM_OBJECT_HOST};

pub fn apply(req: &Request, mem: &mut Registry, rules: &RuleSet, dev: &DeviceProfile) {
    let device = req.device;
    // Whether the storage of `root` is the device's own.
    let on_device = |r: &MemObject| {
        rules.unified.value
            || rules
                .placement(r.flags, r.host_ptr, r.size, dev.base_addr_align)
                .0
                == Placement::Device
    };
    // The contents of `handle` are now on the queue's device.
    let arrive = |mem: &mut Registry, handle: usize| {
        let Some(view) = mem.resolve(handle) else {
            return;
        };
        let on = on_device(view.root);
        mem.set_residence(handle, Place::Device(device), on.then_some(device));
    };
    match &req.op {
        &Op::Host {
            mem: h,
            to_device: true,
            bytes,
            ..
        }
        | &Op::Fill { mem: h, bytes } => {
            // Looked up once (every write comes here): what the command did with the contents,
            // for the hand-off reasons (any other use clears it), and where they now are.
            let Some(view) = mem.resolve(h) else {
                return;
            };
            let written = if view.obj.parent.is_none() && bytes >= view.root.size {
                Since::Written(device)
            } else {
                Since::Nothing
            };
            let on = on_device(view.root);
            mem.set_residence(h, Place::Device(device), on.then_some(device));
            mem.set_since(h, written);
        }
        &Op::Copy { src, dst, .. } => {
            arrive(mem, dst);
            mem.set_since(src, Since::Nothing);
            mem.set_since(dst, Since::Nothing);
        }
        &Op::Map {
            mem: h,
            flags,
            bytes,
            ptr,
        } => {
            mem.add_mapping(h, ptr, bytes, flags);
            mem.set_since(h, Since::Nothing);
        }
        &Op::Unmap { mem: h, ptr } => {
            let ended = mem.end_mapping(h, ptr);
            if ended.is_some_and(|r| writes_back(r.kind)) {
                arrive(mem, h);
            }
            mem.set_since(h, Since::Nothing);
        }
        Op::Migrate { mems, flags } => {
            let marker = rules.migrate.value.is_marker(*flags);
            for &h in mems {
                let was = mem
                    .resolve(h)
                    .map(|v| (v.root.residence, v.root.valid_on(device)));
                let next = match was {
                    _ if marker => Since::Nothing,
                    Some((Place::Device(from), _)) if flags & CL_MIGRATE_MEM_OBJECT_HOST != 0 => {
                        Since::ToHost(from)
                    }
                    Some((_, true)) if flags & HOST_OR_UNDEFINED == 0 => {
                        Since::IdleMigration(device)
                    }
                    _ => Since::Nothing,
                };
                if flags & CL_MIGRATE_MEM_OBJECT_HOST != 0 {
                    if !marker {
                        mem.set_residence(h, Place::Host, None);
                    }
                } else if !marker {
                    arrive(mem, h);
                }
                mem.set_since(h, next);
            }
        }
        Op::Kernel { mems, reads } => {
            for (i, &h) in mems.iter().enumerate() {
                let only_read = super::classify::only_reads(*reads, i);
                let Some(root) = mem.resolve(h).map(|v| v.root) else {
                    continue;
                };
                // Read where it is valid: nothing changes. Read elsewhere, by a vendor that
                // keeps the copy: valid in both places. Otherwise it moves here.
                let kept = rules.read_copy.value
                    && matches!(root.residence, Place::Device(_) | Place::Host);
                match (only_read, root.valid_on(device)) {
                    (true, true) => {}
                    (true, false) if kept => mem.add_copy(h, device),
                    _ => arrive(mem, h),
                }
                mem.set_since(h, Since::Nothing);
            }
        }
        &Op::PtrMap { ptr, flags, bytes } => mem.add_mapping(SVM_MAPPINGS, ptr, bytes, flags),
        &Op::PtrUnmap { ptr } => {
            mem.end_mapping(SVM_MAPPINGS, ptr);
        }
        &Op::Host { mem: h, .. } => mem.set_since(h, Since::Nothing),
        Op::PtrCopy { .. } | Op::PtrFill { .. } | Op::PtrMigrate { .. } => {}
    }
}

const HOST_OR_UNDEFINED: u64 =
    CL_MIGRATE_MEM_OBJECT_HOST | opencl_sys::CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED;

fn writes_back(kind: RangeKind) -> bool {
    matches!(kind, RangeKind::Mapping { map_flags } if map_flags == 0
        || map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kinds::MemKind;
    use crate::model::memory::{NewObject, Since, Usage};
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
        run(
            &mut r,
            &AMD,
            9,
            Op::Kernel {
                mems: vec![1],
                reads: 0,
            },
        );
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

    #[test]
    fn what_a_command_did_with_the_contents_is_kept_for_the_hand_off_reasons() {
        let write = |bytes| Op::Host {
            mem: 1,
            to_device: true,
            ptr: 0,
            bytes,
            span: bytes,
            rect: false,
        };
        let migrate = |flags| Op::Migrate {
            mems: vec![1],
            flags,
        };
        let read = Op::Host {
            mem: 1,
            to_device: false,
            ptr: 0,
            bytes: 1,
            span: 1,
            rect: false,
        };
        // (rules, the commands as (device, op), what `since` is after the last)
        type Case<'a> = (&'a RuleSet, Vec<(usize, Op)>, Since);
        let cases: Vec<Case> = vec![
            (&NVIDIA, vec![(7, write(100))], Since::Written(7)),
            (&NVIDIA, vec![(7, write(10))], Since::Nothing),
            (
                &NVIDIA,
                vec![(7, Op::Fill { mem: 1, bytes: 100 })],
                Since::Written(7),
            ),
            (
                &NVIDIA,
                vec![(7, write(100)), (7, read.clone())],
                Since::Nothing,
            ),
            (
                &NVIDIA,
                vec![(7, write(100)), (8, write(100))],
                Since::Written(8),
            ),
            (
                &NVIDIA,
                vec![(7, write(100)), (8, migrate(CL_MIGRATE_MEM_OBJECT_HOST))],
                Since::ToHost(7),
            ),
            (
                &NVIDIA,
                vec![(7, write(100)), (7, migrate(0))],
                Since::IdleMigration(7),
            ),
            (
                &NVIDIA,
                vec![(7, write(100)), (8, migrate(0))],
                Since::Nothing,
            ),
            (
                &NVIDIA,
                vec![
                    (7, write(100)),
                    (7, migrate(CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED)),
                ],
                Since::Nothing,
            ),
            (
                &NVIDIA,
                vec![
                    (7, write(100)),
                    (7, migrate(0)),
                    (
                        8,
                        Op::Kernel {
                            mems: vec![1],
                            reads: 0,
                        },
                    ),
                ],
                Since::Nothing,
            ),
            // AMD: flags 0 is a marker, so it is no idle migration of its own.
            (&AMD, vec![(7, write(100)), (7, migrate(0))], Since::Nothing),
        ];
        for (i, (rules, ops, want)) in cases.into_iter().enumerate() {
            let mut r = world();
            for (device, op) in ops {
                run(&mut r, rules, device, op);
            }
            assert_eq!(r.object(1).unwrap().since, want, "case {i}");
        }
    }

    #[test]
    fn a_read_on_another_device_leaves_a_copy_where_the_vendor_keeps_one() {
        use crate::model::rules::INTEL_DGPU;
        let write = Op::Host {
            mem: 1,
            to_device: true,
            ptr: 0,
            bytes: 100,
            span: 100,
            rect: false,
        };
        let kernel = |reads| Op::Kernel {
            mems: vec![1],
            reads,
        };
        let migrate = Op::Migrate {
            mems: vec![1],
            flags: 0,
        };
        // (rules, the commands as (device, op), the devices it is then valid on, and not)
        type Case<'a> = (&'a RuleSet, Vec<(usize, Op)>, &'a [usize], &'a [usize]);
        let cases: Vec<Case> = vec![
            (
                &NVIDIA,
                vec![(7, write.clone()), (8, kernel(1))],
                &[7, 8],
                &[9],
            ),
            (&AMD, vec![(7, write.clone()), (8, kernel(1))], &[7, 8], &[]),
            (
                &INTEL_DGPU,
                vec![(7, write.clone()), (8, kernel(1))],
                &[8],
                &[7],
            ),
            (
                &NVIDIA,
                vec![(7, write.clone()), (8, kernel(0))],
                &[8],
                &[7],
            ),
            (
                &NVIDIA,
                vec![(7, write.clone()), (8, kernel(1)), (8, kernel(0))],
                &[8],
                &[7],
            ),
            (
                &NVIDIA,
                vec![(7, write.clone()), (8, kernel(1)), (9, kernel(1))],
                &[7, 8, 9],
                &[],
            ),
            (
                &NVIDIA,
                vec![(7, write.clone()), (8, kernel(1)), (9, migrate.clone())],
                &[9],
                &[7, 8],
            ),
            (
                &NVIDIA,
                vec![(7, write.clone()), (8, kernel(1)), (7, write)],
                &[7],
                &[8],
            ),
        ];
        for (i, (rules, ops, valid, not)) in cases.into_iter().enumerate() {
            let mut r = world();
            for (device, op) in ops {
                run(&mut r, rules, device, op);
            }
            let o = r.object(1).unwrap();
            for &d in valid {
                assert!(o.valid_on(d), "case {i}: not valid on {d}: {o:?}");
            }
            for &d in not {
                assert!(!o.valid_on(d), "case {i}: valid on {d}: {o:?}");
            }
        }
    }
}
