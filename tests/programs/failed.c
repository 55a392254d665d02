/* Commands that fail (issue #56 item 10): a write waits for a user event the program sets to an
 * error, and a second write, on another queue, waits for the first; both fail and move nothing.
 * Prints each command's status. And calls that fail: two buffers of no bytes (one with an error
 * code asked, one without) and a device query of a parameter no device has. */
#include "common.h"

int main(void) {
    setup();
    cl_int err;
    cl_command_queue q1 = make_queue(0), q2 = make_queue(0);
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    CHECK_ERR(err);
    cl_int empty_err = CL_SUCCESS;
    cl_mem empty = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, 0, NULL, &empty_err);
    cl_mem unasked = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, 0, NULL, NULL);
    cl_uint nothing;
    cl_int asked = clGetDeviceInfo(g_device, 0x7fffffff, sizeof nothing, &nothing, NULL);
    printf("empty buffers %s %s (%d), query %d\n", empty ? "made" : "refused", unasked ? "made" : "refused",
           empty_err, asked);
    cl_event gate = clCreateUserEvent(g_ctx, &err);
    CHECK_ERR(err);
    static int data[1024];
    cl_event w1, w2;
    CHECK(clEnqueueWriteBuffer(q1, buf, CL_FALSE, 0, sizeof data, data, 1, &gate, &w1));
    CHECK(clEnqueueWriteBuffer(q2, buf, CL_FALSE, 0, 16, data, 1, &w1, &w2));
    CHECK(clFlush(q1));
    CHECK(clFlush(q2));
    CHECK(clSetUserEventStatus(gate, -5));
    cl_event both[2] = {w1, w2};
    cl_int waited = clWaitForEvents(2, both);
    cl_int s1, s2;
    CHECK(clGetEventInfo(w1, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s1, &s1, NULL));
    CHECK(clGetEventInfo(w2, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s2, &s2, NULL));
    printf("wait %s, statuses %s %s\n", waited == CL_SUCCESS ? "ok" : "failed",
           s1 < 0 ? "error" : "ok", s2 < 0 ? "error" : "ok");
    CHECK(clReleaseEvent(w1));
    CHECK(clReleaseEvent(w2));
    CHECK(clReleaseEvent(gate));
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseCommandQueue(q1));
    CHECK(clReleaseCommandQueue(q2));
    CHECK(clReleaseContext(g_ctx));
    return 0;
}
