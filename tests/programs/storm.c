/* The overhead benchmarks. Default: a storm of small (4 KiB) write/read/map/unmap enqueues, all
 * non-blocking, on one in-order queue per thread, with a clFinish every 64 commands so the queue
 * stays short; prints the wall time per enqueue in microseconds, the peak RSS, and the CPU time
 * the calling threads themselves spent per enqueue (clxfer's own work shows there, without the
 * scheduling noise of PoCL's worker threads).
 * With "calls": pairs of the cheapest calls (clRetainMemObject/clReleaseMemObject), where the
 * driver does almost nothing, so clxfer's own cost per call shows; prints nanoseconds per call.
 * A third argument makes the program time its commands itself, to show what the driver charges
 * for device timing without clxfer: "callbacks" gives each command an event and a completion
 * callback that reads the four profiling timestamps and releases the event (what a tracer with a
 * callback per command pays); "events" gives each command an event whose four timestamps are read
 * and which is released after each clFinish (the least any completion-time collection can pay).
 * "profiling" only turns profiling on for the queue (no events): what the driver charges for
 * keeping the timestamps that any device timing needs.
 * "spin:NS" makes the program itself busy for NS nanoseconds after each enqueue, with no device
 * timing: what any work between enqueues costs on this driver (PoCL's workers go idle in the gap
 * and each enqueue must wake them), to read clxfer's figures against.
 * "poll" is "events" with a thread that asks the newest event's status every millisecond (what
 * collecting completions by polling instead of callbacks costs the enqueuing thread); "toggle"
 * leaves profiling off and turns it on around every 64th command with the OpenCL 1.0
 * clSetCommandQueueProperty, timing only those (prints how many calls the driver accepted and
 * how many timed commands had profiling times).
 * "usm" runs the storm as USM memcpys (4 KiB, host to device and back, non-blocking) on the first
 * platform offering cl_intel_unified_shared_memory (the test ICD, whose commands complete at once
 * and whose driver does nothing else): what is left is clxfer's own cost per enqueue, without
 * PoCL's worker threads.
 * Prints the wall time, peak RSS and calling threads' CPU per enqueue, and the CPU time of
 * clxfer's timer thread (which arms deferred completion callbacks: asleep between them).
 * Usage: storm [enqueues per thread] [threads | calls] [callbacks | events | profiling | spin:NS | usm] */
#define _POSIX_C_SOURCE 200809L
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#include "common.h"
#include <CL/cl_icd.h>
#include <dirent.h>
#include <pthread.h>
#include <unistd.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int g_enqueues;
static pthread_barrier_t g_start;
static double g_cpu_us; /* CPU time of the storm threads themselves, summed */
static pthread_mutex_t g_cpu_lock = PTHREAD_MUTEX_INITIALIZER;

static int g_callbacks, g_events, g_profiling, g_poll, g_toggle;
static int g_toggled, g_toggle_ok, g_toggle_timed; /* toggle: calls accepted, commands timed */
static double g_toggle_s;                            /* toggle: time in the property calls */
static __thread double t_toggle_s;                   /* this thread's, added to it at its end */
static pthread_mutex_t g_held_lock = PTHREAD_MUTEX_INITIALIZER;
static cl_event g_newest; /* poll: the newest event, under g_held_lock */
static volatile int g_polling;

static void CL_CALLBACK completed(cl_event e, cl_int status, void *user) {
    (void)status, (void)user;
    cl_ulong t[4];
    for (int i = 0; i < 4; i++)
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_QUEUED + i, sizeof t[i], &t[i], NULL);
    clReleaseEvent(e);
}

/* The event out-parameter: one the program times, or none. */
static cl_event *event_of(cl_event *slot) { return g_callbacks || g_events || g_poll ? slot : NULL; }

/* "events": the events of the commands since the last clFinish. */
static __thread cl_event t_held[64];
static __thread int t_nheld;

static long g_spin_ns;

static void track(cl_event e) {
    if (g_spin_ns) {
        double until = now() + g_spin_ns * 1e-9;
        while (now() < until) {
        }
    }
    if (g_callbacks) CHECK(clSetEventCallback(e, CL_COMPLETE, completed, NULL));
    if (g_events) t_held[t_nheld++] = e;
    if (g_poll) {
        pthread_mutex_lock(&g_held_lock);
        t_held[t_nheld++] = e;
        g_newest = e;
        pthread_mutex_unlock(&g_held_lock);
    }
}

static void finished(void) {
    if (g_poll) pthread_mutex_lock(&g_held_lock);
    for (int i = 0; i < t_nheld; i++) completed(t_held[i], CL_COMPLETE, NULL);
    t_nheld = 0;
    g_newest = NULL;
    if (g_poll) pthread_mutex_unlock(&g_held_lock);
}

