/* Moves a recognizable secret through every kind of command: host memory written and read back,
 * a mapped region filled with it, a fill pattern, a kernel's scalar argument, a buffer created
 * from it (COPY_HOST_PTR, USE_HOST_PTR). clxfer must record none of it: the test searches the
 * trace and the report for the secret. */
#include "common.h"

static const char SECRET[16] = "S3CR3T-clxfer-42";

int main(void) {
    setup();
    cl_command_queue q = make_queue(0);
    cl_int err;
    enum { N = 1 << 14 };
    static char host[N], back[N];
    for (int i = 0; i < N; i++) host[i] = SECRET[i % 16];
    cl_mem copy = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N, host, &err);
    CHECK_ERR(err);
    cl_mem use = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, N, host, &err);
    CHECK_ERR(err);
    CHECK(clEnqueueWriteBuffer(q, copy, CL_TRUE, 0, N, host, 0, NULL, NULL));
    CHECK(clEnqueueFillBuffer(q, use, SECRET, 16, 0, N, 0, NULL, NULL));
    char *m = clEnqueueMapBuffer(q, copy, CL_TRUE, CL_MAP_WRITE, 0, N, 0, NULL, NULL, &err);
    CHECK_ERR(err);
    memcpy(m, host, N);
    CHECK(clEnqueueUnmapMemObject(q, copy, m, 0, NULL, NULL));
    cl_program p = build("__kernel void k(__global char *a, ulong s) { a[get_global_id(0)] ^= (char)s; }\n");
    cl_kernel k = clCreateKernel(p, "k", &err);
    CHECK_ERR(err);
    cl_ulong s;
    memcpy(&s, SECRET, sizeof s);
    CHECK(clSetKernelArg(k, 0, sizeof copy, &copy));
    CHECK(clSetKernelArg(k, 1, sizeof s, &s));
    size_t global = N;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, copy, CL_TRUE, 0, N, back, 0, NULL, NULL));
    mix(back, N);
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(p));
    CHECK(clReleaseMemObject(copy));
    CHECK(clReleaseMemObject(use));
    CHECK(clReleaseCommandQueue(q));
    finish_program();
    return 0;
}
