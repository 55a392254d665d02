/* Possible data races between queues (issue #25). Each mode writes a buffer on one queue and
 * reads it on another, on two devices of one context (POCL_DEVICES="pthread pthread"):
 *   correct    the read waits for the write's event            no race
 *   race       the read does not wait                          one race
 *   finish     the host waits (clFinish) before the read       no race
 *   halves     the two queues write the buffer's two halves    no race
 *   subs       the two queues write two sub-buffers, the buffer's halves   no race
 *   sub-parent  one queue writes a sub-buffer, the other reads the whole parent   one race
 *   user       the read waits for a user event, set only after a blocking write on the
 *              first queue                                     no race (the read is gated)
 *   ooo        two writes on one out-of-order queue, unordered  one race
 *   ooo-event  the second waits for the first's event          no race
 *   marker     the read follows, on its queue, a marker waiting for the write's event   no race
 *   marker-empty  the same marker with an empty wait list (it waits for its own queue only)
 *              one race
 *   barrier    two writes on one out-of-order queue with a barrier between   no race
 *   kernel     a kernel on the first device writes the buffer (`b[i] += 1` through a
 *              `__global int *`), and the second device reads it with no wait
 *              one race (clxfer reads the source: the kernel writes)
 *   kernel-event  the read waits for the kernel's event          no race
 *   kernel-const  kernels on both devices read it through `const __global int *`  no race
 *   kernel-noinfo  as kernel, with the program built without -cl-kernel-arg-info (PoCL then
 *              keeps no argument qualifiers): the source still shows the write
 *   kernel-helper  as kernel, the kernel passing the pointer to a function of its own: the
 *              source says only that it may write (declared)
 *   kernel-binary  as kernel-noinfo, the program made again from its binary: nothing tells
 *              how the kernel uses the buffer (assumed, and not said)
 *   callback   the first queue writes the buffer; the write's CL_COMPLETE callback sets a flag,
 *              the host waits for the flag, and the second device reads with no wait: no race
 *              (the host learnt of the completion from the callback)
 *   poll-migration  the first queue writes the buffer, then migrates it to its own device (moves
 *              nothing) waiting for the write; the host polls the migration's status until
 *              complete and the second device reads the buffer with no wait: no race by the
 *              OpenCL rules, one where the rules say such a status proves nothing (NVIDIA's)
 * The kernels' program is built with -cl-kernel-arg-info but for kernel-noinfo and
 * kernel-binary.
 * It prints a checksum of what it read back (but for the racing read), so that runs with and
 * without clxfer compare. */
#include "common.h"
#include <sched.h>
#include <stdatomic.h>

static atomic_int g_done;

