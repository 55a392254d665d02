/* Deliberate invalid calls: NULL pointers, NULL handles, zero and huge sizes, bad flags, mismatched
 * contexts. Prints each error code: clxfer must return exactly the driver's. (Garbage non-NULL
 * handles are left out: the ICD loader itself dereferences them.) */
#include "common.h"

#define SHOW(label, expr) printf("%-40s %d\n", label, (int)(expr))
#define SHOW_ERR(label, call)                                                          \
    do {                                                                               \
        cl_int e_ = 12345;                                                             \
        void *r_ = (void *)(call);                                                     \
        printf("%-40s %d %s\n", label, (int)e_, r_ ? "handle" : "null");              \
        if (r_) released(r_);                                                          \
    } while (0)
#define E (&e_)

static void released(void *p) { (void)p; }

int main(void) {
    setup();
    cl_command_queue q = make_queue(0);
    cl_int err;
    char small[2];
    float data[64] = {0};
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof data, NULL, &err);
    CHECK_ERR(err);
    cl_context other = clCreateContext(NULL, 1, &g_device, NULL, NULL, &err);
    CHECK_ERR(err);
    cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, sizeof data, NULL, &err);
    CHECK_ERR(err);

    SHOW("clGetPlatformIDs(0, NULL, NULL)", clGetPlatformIDs(0, NULL, NULL));
    SHOW("clGetPlatformInfo(bad param)", clGetPlatformInfo(g_platform, 0xdead, 0, NULL, NULL));
    SHOW("clGetDeviceIDs(bad type)", clGetDeviceIDs(g_platform, 0, 1, NULL, NULL));
    SHOW("clGetDeviceInfo(NULL device)", clGetDeviceInfo(NULL, CL_DEVICE_NAME, 0, NULL, NULL));
    SHOW("clGetDeviceInfo(bad param)", clGetDeviceInfo(g_device, 0xdead, 0, NULL, NULL));
    SHOW("clGetDeviceInfo(too small)", clGetDeviceInfo(g_device, CL_DEVICE_NAME, sizeof small, small, NULL));
    SHOW_ERR("clCreateBuffer(NULL context)", clCreateBuffer(NULL, 0, 64, NULL, E));
    SHOW_ERR("clCreateBuffer(size 0)", clCreateBuffer(g_ctx, 0, 0, NULL, E));
    SHOW_ERR("clCreateBuffer(huge)", clCreateBuffer(g_ctx, 0, (size_t)-1, NULL, E));
    SHOW_ERR("clCreateBuffer(USE_HOST_PTR, NULL)", clCreateBuffer(g_ctx, CL_MEM_USE_HOST_PTR, 64, NULL, E));
    SHOW_ERR("clCreateBuffer(ptr without flag)", clCreateBuffer(g_ctx, 0, 64, data, E));
    SHOW_ERR("clCreateBuffer(READ_ONLY|WRITE_ONLY)", clCreateBuffer(g_ctx, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64, NULL, E));
    SHOW_ERR("clCreateBuffer(USE|ALLOC)", clCreateBuffer(g_ctx, CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR, 64, data, E));
    SHOW("clCreateBuffer(bad flags, NULL errcode)", clCreateBuffer(g_ctx, 1ull << 40, 64, NULL, NULL) == NULL);
    SHOW("clEnqueueWriteBuffer(NULL queue)", clEnqueueWriteBuffer(NULL, buf, CL_TRUE, 0, 4, data, 0, NULL, NULL));
    SHOW("clEnqueueWriteBuffer(NULL buffer)", clEnqueueWriteBuffer(q, NULL, CL_TRUE, 0, 4, data, 0, NULL, NULL));
    SHOW("clEnqueueWriteBuffer(NULL ptr)", clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, 4, NULL, 0, NULL, NULL));
    SHOW("clEnqueueWriteBuffer(out of range)", clEnqueueWriteBuffer(q, buf, CL_TRUE, 250, 16, data, 0, NULL, NULL));
    SHOW("clEnqueueWriteBuffer(size 0)", clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, 0, data, 0, NULL, NULL));
    SHOW("clEnqueueWriteBuffer(huge)", clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, (size_t)-1, data, 0, NULL, NULL));
    SHOW("clEnqueueReadBuffer(wait list NULL)", clEnqueueReadBuffer(q, buf, CL_TRUE, 0, 4, data, 1, NULL, NULL));
    SHOW("clEnqueueReadBuffer(other context)", clEnqueueReadBuffer(q, foreign, CL_TRUE, 0, 4, data, 0, NULL, NULL));
    SHOW("clEnqueueCopyBuffer(overlap)", clEnqueueCopyBuffer(q, buf, buf, 0, 4, 64, 0, NULL, NULL));
    SHOW("clEnqueueCopyBuffer(other context)", clEnqueueCopyBuffer(q, buf, foreign, 0, 0, 64, 0, NULL, NULL));
    float pat = 1;
    SHOW("clEnqueueFillBuffer(pattern 3)", clEnqueueFillBuffer(q, buf, &pat, 3, 0, 64, 0, NULL, NULL));
    SHOW("clEnqueueFillBuffer(NULL pattern)", clEnqueueFillBuffer(q, buf, NULL, 4, 0, 64, 0, NULL, NULL));
    size_t o[3] = {0, 0, 0}, r0[3] = {0, 1, 1};
    SHOW("clEnqueueReadBufferRect(region 0)", clEnqueueReadBufferRect(q, buf, CL_TRUE, o, o, r0, 0, 0, 0, 0, data, 0, NULL, NULL));
    SHOW_ERR("clEnqueueMapBuffer(READ|INVALIDATE)", clEnqueueMapBuffer(q, buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION, 0, 4, 0, NULL, NULL, E));
    SHOW_ERR("clEnqueueMapBuffer(out of range)", clEnqueueMapBuffer(q, buf, CL_TRUE, CL_MAP_READ, 0, 1 << 20, 0, NULL, NULL, E));
    SHOW_ERR("clEnqueueMapBuffer(NULL buffer)", clEnqueueMapBuffer(q, NULL, CL_TRUE, CL_MAP_READ, 0, 4, 0, NULL, NULL, E));
    SHOW("clEnqueueUnmapMemObject(not mapped)", clEnqueueUnmapMemObject(q, buf, data, 0, NULL, NULL));
    SHOW("clEnqueueMigrateMemObjects(0 objects)", clEnqueueMigrateMemObjects(q, 0, NULL, 0, 0, NULL, NULL));
    SHOW("clEnqueueMigrateMemObjects(bad flags)", clEnqueueMigrateMemObjects(q, 1, &buf, 0xff00, 0, NULL, NULL));
    cl_buffer_region bad = {4096, 64};
    SHOW_ERR("clCreateSubBuffer(out of range)", clCreateSubBuffer(buf, 0, CL_BUFFER_CREATE_TYPE_REGION, &bad, E));
    SHOW_ERR("clCreateSubBuffer(NULL info)", clCreateSubBuffer(buf, 0, CL_BUFFER_CREATE_TYPE_REGION, NULL, E));
    SHOW("clReleaseMemObject(NULL)", clReleaseMemObject(NULL));
    SHOW("clRetainEvent(NULL)", clRetainEvent(NULL));
    SHOW("clWaitForEvents(0, NULL)", clWaitForEvents(0, NULL));
    SHOW("clFinish(NULL)", clFinish(NULL));
    SHOW("clGetMemObjectInfo(bad param)", clGetMemObjectInfo(buf, 0xdead, 0, NULL, NULL));
    cl_queue_properties badq[] = {0xdead, 1, 0};
    SHOW_ERR("clCreateCommandQueueWithProperties(bad)", clCreateCommandQueueWithProperties(g_ctx, g_device, badq, E));
    SHOW_ERR("clCreateContext(0 devices)", clCreateContext(NULL, 0, NULL, NULL, NULL, E));
    SHOW("clSVMAlloc(size 0)", clSVMAlloc(g_ctx, CL_MEM_READ_WRITE, 0, 0) == NULL);
    SHOW("clGetExtensionFunctionAddressForPlatform(unknown)", clGetExtensionFunctionAddressForPlatform(g_platform, "clNoSuchFunctionXYZ") == NULL);
    SHOW("clGetExtensionFunctionAddress(\"\")", clGetExtensionFunctionAddress("") == NULL);
    const char *broken = "__kernel void f(__global int *a) { a[0] = ; }";
    cl_program p = clCreateProgramWithSource(g_ctx, 1, &broken, NULL, &err);
    CHECK_ERR(err);
    SHOW("clBuildProgram(syntax error)", clBuildProgram(p, 1, &g_device, "", NULL, NULL));
    SHOW_ERR("clCreateKernel(not built)", clCreateKernel(p, "f", E));
    SHOW("clReleaseProgram", clReleaseProgram(p));
    const char *good = "__kernel void g(__global int *a) { a[0] = 1; }";
    p = build(good);
    SHOW_ERR("clCreateKernel(no such name)", clCreateKernel(p, "nope", E));
    cl_kernel k = clCreateKernel(p, "g", &err);
    CHECK_ERR(err);
    SHOW("clSetKernelArg(index 5)", clSetKernelArg(k, 5, sizeof buf, &buf));
    SHOW("clSetKernelArg(bad size)", clSetKernelArg(k, 0, 3, &buf));
    size_t gsz = 0;
    SHOW("clEnqueueNDRangeKernel(args unset)", clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, NULL, 0, NULL, NULL));
    SHOW("clEnqueueNDRangeKernel(dim 0)", clEnqueueNDRangeKernel(q, k, 0, NULL, &gsz, NULL, 0, NULL, NULL));

    CHECK(clFinish(q));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(p));
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseMemObject(foreign));
    CHECK(clReleaseContext(other));
    CHECK(clReleaseCommandQueue(q));
    finish_program();
    return 0;
}
