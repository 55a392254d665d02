/* Exits with two commands still waiting: a read gated on a user event that is never set, and a
 * write queued behind it. clxfer must count both as incomplete at exit and report them without a
 * device time. */
#include "common.h"

int main(void) {
    setup();
    cl_command_queue q = make_queue(0);
    cl_int err;
    static int data[256];
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof data, NULL, &err);
    CHECK_ERR(err);
    CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL));
    cl_event gate = clCreateUserEvent(g_ctx, &err);
    CHECK_ERR(err);
    CHECK(clEnqueueReadBuffer(q, buf, CL_FALSE, 0, sizeof data, data, 1, &gate, NULL));
    CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof data, data, 0, NULL, NULL));
    CHECK(clFlush(q));
    printf("exiting with 2 commands waiting\n");
    return 0;
}
