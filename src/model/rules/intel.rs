//! Intel's GPUs, integrated and discrete, and its CPU runtime: the rules, and the discrete GPU's cost model.

use super::set::*;
use super::shared::*;
use crate::model::classification::Path;
use crate::model::cost::Cost;

pub(super) const INTEL_PAGEABLE: &str = "pageable memory is not bounced: the range becomes a userptr object \
    and the GPU copies directly (Xe2 and later stage first-seen pointers under 512 MB); a blocking \
    transfer to system memory with a pointer not 64 B aligned is a CPU memcpy";
pub(super) const INTEL_PAGEABLE_SRC: &str = "docs/sources/transfer-rules.md Intel GPU Q1 [S] enqueue_read_buffer.h, \
    staging_buffer_manager.cpp, command_queue.cpp";
pub(super) const INTEL_ALIGN: &str =
    "pointers should be 64 B aligned (4 KiB advised): unaligned reads ran at 1.6-8 GB/s against 21";
pub(super) const INTEL_MIGRATE: &str = "clEnqueueMigrateMemObjects is only a marker; buffers move at kernel \
    launch, through host memory";

pub static INTEL_IGPU: RuleSet = RuleSet {
    name: "intel-igpu",
    title: "Intel integrated GPU",
    unified: Rule {
        id: "intel-igpu.memory",
        value: true,
        says: "device memory is system memory: buffers are host-resident and map without a copy",
        source: "docs/sources/transfer-rules.md Intel GPU Q4 [S] mem_obj.cpp",
    },
    pageable: Rule {
        id: "intel-igpu.pageable",
        value: Pageable::Direct { cpu_copy_align: 64 },
        says: INTEL_PAGEABLE,
        source: INTEL_PAGEABLE_SRC,
    },
    nonblocking_blocks: Rule {
        id: "intel-igpu.nonblocking",
        value: false,
        says: "a non-blocking transfer never uses the CPU copy",
        source: "docs/sources/transfer-rules.md Intel GPU Q1 [S]",
    },
    registered: Rule {
        id: "intel-igpu.registered",
        value: true,
        says: "pointers into mapped regions and USM/SVM are used as they are",
        source: "docs/sources/transfer-rules.md Intel GPU Q1 [S] context.cpp",
    },
    alloc_host_ptr: Rule {
        id: "intel-igpu.alloc-host-ptr",
        value: Placement::Host,
        says: "every buffer lives in system memory",
        source: "docs/sources/transfer-rules.md Intel GPU Q2-Q3 [S]",
    },
    use_host_ptr: Rule {
        id: "intel-igpu.use-host-ptr",
        value: UseHostPtr::ZeroCopyIfAligned(64),
        says: "USE_HOST_PTR is zero-copy only when pointer and size are multiples of 64 B",
        source: "docs/sources/transfer-rules.md Intel GPU Q3 [S] buffer.cpp",
    },
    svm: Rule {
        id: "intel-igpu.svm",
        value: Placement::Host,
        says: "one memory: an SVM allocation is host memory the GPU shares",
        source: "docs/sources/transfer-rules.md Intel GPU [D]",
    },
    map_write_copies: Rule {
        id: "intel-igpu.map",
        value: true,
        says: "system-memory buffers map on the CPU without a copy",
        source: "docs/sources/transfer-rules.md Intel GPU Q4 [S]",
    },
    migrate: Rule {
        id: "intel-igpu.migrate",
        value: Migrate {
            to_device_marker: Marker::Always,
            to_host_marker: true,
            content_undefined_honoured: true,
            store: Path::Staged,
        },
        says: INTEL_MIGRATE,
        source: "docs/sources/transfer-rules.md Intel GPU Q5 [S]",
    },
    between_devices: Rule {
        id: "intel-igpu.between-devices",
        value: CrossDevice::ViaHost,
        says: "buffers move between root devices through host memory",
        source: "docs/sources/transfer-rules.md Intel GPU Q5 [S] migration_controller.cpp",
    },
    read_copy: Rule {
        id: "intel-igpu.read-copy",
        value: false,
        says: "a buffer has one current location: a kernel on another root device moves it there",
        source: "intel/compute-runtime@e37c60b shared/source/memory_manager/migration_controller.cpp `migrateMemory` (one current location per allocation: source to host to target) [S]",
    },
    alignment: Rule {
        id: "intel-igpu.alignment",
        value: Some(64),
        says: INTEL_ALIGN,
        source: "docs/sources/transfer-rules.md Intel GPU Q1 [M] compute-runtime#20, #775",
    },
    cost: None,
    recipe: "skip the copy: map the buffer (CL_MEM_ALLOC_HOST_PTR, or USE_HOST_PTR with 4096-byte aligned memory and size) and work in the mapped memory",
    callback_gap_us: 0,
    timed_command_us: TIMED_CPU,
    driver_timed_us: DRIVER_TIMED_CPU,
    driver_profiled_us: DRIVER_PROFILED_CPU,
    toggle_profiling: false,
    borrowed_times: None,
    early_complete: None,
};

