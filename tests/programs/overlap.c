/* A transfer while a kernel runs (issue #24, question 2 of the brief): `overlap` puts the kernel
 * and the write on two queues of one device, `serial` both on one in-order queue. */
#include "common.h"
#include <string.h>

int main(int argc, char **argv) {
    int serial = argc > 1 && strcmp(argv[1], "serial") == 0;
    int rounds = argc > 2 ? atoi(argv[2]) : 4000;
    setup();
    cl_int err;
    cl_command_queue qk = make_queue(0);
    cl_command_queue qt = serial ? qk : make_queue(0);
    cl_program p = build(SPIN_SRC);
    cl_kernel k = clCreateKernel(p, "spin", &err);
    CHECK_ERR(err);
    enum { N = 1 << 12, BIG = 32 << 20 };
    cl_mem out = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
    CHECK_ERR(err);
    cl_mem big = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, BIG, NULL, &err);
    CHECK_ERR(err);
    char *host = malloc(BIG);
    memset(host, 7, BIG);
    CHECK(clSetKernelArg(k, 0, sizeof out, &out));
    CHECK(clSetKernelArg(k, 1, sizeof rounds, &rounds));
    size_t global = N, local = N;
    for (int i = 0; i < 4; i++) {
        CHECK(clEnqueueNDRangeKernel(qk, k, 1, NULL, &global, &local, 0, NULL, NULL));
        CHECK(clEnqueueWriteBuffer(qt, big, CL_FALSE, 0, BIG, host, 0, NULL, NULL));
    }
    CHECK(clFinish(qk));
    CHECK(clFinish(qt));
    static int back[N];
    CHECK(clEnqueueReadBuffer(qk, out, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    mix(back, sizeof back);
    free(host);
    CHECK(clReleaseMemObject(out));
    CHECK(clReleaseMemObject(big));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(p));
    if (!serial) CHECK(clReleaseCommandQueue(qt));
    CHECK(clReleaseCommandQueue(qk));
    finish_program();
    return 0;
}
