/* Issue #26, question 2 of the brief: a program ported from cudaMallocHost keeps one large
 * ALLOC_HOST_PTR staging region (16 MiB), maps it once, and writes a device buffer from it in
 * 1 MiB blocks. Under NVIDIA's rules the region costs as much device memory again; a ring of
 * three 1 MiB staging buffers would do. */
#include "common.h"

int main(void) {
    setup();
    cl_int err;
    cl_command_queue q = make_queue(0);
    enum { REGION = 16 << 20, BLOCK = 1 << 20 };
    cl_mem staging = clCreateBuffer(g_ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, REGION, NULL, &err);
    CHECK_ERR(err);
    cl_mem dev = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, REGION, NULL, &err);
    CHECK_ERR(err);
    char *p = clEnqueueMapBuffer(q, staging, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, REGION, 0, NULL, NULL, &err);
    CHECK_ERR(err);
    memset(p, 7, REGION);
    for (int i = 0; i < REGION / BLOCK; i++)
        CHECK(clEnqueueWriteBuffer(q, dev, CL_FALSE, (size_t)i * BLOCK, BLOCK, p + (size_t)i * BLOCK, 0, NULL, NULL));
    CHECK(clFinish(q));
    CHECK(clEnqueueUnmapMemObject(q, staging, p, 0, NULL, NULL));
    CHECK(clFinish(q));
    CHECK(clReleaseMemObject(dev));
    CHECK(clReleaseMemObject(staging));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(g_ctx));
    printf("OK\n");
    return 0;
}
