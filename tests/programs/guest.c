/* What clxfer adds must stay clxfer's: each mode prints what the program can observe, so that
 * runs with and without clxfer compare byte for byte (issue #22).
 *   queries  queue properties and the properties array (NULL, empty, zero, out-of-order and
 *            profiling lists; clCreateCommandQueue), profiling info on queues with and without
 *            profiling, clSetCommandQueueProperty's old properties, clEnqueueMarker(q, NULL)
 *   testicd  on the test ICD (OCL_ICD_VENDORS): a handle that is no object, handed back by
 *            clCreateFromGLBuffer with no error code (as the Khronos loader's test stub does), and
 *            clSetCommandQueueProperty's old properties
 *   fork N [K]  N forks while a worker thread enqueues non-blocking writes in a loop: each child
 *            calls exit(0) at once, except every Kth (default 100; 0: none), which first makes
 *            OpenCL calls of its own
 *            (no enqueues: the driver's worker threads did not survive the fork); a child that
 *            does not exit within 120 s is killed and counted as hung (a deadlock never exits;
 *            a child of a loaded machine took over 10 s once)
 *   atexit   an exit handler registered before the first OpenCL call makes 13 calls (8 writes, a
 *            clFinish, a read, releases), and the program's own destructor 2 more, after main's
 *   stuck N  on an out-of-order queue, a marker waits on a user event set only at the end; meanwhile
 *            N non-blocking writes, each polled until complete and released, never a clFinish:
 *            prints whether the resident memory grew by less than 8 MiB over them (the figure
 *            itself goes to stderr)
 *   locked N on the test ICD with TESTICD_MODE=locked-callbacks (callbacks run on the driver's
 *            thread while it holds the lock its event queries take): N markers, a clFinish or a
 *            clWaitForEvents every few (clxfer collects completions there, and in its callback)
 *   refcounts  on the test ICD with TESTICD_MODE=locked-callbacks (callbacks delivered later, on
 *            the driver's thread): the reference counts of the program's event and its queue after
 *            the program waited (clxfer's events hold the driver's references to the queue until
 *            clxfer releases them, and clxfer retains the program's), and after a retain
 *   badlist  a properties list with an unknown name and no terminator, ending at a page boundary
 *            (the driver stops at the unknown name; reading on faults) */
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#include "common.h"
#include <CL/cl_gl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void show_queue(const char *label, cl_command_queue q) {
    cl_command_queue_properties p = 0xdead;
    size_t size = 12345;
    cl_int e = clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof p, &p, &size);
    printf("%-10s CL_QUEUE_PROPERTIES %d 0x%llx size %zu\n", label, e, (unsigned long long)p, size);
    size = 12345;
    e = clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, 0, NULL, &size);
    printf("%-10s CL_QUEUE_PROPERTIES_ARRAY size %d %zu\n", label, e, size);
    /* A buffer sized for the program's own list, marked so that what is written shows. */
    cl_queue_properties list[8];
    memset(list, 0xab, sizeof list);
    size_t want = size;
    size = 12345;
    e = clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, want, want ? list : NULL, &size);
    printf("%-10s CL_QUEUE_PROPERTIES_ARRAY %d size %zu:", label, e, size);
    for (int i = 0; i < 4; i++) printf(" %llx", (unsigned long long)list[i]);
    printf("\n");
    if (want) {
        e = clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, want - 1, list, NULL);
        printf("%-10s CL_QUEUE_PROPERTIES_ARRAY one byte short %d\n", label, e);
    }
    e = clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, 1, &p, NULL);
    printf("%-10s CL_QUEUE_PROPERTIES one byte %d\n", label, e);
}

