/* Which commands a driver times with another command's times, and which report complete before
 * what they wait for (issue #41). On one profiling in-order queue, each case enqueues a spinning
 * kernel (a few ms), a command under test that waits for it, and a marker after both; then it
 * says, for the command under test, its profiling START and END, whether they equal another
 * command's of the case (the kernel's, the one before it, the marker's), and the kernel's status
 * when the command first read CL_COMPLETE (polled from the moment it was flushed):
 *   probe CASE moves=B start=S end=E dur=D same_as=NAME|- complete_before_wait=yes|no
 * Run it on NVIDIA (TEST_PLATFORM=NVIDIA), without clxfer: the raw driver. The cases:
 *   write-4k          a 4 KiB write from malloc memory (moves bytes: the control)
 *   map-invalidate    a non-blocking map for WRITE_INVALIDATE_REGION (moves nothing)
 *   unmap-invalidate  its unmap (moves the bytes to the device)
 *   map-read          a map for READ (moves the bytes to the host)
 *   unmap-read        its unmap (moves nothing)
 *   map-ahp           a map for READ of an ALLOC_HOST_PTR buffer
 *   unmap-ahp         its unmap
 *   migrate-here      a flags-0 migration to the device that holds the buffer (moves nothing)
 *   migrate-undefined a CONTENT_UNDEFINED migration to the same device (moves nothing)
 *   migrate-host      a HOST migration (moves the bytes to the host)
 *   migrate-back      the flags-0 migration back (moves them to the device)
 *   copy-4            a copy of 4 bytes inside the device
 *   fill-4k           a 4 KiB fill
 * BORROWED_ROUNDS=N repeats every case N times (default 5). */
#include "common.h"

static cl_command_queue q;
static cl_kernel spin;
static cl_mem dev, ahp, other;
static size_t n = 4 << 20;
static char *host;

static void times(cl_event e, cl_ulong *s, cl_ulong *f) {
    *s = *f = 0;
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof *s, s, NULL);
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof *f, f, NULL);
}

static cl_int status(cl_event e) {
    cl_int s = 1;
    CHECK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL));
    return s;
}

/* The command under test: enqueued waiting for `k`, its event in *e. */
typedef void (*under_test)(cl_event k, cl_event *e);
static void *mapped;

static void write_4k(cl_event k, cl_event *e) {
    CHECK(clEnqueueWriteBuffer(q, dev, CL_FALSE, 0, 4096, host, 1, &k, e));
}
static void map_with(cl_mem m, cl_map_flags f, cl_event k, cl_event *e) {
    cl_int err;
    mapped = clEnqueueMapBuffer(q, m, CL_FALSE, f, 0, n, 1, &k, e, &err);
    CHECK_ERR(err);
}
static void unmap_of(cl_mem m, cl_event k, cl_event *e) {
    CHECK(clEnqueueUnmapMemObject(q, m, mapped, 1, &k, e));
}
static void map_invalidate(cl_event k, cl_event *e) { map_with(dev, CL_MAP_WRITE_INVALIDATE_REGION, k, e); }
static void unmap_dev(cl_event k, cl_event *e) { unmap_of(dev, k, e); }
static void map_read(cl_event k, cl_event *e) { map_with(dev, CL_MAP_READ, k, e); }
static void map_ahp(cl_event k, cl_event *e) { map_with(ahp, CL_MAP_READ, k, e); }
static void unmap_ahp(cl_event k, cl_event *e) { unmap_of(ahp, k, e); }
static void migrate(cl_mem_migration_flags f, cl_event k, cl_event *e) {
    CHECK(clEnqueueMigrateMemObjects(q, 1, &other, f, 1, &k, e));
}
static void migrate_here(cl_event k, cl_event *e) { migrate(0, k, e); }
static void migrate_undefined(cl_event k, cl_event *e) {
    migrate(CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, k, e);
}
static void migrate_host(cl_event k, cl_event *e) { migrate(CL_MIGRATE_MEM_OBJECT_HOST, k, e); }
static void copy_4(cl_event k, cl_event *e) {
    CHECK(clEnqueueCopyBuffer(q, dev, other, 0, 0, 4, 1, &k, e));
}
static void fill_4k(cl_event k, cl_event *e) {
    int zero = 0;
    CHECK(clEnqueueFillBuffer(q, other, &zero, sizeof zero, 0, 4096, 1, &k, e));
}

