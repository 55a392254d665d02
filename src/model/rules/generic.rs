//! Any other device: the OpenCL specification's baseline, and a generic PCIe cost model.

use super::set::*;
use super::shared::*;
use crate::model::classification::Path;
use crate::model::cost::Cost;

pub static GENERIC: RuleSet = RuleSet {
    name: "generic",
    title: "other GPU (conservative)",
    unified: Rule {
        id: "generic.memory",
        value: false,
        says: DISCRETE,
        source: "[I]",
    },
    pageable: Rule {
        id: "generic.pageable",
        value: Pageable::Staged,
        says: "pageable memory is assumed staged: no vendor promises DMA from malloc'd memory",
        source: "docs/sources/transfer-rules.md spec baseline [D], section 7 [I]",
    },
    nonblocking_blocks: Rule {
        id: "generic.nonblocking",
        value: true,
        says: "a non-blocking transfer from pageable memory may hold the host while it is staged",
        source: "docs/sources/transfer-rules.md Pitfall 6 [I]",
    },
    registered: Rule {
        id: "generic.registered",
        value: true,
        says: "a live USE_HOST_PTR range is registered on every driver measured or read",
        source: "docs/sources/transfer-rules.md section 6 [X][S]",
    },
    alloc_host_ptr: Rule {
        id: "generic.alloc-host-ptr",
        value: Placement::Device,
        says: "an ALLOC_HOST_PTR buffer is assumed to take device memory (as on NVIDIA and Intel \
               discrete)",
        source: "docs/sources/transfer-rules.md Pitfall 3 [I]",
    },
    use_host_ptr: Rule {
        id: "generic.use-host-ptr",
        value: UseHostPtr::DeviceCopy,
        says: "the spec lets the runtime cache USE_HOST_PTR contents in device memory",
        source: "docs/sources/transfer-rules.md spec baseline [D]",
    },
    svm: Rule {
        id: "generic.svm",
        value: Placement::Device,
        says: "a coarse-grain SVM allocation is taken to have device storage",
        source: "[I]",
    },
    map_write_copies: Rule {
        id: "generic.map",
        value: true,
        says: "mapping a device buffer is assumed to copy at map (READ, WRITE) and at unmap (WRITE)",
        source: "docs/sources/transfer-rules.md Q4 rows [I]",
    },
    migrate: Rule {
        id: "generic.migrate",
        value: Migrate {
            to_device_marker: Marker::Never,
            to_host_marker: false,
            content_undefined_honoured: true,
            store: Path::Staged,
        },
        says: "migration is assumed to copy at once; CONTENT_UNDEFINED skips the copy (spec)",
        source: "docs/sources/transfer-rules.md spec baseline [D]",
    },
    between_devices: Rule {
        id: "generic.between-devices",
        value: CrossDevice::ViaHost,
        says: "no driver measured moves buffers peer-to-peer: assumed through the host",
        source: "docs/sources/transfer-rules.md Q5 rows [I]",
    },
    read_copy: Rule {
        id: "generic.read-copy",
        value: false,
        says: "no copy is assumed to stay behind: a later use moves the buffer again",
        source: "[I]",
    },
    alignment: Rule {
        id: "generic.alignment",
        value: Some(64),
        says: "pointers not 64 B aligned are slow on some drivers",
        source: "docs/sources/transfer-rules.md Intel GPU Q1 [I]",
    },
    cost: Some(Cost {
        on: "a PCIe Gen3 x16 GPU",
        pinned: [
            link(
                0.0,
                &[(MIB, 12.0)],
                "docs/sources/transfer-rules.md §7: about 12 GB/s, CUDA Best Practices §9.1.1 [D]; no floor measured",
            ),
            link(
                0.0,
                &[(MIB, 12.0)],
                "docs/sources/transfer-rules.md §7: about 12 GB/s, CUDA Best Practices §9.1.1 [D]; no floor measured",
            ),
        ],
        staged: [None, None],
        device: None,
        legs: [None, None],
        enqueue_us: None,
        memory: None,
    }),
    recipe: "map a CL_MEM_ALLOC_HOST_PTR buffer and use the mapped pointer as the host side of the transfer, or allocate it with clSVMAlloc",
    callback_gap_us: 0,
    timed_command_us: TIMED_CPU,
    driver_timed_us: DRIVER_TIMED_CPU,
    driver_profiled_us: DRIVER_PROFILED_CPU,
    toggle_profiling: false,
    borrowed_times: None,
    early_complete: None,
};
