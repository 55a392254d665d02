/* Issue #43 and #57, question 2 of the brief: a pipeline ported from cudaMallocHost +
 * cudaMemcpyAsync. Chunks go up on one queue into one of two device slots, a kernel works on
 * each on a second queue (waiting for its upload), and the results come back on the first
 * (waiting for the kernel), non-blocking throughout; a slot is reused once its last read-back
 * is done. The host region holds 'in' then 'out'. Variants, by how the region is made:
 *   staged  (the port as written) posix_memalign'd and mlock'd, as the CUDA code pinned it;
 *           under NVIDIA's rules such memory is pageable to the driver: every transfer is
 *           staged and holds the host;
 *   pinned  a mapped CL_MEM_ALLOC_HOST_PTR buffer (device memory of its size on NVIDIA);
 *   svm     coarse-grain clSVMAlloc, mapped for the host (device memory of its size on NVIDIA);
 *   uhp     the staged variant's region, with a CL_MEM_USE_HOST_PTR buffer over it that is never
 *           used itself: NVIDIA registers (pins) the pages, and no device storage is made.
 * Same bytes, same results: the checksum is the same.
 * Usage: pipeline staged|pinned|svm|uhp [chunks=8] [chunk MiB=1] [region MiB=2*chunks*chunk]
 *        [light]
 * (a region larger than the transfers stands for the port's 10 GB: only the transfers' part is
 * touched, and locked; 0: the default). "light": the kernel works on one word in 1,024 (the
 * results start as a fill), so that the transfers' time is the run's, not PoCL's kernels'.
 * PIPELINE_READ_QUEUE=1: the read-backs go on a third queue of their own, so that an upload does
 * not wait in the first queue's order behind a read-back that waits for its kernel. */
#define _POSIX_C_SOURCE 200809L
#include "common.h"
#include <sys/mman.h>

static const char *SRC =
    "__kernel void twice(__global const uint *in, __global uint *out) {\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = in[i] * 2u + 1u;\n"
    "}\n";

