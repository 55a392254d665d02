//! AMD's GPUs (ROCm): the rules (no cost model: no AMD GPU has been measured).

use super::set::*;
use super::shared::*;
use crate::model::classification::Path;

pub static AMD: RuleSet = RuleSet {
    name: "amd",
    title: "AMD GPU (ROCm)",
    unified: Rule {
        id: "amd.memory",
        value: false,
        says: DISCRETE,
        source: TR,
    },
    pageable: Rule {
        id: "amd.pageable",
        value: Pageable::PinnedAbove(MIB),
        says: "pageable transfers of 1 MiB or less are staged; larger ones pin the pages on the fly \
               (about 2/3 of peak, pinning costs time)",
        source: "docs/sources/transfer-rules.md AMD Q1 [S] rocsettings.cpp, rocblit.cpp; [D] guide 1.4.2.4",
    },
    nonblocking_blocks: Rule {
        id: "amd.nonblocking",
        value: false,
        says: "staging presumably runs on a worker thread (AMD_DIRECT_DISPATCH=false)",
        source: "docs/sources/transfer-rules.md Pitfall 6 [I]",
    },
    registered: Rule {
        id: "amd.registered",
        value: true,
        says: "a live USE_HOST_PTR range is locked in place (hsa_amd_memory_lock_to_pool)",
        source: "docs/sources/transfer-rules.md AMD Q3 [S]",
    },
    alloc_host_ptr: Rule {
        id: "amd.alloc-host-ptr",
        value: Placement::Host,
        says: "an ALLOC_HOST_PTR buffer lives in system memory and uses no device memory; kernels \
               reach it over PCIe",
        source: "docs/sources/transfer-rules.md AMD Q2 [S] rocmemory.cpp",
    },
    use_host_ptr: Rule {
        id: "amd.use-host-ptr",
        value: UseHostPtr::ZeroCopy,
        says: "USE_HOST_PTR is locked in place: zero-copy, no device copy",
        source: "docs/sources/transfer-rules.md AMD Q3 [S]",
    },
    svm: Rule {
        id: "amd.svm",
        value: Placement::Device,
        says: "a coarse-grain SVM allocation is device memory the host reaches by map (fine-grain SVM is host memory)",
        source: "[I] ROCm/clr: coarse-grain SVM is allocated as device memory, fine-grain in host memory; not measured",
    },
    map_write_copies: Rule {
        id: "amd.map",
        value: false,
        says: "map READ of a device buffer copies device→host; map WRITE copies nothing at map and \
               host→device at unmap; host-resident buffers map for free",
        source: "docs/sources/transfer-rules.md AMD Q4 [D][S] rocvirtual.cpp",
    },
    migrate: Rule {
        id: "amd.migrate",
        value: Migrate {
            to_device_marker: Marker::WhenFlagsZero,
            to_host_marker: false,
            content_undefined_honoured: false,
            store: Path::Staged,
        },
        says: "migration with flags 0 moves nothing (it happens at first use); CONTENT_UNDEFINED \
               still syncs the data",
        source: "docs/sources/transfer-rules.md AMD Q5 [S] rocvirtual.cpp",
    },
    between_devices: Rule {
        id: "amd.between-devices",
        value: CrossDevice::ViaHost,
        says: "multi-GPU data goes device → host backing store → device",
        source: "docs/sources/transfer-rules.md AMD Q5 [S] rocmemory.cpp",
    },
    read_copy: Rule {
        id: "amd.read-copy",
        value: true,
        says: "a device syncs a buffer only when its copy is older than the last write, so the copy of a device that only read it stays valid",
        source: "ROCm/clr rocclr/device/rocm/rocmemory.cpp `syncCacheFromHost` (version check), rocclr/platform/memory.cpp `signalWrite` (only a write bumps the version) [S]",
    },
    alignment: Rule {
        id: "amd.alignment",
        value: None,
        says: "pinning aligns down to 4 KiB itself: pointer alignment does not change the path",
        source: "docs/sources/transfer-rules.md AMD Q1 [S] rocblit.cpp",
    },
    cost: None,
    recipe: "put the host side in a CL_MEM_ALLOC_HOST_PTR buffer and map it (host memory the GPU reaches directly on ROCm), or allocate it with clSVMAlloc; ROCm pins only transfers above 1 MiB on the fly",
    callback_gap_us: 0,
    timed_command_us: TIMED_CPU,
    driver_timed_us: DRIVER_TIMED_CPU,
    driver_profiled_us: DRIVER_PROFILED_CPU,
    toggle_profiling: false,
    borrowed_times: None,
    early_complete: None,
};
