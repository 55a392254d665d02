/* SVM allocations and the device memory they take (issue #26): two coarse-grain allocations of
 * 8 MiB, a copy between them, one freed, then a third; a fine-grain one where the device has
 * fine-grain SVM. One device, one context: clxfer counts each allocation against the device its
 * rules put its storage on. Prints what it copied, as a checksum. */
#include "common.h"

#define SZ (8u << 20)

int main(void) {
    setup();
    cl_command_queue q = make_queue(0);
    char *a = clSVMAlloc(g_ctx, CL_MEM_READ_WRITE, SZ, 0);
    char *b = clSVMAlloc(g_ctx, CL_MEM_READ_WRITE, SZ, 0);
    if (!a || !b) {
        printf("FAIL no coarse-grain SVM\n");
        return 1;
    }
    CHECK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, a, SZ, 0, NULL, NULL));
    for (unsigned i = 0; i < SZ; i++) a[i] = (char)(i * 7);
    CHECK(clEnqueueSVMUnmap(q, a, 0, NULL, NULL));
    CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, b, a, SZ, 0, NULL, NULL));
    clSVMFree(g_ctx, a);
    char *c = clSVMAlloc(g_ctx, CL_MEM_READ_WRITE, SZ / 2, 0);
    CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, c, b, SZ / 2, 0, NULL, NULL));
    CHECK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, c, SZ / 2, 0, NULL, NULL));
    mix(c, SZ / 2);
    CHECK(clEnqueueSVMUnmap(q, c, 0, NULL, NULL));
    CHECK(clFinish(q));
    cl_device_svm_capabilities caps = 0;
    CHECK(clGetDeviceInfo(g_device, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL));
    if (caps & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) {
        char *f = clSVMAlloc(g_ctx, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, SZ, 0);
        if (f) {
            CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, f, b, SZ, 0, NULL, NULL));
            CHECK(clFinish(q));
            clSVMFree(g_ctx, f);
        }
    }
    clSVMFree(g_ctx, b);
    clSVMFree(g_ctx, c);
    printf("fine-grain %d\n", (caps & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) != 0);
    finish_program();
    return 0;
}
