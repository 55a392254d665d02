/* Transfer scenarios for ground truth on a real GPU (issue #7, docs/ground-truth.md). Each scenario
 * runs its command REPS times (blocking, one warm-up first) and prints, on stdout, one line:
 *   scenario NAME api=API bytes=N host_gbps=X device_gbps=Y device_ns=D enqueue=K
 * where X is from the best wall time of the blocking call, Y and D from the program's own event
 * profiling of that same best repetition, and K is that command's number among every command the
 * program enqueued (from 1, in order): clxfer numbers its commands the same way, so K is the
 * `command` of its slices in the trace. Single-threaded, so the numbering is deterministic.
 * Platform: the first whose name contains $SCEN_PLATFORM (default "NVIDIA", else the first one).
 * Sizes: $SCEN_MIB MiB for the large scenarios (default 64). With two devices in the platform,
 * the cross-device scenarios run too. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define CK(x)                                                                   \
    do {                                                                        \
        cl_int e_ = (x);                                                        \
        if (e_) {                                                               \
            fprintf(stderr, "FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, e_); \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static cl_context ctx;
static cl_command_queue q, q2, qb; /* q2: a second queue on the device; qb: on the second device */
static long enqueues;              /* commands enqueued so far */
static long measured;              /* the number of the command a scenario measures */
static const int REPS = 3;

/* One enqueue, counted: every command the program makes goes through here. MEASURED marks the
 * last one as the command a scenario measures. */
#define ENQ(call) (enqueues++, (call))
#define MEASURED() (measured = enqueues)

static cl_ulong dev_ns(cl_event e) {
    cl_ulong a = 0, b = 0;
    if (clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, 8, &a, NULL) ||
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, 8, &b, NULL))
        return 0;
    return b > a ? b - a : 0;
}

/* A measured command: `run` enqueues it (blocking) and returns its event. */
typedef cl_event (*Run)(void *);

static void measure(const char *name, const char *api, size_t bytes, Run run, void *arg) {
    cl_event warm = run(arg);
    CK(clFinish(q));
    clReleaseEvent(warm);
    double best = 1e30;
    cl_ulong best_dev = 0;
    long best_k = 0;
    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        cl_event e = run(arg);
        double t = now() - t0;
        long k = measured;
        CK(clWaitForEvents(1, &e));
        if (t < best) {
            best = t;
            best_dev = dev_ns(e);
            best_k = k;
        }
        clReleaseEvent(e);
    }
    printf("scenario %s api=%s bytes=%zu host_gbps=%.3f device_gbps=%.3f device_ns=%llu enqueue=%ld\n",
           name, api, bytes, bytes / best / 1e9, best_dev ? bytes / (double)best_dev : 0.0,
           (unsigned long long)best_dev, best_k);
    fflush(stdout);
}

/* The commands. */
struct rw { cl_command_queue q; cl_mem mem; int write; size_t off, bytes; void *ptr; cl_bool blocking; };
static cl_event do_rw(void *a) {
    struct rw *x = a;
    cl_event e;
    if (x->write)
        CK(ENQ(clEnqueueWriteBuffer(x->q, x->mem, x->blocking, x->off, x->bytes, x->ptr, 0, NULL, &e)));
    else
        CK(ENQ(clEnqueueReadBuffer(x->q, x->mem, x->blocking, x->off, x->bytes, x->ptr, 0, NULL, &e)));
    MEASURED();
    if (!x->blocking) CK(clWaitForEvents(1, &e));
    return e;
}

struct rect { cl_mem mem; void *ptr; size_t w, h; };
static cl_event do_rect(void *a) {
    struct rect *x = a;
    size_t origin[3] = {0, 0, 0}, region[3] = {x->w, x->h, 1};
    cl_event e;
    CK(ENQ(clEnqueueWriteBufferRect(q, x->mem, CL_TRUE, origin, origin, region, x->w, 0, x->w, 0,
                                    x->ptr, 0, NULL, &e)));
    MEASURED();
    return e;
}

