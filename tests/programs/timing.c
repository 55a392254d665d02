/* Device timing against a driver that misbehaves (the test ICD, TESTICD_MODE): USM memcpys on the
 * test platform, half with the program's own events (released at once, before clxfer is done with
 * them), half without. The program's results must not change. */
#include "common.h"

typedef void *(CL_API_CALL *host_alloc_fn)(cl_context, const cl_mem_properties_intel *, size_t, cl_uint, cl_int *);
typedef cl_int(CL_API_CALL *memcpy_fn)(cl_command_queue, cl_bool, void *, const void *, size_t, cl_uint, const cl_event *, cl_event *);

int main(void) {
    cl_platform_id ps[8];
    cl_uint n = 0;
    CHECK(clGetPlatformIDs(8, ps, &n));
    for (cl_uint i = 0; i < n && i < 8; i++) {
        memcpy_fn copy = (memcpy_fn)clGetExtensionFunctionAddressForPlatform(ps[i], "clEnqueueMemcpyINTEL");
        host_alloc_fn host_alloc = (host_alloc_fn)clGetExtensionFunctionAddressForPlatform(ps[i], "clHostMemAllocINTEL");
        if (!copy || !host_alloc) continue;
        cl_device_id d;
        cl_context ctx;
        cl_command_queue q = queue_on(ps[i], &d, &ctx);
        cl_int err;
        int *h = host_alloc(ctx, NULL, 4096, 0, &err);
        CHECK_ERR(err);
        int back[1024];
        for (int k = 0; k < 1024; k++) back[k] = k;
        for (int k = 0; k < 8; k++) {
            cl_event e = NULL;
            CHECK(copy(q, CL_TRUE, h, back, sizeof back, 0, NULL, k % 2 ? &e : NULL));
            if (e) CHECK(clReleaseEvent(e));
            CHECK(copy(q, CL_TRUE, back, h, sizeof back, 0, NULL, NULL));
        }
        CHECK(clFinish(q));
        mix(back, sizeof back);
        printf("timing: 16 copies on the test platform\n");
        CHECK(clReleaseCommandQueue(q));
        CHECK(clReleaseContext(ctx));
    }
    printf("checksum %016llx\n", (unsigned long long)g_sum);
    return 0;
}
