/* Question 3 of the brief (issue #25): two devices of one context hand a buffer back and forth
 * with clEnqueueMigrateMemObjects and event dependencies. Device 1 initialises it and a kernel
 * adds 1; it moves to device 2, whose kernel adds 1; it moves back, a kernel adds 1, and the host
 * reads it. Modes:
 *   correct   each migration on the target device's queue, flags 0, waiting for the last
 *             writer's event
 *   race      the first migration does not wait for device 1's kernel
 *   host      the migrations pass CL_MIGRATE_MEM_OBJECT_HOST (the buffer goes to the host, and
 *             each kernel pulls it back)
 *   source    the first migration is enqueued on device 1's queue (the source): it moves nothing,
 *             and device 2's kernel pulls the buffer
 *   initboth  the buffer is initialised on both devices' queues before the first kernel
 *   reread    no hand-off: a kernel on device 2, then one on device 1, only read the buffer
 *             device 1 initialised (`const`), each writing its own output
 * It prints the sum read back (but for the racing mode), the same with and without clxfer.
 * Its programs are built without -cl-kernel-arg-info, as almost every program is: clxfer reads
 * how the kernels use the buffer from their source. HANDOFF_MIB=N: the buffer is N MiB (the
 * brief's program hands off 64; 256 KiB by default).
 * HANDOFF_ONE_DEVICE=1: both queues on the platform's first device (a context of one device: the
 * one-GPU runs of issue #30). HANDOFF_TIME=1: the host waits for each migration as soon as it is
 * enqueued and prints how long it took from the enqueue ("migrate N us"), its own measure to set
 * against clxfer's. HANDOFF_PROBE=1: after the first migration is enqueued, the host polls it and
 * says what state the kernel it waits for was in when it completed (by the OpenCL rules: done). */
