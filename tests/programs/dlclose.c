/* Opens OpenCL with dlopen (as plugins and Python extensions do), works, releases everything,
 * dlcloses the library, and exits normally. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYM(name) typeof(&name) p_##name = (typeof(&name))dlsym(lib, #name)
#define CK(x) do { cl_int e_ = (x); if (e_) { printf("FAIL %s -> %d\n", #x, e_); return 1; } } while (0)

int main(void) {
    void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) { printf("FAIL dlopen\n"); return 1; }
    SYM(clGetPlatformIDs); SYM(clGetDeviceIDs); SYM(clCreateContext); SYM(clCreateCommandQueueWithProperties);
    SYM(clCreateBuffer); SYM(clEnqueueWriteBuffer); SYM(clEnqueueReadBuffer); SYM(clFinish);
    SYM(clReleaseMemObject); SYM(clReleaseCommandQueue); SYM(clReleaseContext); SYM(clGetPlatformInfo);
    cl_platform_id ps[8]; cl_uint n = 0;
    CK(p_clGetPlatformIDs(8, ps, &n));
    cl_platform_id p = NULL;
    for (cl_uint i = 0; i < n; i++) {
        char name[256] = "";
        p_clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, "Portable")) p = ps[i];
    }
    cl_device_id d;
    CK(p_clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_int err;
    cl_context ctx = p_clCreateContext(NULL, 1, &d, NULL, NULL, &err); CK(err);
    cl_command_queue q = p_clCreateCommandQueueWithProperties(ctx, d, NULL, &err); CK(err);
    int data[1024], back[1024];
    for (int i = 0; i < 1024; i++) data[i] = i * 3;
    cl_mem b = p_clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof data, NULL, &err); CK(err);
    for (int r = 0; r < 100; r++) {
        CK(p_clEnqueueWriteBuffer(q, b, CL_FALSE, 0, sizeof data, data, 0, NULL, NULL));
        CK(p_clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    }
    CK(p_clFinish(q));
    CK(p_clReleaseMemObject(b)); CK(p_clReleaseCommandQueue(q)); CK(p_clReleaseContext(ctx));
    printf("read back %d\n", back[1023]);
    if (dlclose(lib)) { printf("FAIL dlclose\n"); return 1; }
    printf("closed\n");
    return 0;
}
