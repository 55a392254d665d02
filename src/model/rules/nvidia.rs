//! NVIDIA's discrete GPUs: the rules, and the cost model measured on an H200.

use super::set::*;
use super::shared::*;
use crate::model::classification::Path;
use crate::model::cost::Cost;

pub static NVIDIA: RuleSet = RuleSet {
    name: "nvidia",
    title: "NVIDIA discrete GPU",
    unified: Rule {
        id: "nvidia.memory",
        value: false,
        says: DISCRETE,
        source: "docs/sources/ground-truth-h200.md",
    },
    pageable: Rule {
        id: "nvidia.pageable",
        value: Pageable::Staged,
        says: "pageable memory is staged through the driver's pinned bounce buffer (8.5 GB/s write, \
               15.2 read against 55.4 pinned on an H200); alignment and mlock do not help",
        source: "docs/sources/transfer-rules.md NVIDIA Q1 [X]; docs/sources/ground-truth-h200.md rows 1-4",
    },
    nonblocking_blocks: Rule {
        id: "nvidia.nonblocking",
        value: true,
        says: "a non-blocking write from pageable memory spends most of its time inside the call \
               (96% at 256 MiB): it is effectively synchronous",
        source: "docs/sources/transfer-rules.md NVIDIA Q1 [X]",
    },
    registered: Rule {
        id: "nvidia.registered",
        value: true,
        says: "the host range of a live USE_HOST_PTR buffer is registered (pinned) for any transfer",
        source: "docs/sources/transfer-rules.md NVIDIA Q3, Pitfall 2 [X]",
    },
    alloc_host_ptr: Rule {
        id: "nvidia.alloc-host-ptr",
        value: Placement::Device,
        says: "an ALLOC_HOST_PTR buffer has device storage (+256 MiB after map and use) and a \
               pinned host mirror; map its pointer and use that for transfers",
        source: "docs/sources/transfer-rules.md NVIDIA Q2 [X]",
    },
    use_host_ptr: Rule {
        id: "nvidia.use-host-ptr",
        value: UseHostPtr::DeviceCopy,
        says: "USE_HOST_PTR registers the program's pages and also gives the buffer device storage",
        source: "docs/sources/transfer-rules.md NVIDIA Q3 [X]",
    },
    svm: Rule {
        id: "nvidia.svm",
        value: Placement::Device,
        says: "a coarse-grain clSVMAlloc allocation takes device memory of its size at once (and its pointer is pinned for transfers, 55.4 GB/s): a copy between two allocations stays on the device",
        source: "docs/ground-truth.md SVM and device memory (two 1 GiB allocations: +2,052 MiB at clSVMAlloc, back at clSVMFree); docs/sources/ground-truth-h200.md row 7 (pinned) [X]",
    },
    map_write_copies: Rule {
        id: "nvidia.map",
        value: true,
        says: "mapping a device buffer copies device→host at map for READ and for WRITE, and unmap \
               after WRITE copies back (27.6 GB/s effective); an ALLOC_HOST_PTR buffer too",
        source: "docs/sources/transfer-rules.md NVIDIA Q4 [X]",
    },
    migrate: Rule {
        id: "nvidia.migrate",
        value: Migrate {
            to_device_marker: Marker::Never,
            to_host_marker: false,
            content_undefined_honoured: true,
            store: Path::Pinned,
        },
        says: "migration copies at once, by DMA between device memory and the driver's pinned \
               backing store (64 MiB: 55.3-55.5 GB/s device time both ways), though the call holds \
               the host far longer (1.0-1.3 GB/s wall; 1 GiB to the host in ~700 ms) and device \
               profiling may report 0; CONTENT_UNDEFINED is honoured",
        source: "docs/sources/transfer-rules.md NVIDIA Q5 [X]; docs/sources/ground-truth-h200.md migrate rows; \
                 docs/ground-truth.md migrate rows (H200, 2026-11-30) [X]",
    },
    between_devices: Rule {
        id: "nvidia.between-devices",
        value: CrossDevice::ViaHost,
        says: "data moves between two GPUs through the host, whatever the flags (NVLink-connected \
               H200s: 0.58 GB/s at 64 MiB, 0.8-1.3 at 16 and 256 MiB), as the two legs of a \
               migration to the host and back cost",
        source: "docs/sources/transfer-rules.md NVIDIA Q5 [X]; docs/ground-truth.md migrate-between-devices [X]",
    },
    read_copy: Rule {
        id: "nvidia.read-copy",
        value: true,
        says: "a buffer a kernel on another GPU only read stays valid on the GPU that had it: a later use there moves nothing",
        source: "[I] not yet measured (docs/ground-truth.md has no two-GPU kernel read); a migration moves the allocation instead (docs/sources/transfer-rules.md NVIDIA Q5 [X])",
    },
    alignment: Rule {
        id: "nvidia.alignment",
        value: None,
        says: "pointer alignment does not change the path (pinned +1 byte: 55.1 GB/s)",
        source: "docs/sources/ground-truth-h200.md rows 2, 6 [X]",
    },
    cost: Some(Cost {
        on: "an NVIDIA H200 on PCIe Gen5 x16, driver 580.159.04",
        pinned: [
            link(2.5, &[(MIB, 54.0)], SWEEP),
            link(2.0, &[(MIB, 55.2)], SWEEP),
        ],
        // Pageable memory is staged; up to 1 MiB the copy into the bounce buffer hides behind
        // the DMA, beyond it the bandwidth falls with the size (the host's memcpy).
        staged: [
            link(
                2.5,
                &[
                    (MIB, 47.6),
                    (2 * MIB, 22.1),
                    (4 * MIB, 15.6),
                    (8 * MIB, 14.3),
                    (16 * MIB, 11.4),
                    (32 * MIB, 6.5),
                    (64 * MIB, 5.8),
                    (256 * MIB, 6.2),
                ],
                SWEEP,
            ),
            link(
                2.0,
                &[
                    (MIB, 41.3),
                    (2 * MIB, 28.2),
                    (4 * MIB, 15.7),
                    (8 * MIB, 14.3),
                    (16 * MIB, 13.2),
                    (32 * MIB, 10.0),
                    (64 * MIB, 9.6),
                    (256 * MIB, 10.2),
                ],
                SWEEP,
            ),
        ],
        // Copies (2040 GB/s at 256 MiB) and fills (1640) together.
        device: link(5.5, &[(MIB, 1900.0)], SWEEP),
        // The wall time of migrations (their device times are not their own): 64 MiB to the
        // host 1.13-1.17 GB/s, back 1.08-1.18 (two visits), 1 GiB to the host in 670-730 ms,
        // back in 150-165. Both legs at 64 MiB come to 0.57 GB/s, as the two-GPU move measured
        // (0.58 at 64 MiB; 0.8-1.3 at 16 and 256 MiB, where the legs give 0.6 and 1.0).
        legs: [
            link(
                0.0,
                &[(64 * MIB, 1.13), (1024 * MIB, 6.7)],
                "docs/ground-truth.md migrate-back-flags-0 host GB/s (64 MiB, two visits); docs/sources/ground-truth-h200.md migrate back (1 GiB) [X]",
            ),
            link(
                0.0,
                &[(64 * MIB, 1.15), (1024 * MIB, 1.5)],
                "docs/ground-truth.md migrate-to-host host GB/s (64 MiB, two visits); docs/sources/ground-truth-h200.md migrate to host (1 GiB) [X]",
            ),
        ],
        enqueue_us: fig(
            9.4,
            "docs/PERFORMANCE.md NVIDIA H200: the 4 KiB storm with no tool, 9.42 µs per enqueue [X]",
        ),
        memory: fig(
            150_109_880_320.0,
            "docs/examples/h200-trace.json: the H200's CL_DEVICE_GLOBAL_MEM_SIZE [X]",
        ),
    }),
    recipe: "create one CL_MEM_ALLOC_HOST_PTR buffer, map it once with clEnqueueMapBuffer and pass the mapped pointer (or one inside it) to clEnqueueWriteBuffer/clEnqueueReadBuffer on the device buffer (NVIDIA's oclBandwidthTest recipe)",
    // A completion callback armed on NVIDIA's OpenCL slows every enqueue while it waits: one per
    // queue per millisecond cost the H200 storm +5 µs per enqueue, none +0 (docs/PERFORMANCE.md),
    // and a thread polling an event's status every millisecond +2 µs. So the program's waits
    // collect, and a callback comes at most every 100 ms, for programs that never wait (none
    // within 100 ms of a wait on the queue: with four threads, callbacks every 100 ms per queue
    // still cost every enqueue about 2 µs).
    callback_gap_us: 100_000,
    timed_command_us: TIMED_NVIDIA,
    driver_timed_us: DRIVER_TIMED_NVIDIA,
    driver_profiled_us: 0.0,
    toggle_profiling: true,
    borrowed_times: Some(Rule {
        id: "nvidia.borrowed-times",
        value: Commands {
            migrations: true,
            to_host_too: true,
            idle_maps: true,
        },
        says: "the driver's profiling times of a migration (any flags, moving bytes or not) and \
               of a map that moves nothing (WRITE_INVALIDATE_REGION) are another command's: each \
               starts ~1.9 ms before the kernel it waits for ends and lasts as long as that \
               kernel (15 of 15 runs of each), or reads 0 ms for a 1 GiB migration that held the \
               host 670-730 ms; they are marked untrusted and not used. Unmaps, maps that copy, \
               writes, copies and fills keep their own",
        source: "docs/ground-truth.md borrowed times (tests/programs/borrowed.c, H200, \
                 2026-12-03); docs/sources/ground-truth-h200.md (migrate rows) [X]",
    }),
    early_complete: Some(Rule {
        id: "nvidia.early-complete",
        value: Commands {
            migrations: true,
            to_host_too: false,
            idle_maps: true,
        },
        says: "a migration to a device (flags 0, CONTENT_UNDEFINED, or back from the host: 45 of \
               45 runs) and a map that moves nothing (12 of 15) read CL_COMPLETE while the \
               kernel they wait for is still running, so their status says nothing of what they \
               waited for; a HOST migration did not (0 of 15)",
        source: "docs/ground-truth.md borrowed times (tests/programs/borrowed.c, H200, \
                 2026-12-03); the hand-off probe, 12 of 12 and 6 of 6 [X]",
    }),
};
