/* Load: THREADS threads, each with its own queue and kernel, making a mix of calls in a loop
 * (buffers created and released, retained and released, written, read, mapped, unmapped, migrated
 * to the host and back, a kernel, an event waited for and released) until the program has made
 * at least CALLS OpenCL calls in all. Prints how many calls of each entry point it made, and a
 * checksum of everything it read back, so a run under clxfer can be compared with one without,
 * and the trace's slices counted against the calls.
 * Usage: stress [threads] [calls] */
#include "common.h"
#include <pthread.h>
#include <stdatomic.h>

enum { WRITE, READ, MAP, UNMAP, MIGRATE, KERNEL, CREATE, RETAIN, RELEASE, WAIT, RELEASE_EVENT, ARG, APIS };
static const char *NAMES[APIS] = {
    "clEnqueueWriteBuffer", "clEnqueueReadBuffer", "clEnqueueMapBuffer", "clEnqueueUnmapMemObject",
    "clEnqueueMigrateMemObjects", "clEnqueueNDRangeKernel", "clCreateBuffer", "clRetainMemObject",
    "clReleaseMemObject", "clWaitForEvents", "clReleaseEvent", "clSetKernelArg"};
static atomic_long counts[APIS];
static long per_thread_calls;
static cl_program prog;

#define WORDS 256
static uint64_t sums[64];

static void *worker(void *arg) {
    int id = (int)(intptr_t)arg;
    cl_command_queue q = make_queue(0);
    cl_int err;
    cl_kernel k = clCreateKernel(prog, "twice", &err);
    CHECK_ERR(err);
    long calls = 0, local[APIS] = {0};
#define DO(api, call) (local[api]++, calls++, (call))
    uint32_t data[WORDS], back[WORDS];
    uint64_t sum = 1469598103934665603ULL;
    for (long it = 0; calls < per_thread_calls; it++) {
        for (int i = 0; i < WORDS; i++) data[i] = (uint32_t)(id * 7919 + it * 31 + i);
        cl_mem b = DO(CREATE, clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof data, NULL, &err));
        CHECK_ERR(err);
        CHECK(DO(RETAIN, clRetainMemObject(b)));
        cl_event e;
        CHECK(DO(WRITE, clEnqueueWriteBuffer(q, b, CL_FALSE, 0, sizeof data, data, 0, NULL, &e)));
        CHECK(DO(WAIT, clWaitForEvents(1, &e)));
        CHECK(DO(RELEASE_EVENT, clReleaseEvent(e)));
        CHECK(DO(ARG, clSetKernelArg(k, 0, sizeof b, &b)));
        size_t global = WORDS;
        CHECK(DO(KERNEL, clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL)));
        CHECK(DO(MIGRATE, clEnqueueMigrateMemObjects(q, 1, &b, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL)));
        CHECK(DO(MIGRATE, clEnqueueMigrateMemObjects(q, 1, &b, 0, 0, NULL, NULL)));
        uint32_t *m = DO(MAP, clEnqueueMapBuffer(q, b, CL_TRUE, CL_MAP_READ, 0, sizeof data, 0, NULL, NULL, &err));
        CHECK_ERR(err);
        for (int i = 0; i < WORDS; i++) sum = (sum ^ m[i]) * 1099511628211ULL;
        CHECK(DO(UNMAP, clEnqueueUnmapMemObject(q, b, m, 0, NULL, NULL)));
        CHECK(DO(READ, clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL)));
        for (int i = 0; i < WORDS; i++)
            if (back[i] != 2 * data[i]) {
                printf("FAIL thread %d iteration %ld word %d\n", id, it, i);
                exit(1);
            }
        CHECK(DO(RELEASE, clReleaseMemObject(b)));
        CHECK(DO(RELEASE, clReleaseMemObject(b)));
    }
    CHECK(clFinish(q));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseCommandQueue(q));
    sums[id] = sum;
    for (int a = 0; a < APIS; a++) counts[a] += local[a];
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 16;
    long total = argc > 2 ? atol(argv[2]) : 1000000;
    if (threads < 1 || threads > 64) threads = 16;
    per_thread_calls = total / threads;
    setup();
    prog = build("__kernel void twice(__global uint *a) { a[get_global_id(0)] *= 2; }\n");
    pthread_t t[64];
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    long all = 0;
    for (int a = 0; a < APIS; a++) {
        printf("%s %ld\n", NAMES[a], (long)counts[a]);
        all += counts[a];
    }
    printf("calls %ld\n", all);
    for (int i = 0; i < threads; i++) mix(&sums[i], sizeof sums[i]);
    CHECK(clReleaseProgram(prog));
    finish_program();
    return 0;
}
