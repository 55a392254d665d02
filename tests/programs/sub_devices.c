/* Commands on sub-devices (issue #56 item 10): PoCL's device split into sub-devices of one
 * compute unit; a context on two of them. N non-blocking writes on the first one's queue, waited
 * for only through the last one's event by N kernels on the second's queue, then a blocking read
 * there; the program never waits on the first queue. `sub_devices [N]` (default 10). */
#include "common.h"

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 10;
    find_pocl();
    cl_device_id parent;
    CHECK(clGetDeviceIDs(g_platform, CL_DEVICE_TYPE_ALL, 1, &parent, NULL));
    cl_device_partition_property split[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    cl_device_id sub[64];
    cl_uint made = 0;
    CHECK(clCreateSubDevices(parent, split, 64, sub, &made));
    if (made < 2) {
        printf("FAIL two sub-devices wanted, %u made\n", made);
        return 1;
    }
    cl_int err;
    g_ctx = clCreateContext(NULL, 2, sub, NULL, NULL, &err);
    CHECK_ERR(err);
    cl_command_queue q[2];
    for (int s = 0; s < 2; s++) {
        q[s] = clCreateCommandQueueWithProperties(g_ctx, sub[s], NULL, &err);
        CHECK_ERR(err);
    }
    const char *src = "__kernel void add(__global int *a) { a[get_global_id(0)] += 1; }";
    cl_program p = clCreateProgramWithSource(g_ctx, 1, &src, NULL, &err);
    CHECK_ERR(err);
    CHECK(clBuildProgram(p, 0, NULL, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(p, "add", &err);
    CHECK_ERR(err);
    enum { COUNT = 1 << 18 };
    static int host[COUNT];
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CHECK_ERR(err);
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    cl_event last = NULL;
    for (int i = 0; i < n; i++)
        CHECK(clEnqueueWriteBuffer(q[0], buf, CL_FALSE, 0, sizeof host, host, 0, NULL,
                                   i == n - 1 ? &last : NULL));
    size_t global = COUNT;
    for (int i = 0; i < n; i++)
        CHECK(clEnqueueNDRangeKernel(q[1], k, 1, NULL, &global, NULL, i == 0, &last, NULL));
    static int back[COUNT];
    CHECK(clEnqueueReadBuffer(q[1], buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    printf("first %d last %d\n", back[0], back[COUNT - 1]);
    CHECK(clReleaseEvent(last));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(p));
    CHECK(clReleaseMemObject(buf));
    for (int s = 0; s < 2; s++) CHECK(clReleaseCommandQueue(q[s]));
    CHECK(clReleaseContext(g_ctx));
    for (cl_uint s = 0; s < made; s++) CHECK(clReleaseDevice(sub[s]));
    return 0;
}