/* A command's profiling info on q: availability, and that a refused query leaves the buffer. */
static void show_profiling(const char *label, cl_command_queue q, cl_mem buf) {
    char data[64] = {0};
    cl_event ev;
    CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof data, data, 0, NULL, &ev));
    CHECK(clWaitForEvents(1, &ev));
    static const cl_profiling_info params[] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                                CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
    for (int i = 0; i < 4; i++) {
        cl_ulong t = 0x5eed;
        size_t size = 12345;
        cl_int e = clGetEventProfilingInfo(ev, params[i], sizeof t, &t, &size);
        /* The times themselves vary: only whether one came back, and the size. */
        printf("%-10s profiling 0x%x %d %s size %zu\n", label, params[i], e,
               t == 0x5eed ? "untouched" : (t ? "a time" : "zero"), size);
    }
    cl_ulong t;
    printf("%-10s profiling size query %d\n", label,
           clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, 0, NULL, NULL));
    printf("%-10s profiling too small %d\n", label,
           clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, 4, &t, NULL));
    printf("%-10s profiling bad param %d\n", label,
           clGetEventProfilingInfo(ev, 0xdead, sizeof t, &t, NULL));
    CHECK(clReleaseEvent(ev));
}

static cl_command_queue with_list(const cl_queue_properties *list) {
    cl_int err;
    cl_command_queue q = clCreateCommandQueueWithProperties(g_ctx, g_device, list, &err);
    CHECK_ERR(err);
    return q;
}

static int queries(void) {
    cl_int err;
    cl_queue_properties empty[] = {0};
    cl_queue_properties zero[] = {CL_QUEUE_PROPERTIES, 0, 0};
    cl_queue_properties ooo[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_queue_properties prof[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    struct {
        const char *label;
        cl_command_queue q;
    } qs[] = {
        {"null", with_list(NULL)},
        {"empty", with_list(empty)},
        {"zero", with_list(zero)},
        {"ooo", with_list(ooo)},
        {"profiling", with_list(prof)},
        {"1.x", clCreateCommandQueue(g_ctx, g_device, 0, &err)},
        {"1.x-prof", clCreateCommandQueue(g_ctx, g_device, CL_QUEUE_PROFILING_ENABLE, &err)},
    };
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
    CHECK_ERR(err);
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        show_queue(qs[i].label, qs[i].q);
        show_profiling(qs[i].label, qs[i].q, buf);
    }
    printf("clEnqueueMarker(q, NULL) %d\n", clEnqueueMarker(qs[0].q, NULL));
    cl_event marker;
    printf("clEnqueueMarker(q, &event) %d\n", clEnqueueMarker(qs[0].q, &marker));
    CHECK(clWaitForEvents(1, &marker));
    CHECK(clReleaseEvent(marker));
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) CHECK(clReleaseCommandQueue(qs[i].q));
    CHECK(clReleaseMemObject(buf));
    return 0;
}

static int badlist(void) {
    long page = sysconf(_SC_PAGESIZE);
    char *two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (two == MAP_FAILED || munmap(two + page, page) != 0) {
        printf("FAIL mmap\n");
        return 1;
    }
    cl_queue_properties *list = (cl_queue_properties *)(two + page) - 3;
    list[0] = CL_QUEUE_PROPERTIES;
    list[1] = 0;
    list[2] = 0xBAD;
    cl_int err = 12345;
    cl_command_queue q = clCreateCommandQueueWithProperties(g_ctx, g_device, list, &err);
    printf("unknown name, no terminator, at a page end: %d %s\n", err, q ? "queue" : "null");
    return 0;
}

static volatile int g_stop;
static cl_command_queue g_queue;
static cl_mem g_buf;

static void *writer(void *arg) {
    (void)arg;
    static char data[4096];
    for (unsigned i = 0; !g_stop; i++) {
        CHECK(clEnqueueWriteBuffer(g_queue, g_buf, CL_FALSE, 0, sizeof data, data, 0, NULL, NULL));
        if (i % 64 == 63) CHECK(clFinish(g_queue));
    }
    CHECK(clFinish(g_queue));
    return NULL;
}

/* Waits up to 120 s for the child; kills it then. Returns 1 if it hung. */
static int hung(pid_t child, int *status) {
    struct timespec start, now, pause = {0, 100000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        if (waitpid(child, status, WNOHANG) == child) return 0;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= 120) break;
        nanosleep(&pause, NULL);
    }
    kill(child, SIGKILL);
    waitpid(child, status, 0);
    return 1;
}