static void probe(const char *name, int moves, under_test f) {
    cl_event before, k, e, m;
    /* The command before the kernel: a small write, so that "the one before" has its own times. */
    CHECK(clEnqueueWriteBuffer(q, other, CL_FALSE, 0, 64, host, 0, NULL, &before));
    size_t g = 1024;
    CHECK(clEnqueueNDRangeKernel(q, spin, 1, NULL, &g, NULL, 0, NULL, &k));
    f(k, &e);
    CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &m));
    CHECK(clFlush(q));
    cl_int ks = CL_COMPLETE;
    for (;;) {
        cl_int s = status(e);
        if (s == CL_COMPLETE || s < 0) {
            ks = status(k);
            break;
        }
    }
    CHECK(clFinish(q));
    cl_ulong s[4], t[4];
    cl_event all[4] = {before, k, e, m};
    for (int i = 0; i < 4; i++) times(all[i], &s[i], &t[i]);
    const char *names[4] = {"before", "kernel", "self", "marker"};
    const char *same = "-";
    for (int i = 0; i < 4; i++)
        if (i != 2 && s[i] == s[2] && t[i] == t[2]) same = names[i];
    /* A start before the kernel's end: it did not wait, or its times are not its own. */
    printf("probe %s moves=%d start=%llu end=%llu dur=%llu same_as=%s starts_before_wait_ends=%s "
           "complete_before_wait=%s\n",
           name, moves, (unsigned long long)(s[2] - s[1]), (unsigned long long)(t[2] - s[1]),
           (unsigned long long)(t[2] - s[2]), same, s[2] < t[1] ? "yes" : "no",
           ks == CL_COMPLETE ? "no" : "yes");
    fflush(stdout);
    for (int i = 0; i < 4; i++) CHECK(clReleaseEvent(all[i]));
}

int main(void) {
    setup();
    q = make_queue(CL_QUEUE_PROFILING_ENABLE);
    cl_int err;
    host = calloc(n, 1);
    dev = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, n, NULL, &err);
    CHECK_ERR(err);
    other = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, n, NULL, &err);
    CHECK_ERR(err);
    ahp = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, n, NULL, &err);
    CHECK_ERR(err);
    cl_program p = build(SPIN_SRC);
    spin = clCreateKernel(p, "spin", &err);
    CHECK_ERR(err);
    cl_mem out = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, 1024 * sizeof(int), NULL, &err);
    CHECK_ERR(err);
    int rounds = getenv("BORROWED_SPIN") ? atoi(getenv("BORROWED_SPIN")) : 200000;
    CHECK(clSetKernelArg(spin, 0, sizeof out, &out));
    CHECK(clSetKernelArg(spin, 1, sizeof rounds, &rounds));
    /* Everything on the device once before the cases. */
    CHECK(clEnqueueWriteBuffer(q, dev, CL_TRUE, 0, n, host, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(q, other, CL_TRUE, 0, n, host, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(q, ahp, CL_TRUE, 0, n, host, 0, NULL, NULL));
    int reps = getenv("BORROWED_ROUNDS") ? atoi(getenv("BORROWED_ROUNDS")) : 5;
    for (int r = 0; r < reps; r++) {
        probe("write-4k", 1, write_4k);
        probe("map-invalidate", 0, map_invalidate);
        probe("unmap-invalidate", 1, unmap_dev);
        probe("map-read", 1, map_read);
        probe("unmap-read", 0, unmap_dev);
        probe("map-ahp", 1, map_ahp);
        probe("unmap-ahp", 1, unmap_ahp);
        probe("migrate-here", 0, migrate_here);
        probe("migrate-undefined", 0, migrate_undefined);
        probe("migrate-host", 1, migrate_host);
        probe("migrate-back", 1, migrate_here);
        probe("copy-4", 1, copy_4);
        probe("fill-4k", 1, fill_4k);
    }
    CHECK(clFinish(q));
    printf("OK\n");
    return 0;
}
