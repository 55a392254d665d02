/* Shared by the test programs: OpenCL setup on PoCL, a checksum of results, and checks.
 * Every program prints only deterministic lines (checksums, error codes), so runs with and
 * without clxfer can be compared byte for byte. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_sum = 1469598103934665603ULL; /* FNV-1a */

static void mix(const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) g_sum = (g_sum ^ b[i]) * 1099511628211ULL;
}

static __attribute__((unused)) void mix_int(long v) { mix(&v, sizeof v); }

#define CHECK(x)                                                                       \
    do {                                                                               \
        cl_int e_ = (x);                                                               \
        if (e_ != CL_SUCCESS) {                                                        \
            printf("FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, e_);               \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#define CHECK_ERR(e)                                                                   \
    do {                                                                               \
        if ((e) != CL_SUCCESS) {                                                       \
            printf("FAIL %s:%d -> %d\n", __FILE__, __LINE__, (int)(e));                \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static cl_platform_id g_platform;
static cl_device_id g_device;
static cl_context g_ctx;

/* The PoCL platform (other ICDs may be present in some tests) into g_platform; or, on a GPU
 * machine (scripts/gpu-truth), the first platform whose name contains $TEST_PLATFORM. */
static __attribute__((unused)) void find_pocl(void) {
    const char *want = getenv("TEST_PLATFORM") ? getenv("TEST_PLATFORM") : "Portable Computing Language";
    cl_platform_id ps[16];
    cl_uint n = 0;
    CHECK(clGetPlatformIDs(16, ps, &n));
    for (cl_uint i = 0; i < n && i < 16 && !g_platform; i++) {
        char name[256] = {0};
        CHECK(clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL));
        if (strstr(name, want)) g_platform = ps[i];
    }
    if (!g_platform) {
        printf("FAIL no platform named %s\n", want);
        exit(1);
    }
}

/* The PoCL platform, its first two devices into ds (g_device: the first), a context of both
 * (POCL_DEVICES="pthread pthread"); exits with a FAIL line when there are fewer. */
static __attribute__((unused)) void setup_two(cl_device_id ds[2]) {
    find_pocl();
    cl_uint n = 0;
    CHECK(clGetDeviceIDs(g_platform, CL_DEVICE_TYPE_ALL, 2, ds, &n));
    if (n < 2) {
        printf("FAIL two devices wanted, %u found\n", n);
        exit(1);
    }
    g_device = ds[0];
    cl_int err;
    g_ctx = clCreateContext(NULL, 2, ds, NULL, NULL, &err);
    CHECK_ERR(err);
}

/* The PoCL platform, its first device, a context. */
static __attribute__((unused)) void setup(void) {
    find_pocl();
    CHECK(clGetDeviceIDs(g_platform, CL_DEVICE_TYPE_ALL, 1, &g_device, NULL));
    cl_int err;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)g_platform, 0};
    g_ctx = clCreateContext(props, 1, &g_device, NULL, NULL, &err);
    CHECK_ERR(err);
}

static __attribute__((unused)) cl_command_queue make_queue(cl_command_queue_properties p) {
    cl_int err;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, p, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(g_ctx, g_device, props, &err);
    CHECK_ERR(err);
    return q;
}

/* Platform p's first device, a context on it and a default queue (the extension programs, on
 * whichever platform offers the functions). */
static __attribute__((unused)) cl_command_queue queue_on(cl_platform_id p, cl_device_id *d, cl_context *ctx) {
    CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, d, NULL));
    cl_int err;
    *ctx = clCreateContext(NULL, 1, d, NULL, NULL, &err);
    CHECK_ERR(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(*ctx, *d, NULL, &err);
    CHECK_ERR(err);
    return q;
}

/* A kernel that spins `rounds` times per work item and writes the result (kernels.c, overlap.c):
 * device time on demand. */
static __attribute__((unused)) const char *SPIN_SRC =
    "__kernel void spin(__global int *out, int rounds) {\n"
    "  int i = get_global_id(0); int v = i;\n"
    "  for (int r = 0; r < rounds; r++) v = v * 1103515245 + 12345;\n"
    "  out[i] = v;\n"
    "}\n";

static __attribute__((unused)) cl_program build(const char *src) {
    cl_int err;
    cl_program p = clCreateProgramWithSource(g_ctx, 1, &src, NULL, &err);
    CHECK_ERR(err);
    CHECK(clBuildProgram(p, 1, &g_device, "", NULL, NULL));
    return p;
}

static __attribute__((unused)) void finish_program(void) {
    CHECK(clReleaseContext(g_ctx));
    printf("checksum %016llx\n", (unsigned long long)g_sum);
}
