/* Enqueues a burst of non-blocking writes and never waits for them through OpenCL's waits
 * (clFinish, clWaitForEvents, a blocking call): it polls the last one's status, prints "done",
 * then stays alive until killed (at most 60 s). clxfer's device records must still come, from
 * completion callbacks (deferred ones included), while the program runs. */
#define _POSIX_C_SOURCE 200809L
#include "common.h"
#include <time.h>
#include <unistd.h>

#define BURST 64

int main(void) {
    setup();
    cl_command_queue q = make_queue(0);
    cl_int err;
    static char data[4096];
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof data, NULL, &err);
    CHECK_ERR(err);
    cl_event last = NULL;
    for (int i = 0; i < BURST; i++)
        CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof data, data, 0, NULL,
                                   i == BURST - 1 ? &last : NULL));
    CHECK(clFlush(q));
    cl_int status = CL_QUEUED;
    while (status > CL_COMPLETE)
        CHECK(clGetEventInfo(last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    printf("done %d writes\n", BURST);
    fflush(stdout);
    sleep(60);
    return 0;
}
