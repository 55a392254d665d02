use super::*;
use crate::model::classify::SVM_MAPPINGS;
use crate::model::kinds::MemKind;
use opencl_sys::{
    CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_COPY_HOST_PTR, CL_MEM_USE_HOST_PTR,
};

const MIB: u64 = 1 << 20;

fn buffer(flags: u64, size: u64, host_ptr: usize) -> NewObject {
    NewObject {
        kind: MemKind::Buffer,
        context: 0xc0,
        flags,
        size,
        host_ptr,
        element_size: 1,
        parent: None,
        sole_device: Some(0xd1),
    }
}

#[test]
fn objects_sub_buffers_and_destruction() {
    let mut r = Registry::new();
    let a = r.add_object(0x10, buffer(0, MIB, 0)).unwrap();
    let sub = NewObject {
        parent: Some((0x10, 4096)),
        size: 4096,
        ..buffer(0, 0, 0)
    };
    let b = r.add_object(0x20, sub).unwrap();
    assert_eq!((a, b), (1, 2));
    let view = r.resolve(0x20).unwrap();
    assert_eq!((view.obj.id, view.root.id, view.offset), (2, 1, 4096));
    assert_eq!(view.obj.obj_ref().to_string(), "sub-buffer #2 (0)");
    // Residence set through a sub-buffer lands on the parent.
    r.set_residence(0x20, Place::Device(0xd1), Some(0xd1));
    assert_eq!(r.object(0x10).unwrap().residence, Place::Device(0xd1));
    assert_eq!(
        r.device_bytes(0xd1),
        Usage {
            now: MIB,
            peak: MIB
        }
    );
    // A stale id does not remove the object now living at that handle.
    r.remove_object(0x10, 99);
    assert!(r.object(0x10).is_some());
    r.remove_object(0x10, a);
    assert!(r.object(0x10).is_none());
    assert!(
        r.resolve(0x20).is_none(),
        "a sub-buffer without its parent does not resolve"
    );
    assert_eq!(r.device_bytes(0xd1), Usage { now: 0, peak: MIB });
}

#[test]
fn initial_residence_follows_host_data() {
    let mut r = Registry::new();
    r.add_object(1, buffer(0, 64, 0));
    r.add_object(2, buffer(CL_MEM_COPY_HOST_PTR, 64, 0x1000));
    r.add_object(
        3,
        NewObject {
            sole_device: None,
            ..buffer(CL_MEM_COPY_HOST_PTR, 64, 0x1000)
        },
    );
    let place = |h| r.object(h).unwrap().residence;
    assert_eq!(place(1), Place::Nowhere);
    assert_eq!(place(2), Place::Device(0xd1));
    assert_eq!(place(3), Place::Host);
}

#[test]
fn use_host_ptr_range_nested_mapping_and_edges() {
    let mut r = Registry::new();
    let base = 0x10_0000;
    r.add_object(0x10, buffer(CL_MEM_USE_HOST_PTR, 2 * MIB, base));
    let hit = r.host_range(base + 64, 128).unwrap();
    assert_eq!(
        (hit.range.kind, hit.offset, hit.whole),
        (RangeKind::UseHostPtr, 64, true)
    );
    assert_eq!(
        hit.range.range_ref().to_string(),
        "the host range of buffer #1 (USE_HOST_PTR)"
    );
    // Just past the end: not pinned. Running past the end: not whole.
    assert!(r.host_range(base + 2 * MIB as usize, 1).is_none());
    assert!(!r.host_range(base + MIB as usize, 2 * MIB).unwrap().whole);
    // A mapping inside it is the innermost range while it lives.
    r.add_mapping(0x10, base + 4096, 4096, CL_MAP_READ);
    let hit = r.host_range(base + 4096 + 8, 8).unwrap();
    assert_eq!(
        hit.range.kind,
        RangeKind::Mapping {
            map_flags: CL_MAP_READ
        }
    );
    assert_eq!(hit.offset, 8);
    assert!(
        hit.range
            .range_ref()
            .to_string()
            .starts_with("the live READ mapping of buffer #1")
    );
    // Mapping a region of a USE_HOST_PTR buffer adds no pinned bytes (they are counted once).
    assert_eq!(r.pinned_bytes().now, 2 * MIB);
    let ended = r.end_mapping(0x10, base + 4096).unwrap();
    assert_eq!(ended.len, 4096);
    assert!(r.end_mapping(0x10, base + 4096).is_none());
    assert_eq!(
        r.host_range(base + 4096 + 8, 8).unwrap().range.kind,
        RangeKind::UseHostPtr
    );
    // Destruction removes the registered range.
    r.remove_object(0x10, 1);
    assert!(r.host_range(base + 64, 1).is_none());
    assert_eq!(r.ranges(), 0);
    assert_eq!(
        r.pinned_bytes(),
        Usage {
            now: 0,
            peak: 2 * MIB
        }
    );
}

