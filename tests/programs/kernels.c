/* Kernels and the wait of a blocking read behind them (issue #24): three launches of a kernel that
 * spins for some milliseconds, then a blocking read of what it wrote, on one in-order queue. */
#include "common.h"

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 20000;
    setup();
    cl_int err;
    cl_command_queue q = make_queue(0);
    cl_program p = build(SPIN_SRC);
    cl_kernel k = clCreateKernel(p, "spin", &err);
    CHECK_ERR(err);
    enum { N = 1 << 14 };
    static int back[N];
    cl_mem out = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof back, NULL, &err);
    CHECK_ERR(err);
    CHECK(clSetKernelArg(k, 0, sizeof out, &out));
    CHECK(clSetKernelArg(k, 1, sizeof rounds, &rounds));
    size_t global = N;
    for (int i = 0; i < 3; i++) CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    mix(back, sizeof back);
    CHECK(clReleaseMemObject(out));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(p));
    CHECK(clReleaseCommandQueue(q));
    finish_program();
    return 0;
}
