/* The overhead benchmarks. Default: a storm of small (4 KiB) write/read/map/unmap enqueues on one
 * queue; prints the wall time per enqueue in microseconds. With "calls": pairs of the cheapest calls
 * (clRetainMemObject/clReleaseMemObject), where the driver does almost nothing, so clxfer's own cost
 * per call shows; prints nanoseconds per call. Usage: storm [iterations] [calls] */
#define _POSIX_C_SOURCE 199309L
#include "common.h"
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 20000;
    setup();
    cl_command_queue q = make_queue(0);
    cl_int err;
    char host[4096] = {1};
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CHECK_ERR(err);
    if (argc > 2 && !strcmp(argv[2], "calls")) {
        double t0 = now();
        for (int i = 0; i < iters; i++) {
            CHECK(clRetainMemObject(buf));
            CHECK(clReleaseMemObject(buf));
        }
        printf("ns_per_call %.1f\n", (now() - t0) * 1e9 / (2.0 * iters));
        return 0;
    }
    for (int warm = 0; warm < 100; warm++)
        CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
    double t0 = now();
    for (int i = 0; i < iters; i++) {
        host[0] = (char)i;
        CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
        void *m = clEnqueueMapBuffer(q, buf, CL_TRUE, CL_MAP_READ, 0, sizeof host, 0, NULL, NULL, &err);
        CHECK_ERR(err);
        CHECK(clEnqueueUnmapMemObject(q, buf, m, 0, NULL, NULL));
    }
    CHECK(clFinish(q));
    double us = (now() - t0) * 1e6 / (4.0 * iters);
    printf("us_per_enqueue %.3f\n", us);
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(g_ctx));
    return 0;
}