pub static INTEL_DGPU: RuleSet = RuleSet {
    name: "intel-dgpu",
    title: "Intel discrete GPU",
    unified: Rule {
        id: "intel-dgpu.memory",
        value: false,
        says: DISCRETE,
        source: TR,
    },
    pageable: Rule {
        id: "intel-dgpu.pageable",
        value: Pageable::Direct { cpu_copy_align: 64 },
        says: INTEL_PAGEABLE,
        source: INTEL_PAGEABLE_SRC,
    },
    nonblocking_blocks: Rule {
        id: "intel-dgpu.nonblocking",
        value: false,
        says: "a non-blocking transfer never uses the CPU copy",
        source: "docs/sources/transfer-rules.md Intel GPU Q1 [S]",
    },
    registered: Rule {
        id: "intel-dgpu.registered",
        value: true,
        says: "pointers into mapped regions and USM/SVM are used as they are",
        source: "docs/sources/transfer-rules.md Intel GPU Q1 [S] context.cpp",
    },
    alloc_host_ptr: Rule {
        id: "intel-dgpu.alloc-host-ptr",
        value: Placement::Device,
        says: "ALLOC_HOST_PTR is ignored for placement: the buffer lives in device memory (use \
               CL_MEM_FORCE_HOST_MEMORY_INTEL or clHostMemAllocINTEL for host memory)",
        source: "docs/sources/transfer-rules.md Intel GPU Q2 [S] buffer.cpp",
    },
    use_host_ptr: Rule {
        id: "intel-dgpu.use-host-ptr",
        value: UseHostPtr::DeviceCopy,
        says: "on discrete GPUs USE_HOST_PTR gets device storage",
        source: "docs/sources/transfer-rules.md Intel GPU Q3 [S]",
    },
    svm: Rule {
        id: "intel-dgpu.svm",
        value: Placement::Device,
        says: "an SVM allocation is a USM shared allocation, resident on the device once used there",
        source: "[I] intel/compute-runtime: clSVMAlloc allocates USM shared memory; not measured",
    },
    map_write_copies: Rule {
        id: "intel-dgpu.map",
        value: true,
        says: "mapping a device-memory buffer reads it into a map allocation (skipped for \
               WRITE_INVALIDATE_REGION); unmap writes it back",
        source: "docs/sources/transfer-rules.md Intel GPU Q4 [S] command_queue.cpp",
    },
    migrate: Rule {
        id: "intel-dgpu.migrate",
        value: Migrate {
            to_device_marker: Marker::Always,
            to_host_marker: true,
            content_undefined_honoured: true,
            store: Path::Staged,
        },
        says: INTEL_MIGRATE,
        source: "docs/sources/transfer-rules.md Intel GPU Q5 [S]",
    },
    between_devices: Rule {
        id: "intel-dgpu.between-devices",
        value: CrossDevice::ViaHost,
        says: "buffers move between root devices through host memory",
        source: "docs/sources/transfer-rules.md Intel GPU Q5 [S] migration_controller.cpp",
    },
    read_copy: Rule {
        id: "intel-dgpu.read-copy",
        value: false,
        says: "a buffer has one current location: a kernel on another root device moves it there",
        source: "intel/compute-runtime@e37c60b shared/source/memory_manager/migration_controller.cpp `migrateMemory` (one current location per allocation: source to host to target) [S]",
    },
    alignment: Rule {
        id: "intel-dgpu.alignment",
        value: Some(64),
        says: INTEL_ALIGN,
        source: "docs/sources/transfer-rules.md Intel GPU Q1 [M] compute-runtime#20, #775",
    },
    cost: Some(Cost {
        on: "an Intel Arc A770 on PCIe Gen4 x16",
        pinned: [
            link(
                0.0,
                &[(MIB, 22.0)],
                "[I] taken as the D2H figure: no H2D measurement; no floor measured",
            ),
            link(
                0.0,
                &[(MIB, 22.0)],
                "docs/sources/transfer-rules.md §7: ReadBuffer with USM or a mapped pointer 22.1-22.3, compute-runtime#618 [M]; no floor measured",
            ),
        ],
        staged: [
            None,
            link(
                0.0,
                &[(MIB, 9.0)],
                "docs/sources/transfer-rules.md §7: ReadBuffer from malloc 8.9-9.1, compute-runtime#618 [M]; no floor measured",
            ),
        ],
        device: None,
        legs: [None, None],
        enqueue_us: None,
        memory: None,
    }),
    recipe: "allocate the host side with clHostMemAllocINTEL (USM host memory) and transfer from that pointer, or map a buffer made with CL_MEM_FORCE_HOST_MEMORY_INTEL",
    callback_gap_us: 0,
    timed_command_us: TIMED_CPU,
    driver_timed_us: DRIVER_TIMED_CPU,
    driver_profiled_us: DRIVER_PROFILED_CPU,
    toggle_profiling: false,
    borrowed_times: None,
    early_complete: None,
};