struct map { cl_mem mem; cl_map_flags flags; size_t bytes; };
static cl_event do_map(void *a) {
    struct map *x = a;
    cl_event e, u;
    cl_int err;
    void *p = ENQ(clEnqueueMapBuffer(q, x->mem, CL_TRUE, x->flags, 0, x->bytes, 0, NULL, &e, &err));
    CK(err);
    MEASURED();
    CK(ENQ(clEnqueueUnmapMemObject(q, x->mem, p, 0, NULL, &u)));
    CK(clWaitForEvents(1, &u));
    clReleaseEvent(u);
    return e;
}
/* The unmap after a map: the measured command is the unmap. */
static cl_event do_unmap(void *a) {
    struct map *x = a;
    cl_event u;
    cl_int err;
    void *p = ENQ(clEnqueueMapBuffer(q, x->mem, CL_TRUE, x->flags, 0, x->bytes, 0, NULL, NULL, &err));
    CK(err);
    CK(ENQ(clEnqueueUnmapMemObject(q, x->mem, p, 0, NULL, &u)));
    MEASURED();
    CK(clWaitForEvents(1, &u));
    return u;
}

struct mig { cl_command_queue q; cl_mem mem; cl_mem_migration_flags flags; };
static cl_event do_migrate(void *a) {
    struct mig *x = a;
    cl_event e;
    CK(ENQ(clEnqueueMigrateMemObjects(x->q, 1, &x->mem, x->flags, 0, NULL, &e)));
    MEASURED();
    CK(clWaitForEvents(1, &e));
    return e;
}
/* Back and forth: the measured command is the migration to `x->flags`, after one the other way. */
static cl_event do_migrate_pair(void *a) {
    struct mig *x = a;
    cl_mem_migration_flags other = (x->flags & CL_MIGRATE_MEM_OBJECT_HOST) ? 0 : CL_MIGRATE_MEM_OBJECT_HOST;
    CK(ENQ(clEnqueueMigrateMemObjects(x->q, 1, &x->mem, other, 0, NULL, NULL)));
    CK(clFinish(x->q));
    return do_migrate(a);
}

struct copy { cl_command_queue q; cl_mem src, dst; size_t bytes; };
static cl_event do_copy(void *a) {
    struct copy *x = a;
    cl_event e;
    CK(ENQ(clEnqueueCopyBuffer(x->q, x->src, x->dst, 0, 0, x->bytes, 0, NULL, &e)));
    MEASURED();
    CK(clWaitForEvents(1, &e));
    return e;
}

static cl_event do_fill(void *a) {
    struct copy *x = a;
    cl_event e;
    int zero = 0;
    CK(ENQ(clEnqueueFillBuffer(q, x->dst, &zero, sizeof zero, 0, x->bytes, 0, NULL, &e)));
    MEASURED();
    CK(clWaitForEvents(1, &e));
    return e;
}

/* Data written on the first device, then copied on the second (each repetition moves it). */
static char *g_pinned;
static cl_event do_copy_cross(void *a) {
    struct copy *x = a;
    CK(ENQ(clEnqueueWriteBuffer(q, x->src, CL_TRUE, 0, x->bytes, g_pinned, 0, NULL, NULL)));
    return do_copy(a);
}

/* Migrates `mem` to the other device, then (measured) to `x->q`'s. */
static cl_event do_cross(void *a) {
    struct mig *x = a;
    cl_command_queue other = x->q == q ? qb : q;
    CK(ENQ(clEnqueueMigrateMemObjects(other, 1, &x->mem, 0, 0, NULL, NULL)));
    CK(clFinish(other));
    return do_migrate(a);
}

static cl_mem buffer(cl_mem_flags flags, size_t n, void *host) {
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, flags, n, host, &err);
    CK(err);
    return m;
}

static void *mapped(cl_mem m, size_t n) {
    cl_int err;
    void *p = ENQ(clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n, 0, NULL, NULL, &err));
    CK(err);
    return p;
}

