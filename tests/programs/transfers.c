/* Transfer scenarios, each announced on stderr ("scenario: NAME") right before its one enqueue,
 * so a test can pair clxfer's classification lines (CLXFER_LOG=debug) with the scenario. With two
 * devices in the context (POCL_DEVICES="pthread pthread") it also moves data between them.
 * Rows of ../shared/docs/ground-truth-h200.md and the pitfalls of transfer-rules.md. */
#include "common.h"
#include <sys/mman.h>

#define MIB (1u << 20)

static void scenario(const char *name) { fprintf(stderr, "scenario: %s\n", name); }

static const char *SRC =
    "__kernel void scale(__global float *a, float s) { a[get_global_id(0)] *= s; }\n";

int main(void) {
    find_pocl();
    cl_device_id devs[2];
    cl_uint ndev = 0;
    CHECK(clGetDeviceIDs(g_platform, CL_DEVICE_TYPE_ALL, 2, devs, &ndev));
    if (ndev > 2) ndev = 2;
    g_device = devs[0];
    cl_int err;
    g_ctx = clCreateContext(NULL, ndev, devs, NULL, NULL, &err);
    CHECK_ERR(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(g_ctx, devs[0], NULL, &err);
    CHECK_ERR(err);

    size_t size = MIB;
    char *pageable = malloc(size), *back = malloc(size);
    memset(pageable, 7, size);
    cl_mem plain = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, size, NULL, &err);
    CHECK_ERR(err);
    cl_mem other = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, size, NULL, &err);
    CHECK_ERR(err);
    cl_mem ahp = clCreateBuffer(g_ctx, CL_MEM_ALLOC_HOST_PTR, size, NULL, &err);
    CHECK_ERR(err);

    scenario("malloc-write");
    CHECK(clEnqueueWriteBuffer(q, plain, CL_TRUE, 0, size, pageable, 0, NULL, NULL));
    scenario("malloc-read");
    CHECK(clEnqueueReadBuffer(q, plain, CL_TRUE, 0, size, back, 0, NULL, NULL));
    mix(back, size);
    char *locked = aligned_alloc(4096, size);
    memset(locked, 3, size);
    (void)mlock(locked, size); /* mlock is not pinning: the classification must not change */
    scenario("mlock-write");
    CHECK(clEnqueueWriteBuffer(q, plain, CL_TRUE, 0, size, locked, 0, NULL, NULL));
    scenario("nonblocking-write");
    CHECK(clEnqueueWriteBuffer(q, plain, CL_FALSE, 0, size, pageable, 0, NULL, NULL));
    CHECK(clFinish(q));

    /* The recipe: the mapped pointer of an ALLOC_HOST_PTR buffer is pinned, at any offset. */
    scenario("map-ahp");
    char *mapped = clEnqueueMapBuffer(q, ahp, CL_TRUE, CL_MAP_WRITE, 0, size, 0, NULL, NULL, &err);
    CHECK_ERR(err);
    memset(mapped, 5, size);
    scenario("mapped-write");
    CHECK(clEnqueueWriteBuffer(q, plain, CL_TRUE, 0, size, mapped, 0, NULL, NULL));
    scenario("mapped-offset-write");
    CHECK(clEnqueueWriteBuffer(q, plain, CL_TRUE, 0, size / 2, mapped + 4096, 0, NULL, NULL));
    scenario("mapped-read");
    CHECK(clEnqueueReadBuffer(q, plain, CL_TRUE, 0, size, mapped, 0, NULL, NULL));
    scenario("unmap-ahp");
    CHECK(clEnqueueUnmapMemObject(q, ahp, mapped, 0, NULL, NULL));
    CHECK(clFinish(q));

    /* USE_HOST_PTR over the first half of a block: inside is registered, just past it is not. */
    char *block = aligned_alloc(4096, 2 * size);
    memset(block, 9, 2 * size);
    cl_mem uhp = clCreateBuffer(g_ctx, CL_MEM_USE_HOST_PTR, size, block, &err);
    CHECK_ERR(err);
    scenario("uhp-range-write");
    CHECK(clEnqueueWriteBuffer(q, plain, CL_TRUE, 0, size / 2, block + 4096 + 64, 0, NULL, NULL));
    scenario("past-uhp-write");
    CHECK(clEnqueueWriteBuffer(q, plain, CL_TRUE, 0, size / 2, block + size, 0, NULL, NULL));
    scenario("into-uhp-write");
    CHECK(clEnqueueWriteBuffer(q, uhp, CL_TRUE, 0, size, pageable, 0, NULL, NULL));
    scenario("into-ahp-write");
    CHECK(clEnqueueWriteBuffer(q, ahp, CL_TRUE, 0, size, pageable, 0, NULL, NULL));

    /* SVM (coarse grain) as the host side. */
    char *svm = clSVMAlloc(g_ctx, CL_MEM_READ_WRITE, size, 0);
    if (svm) {
        scenario("setup");
        CHECK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_WRITE, svm, size, 0, NULL, NULL));
        memset(svm, 1, size);
        CHECK(clEnqueueSVMUnmap(q, svm, 0, NULL, NULL));
        scenario("svm-write");
        CHECK(clEnqueueWriteBuffer(q, plain, CL_TRUE, 0, size, svm, 0, NULL, NULL));
        scenario("svm-memcpy-from-malloc");
        CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, svm, pageable, size, 0, NULL, NULL));
        CHECK(clFinish(q));
        clSVMFree(g_ctx, svm);
    }

    /* Sub-buffers take their parent's placement; rect transfers move less than they span. */
    cl_buffer_region sub_region = {4096, 8192};
    cl_mem sub = clCreateSubBuffer(plain, 0, CL_BUFFER_CREATE_TYPE_REGION, &sub_region, &err);
    CHECK_ERR(err);
    scenario("sub-buffer-write");
    CHECK(clEnqueueWriteBuffer(q, sub, CL_TRUE, 0, 8192, pageable, 0, NULL, NULL));
    size_t origin[3] = {0, 0, 0}, host_origin[3] = {16, 4, 0}, region[3] = {256, 64, 1};
    scenario("rect-write");
    CHECK(clEnqueueWriteBufferRect(q, plain, CL_TRUE, origin, host_origin, region, 1024, 0, 1024, 0,
                                   pageable, 0, NULL, NULL));

    /* Map and unmap: what moves at map and at unmap. */
    scenario("map-read");
    char *m = clEnqueueMapBuffer(q, plain, CL_TRUE, CL_MAP_READ, 0, size, 0, NULL, NULL, &err);
    CHECK_ERR(err);
    mix(m, 64);
    scenario("unmap-read");
    CHECK(clEnqueueUnmapMemObject(q, plain, m, 0, NULL, NULL));
    scenario("map-write");
    m = clEnqueueMapBuffer(q, plain, CL_TRUE, CL_MAP_WRITE, 0, size, 0, NULL, NULL, &err);
    CHECK_ERR(err);
    m[0] = 1;
    scenario("unmap-write");
    CHECK(clEnqueueUnmapMemObject(q, plain, m, 0, NULL, NULL));
    scenario("map-invalidate");
    m = clEnqueueMapBuffer(q, plain, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, size, 0, NULL, NULL, &err);
    CHECK_ERR(err);
    memset(m, 2, size);
    scenario("unmap-invalidate");
    CHECK(clEnqueueUnmapMemObject(q, plain, m, 0, NULL, NULL));
    CHECK(clFinish(q));

    /* Copies, fills, migration. */
    scenario("copy");
    CHECK(clEnqueueCopyBuffer(q, plain, other, 0, 0, size, 0, NULL, NULL));
    scenario("copy-from-ahp");
    CHECK(clEnqueueCopyBuffer(q, ahp, other, 0, 0, size, 0, NULL, NULL));
    char pattern = 4;
    scenario("fill");
    CHECK(clEnqueueFillBuffer(q, other, &pattern, 1, 0, size, 0, NULL, NULL));
    scenario("migrate-to-host");
    CHECK(clEnqueueMigrateMemObjects(q, 1, &plain, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL));
    scenario("migrate-back");
    CHECK(clEnqueueMigrateMemObjects(q, 1, &plain, 0, 0, NULL, NULL));
    scenario("migrate-undefined");
    CHECK(clEnqueueMigrateMemObjects(q, 1, &other, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, NULL, NULL));
    cl_mem fresh = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, size, NULL, &err);
    CHECK_ERR(err);
    scenario("migrate-fresh");
    CHECK(clEnqueueMigrateMemObjects(q, 1, &fresh, 0, 0, NULL, NULL));
    CHECK(clFinish(q));

    /* An image from pageable memory. */
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 64, .image_height = 64};
    cl_mem image = clCreateImage(g_ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    CHECK_ERR(err);
    size_t iorigin[3] = {0, 0, 0}, iregion[3] = {64, 64, 1};
    scenario("image-write");
    CHECK(clEnqueueWriteImage(q, image, CL_TRUE, iorigin, iregion, 0, 0, pageable, 0, NULL, NULL));

    /* A refused call: clxfer classifies it `unknown` with the driver's error. */
    scenario("invalid-write");
    cl_int bad = clEnqueueWriteBuffer(q, NULL, CL_TRUE, 0, size, pageable, 0, NULL, NULL);
    mix_int(bad);

    if (ndev == 2) {
        cl_command_queue q1 = clCreateCommandQueueWithProperties(g_ctx, devs[1], NULL, &err);
        CHECK_ERR(err);
        scenario("migrate-between-devices");
        CHECK(clEnqueueMigrateMemObjects(q1, 1, &plain, 0, 0, NULL, NULL));
        scenario("copy-between-devices");
        CHECK(clEnqueueCopyBuffer(q1, other, fresh, 0, 0, size, 0, NULL, NULL));
        /* A buffer last written on device 0, used by a kernel on device 1: it moves at first use. */
        cl_program prog = clCreateProgramWithSource(g_ctx, 1, &SRC, NULL, &err);
        CHECK_ERR(err);
        CHECK(clBuildProgram(prog, 0, NULL, "", NULL, NULL));
        cl_kernel k = clCreateKernel(prog, "scale", &err);
        CHECK_ERR(err);
        scenario("setup");
        CHECK(clEnqueueWriteBuffer(q, ahp, CL_TRUE, 0, size, pageable, 0, NULL, NULL));
        float s = 2.0f;
        CHECK(clSetKernelArg(k, 0, sizeof ahp, &ahp));
        CHECK(clSetKernelArg(k, 1, sizeof s, &s));
        size_t global = 64;
        scenario("kernel-first-use");
        CHECK(clEnqueueNDRangeKernel(q1, k, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(clFinish(q1));
        clReleaseKernel(k);
        clReleaseProgram(prog);
        clReleaseCommandQueue(q1);
    }
    /* An out-of-order queue whose second command finishes first: the first waits for a user event
     * that is set only once the second has finished. */
    scenario("setup");
    {
        cl_command_queue qo = make_queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
        cl_event gate = clCreateUserEvent(g_ctx, &err), second;
        CHECK_ERR(err);
        CHECK(clEnqueueWriteBuffer(qo, other, CL_FALSE, 0, 4096, pageable, 1, &gate, NULL));
        CHECK(clEnqueueWriteBuffer(qo, plain, CL_FALSE, 0, 4096, pageable, 0, NULL, &second));
        CHECK(clWaitForEvents(1, &second));
        CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
        CHECK(clFinish(qo));
        CHECK(clReleaseEvent(second));
        CHECK(clReleaseEvent(gate));
        CHECK(clReleaseCommandQueue(qo));
    }
    /* Released for real (destructor callback): its range is no longer registered. */
    CHECK(clReleaseMemObject(uhp));
    scenario("after-release-uhp-write");
    CHECK(clEnqueueWriteBuffer(q, plain, CL_TRUE, 0, size / 2, block + 4096 + 64, 0, NULL, NULL));
    scenario("done");
    CHECK(clEnqueueReadBuffer(q, other, CL_TRUE, 0, size, back, 0, NULL, NULL));
    mix(back, size);
    cl_mem all[] = {plain, other, ahp, sub, fresh, image};
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++) CHECK(clReleaseMemObject(all[i]));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(g_ctx));
    printf("devices %u\nchecksum %016llx\n", ndev, (unsigned long long)g_sum);
    return 0;
}