#[test]
fn mappings_stack_and_overlap() {
    let mut r = Registry::new();
    r.add_object(0x10, buffer(CL_MEM_ALLOC_HOST_PTR, MIB, 0));
    r.add_mapping(0x10, 0x5000, 100, CL_MAP_READ);
    r.add_mapping(0x10, 0x5000, 100, 0);
    assert_eq!(
        r.mapping(0x10, 0x5000).unwrap().kind,
        RangeKind::Mapping { map_flags: 0 }
    );
    r.end_mapping(0x10, 0x5000);
    assert_eq!(
        r.mapping(0x10, 0x5000).unwrap().kind,
        RangeKind::Mapping {
            map_flags: CL_MAP_READ
        }
    );
    assert!(r.host_range(0x5000 + 99, 1).is_some());
    r.end_mapping(0x10, 0x5000);
    assert!(r.mapping(0x10, 0x5000).is_none());
    assert!(r.host_range(0x5000, 1).is_none());
    // The region keeps one ended mapping (the first ended went when the second did), and the
    // next map of it revives that one.
    assert_eq!(r.ranges.len(), 1);
    r.add_mapping(0x10, 0x5000, 100, CL_MAP_WRITE);
    assert_eq!((r.ranges.len(), r.ranges()), (1, 1));
    assert!(r.host_range(0x5000 + 99, 1).is_some());
    r.end_mapping(0x10, 0x5000);
    // Partly overlapping ranges: each address answers with the innermost live one.
    r.add_allocation(0x1000, 0x1000, RangeKind::Svm { flags: 0 }, None);
    r.add_allocation(0x1800, 0x1000, RangeKind::UsmHost, None);
    assert_eq!(
        r.host_range(0x1100, 1).unwrap().range.kind,
        RangeKind::Svm { flags: 0 }
    );
    assert_eq!(
        r.host_range(0x2400, 1).unwrap().range.kind,
        RangeKind::UsmHost
    );
    assert!(r.host_range(0x1900, 1).is_some());
    assert!(r.remove_allocation(0x1000));
    assert!(!r.remove_allocation(0x1000), "double free is noticed");
    assert_eq!(
        r.host_range(0x1900, 1).unwrap().range.kind,
        RangeKind::UsmHost
    );
    assert!(r.host_range(0x1100, 1).is_none());
}

#[test]
fn migration_moves_device_storage() {
    let mut r = Registry::new();
    r.add_object(1, buffer(0, 100, 0));
    r.set_residence(1, Place::Device(0xa), Some(0xa));
    r.set_residence(1, Place::Device(0xb), Some(0xb));
    assert_eq!(r.device_bytes(0xa), Usage { now: 0, peak: 100 });
    assert_eq!(
        r.device_bytes(0xb),
        Usage {
            now: 100,
            peak: 100
        }
    );
    // Host residence without a device keeps the storage where it was.
    r.set_residence(1, Place::Host, None);
    assert_eq!(r.device_bytes(0xb).now, 100);
    assert_eq!(r.object(1).unwrap().residence, Place::Host);
}