/* "poll": every millisecond, the newest event's status. */
static void *poller(void *arg) {
    (void)arg;
    struct timespec ms = {0, 1000000};
    while (g_polling) {
        pthread_mutex_lock(&g_held_lock);
        if (g_newest) {
            cl_int st;
            clGetEventInfo(g_newest, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
        }
        pthread_mutex_unlock(&g_held_lock);
        nanosleep(&ms, NULL);
    }
    return NULL;
}

/* "toggle": profiling on for this one command's enqueue; its event, or none. */
/* The driver's clSetCommandQueueProperty, from the queue's dispatch table: a loader forwards to
 * the slot unchecked, and drivers that dropped the call (PoCL) leave it empty. */
static cl_int set_property(cl_command_queue q, cl_bool on) {
    struct _cl_icd_dispatch *d = *(struct _cl_icd_dispatch **)q;
    if (!d->clSetCommandQueueProperty) return CL_INVALID_OPERATION;
    return d->clSetCommandQueueProperty(q, CL_QUEUE_PROFILING_ENABLE, on, NULL);
}

static cl_event *toggle_on(cl_command_queue q, int i, cl_event *slot) {
    if (!g_toggle || i % 64 != 0) return NULL;
    double t0 = now();
    if (set_property(q, CL_TRUE) == CL_SUCCESS) g_toggled++;
    t_toggle_s += now() - t0;
    return slot;
}

static void toggle_off(cl_command_queue q, cl_event *e) {
    if (!e) return;
    double t0 = now();
    set_property(q, CL_FALSE);
    t_toggle_s += now() - t0;
    t_held[t_nheld++] = *e;
}

/* "toggle": after clFinish, which of the toggled commands have profiling times. */
static void toggle_collect(void) {
    for (int i = 0; i < t_nheld; i++) {
        cl_ulong a = 0, b = 0;
        if (clGetEventProfilingInfo(t_held[i], CL_PROFILING_COMMAND_START, sizeof a, &a, NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(t_held[i], CL_PROFILING_COMMAND_END, sizeof b, &b, NULL) == CL_SUCCESS && b > a)
            g_toggle_ok++;
        g_toggle_timed++;
        clReleaseEvent(t_held[i]);
    }
    t_nheld = 0;
}

/* Peak RSS of this program's own address space (VmHWM), in KiB: unlike getrusage's ru_maxrss,
 * it does not include the parent's memory when the program was started by fork and exec. */
static long peak_rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
    if (f) fclose(f);
    return kib;
}

/* CPU time, µs, of this process's threads named NAME (clxfer's "clxfer-timer" thread: asleep
 * unless a callback is due, whatever the enqueue rate), from /proc/self/task. */
static double threads_cpu_us(const char *name) {
    double us = 0;
    long tick = sysconf(_SC_CLK_TCK);
    DIR *d = opendir("/proc/self/task");
    struct dirent *t;
    while (d && (t = readdir(d))) {
        char path[300], comm[64] = "", stat[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", t->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
        fclose(f);
        comm[strcspn(comm, "\n")] = 0;
        if (strcmp(comm, name)) continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", t->d_name);
        f = fopen(path, "r");
        if (!f) continue;
        size_t n = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[n] = 0;
        /* After the ")" that ends the name: state is field 3, utime and stime fields 14 and 15. */
        char *p = strrchr(stat, ')');
        unsigned long ut = 0, st = 0;
        if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
            us += (ut + st) * 1e6 / tick;
    }
    if (d) closedir(d);
    return us;
}

static double thread_cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

/* Adds this thread's CPU time since cpu0 to the total. */
static void add_cpu(double cpu0) {
    double cpu = thread_cpu() - cpu0;
    pthread_mutex_lock(&g_cpu_lock);
    g_cpu_us += cpu;
    g_toggle_s += t_toggle_s;
    pthread_mutex_unlock(&g_cpu_lock);
}

typedef void *(CL_API_CALL *usm_alloc_fn)(cl_context, cl_device_id, const cl_mem_properties_intel *, size_t,
                                          cl_uint, cl_int *);
typedef cl_int(CL_API_CALL *usm_free_fn)(cl_context, void *);
typedef cl_int(CL_API_CALL *usm_memcpy_fn)(cl_command_queue, cl_bool, void *, const void *, size_t, cl_uint,
                                           const cl_event *, cl_event *);
static int g_usm;

static void *usm_storm(void) {
    cl_int err;
    usm_alloc_fn dev_alloc = (usm_alloc_fn)clGetExtensionFunctionAddressForPlatform(g_platform, "clDeviceMemAllocINTEL");
    usm_free_fn mem_free = (usm_free_fn)clGetExtensionFunctionAddressForPlatform(g_platform, "clMemFreeINTEL");
    usm_memcpy_fn copy = (usm_memcpy_fn)clGetExtensionFunctionAddressForPlatform(g_platform, "clEnqueueMemcpyINTEL");
    if (!dev_alloc || !mem_free || !copy) {
        printf("FAIL the platform offers no USM\n");
        exit(1);
    }
    cl_command_queue q = make_queue(0);
    static __thread char host[4096];
    char *dev = dev_alloc(g_ctx, g_device, NULL, sizeof host, 0, &err);
    CHECK_ERR(err);
    pthread_barrier_wait(&g_start);
    double cpu0 = thread_cpu();
    for (int i = 0; i < g_enqueues / 4; i++) {
        for (int k = 0; k < 2; k++) {
            CHECK(copy(q, CL_FALSE, dev, host, sizeof host, 0, NULL, NULL));
            CHECK(copy(q, CL_FALSE, host, dev, sizeof host, 0, NULL, NULL));
        }
        if (i % 16 == 15) CHECK(clFinish(q));
    }
    CHECK(clFinish(q));
    add_cpu(cpu0);
    CHECK(mem_free(g_ctx, dev));
    CHECK(clReleaseCommandQueue(q));
    return NULL;
}

static void *storm(void *arg) {
    (void)arg;
    if (g_usm) return usm_storm();
    cl_int err;
    cl_command_queue q =
        make_queue(g_callbacks || g_events || g_profiling || g_poll ? CL_QUEUE_PROFILING_ENABLE : 0);
    static __thread char host[4096];
    cl_event e = NULL;
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CHECK_ERR(err);
    for (int warm = 0; warm < 100; warm++)
        CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
    pthread_barrier_wait(&g_start);
    double cpu0 = thread_cpu();
    for (int i = 0; i < g_enqueues / 4; i++) {
        cl_event *t = toggle_on(q, i, &e);
        CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, t ? t : event_of(&e)));
        toggle_off(q, t);
        track(e);
        CHECK(clEnqueueReadBuffer(q, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, event_of(&e)));
        track(e);
        void *m = clEnqueueMapBuffer(q, buf, CL_FALSE, CL_MAP_READ, 0, sizeof host, 0, NULL, event_of(&e), &err);
        CHECK_ERR(err);
        track(e);
        CHECK(clEnqueueUnmapMemObject(q, buf, m, 0, NULL, event_of(&e)));
        track(e);
        if (i % 16 == 15) {
            CHECK(clFinish(q));
            if (g_toggle) toggle_collect();
            finished();
        }
    }
    CHECK(clFinish(q));
    if (g_toggle) toggle_collect();
    finished();
    add_cpu(cpu0);
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseCommandQueue(q));
    return NULL;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 200000;
    setup();
    cl_int err;
    if (argc > 2 && !strcmp(argv[2], "calls")) {
        cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
        CHECK_ERR(err);
        double t0 = now();
        for (int i = 0; i < n; i++) {
            CHECK(clRetainMemObject(buf));
            CHECK(clReleaseMemObject(buf));
        }
        printf("ns_per_call %.1f\n", (now() - t0) * 1e9 / (2.0 * n));
        return 0;
    }
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    if (threads < 1 || threads > 64) threads = 1;
    g_callbacks = argc > 3 && !strcmp(argv[3], "callbacks");
    g_events = argc > 3 && !strcmp(argv[3], "events");
    g_profiling = argc > 3 && !strcmp(argv[3], "profiling");
    g_poll = argc > 3 && !strcmp(argv[3], "poll");
    g_toggle = argc > 3 && !strcmp(argv[3], "toggle");
    g_spin_ns = argc > 3 && !strncmp(argv[3], "spin:", 5) ? atol(argv[3] + 5) : 0;
    g_usm = argc > 3 && !strcmp(argv[3], "usm");
    g_enqueues = n;
    pthread_t t[64];
    pthread_barrier_init(&g_start, NULL, threads + 1);
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, storm, NULL);
    pthread_t poll_thread;
    g_polling = g_poll;
    if (g_poll) pthread_create(&poll_thread, NULL, poller, NULL);
    pthread_barrier_wait(&g_start);
    double t0 = now();
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    if (g_poll) {
        g_polling = 0;
        pthread_join(poll_thread, NULL);
    }
    if (g_toggle)
        printf("toggle: %d of %d property changes accepted, %d of %d commands had times, %.2f us a pair\n", g_toggled,
               g_toggle_timed, g_toggle_ok, g_toggle_timed, g_toggle_timed ? g_toggle_s * 1e6 / g_toggle_timed : 0.0);
    double us = (now() - t0) * 1e6 / ((double)(g_enqueues / 4 * 4) * threads);
    printf("timer_cpu_us %.0f\n", threads_cpu_us("clxfer-timer"));
    printf("us_per_enqueue %.3f\nmax_rss_kib %ld\ncpu_us_per_enqueue %.3f\n", us, peak_rss_kib(),
           g_cpu_us / ((double)(g_enqueues / 4 * 4) * threads));
    /* clxfer's writer (renders the trace, keeps the report): whether it keeps up with the storm. */
    printf("writer_cpu_us_per_enqueue %.3f\n",
           threads_cpu_us("clxfer-writer") / ((double)(g_enqueues / 4 * 4) * threads));
    CHECK(clReleaseContext(g_ctx));
    return 0;
}
