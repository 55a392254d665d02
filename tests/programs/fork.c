/* fork after OpenCL work, with a command still waiting: the child makes three calls of its own and
 * exits normally (running exit handlers), then a second child execs /bin/true. clxfer must report
 * the parent's calls once, in the parent, and only the child's own calls in the child. */
#include "common.h"
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    setup();
    cl_command_queue q = make_queue(0);
    cl_int err;
    int data[256] = {1, 2, 3};
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof data, NULL, &err);
    CHECK_ERR(err);
    CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL));
    /* A read still waiting at the fork (on a user event set only after it): the parent's, never
     * the child's. */
    static int later[256];
    cl_event gate = clCreateUserEvent(g_ctx, &err);
    CHECK_ERR(err);
    CHECK(clEnqueueReadBuffer(q, buf, CL_FALSE, 0, sizeof later, later, 1, &gate, NULL));
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        /* No enqueues here: the driver's worker threads did not survive the fork. */
        char name[256];
        for (int i = 0; i < 3; i++) CHECK(clGetDeviceInfo(g_device, CL_DEVICE_NAME, sizeof name, name, NULL));
        exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    printf("child exited %d\n", WEXITSTATUS(status));
    CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK(clFinish(q));
    CHECK(clReleaseEvent(gate));
    fflush(stdout);
    pid_t execd = fork();
    if (execd == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    waitpid(execd, &status, 0);
    printf("exec child exited %d\n", WEXITSTATUS(status));
    CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL));
    mix(data, sizeof data);
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseCommandQueue(q));
    finish_program();
    return 0;
}
