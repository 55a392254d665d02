/* Possible data races between queues (issue #25). Each mode writes a buffer on one queue and
 * reads it on another, on two devices of one context (POCL_DEVICES="pthread pthread"):
 *   correct    the read waits for the write's event            no race
 *   race       the read does not wait                          one race
 *   finish     the host waits (clFinish) before the read       no race
 *   halves     the two queues write the buffer's two halves    no race
 *   user       the read waits for a user event, set only after a blocking write on the
 *              first queue                                     no race (the read is gated)
 *   ooo        two writes on one out-of-order queue, unordered  one race
 *   ooo-event  the second waits for the first's event          no race
 * It prints a checksum of what it read back (but for the racing read), so that runs with and
 * without clxfer compare. */
#include "common.h"

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "correct";
    cl_int err;
    find_pocl();
    cl_device_id ds[2];
    cl_uint n = 0;
    CHECK(clGetDeviceIDs(g_platform, CL_DEVICE_TYPE_ALL, 2, ds, &n));
    if (n < 2) {
        printf("FAIL two devices wanted, %u found\n", n);
        return 1;
    }
    g_device = ds[0];
    g_ctx = clCreateContext(NULL, 2, ds, NULL, NULL, &err);
    CHECK_ERR(err);
    cl_queue_properties ooo[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_command_queue q1 = make_queue(0);
    cl_command_queue q2 = clCreateCommandQueueWithProperties(g_ctx, ds[1], NULL, &err);
    CHECK_ERR(err);
    cl_command_queue qo = clCreateCommandQueueWithProperties(g_ctx, ds[0], ooo, &err);
    CHECK_ERR(err);
    enum { N = 1 << 14 };
    static int host[N], back[N];
    for (int i = 0; i < N; i++) host[i] = i;
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CHECK_ERR(err);
    cl_event e = NULL;
    if (!strcmp(mode, "correct") || !strcmp(mode, "race") || !strcmp(mode, "finish")) {
        CHECK(clEnqueueWriteBuffer(q1, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, &e));
        if (!strcmp(mode, "finish")) CHECK(clFinish(q1));
        int wait = !strcmp(mode, "correct");
        CHECK(clEnqueueReadBuffer(q2, buf, CL_FALSE, 0, sizeof back, back, wait, wait ? &e : NULL, NULL));
        CHECK(clWaitForEvents(1, &e));
    } else if (!strcmp(mode, "halves")) {
        size_t half = sizeof host / 2;
        CHECK(clEnqueueWriteBuffer(q1, buf, CL_FALSE, 0, half, host, 0, NULL, NULL));
        CHECK(clEnqueueWriteBuffer(q2, buf, CL_FALSE, half, half, (char *)host + half, 0, NULL, NULL));
        CHECK(clFinish(q1));
        CHECK(clFinish(q2));
        CHECK(clEnqueueReadBuffer(q1, buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    } else if (!strcmp(mode, "user")) {
        cl_event gate = clCreateUserEvent(g_ctx, &err);
        CHECK_ERR(err);
        CHECK(clEnqueueReadBuffer(q2, buf, CL_FALSE, 0, sizeof back, back, 1, &gate, &e));
        CHECK(clEnqueueWriteBuffer(q1, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
        CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
        CHECK(clWaitForEvents(1, &e));
        CHECK(clReleaseEvent(gate));
    } else if (!strcmp(mode, "ooo") || !strcmp(mode, "ooo-event")) {
        int wait = !strcmp(mode, "ooo-event");
        CHECK(clEnqueueWriteBuffer(qo, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, &e));
        CHECK(clEnqueueWriteBuffer(qo, buf, CL_FALSE, 0, sizeof host, host, wait, wait ? &e : NULL, NULL));
        CHECK(clFinish(qo));
        CHECK(clEnqueueReadBuffer(q1, buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    } else {
        printf("FAIL unknown mode %s\n", mode);
        return 1;
    }
    CHECK(clFinish(q1));
    CHECK(clFinish(q2));
    if (e) CHECK(clReleaseEvent(e));
    /* What a racing read sees is undefined: only the others' is compared. */
    if (strcmp(mode, "race") != 0) mix(back, sizeof back);
    printf("races %s: checksum %016llx\n", mode, (unsigned long long)g_sum);
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseCommandQueue(q1));
    CHECK(clReleaseCommandQueue(q2));
    CHECK(clReleaseCommandQueue(qo));
    finish_program();
    return 0;
}
