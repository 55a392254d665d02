//! Rules every set shares: the classifier's own logic, cited like the vendor rules.

use super::set::Row;

macro_rules! rows {
    ($($name:ident = $id:literal, $says:literal, $source:literal;)*) => {
        $(pub const $name: Row = Row { id: $id, value: (), says: $says, source: $source };)*
        pub const ALL: &[Row] = &[$($name),*];
    };
}

rows! {
    MAPPED = "any.mapped", "a pointer inside the live mapping of any buffer (at any offset) is pinned; after unmap it is not", "docs/sources/transfer-rules.md Pitfall 1 [X][S]";
    SVM = "any.svm", "clSVMAlloc memory is pinned and device-accessible (55.4 GB/s)", "docs/sources/ground-truth-h200.md SVM row [X]";
    USM_HOST = "any.usm-host", "USM host memory (clHostMemAllocINTEL) is pinned", "docs/sources/transfer-rules.md section 6 [D]";
    USM_SHARED = "any.usm-shared", "USM shared memory is driver-managed and migrates on demand", "docs/sources/transfer-rules.md section 6 [D][I]";
    USM_DEVICE = "any.usm-device", "USM device memory (clDeviceMemAllocINTEL) is device memory", "cl_intel_unified_shared_memory [D]";
    IMPORTED = "any.imported", "clImportMemoryARM host imports are committed and pinned", "docs/sources/transfer-rules.md section 6 [D]";
    PAGEABLE = "any.pageable", "a pointer outside every pinned or registered range clxfer saw is pageable; mlock does not pin", "docs/sources/transfer-rules.md section 6, Pitfall 10 [X]";
    PARTIAL = "any.partial", "the host span starts in a pinned range but runs past its end: the driver cannot DMA it whole", "[I]";
    HOST_RESIDENT = "any.host-resident", "the buffer's storage is host memory: the call is a host memcpy and nothing crosses the bus now", "docs/sources/transfer-rules.md AMD Q2, PoCL [S]";
    SUB_BUFFER = "any.sub-buffer", "a sub-buffer takes its parent's placement", "docs/sources/transfer-rules.md Pitfall 4 [S]";
    RECT = "any.rect", "a rect transfer moves the region's bytes but touches the whole host span", "docs/sources/transfer-rules.md Pitfall 5 [S]";
    DEVICE_COPY = "any.device-copy", "a copy between buffers on one device stays on the device (2.0 TB/s on an H200)", "docs/sources/transfer-rules.md NVIDIA Q2 [X]";
    FILL = "any.fill", "a fill is written by the device; only the pattern comes from the host", "OpenCL spec [D]";
    INVALIDATE = "any.invalidate", "WRITE_INVALIDATE_REGION discards the contents: nothing is copied at map", "docs/sources/transfer-rules.md spec baseline, NVIDIA Q4 [D][X]";
    READ_ONLY_UNMAP = "any.read-only-unmap", "unmapping a READ-only mapping writes nothing back", "OpenCL spec [D]";
    ALREADY_THERE = "any.already-there", "the contents are already where the command moves them", "[I]";
    NO_CONTENTS = "any.no-contents", "the buffer has held no data yet: nothing to move (allocation is deferred to first use)", "docs/sources/transfer-rules.md Pitfall 8 [D][X]";
    CONTENT_UNDEFINED = "any.content-undefined", "CONTENT_UNDEFINED: the object moves without its contents", "docs/sources/transfer-rules.md spec baseline [D]";
    FIRST_USE = "any.first-use", "the kernel uses a buffer whose contents are on another device: it moves now, at first use", "docs/sources/transfer-rules.md Pitfall 9 [S]";
    ONLY_ON_HOST = "any.only-on-host", "the kernel uses a buffer whose contents are valid only on the host (a HOST migration, or host data not yet on any device): they are copied to the device at its launch", "docs/sources/transfer-rules.md spec baseline, Pitfall 9 [D][S]";
    HOST_HOP = "any.host-hop", "a HOST migration took the contents off another device and this command brings them to its own: two hops through the host, where one migration with flags 0 on this device's queue would do", "docs/sources/transfer-rules.md spec baseline [D]";
    IDLE_MIGRATION = "any.idle-migration", "the last migration was enqueued on a queue of the device that already held the contents, so it moved nothing, and this command on another device pulls them", "docs/sources/transfer-rules.md spec baseline [D]";
    WRITTEN_TWICE = "any.written-twice", "the whole object was written on another device and not used since: this write makes that one wasted", "[I]";
    MLOCKED = "any.mlocked", "memory locked with mlock is still pageable to the driver, which is not told of it: a transfer from it is staged like any other (8.8 GB/s H2D after mlock on an H200, against 55 pinned)", "docs/sources/ground-truth-h200.md mlock row; docs/sources/transfer-rules.md section 6, Pitfall 10 [X]";
    HOST_COPY = "any.host-copy", "both sides are host memory: a host memcpy", "[I]";
    UNKNOWN_OBJECT = "any.unknown-object", "clxfer does not know this object (created before clxfer loaded, released, or invalid)", "-";
    UNKNOWN_MAPPING = "any.unknown-mapping", "clxfer saw no live mapping of this object at this pointer", "-";
    DRIVER_ERROR = "any.driver-error", "the driver refused the call: nothing was enqueued", "-";
}
