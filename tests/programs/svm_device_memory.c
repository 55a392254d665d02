/* Does a coarse-grain SVM allocation take device memory on this GPU? (issue #26: the rule
 * `nvidia.svm`). Prints nvidia-smi's memory.used (MiB) after each step: a context, clSVMAlloc of
 * 1 GiB, its first map/write/unmap, a copy into a second allocation, the frees; and the same for
 * an ALLOC_HOST_PTR buffer, whose device storage is measured (transfer-rules.md NVIDIA Q2).
 * Build: cc -O2 svm_device_memory.c -o svm_device_memory -lOpenCL; run on the GPU machine. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x) do { cl_int e_ = (x); if (e_) { fprintf(stderr, "%s:%d error %d\n", __FILE__, __LINE__, e_); exit(1); } } while (0)
#define SZ ((size_t)1 << 30)

static void used(const char *step) {
    fflush(stdout);
    printf("%-40s ", step);
    fflush(stdout);
    if (system("nvidia-smi --query-gpu=memory.used --format=csv,noheader") != 0) printf("nvidia-smi failed\n");
}

int main(void) {
    cl_platform_id ps[8];
    cl_uint np;
    CK(clGetPlatformIDs(8, ps, &np));
    cl_platform_id p = 0;
    for (cl_uint i = 0; i < np; i++) {
        char name[256];
        CK(clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, 0));
        if (strstr(name, "NVIDIA")) p = ps[i];
    }
    if (!p) { printf("no NVIDIA platform\n"); return 1; }
    cl_device_id d;
    CK(clGetDeviceIDs(p, CL_DEVICE_TYPE_GPU, 1, &d, 0));
    cl_int err;
    cl_context ctx = clCreateContext(0, 1, &d, 0, 0, &err);
    CK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, d, NULL, &err);
    CK(err);
    used("context");
    char *a = clSVMAlloc(ctx, CL_MEM_READ_WRITE, SZ, 0);
    char *b = clSVMAlloc(ctx, CL_MEM_READ_WRITE, SZ, 0);
    if (!a || !b) { printf("no coarse-grain SVM\n"); return 1; }
    used("two 1 GiB SVM allocations");
    CK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, a, SZ, 0, 0, 0));
    memset(a, 1, SZ);
    CK(clEnqueueSVMUnmap(q, a, 0, 0, 0));
    CK(clFinish(q));
    used("map, write, unmap the first");
    CK(clEnqueueSVMMemcpy(q, CL_TRUE, b, a, SZ, 0, 0, 0));
    used("copy the first into the second");
    clSVMFree(ctx, a);
    clSVMFree(ctx, b);
    CK(clFinish(q));
    used("both freed");
    cl_mem ahp = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, SZ, 0, &err);
    CK(err);
    void *m = clEnqueueMapBuffer(q, ahp, CL_TRUE, CL_MAP_WRITE, 0, SZ, 0, 0, 0, &err);
    CK(err);
    memset(m, 2, SZ);
    CK(clEnqueueUnmapMemObject(q, ahp, m, 0, 0, 0));
    CK(clFinish(q));
    used("a 1 GiB ALLOC_HOST_PTR buffer, mapped, written");
    CK(clReleaseMemObject(ahp));
    CK(clFinish(q));
    used("released");
    return 0;
}
