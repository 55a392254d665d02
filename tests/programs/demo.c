/* The demo: a program ported from CUDA the usual way, with the patterns users ask about. It
 * writes from malloc'd memory (staged on discrete GPUs), blocking and not, then through the pinned
 * recipe (a mapped ALLOC_HOST_PTR buffer); writes from a USE_HOST_PTR region; runs a kernel; maps
 * the result for reading, and maps for writing with and without WRITE_INVALIDATE_REGION; migrates
 * to the host and back; reads on a second queue; and sends many small pieces one by one. It
 * prints the bandwidth it measured itself. */
#define _POSIX_C_SOURCE 199309L
#include "common.h"
#include <time.h>

#define MIB (1024 * 1024)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static const char *SRC = "__kernel void axpy(__global float *y, float a) { y[get_global_id(0)] *= a; }\n";

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? (size_t)atoi(argv[1]) : 16;
    int reps = argc > 2 ? atoi(argv[2]) : 4;
    size_t bytes = mib * MIB;
    setup();
    cl_command_queue q = make_queue(0);
    cl_int err;
    cl_mem dev = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK_ERR(err);

    float *pageable = malloc(bytes);
    for (size_t i = 0; i < bytes / sizeof(float); i++) pageable[i] = (float)(i % 1000);
    double t0 = now();
    for (int r = 0; r < reps; r++) CHECK(clEnqueueWriteBuffer(q, dev, CL_TRUE, 0, bytes, pageable, 0, NULL, NULL));
    double t_pageable = now() - t0;

    cl_mem staging = clCreateBuffer(g_ctx, CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
    CHECK_ERR(err);
    float *pinned = clEnqueueMapBuffer(q, staging, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, bytes, 0, NULL, NULL, &err);
    CHECK_ERR(err);
    memcpy(pinned, pageable, bytes);
    t0 = now();
    for (int r = 0; r < reps; r++) CHECK(clEnqueueWriteBuffer(q, dev, CL_FALSE, 0, bytes, pinned, 0, NULL, NULL));
    CHECK(clFinish(q));
    double t_pinned = now() - t0;

    cl_program p = build(SRC);
    cl_kernel k = clCreateKernel(p, "axpy", &err);
    CHECK_ERR(err);
    float a = 0.5f;
    CHECK(clSetKernelArg(k, 0, sizeof dev, &dev));
    CHECK(clSetKernelArg(k, 1, sizeof a, &a));
    size_t global = bytes / sizeof(float);
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    float *result = clEnqueueMapBuffer(q, dev, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL, NULL, &err);
    CHECK_ERR(err);
    mix(result, bytes);
    CHECK(clEnqueueUnmapMemObject(q, dev, result, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dev, CL_TRUE, 0, bytes, pageable, 0, NULL, NULL));

    /* Non-blocking writes from malloc'd memory: on NVIDIA they hold the host anyway. */
    for (int r = 0; r < reps; r++) CHECK(clEnqueueWriteBuffer(q, dev, CL_FALSE, 0, bytes, pageable, 0, NULL, NULL));
    CHECK(clFinish(q));

    /* A USE_HOST_PTR region (registered on NVIDIA): transfers from inside it are pinned. */
    void *region = NULL;
    if (posix_memalign(&region, 4096, bytes)) return 1;
    memcpy(region, pageable, bytes);
    cl_mem uhp = clCreateBuffer(g_ctx, CL_MEM_USE_HOST_PTR, bytes, region, &err);
    CHECK_ERR(err);
    CHECK(clEnqueueWriteBuffer(q, dev, CL_TRUE, 0, bytes, region, 0, NULL, NULL));

    /* Maps for writing: WRITE copies the contents first, WRITE_INVALIDATE_REGION does not. */
    float *w = clEnqueueMapBuffer(q, dev, CL_TRUE, CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &err);
    CHECK_ERR(err);
    memset(w, 0, bytes);
    CHECK(clEnqueueUnmapMemObject(q, dev, w, 0, NULL, NULL));
    w = clEnqueueMapBuffer(q, dev, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, bytes, 0, NULL, NULL, &err);
    CHECK_ERR(err);
    memset(w, 1, bytes);
    CHECK(clEnqueueUnmapMemObject(q, dev, w, 0, NULL, NULL));

    /* To the host and back; flags 0 is only a marker on some drivers. */
    CHECK(clEnqueueMigrateMemObjects(q, 1, &dev, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL));
    CHECK(clEnqueueMigrateMemObjects(q, 1, &dev, 0, 0, NULL, NULL));

    /* A second queue reads the result into the pinned staging memory. */
    cl_command_queue q2 = make_queue(0);
    CHECK(clFinish(q));
    CHECK(clEnqueueReadBuffer(q2, dev, CL_TRUE, 0, bytes, pinned, 0, NULL, NULL));

    /* Many small pieces, one call each: latency-bound. */
    for (int i = 0; i < 256; i++)
        CHECK(clEnqueueWriteBuffer(q2, dev, CL_FALSE, (size_t)i * 4096, 4096, (char *)pageable + (size_t)i * 4096, 0, NULL, NULL));
    CHECK(clFinish(q2));

    CHECK(clEnqueueUnmapMemObject(q, staging, pinned, 0, NULL, NULL));
    CHECK(clFinish(q));
    CHECK(clReleaseMemObject(uhp));
    CHECK(clReleaseCommandQueue(q2));
    free(region);

    double total = (double)bytes * reps / 1e9;
    printf("demo: %d x %zu MiB writes from malloc'd memory:     %6.2f GB/s\n", reps, mib, total / t_pageable);
    printf("demo: %d x %zu MiB writes from a mapped ALLOC_HOST_PTR: %6.2f GB/s\n", reps, mib, total / t_pinned);
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(p));
    CHECK(clReleaseMemObject(staging));
    CHECK(clReleaseMemObject(dev));
    CHECK(clReleaseCommandQueue(q));
    free(pageable);
    finish_program();
    return 0;
}
