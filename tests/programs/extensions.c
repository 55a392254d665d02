/* Extension functions through clGetExtensionFunctionAddress(ForPlatform): which each platform offers,
 * and, where a platform offers cl_intel_unified_shared_memory (the test ICD), a USM round trip:
 * host alloc, fill, memcpy, migrate, free, plus invalid calls. */
#include "common.h"

typedef void *(CL_API_CALL *host_alloc_fn)(cl_context, const cl_mem_properties_intel *, size_t, cl_uint, cl_int *);
typedef void *(CL_API_CALL *dev_alloc_fn)(cl_context, cl_device_id, const cl_mem_properties_intel *, size_t, cl_uint, cl_int *);
typedef cl_int(CL_API_CALL *free_fn)(cl_context, void *);
typedef cl_int(CL_API_CALL *memcpy_fn)(cl_command_queue, cl_bool, void *, const void *, size_t, cl_uint, const cl_event *, cl_event *);
typedef cl_int(CL_API_CALL *fill_fn)(cl_command_queue, void *, const void *, size_t, size_t, cl_uint, const cl_event *, cl_event *);
typedef cl_int(CL_API_CALL *migrate_fn)(cl_command_queue, const void *, size_t, cl_mem_migration_flags, cl_uint, const cl_event *, cl_event *);

static const char *NAMES[] = {"clHostMemAllocINTEL", "clDeviceMemAllocINTEL", "clSharedMemAllocINTEL",
                              "clMemFreeINTEL", "clEnqueueMemcpyINTEL", "clEnqueueMemFillINTEL",
                              "clEnqueueMigrateMemINTEL", "clEnqueueSVMMemcpyARM", "clImportMemoryARM",
                              "clIcdGetPlatformIDsKHR", "clNoSuchFunction"};

static void usm_round_trip(cl_platform_id p) {
    cl_device_id d;
    cl_context ctx;
    cl_command_queue q = queue_on(p, &d, &ctx);
    cl_int err;
    host_alloc_fn host_alloc = (host_alloc_fn)clGetExtensionFunctionAddressForPlatform(p, "clHostMemAllocINTEL");
    dev_alloc_fn dev_alloc = (dev_alloc_fn)clGetExtensionFunctionAddressForPlatform(p, "clDeviceMemAllocINTEL");
    free_fn mem_free = (free_fn)clGetExtensionFunctionAddressForPlatform(p, "clMemFreeINTEL");
    memcpy_fn copy = (memcpy_fn)clGetExtensionFunctionAddressForPlatform(p, "clEnqueueMemcpyINTEL");
    fill_fn fill = (fill_fn)clGetExtensionFunctionAddressForPlatform(p, "clEnqueueMemFillINTEL");
    migrate_fn migrate = (migrate_fn)clGetExtensionFunctionAddressForPlatform(p, "clEnqueueMigrateMemINTEL");

    int *h = host_alloc(ctx, NULL, 4096, 0, &err);
    CHECK_ERR(err);
    int *dv = dev_alloc(ctx, d, NULL, 4096, 0, &err);
    CHECK_ERR(err);
    int pattern = 0x1234;
    CHECK(fill(q, h, &pattern, sizeof pattern, 4096, 0, NULL, NULL));
    CHECK(copy(q, CL_TRUE, dv, h, 4096, 0, NULL, NULL));
    int back[1024];
    CHECK(copy(q, CL_TRUE, back, dv, sizeof back, 0, NULL, NULL));
    CHECK(migrate(q, dv, 4096, 0, 0, NULL, NULL));
    mix(back, sizeof back);
    printf("usm: fill+copy ok, back[1023]=%#x\n", back[1023]);
    void *none = host_alloc(NULL, NULL, 64, 0, &err);
    printf("usm: alloc(NULL context) -> %s, err %d\n", none ? "ptr" : "null", err);
    printf("usm: memcpy(NULL queue) -> %d\n", copy(NULL, CL_TRUE, back, h, 4, 0, NULL, NULL));
    printf("usm: free(NULL context) -> %d\n", mem_free(NULL, h));
    CHECK(mem_free(ctx, h));
    CHECK(mem_free(ctx, dv));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
}

int main(void) {
    cl_platform_id ps[8];
    cl_uint n = 0;
    CHECK(clGetPlatformIDs(8, ps, &n));
    for (cl_uint i = 0; i < n && i < 8; i++) {
        char name[128] = {0};
        CHECK(clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL));
        printf("platform %s\n", name);
        int usm = 1;
        for (size_t k = 0; k < sizeof NAMES / sizeof *NAMES; k++) {
            void *f = clGetExtensionFunctionAddressForPlatform(ps[i], NAMES[k]);
            printf("  %-26s %s\n", NAMES[k], f ? "yes" : "no");
            if (k < 7 && !f) usm = 0;
        }
        if (usm) usm_round_trip(ps[i]);
    }
    /* Without a platform: the loader asks each driver. */
    printf("any clHostMemAllocINTEL: %s\n", clGetExtensionFunctionAddress("clHostMemAllocINTEL") ? "yes" : "no");
    printf("checksum %016llx\n", (unsigned long long)g_sum);
    return 0;
}