#[test]
fn bounded_and_safe_with_wild_values() {
    let mut r = Registry::with_limit(3);
    for h in 1..=5 {
        r.add_object(h, buffer(0, 1, 0));
    }
    assert_eq!(r.objects(), 3);
    assert_eq!(r.untracked, 2);
    // Ranges that would wrap the address space, or are empty, are refused.
    assert!(
        r.add_range(usize::MAX - 10, 100, RangeKind::UsmHost, None)
            .is_none()
    );
    assert!(r.add_range(0x1000, 0, RangeKind::UsmHost, None).is_none());
    assert!(r.host_range(usize::MAX, u64::MAX).is_none());
    assert!(r.host_range(0, 0).is_none());
    r.set_residence(0xdead, Place::Host, Some(1));
    r.remove_object(0xdead, 1);
    assert!(r.end_mapping(0xdead, 0).is_none());
    // Mappings past the limit are not tracked, and leave no entry behind.
    for i in 0..10 {
        r.add_mapping(SVM_MAPPINGS, 0x10_0000 + i * 0x1000, 64, 0);
    }
    assert_eq!((r.ranges(), r.mappings.len()), (3, 3));
}

#[test]
fn handle_reuse_replaces_the_stale_object() {
    let mut r = Registry::new();
    r.add_object(0x10, buffer(CL_MEM_USE_HOST_PTR, 64, 0x9000));
    let id = r.add_object(0x10, buffer(0, 64, 0)).unwrap();
    assert_eq!(id, 2);
    assert!(
        r.host_range(0x9000, 1).is_none(),
        "the old object's range went with it"
    );
}

#[test]
fn an_ended_mapping_is_revived_by_the_next_map_of_its_region() {
    let mut r = Registry::new();
    r.add_object(0x10, buffer(CL_MEM_ALLOC_HOST_PTR, MIB, 0));
    r.add_object(0x20, buffer(CL_MEM_USE_HOST_PTR, MIB, 0x8000));
    for round in 0..3 {
        r.add_mapping(0x10, 0x5000, 100, CL_MAP_WRITE);
        assert_eq!(r.pinned_bytes().now, MIB + 100, "round {round}");
        assert_eq!(
            r.host_range(0x5000 + 99, 1).unwrap().range.kind,
            RangeKind::Mapping {
                map_flags: CL_MAP_WRITE
            }
        );
        assert_eq!(r.end_mapping(0x10, 0x5000).unwrap().len, 100);
        // Ended: it answers no lookup and counts nowhere, though it is kept.
        assert!(r.host_range(0x5000, 1).is_none());
        assert!(r.mapping(0x10, 0x5000).is_none());
        assert_eq!((r.ranges(), r.pinned_bytes().now), (1, MIB));
    }
    // Mapped again with another length: a new range, the dormant one gone.
    r.add_mapping(0x10, 0x5000, 50, CL_MAP_READ);
    assert!(r.host_range(0x5000 + 60, 1).is_none());
    assert!(r.host_range(0x5000 + 49, 1).is_some());
    r.end_mapping(0x10, 0x5000);
    // A revived mapping is newer than a range of its length made while it slept.
    r.add_mapping(0x20, 0x8000, MIB, CL_MAP_READ);
    r.end_mapping(0x20, 0x8000);
    assert_eq!(
        r.host_range(0x8000, 1).unwrap().range.kind,
        RangeKind::UseHostPtr
    );
    r.add_mapping(0x20, 0x8000, MIB, CL_MAP_READ);
    assert!(matches!(
        r.host_range(0x8000, 1).unwrap().range.kind,
        RangeKind::Mapping { .. }
    ));
    // Releasing the object takes its dormant range too.
    r.remove_object(0x10, 1);
    assert!(r.host_range(0x5000, 1).is_none());
    r.add_mapping(0x10, 0x5000, 50, CL_MAP_READ);
    assert!(r.host_range(0x5000, 1).is_none(), "0x10 is no object now");
    // 0x20's USE_HOST_PTR range and live mapping, and the mapping of a handle no object has.
    assert_eq!(r.ranges(), 3);
}

#[test]
fn lookups_outside_every_range_and_between_ranges_find_nothing() {
    let mut r = Registry::new();
    r.add_allocation(0x1000, 0x100, RangeKind::UsmHost, None);
    r.add_allocation(0x9000, 0x100, RangeKind::Svm { flags: 0 }, None);
    // Below, between (inside the bounds, in no segment), above.
    for ptr in [0xfff, 0x1100, 0x5000, 0x9100, usize::MAX] {
        assert!(r.host_range(ptr, 1).is_none(), "{ptr:#x}");
    }
    assert_eq!(
        r.host_range(0x1000, 1).unwrap().range.kind,
        RangeKind::UsmHost
    );
    assert!(r.host_range(0x90ff, 1).is_some());
    // All gone, then one range elsewhere: only it answers.
    assert!(r.remove_allocation(0x1000) && r.remove_allocation(0x9000));
    assert!(r.host_range(0x1000, 1).is_none());
    r.add_allocation(0x20000, 0x10, RangeKind::UsmShared, None);
    assert!(r.host_range(0x9000, 1).is_none());
    assert!(r.host_range(0x2000f, 1).is_some());
}