#include "common.h"
#include <time.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* With HANDOFF_TIME, waits for the migration `e` enqueued at `t0` and says how long it took. */
static void timed(const char *what, cl_event e, double t0) {
    if (!getenv("HANDOFF_TIME")) return;
    CHECK(clWaitForEvents(1, &e));
    printf("migrate %s %.1f us\n", what, now_us() - t0);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "correct";
    int racy = !strcmp(mode, "race");
    cl_int err;
    cl_device_id ds[2];
    int one = getenv("HANDOFF_ONE_DEVICE") != NULL;
    if (one) {
        setup();
        ds[0] = ds[1] = g_device;
    } else {
        setup_two(ds);
    }
    cl_command_queue q[2];
    for (int i = 0; i < 2; i++) {
        q[i] = clCreateCommandQueueWithProperties(g_ctx, ds[i], NULL, &err);
        CHECK_ERR(err);
    }
    static const char *src =
        "__kernel void inc(__global int *b) { b[get_global_id(0)] += 1; }";
    cl_program p = clCreateProgramWithSource(g_ctx, 1, &src, NULL, &err);
    CHECK_ERR(err);
    CHECK(clBuildProgram(p, one ? 1 : 2, ds, "", NULL, NULL));
    cl_kernel k = clCreateKernel(p, "inc", &err);
    CHECK_ERR(err);
    size_t N = getenv("HANDOFF_MIB") ? (size_t)atoi(getenv("HANDOFF_MIB")) << 18 : 1 << 16;
    int *host = malloc(N * sizeof(int)), *back = malloc(N * sizeof(int));
    size_t bytes = N * sizeof(int);
    for (size_t i = 0; i < N; i++) host[i] = i;
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK_ERR(err);
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    size_t n = N;
    if (!strcmp(mode, "reread")) {
        static const char *ro_src =
            "__kernel void twice(const __global int *b, __global int *out) {"
            "  out[get_global_id(0)] = 2 * b[get_global_id(0)]; }";
        cl_program rp = clCreateProgramWithSource(g_ctx, 1, &ro_src, NULL, &err);
        CHECK_ERR(err);
        CHECK(clBuildProgram(rp, one ? 1 : 2, ds, "", NULL, NULL));
        cl_kernel twice = clCreateKernel(rp, "twice", &err);
        CHECK_ERR(err);
        cl_mem out[2];
        for (int i = 0; i < 2; i++) {
            out[i] = clCreateBuffer(g_ctx, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
            CHECK_ERR(err);
        }
        cl_event w, r2, r1;
        CHECK(clEnqueueWriteBuffer(q[0], buf, CL_FALSE, 0, bytes, host, 0, NULL, &w));
        CHECK(clSetKernelArg(twice, 0, sizeof buf, &buf));
        CHECK(clSetKernelArg(twice, 1, sizeof out[1], &out[1]));
        CHECK(clEnqueueNDRangeKernel(q[1], twice, 1, NULL, &n, NULL, 1, &w, &r2));
        CHECK(clSetKernelArg(twice, 1, sizeof out[0], &out[0]));
        CHECK(clEnqueueNDRangeKernel(q[0], twice, 1, NULL, &n, NULL, 1, &r2, &r1));
        CHECK(clEnqueueReadBuffer(q[0], out[0], CL_TRUE, 0, bytes, back, 1, &r1, NULL));
        long long sum = 0;
        for (size_t i = 0; i < N; i++) sum += back[i];
        printf("sum %lld\n", sum);
        CHECK(clFinish(q[1]));
        printf("OK\n");
        return 0;
    }
    cl_mem_migration_flags flags = !strcmp(mode, "host") ? CL_MIGRATE_MEM_OBJECT_HOST : 0;
    cl_event init, init2, k1, m2, k2, m1, k3;
    CHECK(clEnqueueWriteBuffer(q[0], buf, CL_FALSE, 0, bytes, host, 0, NULL, &init));
    if (!strcmp(mode, "initboth")) {
        CHECK(clEnqueueWriteBuffer(q[1], buf, CL_FALSE, 0, bytes, host, 1, &init, &init2));
        CHECK(clReleaseEvent(init));
        init = init2;
    }
    CHECK(clEnqueueNDRangeKernel(q[0], k, 1, NULL, &n, NULL, 1, &init, &k1));
    /* To device 2. */
    cl_command_queue to2 = !strcmp(mode, "source") ? q[0] : q[1];
    double t0 = now_us();
    CHECK(clEnqueueMigrateMemObjects(to2, 1, &buf, flags, racy ? 0 : 1, racy ? NULL : &k1, &m2));
    if (!racy) timed("there", m2, t0);
    if (getenv("HANDOFF_PROBE") && !racy) {
        CHECK(clFlush(q[0]));
        CHECK(clFlush(q[1]));
        cl_int s = 1, s1 = 1;
        while (s != CL_COMPLETE) {
            CHECK(clGetEventInfo(m2, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL));
            CHECK(clGetEventInfo(k1, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s1, &s1, NULL));
            if (s == CL_COMPLETE) break;
        }
        printf("probe: migration complete, kernel 1 %s\n",
               s1 == CL_COMPLETE ? "complete" : s1 == CL_RUNNING ? "running"
               : s1 == CL_SUBMITTED ? "submitted" : "queued");
    }
    if (racy) {
        /* The host learns nothing of k1 before device 2 works on the buffer. */
        CHECK(clEnqueueNDRangeKernel(q[1], k, 1, NULL, &n, NULL, 1, &m2, &k2));
        CHECK(clFinish(q[1]));
        CHECK(clFinish(q[0]));
        printf("done\n");
        return 0;
    }
    CHECK(clEnqueueNDRangeKernel(q[1], k, 1, NULL, &n, NULL, 1, &m2, &k2));
    /* And back. */
    t0 = now_us();
    CHECK(clEnqueueMigrateMemObjects(q[0], 1, &buf, flags, 1, &k2, &m1));
    timed("back", m1, t0);
    CHECK(clEnqueueNDRangeKernel(q[0], k, 1, NULL, &n, NULL, 1, &m1, &k3));
    CHECK(clEnqueueReadBuffer(q[0], buf, CL_TRUE, 0, bytes, back, 1, &k3, NULL));
    long long sum = 0;
    for (size_t i = 0; i < N; i++) sum += back[i];
    printf("sum %lld\n", sum);
    cl_event all[] = {init, k1, m2, k2, m1, k3};
    for (int i = 0; i < 6; i++) CHECK(clReleaseEvent(all[i]));
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(p));
    for (int i = 0; i < 2; i++) CHECK(clReleaseCommandQueue(q[i]));
    CHECK(clReleaseContext(g_ctx));
    printf("OK\n");
    return 0;
}