static int forks(int n, int every) {
    cl_int err;
    g_queue = make_queue(0);
    g_buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK_ERR(err);
    pthread_t t;
    pthread_create(&t, NULL, writer, NULL);
    int hangs = 0, failed = 0;
    fflush(stdout);
    for (int i = 0; i < n; i++) {
        pid_t child = fork();
        if (child == 0) {
            if (every > 0 && i % every == every - 1) {
                char name[256];
                for (int j = 0; j < 3; j++) CHECK(clGetDeviceInfo(g_device, CL_DEVICE_NAME, sizeof name, name, NULL));
                cl_mem m = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
                if (err != CL_SUCCESS || clReleaseMemObject(m) != CL_SUCCESS) exit(3);
            }
            exit(0);
        }
        int status = 0;
        hangs += hung(child, &status);
        failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    g_stop = 1;
    pthread_join(t, NULL);
    printf("forks %d, hung %d, failed %d\n", n, hangs, failed);
    CHECK(clReleaseMemObject(g_buf));
    CHECK(clReleaseCommandQueue(g_queue));
    return hangs || failed;
}

static cl_command_queue g_exit_queue;
static cl_mem g_exit_buf;
static int g_exit_mode;

/* 13 calls: 8 writes, clFinish, a read, 2 releases and clReleaseContext (finish_program). */
static void in_exit_handler(void) {
    static int data[1024];
    for (int i = 0; i < 8; i++) {
        data[i] = i;
        CHECK(clEnqueueWriteBuffer(g_exit_queue, g_exit_buf, CL_FALSE, 0, sizeof data, data, 0, NULL, NULL));
    }
    CHECK(clFinish(g_exit_queue));
    CHECK(clEnqueueReadBuffer(g_exit_queue, g_exit_buf, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL));
    mix(data, sizeof data);
    CHECK(clReleaseMemObject(g_exit_buf));
    CHECK(clReleaseCommandQueue(g_exit_queue));
    printf("exit handler: 13 calls\n");
    finish_program();
}

/* Runs after every exit handler, in the dynamic linker's (the executable's own .fini_array). */
__attribute__((destructor)) static void in_destructor(void) {
    if (!g_exit_mode) return;
    cl_uint n = 0;
    CHECK(clGetPlatformIDs(0, NULL, &n));
    CHECK(clGetPlatformIDs(0, NULL, &n));
    printf("destructor: 2 calls\n");
}

static int exits(void) {
    cl_int err;
    g_exit_mode = 1;
    g_exit_queue = make_queue(0);
    g_exit_buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK_ERR(err);
    printf("main: returns\n");
    return 0;
}

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kib = atol(line + 6);
    if (f) fclose(f);
    return kib;
}

static int stuck(int n) {
    cl_int err;
    cl_command_queue q = make_queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK_ERR(err);
    cl_event gate = clCreateUserEvent(g_ctx, &err);
    CHECK_ERR(err);
    cl_event marker;
    CHECK(clEnqueueMarkerWithWaitList(q, 1, &gate, &marker));
    static char data[4096];
    long before = 0;
    for (int i = 0; i < n; i++) {
        if (i == 2000) before = rss_kib(); /* after the allocator and the driver warmed up */
        cl_event e;
        CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof data, data, 0, NULL, &e));
        cl_int status = CL_QUEUED;
        while (status > CL_COMPLETE)
            CHECK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
        CHECK(clReleaseEvent(e));
    }
    long growth = rss_kib() - before;
    fprintf(stderr, "stuck: resident memory grew %ld KiB over %d commands\n", growth, n - 2000);
    printf("stuck: %d commands behind a stuck marker, resident memory grew under 8 MiB: %s\n", n,
           growth < 8192 ? "yes" : "no");
    CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK(clFinish(q));
    cl_int status;
    CHECK(clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    printf("marker status %d\n", status);
    CHECK(clReleaseEvent(marker));
    CHECK(clReleaseEvent(gate));
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseCommandQueue(q));
    return growth >= 8192;
}

static void on_test_icd(void) {
    setenv("TEST_PLATFORM", "clxfer test ICD", 1);
    find_pocl();
    CHECK(clGetDeviceIDs(g_platform, CL_DEVICE_TYPE_GPU, 1, &g_device, NULL));
    cl_int err;
    g_ctx = clCreateContext(NULL, 1, &g_device, NULL, NULL, &err);
    CHECK_ERR(err);
}