int main(int argc, char **argv) {
    const char *variant = argc > 1 ? argv[1] : "staged";
    int pinned = strcmp(variant, "pinned") == 0, svm = strcmp(variant, "svm") == 0;
    int uhp = strcmp(variant, "uhp") == 0;
    int chunks = argc > 2 ? atoi(argv[2]) : 8;
    size_t CHUNK = (size_t)(argc > 3 ? atoi(argv[3]) : 1) << 20;
    size_t total = (size_t)chunks * CHUNK;
    size_t size = argc > 4 ? (size_t)atoi(argv[4]) << 20 : 2 * total;
    if (size < 2 * total) size = 2 * total;
    int light = argc > 5 && strcmp(argv[5], "light") == 0;
    setup();
    cl_int err;
    cl_command_queue copy = make_queue(0), compute = make_queue(0);
    const char *own = getenv("PIPELINE_READ_QUEUE");
    cl_command_queue readq = own && !strcmp(own, "1") ? make_queue(0) : copy;
    cl_program prog = clCreateProgramWithSource(g_ctx, 1, &SRC, NULL, &err);
    CHECK_ERR(err);
    CHECK(clBuildProgram(prog, 1, &g_device, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "twice", &err);
    CHECK_ERR(err);

    /* The host region: 'in' then 'out', each `total` bytes, in `size`. */
    cl_mem region = NULL;
    unsigned char *host;
    if (pinned) {
        region = clCreateBuffer(g_ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, size, NULL, &err);
        CHECK_ERR(err);
        host = clEnqueueMapBuffer(copy, region, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, size, 0,
                                  NULL, NULL, &err);
        CHECK_ERR(err);
    } else if (svm) {
        host = clSVMAlloc(g_ctx, CL_MEM_READ_WRITE, size, 0);
        if (!host) {
            printf("FAIL clSVMAlloc\n");
            return 1;
        }
        CHECK(clEnqueueSVMMap(copy, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, host, size, 0, NULL, NULL));
    } else {
        void *p = NULL;
        if (posix_memalign(&p, 4096, size) != 0) {
            printf("FAIL posix_memalign\n");
            return 1;
        }
        host = p;
        (void)mlock(host, 2 * total); /* what cudaMallocHost did; not pinning to OpenCL */
        if (uhp) {
            region = clCreateBuffer(g_ctx, CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE, size, host, &err);
            CHECK_ERR(err);
        }
    }
    for (size_t i = 0; i < total / 4; i++) ((uint32_t *)host)[i] = (uint32_t)(i * 2654435761u);

    /* Two device slots, as the port had: a chunk goes up while the last one is computed. */
    cl_mem din[2], dout[2];
    for (int s = 0; s < 2; s++) {
        din[s] = clCreateBuffer(g_ctx, CL_MEM_READ_ONLY, CHUNK, NULL, &err);
        CHECK_ERR(err);
        dout[s] = clCreateBuffer(g_ctx, CL_MEM_WRITE_ONLY, CHUNK, NULL, &err);
        CHECK_ERR(err);
    }
    size_t n = light ? CHUNK / 4096 : CHUNK / 4;
    if (light) {
        const cl_uint zero = 0;
        for (int s = 0; s < 2; s++)
            CHECK(clEnqueueFillBuffer(compute, dout[s], &zero, sizeof zero, 0, CHUNK, 0, NULL, NULL));
        CHECK(clFinish(compute));
    }
    cl_event back[2] = {NULL, NULL};
    for (int c = 0; c < chunks; c++) {
        int s = c % 2;
        cl_event up, ran;
        /* The upload waits for the slot's last read-back. */
        CHECK(clEnqueueWriteBuffer(copy, din[s], CL_FALSE, 0, CHUNK, host + (size_t)c * CHUNK,
                                   back[s] ? 1 : 0, back[s] ? &back[s] : NULL, &up));
        if (back[s]) CHECK(clReleaseEvent(back[s]));
        CHECK(clSetKernelArg(k, 0, sizeof din[s], &din[s]));
        CHECK(clSetKernelArg(k, 1, sizeof dout[s], &dout[s]));
        CHECK(clEnqueueNDRangeKernel(compute, k, 1, NULL, &n, NULL, 1, &up, &ran));
        CHECK(clEnqueueReadBuffer(readq, dout[s], CL_FALSE, 0, CHUNK, host + total + (size_t)c * CHUNK,
                                  1, &ran, &back[s]));
        CHECK(clReleaseEvent(up));
        CHECK(clReleaseEvent(ran));
    }
    for (int s = 0; s < 2; s++)
        if (back[s]) {
            CHECK(clWaitForEvents(1, &back[s]));
            CHECK(clReleaseEvent(back[s]));
        }
    CHECK(clFinish(readq));
    CHECK(clFinish(copy));
    CHECK(clFinish(compute));
    mix(host + total, total);
    printf("checksum %016llx\n", (unsigned long long)g_sum);

    if (pinned) {
        CHECK(clEnqueueUnmapMemObject(copy, region, host, 0, NULL, NULL));
        CHECK(clFinish(copy));
        CHECK(clReleaseMemObject(region));
    } else if (svm) {
        CHECK(clEnqueueSVMUnmap(copy, host, 0, NULL, NULL));
        CHECK(clFinish(copy));
        clSVMFree(g_ctx, host);
    } else {
        if (region) CHECK(clReleaseMemObject(region));
        free(host);
    }
    for (int s = 0; s < 2; s++) {
        CHECK(clReleaseMemObject(din[s]));
        CHECK(clReleaseMemObject(dout[s]));
    }
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
    if (readq != copy) CHECK(clReleaseCommandQueue(readq));
    CHECK(clReleaseCommandQueue(copy));
    CHECK(clReleaseCommandQueue(compute));
    CHECK(clReleaseContext(g_ctx));
    return 0;
}
