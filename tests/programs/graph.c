/* The command graph's edges (issue #24): wait lists across queues, a user event, markers and
 * barriers with and without wait lists on an out-of-order queue, the OpenCL 1.1 barrier and
 * marker (PoCL does not implement clEnqueueWaitForEvents), an event the program retained, and the
 * host's synchronisation points (clWaitForEvents, a polling loop, clFinish). With "two" (and
 * POCL_DEVICES="pthread pthread"), the out-of-order queue is on the context's second device, so
 * the wait lists cross devices. */
#include "common.h"

int main(int argc, char **argv) {
    int two_devices = argc > 1 && !strcmp(argv[1], "two");
    cl_int err;
    cl_command_queue q1, q2;
    cl_queue_properties ooo[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    if (two_devices) {
        cl_device_id ds[2];
        setup_two(ds);
        q1 = make_queue(0);
        q2 = clCreateCommandQueueWithProperties(g_ctx, ds[1], ooo, &err);
        CHECK_ERR(err);
    } else {
        setup();
        q1 = make_queue(0);
        q2 = make_queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    }
    enum { N = 1 << 16 };
    static int host[N], back[N];
    for (int i = 0; i < N; i++) host[i] = i;
    cl_mem a = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CHECK_ERR(err);
    cl_mem b = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CHECK_ERR(err);
    cl_event e1, e2, e3, e4, e5, e6;
    /* 1: a write on the in-order queue; 2: a write on the other queue that waits for it. */
    CHECK(clEnqueueWriteBuffer(q1, a, CL_FALSE, 0, sizeof host, host, 0, NULL, &e1));
    CHECK(clEnqueueWriteBuffer(q2, b, CL_FALSE, 0, sizeof host, host, 1, &e1, &e2));
    /* 3: a read held back by a user event the host sets later (and by the write of what it
     * reads). */
    cl_event user = clCreateUserEvent(g_ctx, &err);
    CHECK_ERR(err);
    cl_event before_read[] = {user, e1};
    CHECK(clEnqueueReadBuffer(q2, a, CL_FALSE, 0, sizeof back, back, 2, before_read, &e3));
    /* 4: a marker without a wait list (every earlier command of q2); 5: a barrier on 2 alone; 6: a
     * write after the barrier. */
    CHECK(clEnqueueMarkerWithWaitList(q2, 0, NULL, &e4));
    CHECK(clEnqueueBarrierWithWaitList(q2, 1, &e2, &e5));
    CHECK(clEnqueueWriteBuffer(q2, b, CL_FALSE, 0, sizeof host, host, 0, NULL, &e6));
    CHECK(clSetUserEventStatus(user, CL_COMPLETE));
    /* 7: the OpenCL 1.1 barrier; 8: a write after it; 9: the OpenCL 1.1 marker. */
    cl_event e9;
    CHECK(clEnqueueBarrier(q2));
    CHECK(clEnqueueWriteBuffer(q2, b, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL));
    CHECK(clEnqueueMarker(q2, &e9));
    /* Host synchronisation points: a wait for two commands, the end of a polling loop (the
     * status query that sees CL_COMPLETE), clFinish. */
    cl_event two[] = {e3, e6};
    CHECK(clWaitForEvents(2, two));
    cl_int status;
    do
        CHECK(clGetEventInfo(e9, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    while (status != CL_COMPLETE);
    CHECK(clFinish(q1));
    CHECK(clFinish(q2));
    /* 10: e1 retained and released once, so still the program's: a wait on it names it. */
    CHECK(clRetainEvent(e1));
    CHECK(clReleaseEvent(e1));
    CHECK(clEnqueueWriteBuffer(q1, a, CL_FALSE, 0, sizeof host, host, 1, &e1, NULL));
    CHECK(clFinish(q1));
    mix(back, sizeof back);
    cl_event all[] = {e1, e2, e3, e4, e5, e6, e9, user};
    for (unsigned i = 0; i < sizeof all / sizeof *all; i++) CHECK(clReleaseEvent(all[i]));
    CHECK(clReleaseMemObject(a));
    CHECK(clReleaseMemObject(b));
    CHECK(clReleaseCommandQueue(q1));
    CHECK(clReleaseCommandQueue(q2));
    finish_program();
    return 0;
}