pub static INTEL_CPU: RuleSet = RuleSet {
    name: "intel-cpu",
    title: "Intel CPU runtime",
    unified: Rule {
        id: "intel-cpu.memory",
        value: true,
        says: HOST_COPY,
        source: "docs/sources/transfer-rules.md Intel CPU [D]",
    },
    pageable: Rule {
        id: "intel-cpu.pageable",
        value: Pageable::HostCopy,
        says: HOST_COPY,
        source: "docs/sources/transfer-rules.md Intel CPU [D]",
    },
    nonblocking_blocks: Rule {
        id: "intel-cpu.nonblocking",
        value: false,
        says: "the copy runs on the runtime's worker threads",
        source: "[I]",
    },
    registered: Rule {
        id: "intel-cpu.registered",
        value: true,
        says: "all memory is host memory",
        source: "[I]",
    },
    alloc_host_ptr: Rule {
        id: "intel-cpu.alloc-host-ptr",
        value: Placement::Host,
        says: "all memory is host memory",
        source: "[I]",
    },
    use_host_ptr: Rule {
        id: "intel-cpu.use-host-ptr",
        value: UseHostPtr::ZeroCopyIfAligned(0),
        says: "USE_HOST_PTR is zero-copy if aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN, else the \
               framework may copy; prefer map/unmap over read/write",
        source: "docs/sources/transfer-rules.md Intel CPU [D]",
    },
    svm: Rule {
        id: "intel-cpu.svm",
        value: Placement::Host,
        says: "one memory: an SVM allocation is host memory",
        source: "docs/sources/transfer-rules.md Intel CPU [D]",
    },
    map_write_copies: Rule {
        id: "intel-cpu.map",
        value: false,
        says: "map returns host memory",
        source: "docs/sources/transfer-rules.md Intel CPU [D]",
    },
    migrate: Rule {
        id: "intel-cpu.migrate",
        value: Migrate {
            to_device_marker: Marker::Never,
            to_host_marker: false,
            content_undefined_honoured: true,
            store: Path::Staged,
        },
        says: "a CPU device's memory is host memory: migration has nothing to move",
        source: "[I]",
    },
    between_devices: Rule {
        id: "intel-cpu.between-devices",
        value: CrossDevice::Shared,
        says: "CPU devices share host memory",
        source: "[I]",
    },
    read_copy: Rule {
        id: "intel-cpu.read-copy",
        value: false,
        says: "one memory: there is no copy to keep",
        source: "docs/sources/transfer-rules.md Intel CPU runtime [D]",
    },
    alignment: Rule {
        id: "intel-cpu.alignment",
        value: None,
        says: "alignment matters only for USE_HOST_PTR zero-copy",
        source: "docs/sources/transfer-rules.md Intel CPU [D]",
    },
    cost: None,
    recipe: "skip the copy: map the buffer (CL_MEM_ALLOC_HOST_PTR, or USE_HOST_PTR with aligned memory) and work in the mapped memory",
    callback_gap_us: 0,
    timed_command_us: TIMED_CPU,
    driver_timed_us: DRIVER_TIMED_CPU,
    driver_profiled_us: DRIVER_PROFILED_CPU,
    toggle_profiling: false,
    borrowed_times: None,
    early_complete: None,
};
