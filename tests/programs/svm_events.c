/* SVM (alloc, map, memcpy, fill, kernel argument), events and callbacks, user events, two queues
 * with a cross-queue dependency, markers, barriers and profiling. */
#include "common.h"
#include <sched.h>
#include <stdatomic.h>

static atomic_int callbacks;

static void CL_CALLBACK on_complete(cl_event e, cl_int status, void *user) {
    (void)e;
    if (status == CL_COMPLETE && user == (void *)0x5eed) atomic_fetch_add(&callbacks, 1);
}

static const char *SRC = "__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }\n";

int main(void) {
    setup();
    cl_command_queue q1 = make_queue(CL_QUEUE_PROFILING_ENABLE), q2 = make_queue(0);
    cl_int err;
    enum { N = 2048 };
    int host[N], back[N];
    for (int i = 0; i < N; i++) host[i] = i * 3;

    /* SVM, if the device has coarse-grain buffer SVM. */
    cl_device_svm_capabilities caps = 0;
    clGetDeviceInfo(g_device, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL);
    if (caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) {
        int *svm = clSVMAlloc(g_ctx, CL_MEM_READ_WRITE, sizeof host, 0);
        int *svm2 = clSVMAlloc(g_ctx, CL_MEM_READ_WRITE, sizeof host, 0);
        if (!svm || !svm2) {
            printf("FAIL clSVMAlloc\n");
            return 1;
        }
        CHECK(clEnqueueSVMMap(q1, CL_TRUE, CL_MAP_WRITE, svm, sizeof host, 0, NULL, NULL));
        memcpy(svm, host, sizeof host);
        CHECK(clEnqueueSVMUnmap(q1, svm, 0, NULL, NULL));
        cl_program p = build(SRC);
        cl_kernel k = clCreateKernel(p, "inc", &err);
        CHECK_ERR(err);
        CHECK(clSetKernelArgSVMPointer(k, 0, svm));
        size_t global = N;
        CHECK(clEnqueueNDRangeKernel(q1, k, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(clEnqueueSVMMemcpy(q1, CL_TRUE, svm2, svm, sizeof host, 0, NULL, NULL));
        CHECK(clEnqueueSVMMemcpy(q1, CL_TRUE, back, svm2, sizeof back, 0, NULL, NULL));
        mix(back, sizeof back);
        int pattern = 7;
        CHECK(clEnqueueSVMMemFill(q1, svm2, &pattern, sizeof pattern, sizeof host, 0, NULL, NULL));
        CHECK(clEnqueueSVMMemcpy(q1, CL_TRUE, back, svm2, sizeof back, 0, NULL, NULL));
        mix(back, sizeof back);
        CHECK(clFinish(q1));
        CHECK(clReleaseKernel(k));
        CHECK(clReleaseProgram(p));
        clSVMFree(g_ctx, svm);
        clSVMFree(g_ctx, svm2);
        printf("svm: coarse-grain buffer, ok\n");
    } else {
        printf("svm: not supported\n");
    }

    /* Events with a completion callback. */
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CHECK_ERR(err);
    cl_event written, read;
    CHECK(clEnqueueWriteBuffer(q1, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, &written));
    CHECK(clSetEventCallback(written, CL_COMPLETE, on_complete, (void *)0x5eed));
    /* A read on the other queue that waits for the write (cross-queue dependency). */
    CHECK(clFlush(q1));
    CHECK(clEnqueueReadBuffer(q2, buf, CL_FALSE, 0, sizeof back, back, 1, &written, &read));
    CHECK(clWaitForEvents(1, &read));
    mix(back, sizeof back);
    cl_int status;
    CHECK(clGetEventInfo(read, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    printf("read status %d\n", status);
    cl_ulong start, end;
    CHECK(clGetEventProfilingInfo(written, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
    CHECK(clGetEventProfilingInfo(written, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
    printf("profiling ordered: %d\n", end >= start);
    /* Callbacks may run on a driver thread after the event completes: wait for it, bounded. */
    for (long spin = 0; atomic_load(&callbacks) == 0 && spin < 200000000L; spin++) sched_yield();
    printf("callbacks %d\n", atomic_load(&callbacks));

    /* A user event gating a write. */
    cl_event gate = clCreateUserEvent(g_ctx, &err), gated;
    CHECK_ERR(err);
    for (int i = 0; i < N; i++) host[i] = -i;
    CHECK(clEnqueueWriteBuffer(q1, buf, CL_FALSE, 0, sizeof host, host, 1, &gate, &gated));
    CHECK(clGetEventInfo(gated, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    printf("gated before release: %s\n", status == CL_COMPLETE ? "complete" : "waiting");
    CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK(clWaitForEvents(1, &gated));

    /* Marker and barrier. */
    cl_event marker;
    CHECK(clEnqueueMarkerWithWaitList(q1, 1, &gated, &marker));
    CHECK(clEnqueueBarrierWithWaitList(q2, 1, &marker, NULL));
    CHECK(clEnqueueReadBuffer(q2, buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    mix(back, sizeof back);

    CHECK(clFinish(q1));
    CHECK(clFinish(q2));
    cl_event all[] = {written, read, gate, gated, marker};
    for (int i = 0; i < 5; i++) CHECK(clReleaseEvent(all[i]));
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseCommandQueue(q1));
    CHECK(clReleaseCommandQueue(q2));
    finish_program();
    return 0;
}