int main(void) {
    const char *want = getenv("SCEN_PLATFORM") ? getenv("SCEN_PLATFORM") : "NVIDIA";
    size_t n = (size_t)(getenv("SCEN_MIB") ? atol(getenv("SCEN_MIB")) : 64) << 20;
    cl_platform_id ps[8];
    cl_uint np = 0;
    CK(clGetPlatformIDs(8, ps, &np));
    cl_platform_id p = ps[0];
    char pname[256] = "";
    for (cl_uint i = 0; i < np; i++) {
        char nm[256] = "";
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof nm, nm, NULL);
        if (strstr(nm, want)) {
            p = ps[i];
            break;
        }
    }
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof pname, pname, NULL);
    cl_device_id devs[2];
    cl_uint nd = 0;
    CK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 2, devs, &nd));
    if (nd > 2) nd = 2;
    char dname[256] = "";
    clGetDeviceInfo(devs[0], CL_DEVICE_NAME, sizeof dname, dname, NULL);
    printf("platform %s; device %s; devices %u; large %zu MiB\n", pname, dname, nd, n >> 20);
    cl_int err;
    ctx = clCreateContext(NULL, nd, devs, NULL, NULL, &err);
    CK(err);
    cl_queue_properties prof[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    q = clCreateCommandQueueWithProperties(ctx, devs[0], prof, &err);
    CK(err);
    q2 = clCreateCommandQueueWithProperties(ctx, devs[0], prof, &err);
    CK(err);

    cl_mem dev = buffer(CL_MEM_READ_WRITE, n, NULL), dev2 = buffer(CL_MEM_READ_WRITE, n, NULL);
    char *pageable = malloc(n + 4096);
    memset(pageable, 1, n + 4096);
    /* A pinned region: a mapped ALLOC_HOST_PTR buffer, kept mapped. */
    cl_mem ahp = buffer(CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, n + 4096, NULL);
    char *pinned = mapped(ahp, n + 4096);
    memset(pinned, 2, n + 4096);
    /* A registered region: the first half of a page-aligned allocation is a USE_HOST_PTR buffer; the
     * second half, just past it, is ordinary pageable memory. */
    char *region;
    if (posix_memalign((void **)&region, 4096, 2 * n)) return 1;
    memset(region, 3, 2 * n);
    cl_mem uhp = buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, n, region);
    char *aligned;
    if (posix_memalign((void **)&aligned, 4096, n)) return 1;
    memset(aligned, 4, n);

    struct rw rw;
