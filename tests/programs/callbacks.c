/* Calls the program makes from callbacks that the driver runs inside another of its calls
 * (PoCL runs them synchronously: an event callback inside clSetEventCallback when the event is
 * already complete and inside clSetUserEventStatus, a build callback inside clBuildProgram, a
 * memory object's destructor callback inside clReleaseMemObject), and from one on the driver's
 * own thread. Each callback asks what a program asks (the queue's properties, the event's
 * profiling info, the platforms) and enqueues a write; it prints what it got, so runs with and
 * without clxfer can be compared byte for byte. A queue made without profiling must read
 * properties 0 and profiling info CL_PROFILING_INFO_NOT_AVAILABLE (-7), whatever clxfer does. */
#include "common.h"
#include <stdatomic.h>
#include <unistd.h>

static cl_command_queue q;
static cl_mem b;
static char h[4096];
static atomic_int ready;

static void ask(const char *tag, cl_event e) {
    cl_command_queue_properties p = 0;
    cl_int r = clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof p, &p, NULL);
    printf("%s: queue properties r=%d value=%lx\n", tag, r, (unsigned long)p);
    if (e) {
        cl_ulong t = 0;
        r = clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL);
        printf("%s: profiling END r=%d\n", tag, r);
    }
    cl_uint n = 0;
    for (int i = 0; i < 5; i++) clGetPlatformIDs(0, NULL, &n);
    r = clEnqueueWriteBuffer(q, b, CL_FALSE, 0, 16, h, 0, NULL, NULL);
    printf("%s: enqueue r=%d\n", tag, r);
}

static void CL_CALLBACK on_event(cl_event e, cl_int status, void *tag) {
    (void)status;
    ask(tag, e);
}

static void CL_CALLBACK on_event_later(cl_event e, cl_int status, void *tag) {
    (void)status;
    (void)tag;
    /* On the driver's thread, at an unknown moment: it prints nothing, it only calls. */
    cl_uint n = 0;
    clGetPlatformIDs(0, NULL, &n);
    cl_int st = 0;
    clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    atomic_store(&ready, 1);
}

static void CL_CALLBACK on_build(cl_program p, void *tag) {
    (void)p;
    ask(tag, NULL);
}

static void CL_CALLBACK on_release(cl_mem m, void *tag) {
    (void)m;
    ask(tag, NULL);
}

int main(void) {
    setup();
    q = make_queue(0); /* no profiling */
    cl_int err;
    b = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof h, NULL, &err);
    CHECK_ERR(err);
    cl_event ev;
    CHECK(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, sizeof h, h, 0, NULL, &ev));
    CHECK(clSetEventCallback(ev, CL_COMPLETE, on_event, "already complete"));
    cl_event u = clCreateUserEvent(g_ctx, &err);
    CHECK_ERR(err);
    CHECK(clSetEventCallback(u, CL_COMPLETE, on_event, "user event"));
    CHECK(clSetUserEventStatus(u, CL_COMPLETE));
    const char *src = "kernel void k(global int *a) { a[0] = 1; }";
    cl_program prog = clCreateProgramWithSource(g_ctx, 1, &src, NULL, &err);
    CHECK_ERR(err);
    CHECK(clBuildProgram(prog, 0, NULL, NULL, on_build, "build"));
    cl_mem gone = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
    CHECK_ERR(err);
    CHECK(clSetMemObjectDestructorCallback(gone, on_release, "destructor"));
    CHECK(clReleaseMemObject(gone));
    cl_event later;
    CHECK(clEnqueueWriteBuffer(q, b, CL_FALSE, 0, sizeof h, h, 0, NULL, &later));
    CHECK(clSetEventCallback(later, CL_COMPLETE, on_event_later, NULL));
    CHECK(clFlush(q));
    while (!atomic_load(&ready)) usleep(1000);
    CHECK(clFinish(q));
    printf("checksum done\n");
    CHECK(clReleaseEvent(ev));
    CHECK(clReleaseEvent(u));
    CHECK(clReleaseEvent(later));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseMemObject(b));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(g_ctx));
    return 0;
}
