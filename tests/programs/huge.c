/* Every transfer entry point called with valid handles and huge sizes, offsets, regions, pitches
 * and counts (SIZE_MAX, sums that wrap past 2^64, products that overflow): prints each error code,
 * which must be the driver's with or without clxfer. PoCL for the core calls; the test ICD (when
 * present) for the USM and ARM extension calls. Each line starts with the entry point's name, so
 * the test can check that every transfer in clxfer's list is here. */
#include "common.h"

#define MAX ((size_t)-1)
#define HALF (((size_t)1 << 63))
#define SHOW(name, label, expr) printf("%s %-32s %d\n", name, label, (int)(expr))
#define SHOW_PTR(name, label, call)                                                    \
    do {                                                                               \
        cl_int e_ = 12345;                                                             \
        void *r_ = (void *)(call);                                                     \
        printf("%s %-32s %d %s\n", name, label, (int)e_, r_ ? "ptr" : "null");         \
    } while (0)
#define E (&e_)

static void core(void) {
    setup();
    cl_command_queue q = make_queue(0);
    cl_int err;
    static char arena[3 << 16];
    char *host = arena + (1 << 16);
    cl_mem a = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK_ERR(err);
    cl_mem b = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK_ERR(err);
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 16, .image_height = 16};
    cl_mem img = clCreateImage(g_ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    CHECK_ERR(err);
    cl_mem img2 = clCreateImage(g_ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    CHECK_ERR(err);

    /* Sizes, offsets and their sums. */
    const struct { const char *label; size_t off, size; } spans[] = {
        {"size MAX", 0, MAX}, {"offset MAX", MAX, 4}, {"offset+size wraps to 0", HALF, HALF},
        {"offset+size wraps to 4", MAX - 3, 8}, {"size 2^40", 0, (size_t)1 << 40},
    };
    for (size_t i = 0; i < sizeof spans / sizeof *spans; i++) {
        size_t o = spans[i].off, s = spans[i].size;
        const char *l = spans[i].label;
        SHOW("clEnqueueWriteBuffer", l, clEnqueueWriteBuffer(q, a, CL_TRUE, o, s, host, 0, NULL, NULL));
        SHOW("clEnqueueReadBuffer", l, clEnqueueReadBuffer(q, a, CL_TRUE, o, s, host, 0, NULL, NULL));
        SHOW("clEnqueueCopyBuffer", l, clEnqueueCopyBuffer(q, a, b, o, 0, s, 0, NULL, NULL));
        SHOW("clEnqueueCopyBuffer", l, clEnqueueCopyBuffer(q, a, b, 0, o, s, 0, NULL, NULL));
        int pattern = 7;
        SHOW("clEnqueueFillBuffer", l, clEnqueueFillBuffer(q, a, &pattern, 4, o & ~(size_t)3, s & ~(size_t)3, 0, NULL, NULL));
        cl_event ev = NULL;
        SHOW_PTR("clEnqueueMapBuffer", l, clEnqueueMapBuffer(q, a, CL_TRUE, CL_MAP_READ, o, s, 0, NULL, &ev, E));
        if (ev) clReleaseEvent(ev);
        cl_buffer_region r = {o, s};
        SHOW_PTR("clCreateSubBuffer", l, clCreateSubBuffer(a, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, E));
    }

    /* Regions, origins and pitches. */
    const size_t z[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    /* images: 0 where PoCL 3.1 itself crashes on the image calls (it checks neither that a
     * region's product nor that origin + region stays below 2^64), so no run could compare them.
     * PoCL accepts some wrapped host offsets (a MAX pitch or host origin lands a few bytes before
     * `host`): the arena around it takes those accesses. */
    const struct { const char *label; size_t origin[3], region[3], row, slice; int images; } rects[] = {
        {"region x MAX", {0, 0, 0}, {MAX, 1, 1}, 0, 0, 1},
        {"region product wraps", {0, 0, 0}, {(size_t)1 << 32, (size_t)1 << 32, 1}, 0, 0, 1},
        {"region 2^21 cubed", {0, 0, 0}, {(size_t)1 << 21, (size_t)1 << 21, (size_t)1 << 21}, 0, 0, 0},
        {"origin MAX", {MAX, MAX, MAX}, {4, 1, 1}, 0, 0, 1},
        {"row pitch MAX", {0, 0, 0}, {4, 2, 1}, MAX, 0, 1},
        {"slice pitch MAX", {0, 0, 0}, {4, 2, 2}, 8, MAX, 1},
        {"origin+region wraps", {HALF, 0, 0}, {HALF, 1, 1}, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof rects / sizeof *rects; i++) {
        const size_t *o = rects[i].origin, *r = rects[i].region;
        size_t rp = rects[i].row, sp = rects[i].slice;
        const char *l = rects[i].label;
        SHOW("clEnqueueWriteBufferRect", l, clEnqueueWriteBufferRect(q, a, CL_TRUE, o, z, r, rp, sp, 0, 0, host, 0, NULL, NULL));
        SHOW("clEnqueueWriteBufferRect", l, clEnqueueWriteBufferRect(q, a, CL_TRUE, z, o, r, 0, 0, rp, sp, host, 0, NULL, NULL));
        SHOW("clEnqueueReadBufferRect", l, clEnqueueReadBufferRect(q, a, CL_TRUE, o, z, r, rp, sp, 0, 0, host, 0, NULL, NULL));
        SHOW("clEnqueueReadBufferRect", l, clEnqueueReadBufferRect(q, a, CL_TRUE, z, o, r, 0, 0, rp, sp, host, 0, NULL, NULL));
        SHOW("clEnqueueCopyBufferRect", l, clEnqueueCopyBufferRect(q, a, b, o, z, r, rp, sp, 0, 0, 0, NULL, NULL));
        SHOW("clEnqueueCopyBufferRect", l, clEnqueueCopyBufferRect(q, a, b, z, o, r, 0, 0, rp, sp, 0, NULL, NULL));
        if (!rects[i].images) continue;
        SHOW("clEnqueueWriteImage", l, clEnqueueWriteImage(q, img, CL_TRUE, o, r, rp, sp, host, 0, NULL, NULL));
        SHOW("clEnqueueReadImage", l, clEnqueueReadImage(q, img, CL_TRUE, o, r, rp, sp, host, 0, NULL, NULL));
        SHOW("clEnqueueCopyImage", l, clEnqueueCopyImage(q, img, img2, o, z, r, 0, NULL, NULL));
        SHOW("clEnqueueCopyImageToBuffer", l, clEnqueueCopyImageToBuffer(q, img, a, o, r, 0, 0, NULL, NULL));
        SHOW("clEnqueueCopyImageToBuffer", l, clEnqueueCopyImageToBuffer(q, img, a, z, one, o[0], 0, NULL, NULL));
        SHOW("clEnqueueCopyBufferToImage", l, clEnqueueCopyBufferToImage(q, a, img, o[0], z, r, 0, NULL, NULL));
        cl_uint color[4] = {1, 2, 3, 4};
        SHOW("clEnqueueFillImage", l, clEnqueueFillImage(q, img, color, o, r, 0, NULL, NULL));
        size_t row = 0, slice = 0;
        cl_event ev = NULL;
        SHOW_PTR("clEnqueueMapImage", l, clEnqueueMapImage(q, img, CL_TRUE, CL_MAP_READ, o, r, &row, &slice, 0, NULL, &ev, E));
        if (ev) clReleaseEvent(ev);
    }

    /* Lists, flags, pointers nothing mapped. (A count past the list's end is left out: PoCL reads
     * the whole list before checking it, and crashes.) */
    cl_mem list[2] = {a, NULL};
    SHOW("clEnqueueMigrateMemObjects", "NULL in the list", clEnqueueMigrateMemObjects(q, 2, list, 0, 0, NULL, NULL));
    SHOW("clEnqueueMigrateMemObjects", "flags MAX", clEnqueueMigrateMemObjects(q, 1, list, (cl_mem_migration_flags)-1, 0, NULL, NULL));
    SHOW("clEnqueueUnmapMemObject", "pointer MAX", clEnqueueUnmapMemObject(q, a, (void *)MAX, 0, NULL, NULL));

    /* SVM, where the device has it (PoCL's CPU device: coarse-grained buffers). PoCL checks no
     * SVM size: it accepts the huge maps and migrations (clxfer must then cope with them), and a
     * huge fill or copy would run and crash it, so those are left out. */
    cl_device_svm_capabilities caps = 0;
    clGetDeviceInfo(g_device, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL);
    if (caps) {
        SHOW("clSVMAlloc", "size MAX", clSVMAlloc(g_ctx, CL_MEM_READ_WRITE, MAX, 0) != NULL);
        SHOW("clSVMAlloc", "size 2^62", clSVMAlloc(g_ctx, CL_MEM_READ_WRITE, (size_t)1 << 62, 0) != NULL);
        SHOW("clSVMAlloc", "alignment 2^31", clSVMAlloc(g_ctx, CL_MEM_READ_WRITE, 64, 1u << 31) != NULL);
        char *s = clSVMAlloc(g_ctx, CL_MEM_READ_WRITE, 4096, 0);
        SHOW("clEnqueueSVMMap", "size MAX", clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, s, MAX, 0, NULL, NULL));
        SHOW("clEnqueueSVMMap", "size 2^40", clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, s, (size_t)1 << 40, 0, NULL, NULL));
        SHOW("clEnqueueSVMUnmap", "pointer MAX", clEnqueueSVMUnmap(q, (void *)MAX, 0, NULL, NULL));
        const void *ptrs[2] = {s, s + 64};
        size_t sizes[2] = {MAX, HALF};
        SHOW("clEnqueueSVMMigrateMem", "sizes MAX", clEnqueueSVMMigrateMem(q, 2, ptrs, sizes, 0, 0, NULL, NULL));
        const void *far[1] = {(void *)MAX};
        SHOW("clEnqueueSVMMigrateMem", "pointer MAX", clEnqueueSVMMigrateMem(q, 1, far, NULL, 0, 0, NULL, NULL));
        SHOW("clEnqueueSVMMemFill", "pattern size 2^31", clEnqueueSVMMemFill(q, s, host, 1u << 31, 1u << 31, 0, NULL, NULL));
        SHOW("clEnqueueSVMMemcpy", "overlapping", clEnqueueSVMMemcpy(q, CL_TRUE, s + 1, s, 64, 0, NULL, NULL));
        void *frees[1] = {(void *)MAX};
        SHOW("clEnqueueSVMFree", "count UINT_MAX", clEnqueueSVMFree(q, (cl_uint)-1, NULL, NULL, NULL, 0, NULL, NULL));
        SHOW("clEnqueueSVMFree", "count 0", clEnqueueSVMFree(q, 0, frees, NULL, NULL, 0, NULL, NULL));
        CHECK(clFinish(q));
        clSVMFree(g_ctx, s);
    }

    CHECK(clFinish(q));
    CHECK(clReleaseMemObject(a));
    CHECK(clReleaseMemObject(b));
    CHECK(clReleaseMemObject(img));
    CHECK(clReleaseMemObject(img2));
    CHECK(clReleaseCommandQueue(q));
    finish_program();
}

/* The extension entry points of the platform that offers them (the test ICD). */
typedef void *(CL_API_CALL *host_alloc_fn)(cl_context, const cl_mem_properties_intel *, size_t, cl_uint, cl_int *);
typedef void *(CL_API_CALL *dev_alloc_fn)(cl_context, cl_device_id, const cl_mem_properties_intel *, size_t, cl_uint, cl_int *);
typedef cl_int(CL_API_CALL *memcpy_fn)(cl_command_queue, cl_bool, void *, const void *, size_t, cl_uint, const cl_event *, cl_event *);
typedef cl_int(CL_API_CALL *fill_fn)(cl_command_queue, void *, const void *, size_t, size_t, cl_uint, const cl_event *, cl_event *);
typedef cl_int(CL_API_CALL *memset_fn)(cl_command_queue, void *, cl_int, size_t, cl_uint, const cl_event *, cl_event *);
typedef cl_int(CL_API_CALL *migrate_fn)(cl_command_queue, const void *, size_t, cl_mem_migration_flags, cl_uint, const cl_event *, cl_event *);
typedef cl_int(CL_API_CALL *advise_fn)(cl_command_queue, const void *, size_t, cl_mem_advice_intel, cl_uint, const cl_event *, cl_event *);
typedef void *(CL_API_CALL *arm_alloc_fn)(cl_context, cl_svm_mem_flags_arm, size_t, cl_uint);
typedef cl_int(CL_API_CALL *arm_map_fn)(cl_command_queue, cl_bool, cl_map_flags, void *, size_t, cl_uint, const cl_event *, cl_event *);
typedef cl_int(CL_API_CALL *unmap_fn)(cl_command_queue, void *, cl_uint, const cl_event *, cl_event *);
typedef cl_mem(CL_API_CALL *import_fn)(cl_context, cl_mem_flags, const cl_import_properties_arm *, void *, size_t, cl_int *);
typedef cl_int(CL_API_CALL *free_fn)(cl_context, void *);

#define GET(type, name) type name = (type)clGetExtensionFunctionAddressForPlatform(p, #name)

static void extensions(cl_platform_id p) {
    GET(host_alloc_fn, clHostMemAllocINTEL);
    GET(dev_alloc_fn, clDeviceMemAllocINTEL);
    GET(dev_alloc_fn, clSharedMemAllocINTEL);
    GET(free_fn, clMemFreeINTEL);
    GET(memcpy_fn, clEnqueueMemcpyINTEL);
    GET(fill_fn, clEnqueueMemFillINTEL);
    GET(memset_fn, clEnqueueMemsetINTEL);
    GET(migrate_fn, clEnqueueMigrateMemINTEL);
    GET(advise_fn, clEnqueueMemAdviseINTEL);
    GET(arm_alloc_fn, clSVMAllocARM);
    GET(memcpy_fn, clEnqueueSVMMemcpyARM);
    GET(fill_fn, clEnqueueSVMMemFillARM);
    GET(arm_map_fn, clEnqueueSVMMapARM);
    GET(unmap_fn, clEnqueueSVMUnmapARM);
    GET(import_fn, clImportMemoryARM);
    if (!clHostMemAllocINTEL || !clSVMAllocARM || !clImportMemoryARM) return;
    cl_device_id d;
    cl_context ctx;
    cl_command_queue q = queue_on(p, &d, &ctx);
    cl_int err;
    SHOW_PTR("clHostMemAllocINTEL", "size MAX", clHostMemAllocINTEL(ctx, NULL, MAX, 0, E));
    SHOW_PTR("clDeviceMemAllocINTEL", "size MAX", clDeviceMemAllocINTEL(ctx, d, NULL, MAX, 0, E));
    SHOW_PTR("clSharedMemAllocINTEL", "size 2^62", clSharedMemAllocINTEL(ctx, d, NULL, (size_t)1 << 62, 0, E));
    SHOW("clSVMAllocARM", "size MAX", clSVMAllocARM(ctx, CL_MEM_READ_WRITE, MAX, 0) != NULL);
    char *h = clHostMemAllocINTEL(ctx, NULL, 4096, 0, &err);
    CHECK_ERR(err);
    char *dv = clDeviceMemAllocINTEL(ctx, d, NULL, 4096, 0, &err);
    CHECK_ERR(err);
    const struct { const char *label; size_t off, size; } spans[] = {
        {"size MAX", 0, MAX}, {"pointer+size wraps", 64, MAX - 31}, {"size 2^40", 0, (size_t)1 << 40},
    };
    for (size_t i = 0; i < sizeof spans / sizeof *spans; i++) {
        size_t o = spans[i].off, s = spans[i].size;
        const char *l = spans[i].label;
        SHOW("clEnqueueMemcpyINTEL", l, clEnqueueMemcpyINTEL(q, CL_TRUE, dv + o, h, s, 0, NULL, NULL));
        SHOW("clEnqueueMemcpyINTEL", l, clEnqueueMemcpyINTEL(q, CL_TRUE, h, dv + o, s, 0, NULL, NULL));
        SHOW("clEnqueueSVMMemcpyARM", l, clEnqueueSVMMemcpyARM(q, CL_TRUE, h + o, dv, s, 0, NULL, NULL));
        SHOW("clEnqueueMemFillINTEL", l, clEnqueueMemFillINTEL(q, dv + o, "abcd", 4, s & ~(size_t)3, 0, NULL, NULL));
        SHOW("clEnqueueSVMMemFillARM", l, clEnqueueSVMMemFillARM(q, dv + o, "abcd", 4, s & ~(size_t)3, 0, NULL, NULL));
        SHOW("clEnqueueMemsetINTEL", l, clEnqueueMemsetINTEL(q, dv + o, 0, s, 0, NULL, NULL));
        SHOW("clEnqueueMigrateMemINTEL", l, clEnqueueMigrateMemINTEL(q, dv + o, s, 0, 0, NULL, NULL));
        SHOW("clEnqueueMemAdviseINTEL", l, clEnqueueMemAdviseINTEL(q, dv + o, s, 0, 0, NULL, NULL));
        SHOW("clEnqueueSVMMapARM", l, clEnqueueSVMMapARM(q, CL_TRUE, CL_MAP_READ, h + o, s, 0, NULL, NULL));
        SHOW_PTR("clImportMemoryARM", l, clImportMemoryARM(ctx, CL_MEM_READ_WRITE, NULL, h + o, s, E));
    }
    SHOW("clEnqueueSVMUnmapARM", "pointer MAX", clEnqueueSVMUnmapARM(q, (void *)MAX, 0, NULL, NULL));
    CHECK(clMemFreeINTEL(ctx, h));
    CHECK(clMemFreeINTEL(ctx, dv));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
}

int main(void) {
    core();
    cl_platform_id ps[8];
    cl_uint n = 0;
    CHECK(clGetPlatformIDs(8, ps, &n));
    for (cl_uint i = 0; i < n && i < 8; i++) extensions(ps[i]);
    return 0;
}
