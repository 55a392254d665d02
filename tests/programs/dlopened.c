/* Opens OpenCL itself and looks every entry point up in the handle, as hashcat (RTLD_LAZY) and
 * OpenCV's T-API (RTLD_GLOBAL) do: `dlopened [local|global] [LIB]`. Writes and reads a 1 MiB
 * buffer from malloc'd memory on the first device of the platform named $TEST_PLATFORM (default
 * PoCL) and prints a checksum. Also prints whether dlsym(RTLD_NEXT, "dlsym") from this program is
 * the dlsym it links: a dlsym interposer that loses its caller answers for the wrong object. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FN(name) static __typeof__(&name) p_##name;
#define LOAD(name)                                                                     \
    do {                                                                               \
        p_##name = (__typeof__(&name))dlsym(lib, #name);                               \
        if (!p_##name) {                                                               \
            printf("FAIL dlsym %s\n", #name);                                          \
            return 1;                                                                  \
        }                                                                              \
    } while (0)
#define CHECK(x)                                                                       \
    do {                                                                               \
        cl_int e_ = (x);                                                               \
        if (e_ != CL_SUCCESS) {                                                        \
            printf("FAIL %s -> %d\n", #x, e_);                                         \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

FN(clGetPlatformIDs)
FN(clGetPlatformInfo)
FN(clGetDeviceIDs)
FN(clCreateContext)
FN(clCreateCommandQueueWithProperties)
FN(clCreateBuffer)
FN(clEnqueueWriteBuffer)
FN(clEnqueueReadBuffer)
FN(clFinish)
FN(clReleaseMemObject)
FN(clReleaseCommandQueue)
FN(clReleaseContext)

int main(int argc, char **argv) {
    int global = argc > 1 && strcmp(argv[1], "global") == 0;
    const char *name = argc > 2 ? argv[2] : "libOpenCL.so.1";
    void *next = dlsym(RTLD_NEXT, "dlsym");
    printf("RTLD_NEXT from the program: %s\n", next == (void *)dlsym ? "the dlsym it links" : "another");
    void *lib = dlopen(name, RTLD_LAZY | (global ? RTLD_GLOBAL : RTLD_LOCAL));
    if (!lib) {
        printf("FAIL dlopen %s: %s\n", name, dlerror());
        return 1;
    }
    LOAD(clGetPlatformIDs);
    LOAD(clGetPlatformInfo);
    LOAD(clGetDeviceIDs);
    LOAD(clCreateContext);
    LOAD(clCreateCommandQueueWithProperties);
    LOAD(clCreateBuffer);
    LOAD(clEnqueueWriteBuffer);
    LOAD(clEnqueueReadBuffer);
    LOAD(clFinish);
    LOAD(clReleaseMemObject);
    LOAD(clReleaseCommandQueue);
    LOAD(clReleaseContext);
    /* A name no OpenCL library has: the real dlsym's answer (NULL), not clxfer's. */
    printf("clNoSuchFunction: %s\n", dlsym(lib, "clNoSuchFunction") ? "found" : "NULL");

    const char *want = getenv("TEST_PLATFORM") ? getenv("TEST_PLATFORM") : "Portable Computing Language";
    cl_platform_id ps[16], platform = NULL;
    cl_uint n = 0;
    CHECK(p_clGetPlatformIDs(16, ps, &n));
    for (cl_uint i = 0; i < n && i < 16 && !platform; i++) {
        char pname[256] = {0};
        CHECK(p_clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof pname, pname, NULL));
        if (strstr(pname, want)) platform = ps[i];
    }
    if (!platform) {
        printf("FAIL no platform named %s\n", want);
        return 1;
    }
    cl_device_id dev;
    CHECK(p_clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_int err;
    cl_context ctx = p_clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = p_clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    enum { N = 1 << 20 };
    unsigned char *in = malloc(N), *out = malloc(N);
    for (int i = 0; i < N; i++) in[i] = (unsigned char)(i * 7 + 3);
    cl_mem buf = p_clCreateBuffer(ctx, CL_MEM_READ_WRITE, N, NULL, &err);
    CHECK(err);
    CHECK(p_clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, N, in, 0, NULL, NULL));
    CHECK(p_clEnqueueReadBuffer(q, buf, CL_TRUE, 0, N, out, 0, NULL, NULL));
    CHECK(p_clFinish(q));
    uint64_t sum = 1469598103934665603ULL;
    for (int i = 0; i < N; i++) sum = (sum ^ out[i]) * 1099511628211ULL;
    printf("checksum %016llx\n", (unsigned long long)sum);
    CHECK(p_clReleaseMemObject(buf));
    CHECK(p_clReleaseCommandQueue(q));
    CHECK(p_clReleaseContext(ctx));
    free(in);
    free(out);
    return 0;
}