#define RW(NAME, API, Q, MEM, W, PTR, BYTES, BLOCK)                                    \
    rw = (struct rw){Q, MEM, W, 0, BYTES, PTR, BLOCK};                                 \
    measure(NAME, API, BYTES, do_rw, &rw)
    RW("malloc-write", "clEnqueueWriteBuffer", q, dev, 1, pageable, n, CL_TRUE);
    RW("malloc-read", "clEnqueueReadBuffer", q, dev, 0, pageable, n, CL_TRUE);
    RW("malloc+1-write", "clEnqueueWriteBuffer", q, dev, 1, pageable + 1, n, CL_TRUE);
    RW("aligned-write", "clEnqueueWriteBuffer", q, dev, 1, aligned, n, CL_TRUE);
    RW("aligned-read", "clEnqueueReadBuffer", q, dev, 0, aligned, n, CL_TRUE);
    if (mlock(aligned, n) == 0) {
        RW("mlocked-write", "clEnqueueWriteBuffer", q, dev, 1, aligned, n, CL_TRUE);
        munlock(aligned, n);
    }
    RW("mapped-ahp-write", "clEnqueueWriteBuffer", q, dev, 1, pinned, n, CL_TRUE);
    RW("mapped-ahp-read", "clEnqueueReadBuffer", q, dev, 0, pinned, n, CL_TRUE);
    RW("mapped-ahp+1-write", "clEnqueueWriteBuffer", q, dev, 1, pinned + 1, n, CL_TRUE);
    RW("mapped-ahp+4096-write", "clEnqueueWriteBuffer", q, dev, 1, pinned + 4096, n / 2, CL_TRUE);
    RW("uhp-range-write", "clEnqueueWriteBuffer", q, dev, 1, region, n, CL_TRUE);
    RW("uhp-range+64-write", "clEnqueueWriteBuffer", q, dev, 1, region + 4096 + 64, n / 2, CL_TRUE);
    RW("uhp-range-read", "clEnqueueReadBuffer", q, dev, 0, region, n, CL_TRUE);
    RW("past-uhp-range-write", "clEnqueueWriteBuffer", q, dev, 1, region + n, n, CL_TRUE);
    RW("malloc-into-ahp-buffer", "clEnqueueWriteBuffer", q, ahp, 1, pageable, n, CL_TRUE);
    RW("malloc-into-uhp-buffer", "clEnqueueWriteBuffer", q, uhp, 1, pageable, n, CL_TRUE);
    RW("malloc-write-nonblocking", "clEnqueueWriteBuffer", q, dev, 1, pageable, n, CL_FALSE);
    RW("malloc-write-4k", "clEnqueueWriteBuffer", q, dev, 1, pageable, 4096, CL_TRUE);
    RW("malloc-write-64k", "clEnqueueWriteBuffer", q, dev, 1, pageable, 65536, CL_TRUE);
    RW("mapped-ahp-write-4k", "clEnqueueWriteBuffer", q, dev, 1, pinned, 4096, CL_TRUE);
    RW("mapped-ahp-write-64k", "clEnqueueWriteBuffer", q, dev, 1, pinned, 65536, CL_TRUE);
    RW("second-queue-mapped-ahp-write", "clEnqueueWriteBuffer", q2, dev, 1, pinned, n, CL_TRUE);
    cl_buffer_region sr = {n / 2, n / 2};
    cl_mem sub = clCreateSubBuffer(dev, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &sr, &err);
    CK(err);
    RW("sub-buffer-mapped-ahp-write", "clEnqueueWriteBuffer", q, sub, 1, pinned, n / 2, CL_TRUE);
    RW("sub-buffer-malloc-write", "clEnqueueWriteBuffer", q, sub, 1, pageable, n / 2, CL_TRUE);

    struct rect rect = {dev, pageable, 4096, n / 4096};
    measure("rect-malloc-write", "clEnqueueWriteBufferRect", n, do_rect, &rect);
    rect.ptr = pinned;
    measure("rect-mapped-ahp-write", "clEnqueueWriteBufferRect", n, do_rect, &rect);

    struct map mp = {dev, CL_MAP_READ, n};
    measure("map-read", "clEnqueueMapBuffer", n, do_map, &mp);
    mp.flags = CL_MAP_WRITE;
    measure("map-write", "clEnqueueMapBuffer", n, do_map, &mp);
    measure("unmap-after-map-write", "clEnqueueUnmapMemObject", n, do_unmap, &mp);
    mp.flags = CL_MAP_WRITE_INVALIDATE_REGION;
    measure("map-write-invalidate", "clEnqueueMapBuffer", n, do_map, &mp);
    measure("unmap-after-map-write-invalidate", "clEnqueueUnmapMemObject", n, do_unmap, &mp);

    struct mig mg = {q, dev2, CL_MIGRATE_MEM_OBJECT_HOST};
    RW("fill-dev2", "clEnqueueWriteBuffer", q, dev2, 1, pinned, n, CL_TRUE);
    measure("migrate-to-host", "clEnqueueMigrateMemObjects", n, do_migrate_pair, &mg);
    mg.flags = 0;
    measure("migrate-back-flags-0", "clEnqueueMigrateMemObjects", n, do_migrate_pair, &mg);
    mg.flags = CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED;
    measure("migrate-to-host-content-undefined", "clEnqueueMigrateMemObjects", n, do_migrate_pair, &mg);

    struct copy cp = {q, dev, dev2, n};
    measure("copy-buffer", "clEnqueueCopyBuffer", n, do_copy, &cp);
    cp.src = ahp;
    measure("copy-from-ahp-buffer", "clEnqueueCopyBuffer", n, do_copy, &cp);
    measure("fill-buffer", "clEnqueueFillBuffer", n, do_fill, &cp);

    if (nd == 2) {
        qb = clCreateCommandQueueWithProperties(ctx, devs[1], prof, &err);
        CK(err);
        cl_mem x = buffer(CL_MEM_READ_WRITE, n, NULL);
        RW("fill-x", "clEnqueueWriteBuffer", q, x, 1, pinned, n, CL_TRUE);
        struct mig cross = {qb, x, 0};
        measure("migrate-between-devices", "clEnqueueMigrateMemObjects", n, do_cross, &cross);
        cross.flags = CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED;
        measure("migrate-between-devices-content-undefined", "clEnqueueMigrateMemObjects", n, do_cross, &cross);
        struct copy xc = {qb, dev, x, n};
        g_pinned = pinned;
        measure("copy-between-devices", "clEnqueueCopyBuffer", n, do_copy_cross, &xc);
        clReleaseMemObject(x);
        clReleaseCommandQueue(qb);
    }

    CK(ENQ(clEnqueueUnmapMemObject(q, ahp, pinned, 0, NULL, NULL)));
    CK(clFinish(q));
    cl_mem all[] = {sub, dev, dev2, ahp, uhp};
    for (unsigned i = 0; i < sizeof all / sizeof *all; i++) clReleaseMemObject(all[i]);
    clReleaseCommandQueue(q2);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("enqueues %ld\n", enqueues);
    return 0;
}