static void CL_CALLBACK written(cl_event e, cl_int status, void *user) {
    (void)e;
    if (status == CL_COMPLETE) atomic_store((atomic_int *)user, 1);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "correct";
    cl_int err;
    cl_device_id ds[2];
    setup_two(ds);
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
    } else if (!strcmp(mode, "callback")) {
        CHECK(clEnqueueWriteBuffer(q1, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, &e));
        CHECK(clSetEventCallback(e, CL_COMPLETE, written, &g_done));
        CHECK(clFlush(q1));
        while (!atomic_load(&g_done)) sched_yield();
        CHECK(clEnqueueReadBuffer(q2, buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    } else if (!strcmp(mode, "poll-migration")) {
        cl_event m;
        CHECK(clEnqueueWriteBuffer(q1, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, &e));
        CHECK(clEnqueueMigrateMemObjects(q1, 1, &buf, 0, 1, &e, &m));
        CHECK(clFlush(q1));
        cl_int s = 1;
        while (s != CL_COMPLETE)
            CHECK(clGetEventInfo(m, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL));
        CHECK(clEnqueueReadBuffer(q2, buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
        CHECK(clReleaseEvent(m));
        CHECK(clWaitForEvents(1, &e));
    } else if (!strcmp(mode, "halves")) {
        size_t half = sizeof host / 2;
        CHECK(clEnqueueWriteBuffer(q1, buf, CL_FALSE, 0, half, host, 0, NULL, NULL));
        CHECK(clEnqueueWriteBuffer(q2, buf, CL_FALSE, half, half, (char *)host + half, 0, NULL, NULL));
        CHECK(clFinish(q1));
        CHECK(clFinish(q2));
        CHECK(clEnqueueReadBuffer(q1, buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    } else if (!strcmp(mode, "subs") || !strcmp(mode, "sub-parent")) {
        /* Two sub-buffers, the parent's halves: each device writes one, with no wait between.
         * In sub-parent, the second device reads the whole parent instead. */
        size_t half = sizeof host / 2;
        cl_mem sub[2];
        for (int i = 0; i < 2; i++) {
            cl_buffer_region r = {i * half, half};
            sub[i] = clCreateSubBuffer(buf, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
            CHECK_ERR(err);
        }
        CHECK(clEnqueueWriteBuffer(q1, sub[0], CL_FALSE, 0, half, host, 0, NULL, &e));
        if (!strcmp(mode, "subs"))
            CHECK(clEnqueueWriteBuffer(q2, sub[1], CL_FALSE, 0, half, (char *)host + half, 0, NULL, NULL));
        else
            CHECK(clEnqueueReadBuffer(q2, buf, CL_FALSE, 0, sizeof back, back, 0, NULL, NULL));
        CHECK(clFinish(q1));
        CHECK(clFinish(q2));
        if (!strcmp(mode, "subs"))
            CHECK(clEnqueueReadBuffer(q1, buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
        for (int i = 0; i < 2; i++) CHECK(clReleaseMemObject(sub[i]));
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
    } else if (!strcmp(mode, "marker") || !strcmp(mode, "marker-empty")) {
        /* The read follows a marker on its own in-order queue: one that waits for the write's
         * event orders them; one with an empty wait list waits only for its own queue. */
        int wait = !strcmp(mode, "marker");
        CHECK(clEnqueueWriteBuffer(q1, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, &e));
        CHECK(clEnqueueMarkerWithWaitList(q2, wait, wait ? &e : NULL, NULL));
        CHECK(clEnqueueReadBuffer(q2, buf, CL_FALSE, 0, sizeof back, back, 0, NULL, NULL));
    } else if (!strcmp(mode, "barrier")) {
        /* Two writes on one out-of-order queue with a barrier between: ordered. */
        CHECK(clEnqueueWriteBuffer(qo, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL));
        CHECK(clEnqueueBarrierWithWaitList(qo, 0, NULL, NULL));
        CHECK(clEnqueueWriteBuffer(qo, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL));
        CHECK(clFinish(qo));
        CHECK(clEnqueueReadBuffer(q1, buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    } else if (!strncmp(mode, "kernel", 6)) {
        static const char *src =
            "__kernel void inc(__global int *b) { b[get_global_id(0)] += 1; }\n"
            "void bump(__global int *p) { p[get_global_id(0)] += 1; }\n"
            "__kernel void inc_helper(__global int *b) { bump(b); }\n"
            "__kernel void sum(const __global int *b, __global int *out) {\n"
            "    if (get_global_id(0) == 0) out[0] = b[0] + b[1];\n"
            "}\n";
        cl_program p = clCreateProgramWithSource(g_ctx, 1, &src, NULL, &err);
        CHECK_ERR(err);
        int noinfo = !strcmp(mode, "kernel-noinfo") ||
                !strcmp(mode, "kernel-helper") || !strcmp(mode, "kernel-binary") || !strcmp(mode, "kernel-binary");
        CHECK(clBuildProgram(p, 2, ds, noinfo ? "" : "-cl-kernel-arg-info", NULL, NULL));
        if (!strcmp(mode, "kernel-binary")) {
            /* The same program again, from the binaries the driver made of it. */
            size_t sizes[2];
            CHECK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof sizes, sizes, NULL));
            unsigned char *bins[2] = {malloc(sizes[0]), malloc(sizes[1])};
            CHECK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL));
            cl_program b = clCreateProgramWithBinary(g_ctx, 2, ds, sizes,
                                                     (const unsigned char **)bins, NULL, &err);
            CHECK_ERR(err);
            CHECK(clBuildProgram(b, 2, ds, "", NULL, NULL));
            CHECK(clReleaseProgram(p));
            free(bins[0]);
            free(bins[1]);
            p = b;
        }
        CHECK(clEnqueueWriteBuffer(q1, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
        size_t global = N;
        if (!strcmp(mode, "kernel-const")) {
            cl_kernel k = clCreateKernel(p, "sum", &err);
            CHECK_ERR(err);
            cl_mem out1 = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof(int), NULL, &err);
            CHECK_ERR(err);
            cl_mem out2 = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof(int), NULL, &err);
            CHECK_ERR(err);
            CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
            CHECK(clSetKernelArg(k, 1, sizeof out1, &out1));
            CHECK(clEnqueueNDRangeKernel(q1, k, 1, NULL, &global, NULL, 0, NULL, NULL));
            CHECK(clSetKernelArg(k, 1, sizeof out2, &out2));
            CHECK(clEnqueueNDRangeKernel(q2, k, 1, NULL, &global, NULL, 0, NULL, NULL));
            CHECK(clFinish(q1));
            CHECK(clFinish(q2));
            CHECK(clReleaseMemObject(out1));
            CHECK(clReleaseMemObject(out2));
            CHECK(clReleaseKernel(k));
        } else {
            cl_kernel k = clCreateKernel(p, strcmp(mode, "kernel-helper") ? "inc" : "inc_helper", &err);
            CHECK_ERR(err);
            CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
            CHECK(clEnqueueNDRangeKernel(q1, k, 1, NULL, &global, NULL, 0, NULL, &e));
            int wait = !strcmp(mode, "kernel-event");
            CHECK(clEnqueueReadBuffer(q2, buf, CL_FALSE, 0, sizeof back, back, wait, wait ? &e : NULL, NULL));
            CHECK(clFinish(q2));
            CHECK(clWaitForEvents(1, &e));
            CHECK(clReleaseKernel(k));
        }
        CHECK(clEnqueueReadBuffer(q1, buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
        CHECK(clReleaseProgram(p));
    } else {
        printf("FAIL unknown mode %s\n", mode);
        return 1;
    }
    CHECK(clFinish(q1));
    CHECK(clFinish(q2));
    if (e) CHECK(clReleaseEvent(e));
    /* What a racing read sees is undefined: only the others' is compared. */
    int racy = !strcmp(mode, "race") || !strcmp(mode, "kernel") || !strcmp(mode, "kernel-noinfo") ||
                !strcmp(mode, "kernel-helper") || !strcmp(mode, "kernel-binary") ||
               !strcmp(mode, "sub-parent") || !strcmp(mode, "marker-empty");
    if (!racy) mix(back, sizeof back);
    printf("races %s: checksum %016llx\n", mode, (unsigned long long)g_sum);
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseCommandQueue(q1));
    CHECK(clReleaseCommandQueue(q2));
    CHECK(clReleaseCommandQueue(qo));
    finish_program();
    return 0;
}