/// The last segment looked up is remembered; any change of the segments forgets it, so a lookup
/// never answers from a range that was removed, ended or since nested inside.
#[test]
fn the_remembered_segment_never_outlives_a_change() {
    let mut r = Registry::new();
    r.add_allocation(0x10_000, 0x10_000, RangeKind::UsmHost, None);
    let kind = |r: &Registry| r.host_range(0x10_800, 8).map(|h| h.range.kind);
    assert_eq!(kind(&r), Some(RangeKind::UsmHost));
    assert_eq!(
        kind(&r),
        Some(RangeKind::UsmHost),
        "remembered, the same answer"
    );
    // A range nested inside: the innermost answers.
    r.add_allocation(0x10_400, 0x1000, RangeKind::Svm { flags: 0 }, None);
    assert_eq!(kind(&r), Some(RangeKind::Svm { flags: 0 }));
    assert!(r.remove_allocation(0x10_400));
    assert_eq!(kind(&r), Some(RangeKind::UsmHost));
    assert!(r.remove_allocation(0x10_000));
    assert_eq!(kind(&r), None);
    // An address in another segment is not answered from the remembered one.
    r.add_allocation(0x10_000, 0x1000, RangeKind::UsmHost, None);
    r.add_allocation(0x20_000, 0x1000, RangeKind::UsmShared, None);
    assert_eq!(
        r.host_range(0x10_010, 1).map(|h| h.range.kind),
        Some(RangeKind::UsmHost)
    );
    assert_eq!(
        r.host_range(0x20_010, 1).map(|h| h.range.kind),
        Some(RangeKind::UsmShared)
    );
    assert!(r.host_range(0x18_000, 1).is_none(), "between the two");
}

#[test]
fn allocations_with_device_storage_count_as_device_memory_until_freed() {
    // (kind, the device the rules put it on, size): the device's total follows allocation and
    // free, its peak stays; a host-only allocation (or one a multi-device context leaves
    // unplaced) counts nothing there, and pinned memory keeps counting SVM and USM host.
    let mut r = Registry::new();
    const DEV: usize = 0xd1;
    r.add_allocation(0x1_0000, 0x1000, RangeKind::Svm { flags: 0 }, Some(DEV));
    r.add_allocation(0x2_0000, 0x3000, RangeKind::UsmDevice, Some(DEV));
    r.add_allocation(0x3_0000, 0x5000, RangeKind::UsmHost, None);
    assert_eq!(
        (r.device_bytes(DEV).now, r.device_bytes(DEV).peak),
        (0x4000, 0x4000)
    );
    assert_eq!(
        r.pinned_bytes().now,
        0x1000 + 0x5000,
        "USM device memory is not host memory"
    );
    assert!(r.remove_allocation(0x2_0000));
    assert_eq!(
        (r.device_bytes(DEV).now, r.device_bytes(DEV).peak),
        (0x1000, 0x4000)
    );
    // An allocation at a freed one's address replaces it: counted once.
    r.add_allocation(0x1_0000, 0x2000, RangeKind::Svm { flags: 0 }, Some(DEV));
    assert_eq!(r.device_bytes(DEV).now, 0x2000);
    assert!(r.remove_allocation(0x1_0000));
    assert_eq!(r.device_bytes(DEV).now, 0);
    assert_eq!(r.alloc_host_ptr_device_bytes(DEV).peak, 0);
    // The part the host uses too (issue #57): the SVM allocations, not the USM device one; at
    // most the 0x1000 and then the 0x2000 SVM allocation, never both.
    assert_eq!(
        (r.svm_device_bytes(DEV).now, r.svm_device_bytes(DEV).peak),
        (0, 0x2000)
    );
}