static int locked(int n) {
    on_test_icd();
    cl_command_queue q = make_queue(0);
    for (int i = 0; i < n; i++) {
        if (i % 16 == 5) {
            cl_event e;
            CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &e));
            CHECK(clWaitForEvents(1, &e));
            CHECK(clReleaseEvent(e));
        } else {
            CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, NULL));
        }
        if (i % 8 == 7) CHECK(clFinish(q));
    }
    CHECK(clFinish(q));
    printf("locked: %d markers\n", n);
    CHECK(clReleaseCommandQueue(q));
    return 0;
}

static void show_counts(const char *when, cl_event e, cl_command_queue q) {
    cl_uint ev = 0, queue = 0;
    CHECK(clGetEventInfo(e, CL_EVENT_REFERENCE_COUNT, sizeof ev, &ev, NULL));
    CHECK(clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof queue, &queue, NULL));
    printf("%-32s event %u queue %u\n", when, ev, queue);
}

/* On the test ICD, whose counts are exact (PoCL's own vary from run to run without clxfer). */
static int refcounts(void) {
    on_test_icd();
    cl_command_queue q = make_queue(0);
    for (int round = 0; round < 3; round++) {
        cl_event e;
        /* Commands with no event of the program's (clxfer's own), then one with. */
        for (int i = 0; i < 5; i++) CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, NULL));
        CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &e));
        CHECK(clWaitForEvents(1, &e));
        show_counts("after clWaitForEvents", e, q);
        CHECK(clFinish(q));
        show_counts("after clFinish", e, q);
        CHECK(clRetainEvent(e));
        show_counts("after a retain", e, q);
        CHECK(clReleaseEvent(e));
        CHECK(clReleaseEvent(e));
        CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, NULL));
        CHECK(clFinish(q));
        cl_uint queue = 0;
        CHECK(clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof queue, &queue, NULL));
        printf("%-32s queue %u\n", "after its release", queue);
    }
    CHECK(clReleaseCommandQueue(q));
    return 0;
}

static int testicd(void) {
    on_test_icd();
    cl_int err;
    cl_mem m = clCreateFromGLBuffer(g_ctx, CL_MEM_READ_WRITE, 1, NULL);
    printf("clCreateFromGLBuffer, no errcode_ret: %p\n", (void *)m);
    err = 12345;
    m = clCreateFromGLBuffer(g_ctx, CL_MEM_READ_WRITE, 1, &err);
    printf("clCreateFromGLBuffer: %p %d\n", (void *)m, err);
    cl_command_queue q = make_queue(0);
    cl_command_queue_properties old = 0xdead;
    err = clSetCommandQueueProperty(q, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, CL_TRUE, &old);
    printf("clSetCommandQueueProperty %d old 0x%llx\n", err, (unsigned long long)old);
    err = clSetCommandQueueProperty(q, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, CL_FALSE, &old);
    printf("clSetCommandQueueProperty %d old 0x%llx\n", err, (unsigned long long)old);
    CHECK(clReleaseCommandQueue(q));
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "atexit")) {
        /* Before any OpenCL call: clxfer is not loaded or started yet. */
        atexit(in_exit_handler);
        setup();
        return exits();
    }
    if (!strcmp(mode, "testicd") || !strcmp(mode, "locked") || !strcmp(mode, "refcounts")) {
        int rc = !strcmp(mode, "locked")      ? locked(argc > 2 ? atoi(argv[2]) : 20000)
                 : !strcmp(mode, "refcounts") ? refcounts()
                                              : testicd();
        finish_program();
        return rc;
    }
    setup();
    int rc;
    if (!strcmp(mode, "queries")) rc = queries();
    else if (!strcmp(mode, "badlist")) rc = badlist();
    else if (!strcmp(mode, "stuck")) rc = stuck(argc > 2 ? atoi(argv[2]) : 100000);
    else if (!strcmp(mode, "fork")) rc = forks(argc > 2 ? atoi(argv[2]) : 1000, argc > 3 ? atoi(argv[3]) : 100);
    else {
        printf("FAIL unknown mode %s\n", mode);
        return 2;
    }
    finish_program();
    return rc;
}
