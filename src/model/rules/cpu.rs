//! CPU devices (PoCL and the like), whose memory is host memory: the rules (no cost model: a transfer is a host memcpy).

use super::set::*;
use super::shared::*;
use crate::model::classification::Path;

pub static CPU: RuleSet = RuleSet {
    name: "cpu",
    title: "PoCL and other CPU devices",
    unified: Rule {
        id: "cpu.memory",
        value: true,
        says: HOST_COPY,
        source: "docs/sources/ground-truth-h200.md PoCL CPU [X]; docs/sources/transfer-rules.md PoCL [S] common_driver.c",
    },
    pageable: Rule {
        id: "cpu.pageable",
        value: Pageable::HostCopy,
        says: HOST_COPY,
        source: "docs/sources/ground-truth-h200.md PoCL CPU [X]",
    },
    nonblocking_blocks: Rule {
        id: "cpu.nonblocking",
        value: false,
        says: "commands run on the driver's worker threads",
        source: "[I]",
    },
    registered: Rule {
        id: "cpu.registered",
        value: true,
        says: "all memory is host memory",
        source: "docs/sources/transfer-rules.md PoCL [S]",
    },
    alloc_host_ptr: Rule {
        id: "cpu.alloc-host-ptr",
        value: Placement::Host,
        says: "all memory is host memory",
        source: "docs/sources/transfer-rules.md PoCL [S]",
    },
    use_host_ptr: Rule {
        id: "cpu.use-host-ptr",
        value: UseHostPtr::ZeroCopy,
        says: "the device uses the program's pages directly",
        source: "docs/sources/transfer-rules.md PoCL [S] common_driver.c",
    },
    svm: Rule {
        id: "cpu.svm",
        value: Placement::Host,
        says: "one memory: an SVM allocation is host memory",
        source: "docs/sources/transfer-rules.md PoCL [S]",
    },
    map_write_copies: Rule {
        id: "cpu.map",
        value: false,
        says: "map/unmap move nothing",
        source: "docs/sources/ground-truth-h200.md PoCL CPU [X]",
    },
    migrate: Rule {
        id: "cpu.migrate",
        value: Migrate {
            to_device_marker: Marker::Never,
            to_host_marker: false,
            content_undefined_honoured: true,
            store: Path::Staged,
        },
        says: "PoCL migrates at once; CONTENT_UNDEFINED is honoured",
        source: "docs/sources/transfer-rules.md PoCL [S] pocl_mem_management.c",
    },
    between_devices: Rule {
        id: "cpu.between-devices",
        value: CrossDevice::Shared,
        says: "CPU devices use the same host allocation: nothing moves between them",
        source: "docs/sources/transfer-rules.md PoCL [S] common_driver.c",
    },
    read_copy: Rule {
        id: "cpu.read-copy",
        value: false,
        says: "one memory: there is no copy to keep",
        source: "docs/sources/transfer-rules.md PoCL [S]",
    },
    alignment: Rule {
        id: "cpu.alignment",
        value: None,
        says: "alignment does not change the path",
        source: "docs/sources/ground-truth-h200.md PoCL CPU [X]",
    },
    cost: None,
    recipe: "skip the copy: map the buffer (CL_MEM_ALLOC_HOST_PTR or USE_HOST_PTR) and work in the mapped memory",
    // PoCL: an event per command is free (the storm's own events +0.0 µs an enqueue) but a
    // callback per command is not (+0.35 µs, and clxfer's collector then runs on PoCL's
    // threads: docs/PERFORMANCE.md). So the program's waits collect, and a callback comes at
    // most every 10 ms, for programs that never wait.
    callback_gap_us: 10_000,
    timed_command_us: TIMED_CPU,
    driver_timed_us: DRIVER_TIMED_CPU,
    driver_profiled_us: DRIVER_PROFILED_CPU,
    toggle_profiling: false,
    borrowed_times: None,
    early_complete: None,
};
