/* Issue #43, question 2 of the brief: a pipeline ported from cudaMallocHost + cudaMemcpyAsync.
 * Chunks go up on one queue, a kernel works on each on a second (waiting for its upload), and
 * the results come back on the first (waiting for the kernel), non-blocking throughout.
 * "staged" (the port as written): the host region is posix_memalign'd and mlock'd, as the CUDA
 * code pinned it; under NVIDIA's rules such memory is pageable to the driver, so every transfer
 * is staged and holds the host. "pinned" (the fix clxfer suggests): the host region is a mapped
 * CL_MEM_ALLOC_HOST_PTR buffer. Same bytes, same results: the checksum is the same.
 * Usage: pipeline staged|pinned [chunks] */
#define _POSIX_C_SOURCE 200809L
#include "common.h"
#include <sys/mman.h>

static const char *SRC =
    "__kernel void twice(__global const uint *in, __global uint *out) {\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = in[i] * 2u + 1u;\n"
    "}\n";

int main(int argc, char **argv) {
    int pinned = argc > 1 && strcmp(argv[1], "pinned") == 0;
    int chunks = argc > 2 ? atoi(argv[2]) : 8;
    enum { CHUNK = 1 << 20 };
    size_t total = (size_t)chunks * CHUNK;
    setup();
    cl_int err;
    cl_command_queue copy = make_queue(0), compute = make_queue(0);
    cl_program prog = clCreateProgramWithSource(g_ctx, 1, &SRC, NULL, &err);
    CHECK_ERR(err);
    CHECK(clBuildProgram(prog, 1, &g_device, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "twice", &err);
    CHECK_ERR(err);

    /* The host region: 'in' then 'out', each `total` bytes. */
    cl_mem region = NULL;
    unsigned char *host;
    if (pinned) {
        region = clCreateBuffer(g_ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, 2 * total, NULL, &err);
        CHECK_ERR(err);
        host = clEnqueueMapBuffer(copy, region, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, 2 * total, 0,
                                  NULL, NULL, &err);
        CHECK_ERR(err);
    } else {
        void *p = NULL;
        if (posix_memalign(&p, 4096, 2 * total) != 0) {
            printf("FAIL posix_memalign\n");
            return 1;
        }
        host = p;
        (void)mlock(host, 2 * total); /* what cudaMallocHost did; not pinning to OpenCL */
    }
    for (size_t i = 0; i < total / 4; i++) ((uint32_t *)host)[i] = (uint32_t)(i * 2654435761u);

    cl_mem din = clCreateBuffer(g_ctx, CL_MEM_READ_ONLY, CHUNK, NULL, &err);
    CHECK_ERR(err);
    cl_mem dout = clCreateBuffer(g_ctx, CL_MEM_WRITE_ONLY, CHUNK, NULL, &err);
    CHECK_ERR(err);
    CHECK(clSetKernelArg(k, 0, sizeof din, &din));
    CHECK(clSetKernelArg(k, 1, sizeof dout, &dout));
    size_t n = CHUNK / 4;
    cl_event back = NULL;
    for (int c = 0; c < chunks; c++) {
        cl_event up, ran;
        /* The upload waits for the last read-back: one pair of device buffers is reused. */
        CHECK(clEnqueueWriteBuffer(copy, din, CL_FALSE, 0, CHUNK, host + (size_t)c * CHUNK,
                                   back ? 1 : 0, back ? &back : NULL, &up));
        if (back) CHECK(clReleaseEvent(back));
        CHECK(clEnqueueNDRangeKernel(compute, k, 1, NULL, &n, NULL, 1, &up, &ran));
        CHECK(clEnqueueReadBuffer(copy, dout, CL_FALSE, 0, CHUNK, host + total + (size_t)c * CHUNK, 1,
                                  &ran, &back));
        CHECK(clReleaseEvent(up));
        CHECK(clReleaseEvent(ran));
    }
    CHECK(clWaitForEvents(1, &back));
    CHECK(clReleaseEvent(back));
    CHECK(clFinish(copy));
    CHECK(clFinish(compute));
    mix(host + total, total);
    printf("checksum %016llx\n", (unsigned long long)g_sum);

    if (pinned) {
        CHECK(clEnqueueUnmapMemObject(copy, region, host, 0, NULL, NULL));
        CHECK(clFinish(copy));
        CHECK(clReleaseMemObject(region));
    } else {
        free(host);
    }
    CHECK(clReleaseMemObject(din));
    CHECK(clReleaseMemObject(dout));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseCommandQueue(copy));
    CHECK(clReleaseCommandQueue(compute));
    CHECK(clReleaseContext(g_ctx));
    return 0;
}
