/* Issue #26: a program ported from CUDA asks for clEnqueueMemObjectRegisterKHR (which a popular
 * answer online recommends and no OpenCL implementation has), twice and through both lookups,
 * and for an extension function this platform lacks; then writes a buffer from malloc'd memory.
 * It prints what each lookup returned. */
#include "common.h"

int main(void) {
    setup();
    cl_int err;
    const char *names[] = {"clEnqueueMemObjectRegisterKHR", "clEnqueueMemObjectRegisterKHR",
                           "clNoSuchFunctionEXT"};
    for (int i = 0; i < 3; i++) {
        void *f = clGetExtensionFunctionAddressForPlatform(g_platform, names[i]);
        printf("%s: %s\n", names[i], f ? "found" : "NULL");
    }
    void *f = clGetExtensionFunctionAddress("clEnqueueMemObjectRegisterKHR");
    printf("clGetExtensionFunctionAddress: %s\n", f ? "found" : "NULL");
    cl_command_queue q = make_queue(0);
    enum { N = 1 << 20 };
    char *host = calloc(N, 1);
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, N, NULL, &err);
    CHECK_ERR(err);
    CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, N, host, 0, NULL, NULL));
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(g_ctx));
    free(host);
    printf("OK\n");
    return 0;
}
