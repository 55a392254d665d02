/* The usual two-queue pipeline (issue #56 item 10): N non-blocking 1 MiB writes on one queue,
 * waited for only through the last one's event, by a blocking read on another queue; the
 * program never waits on the writes' own queue. `two_queues [N]` (default 10). */
#include "common.h"

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 10;
    setup();
    cl_command_queue reads = make_queue(0), writes = make_queue(0);
    cl_int err;
    enum { SIZE = 1 << 20 };
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, SIZE, NULL, &err);
    CHECK_ERR(err);
    static char host[SIZE];
    cl_event last = NULL;
    /* The host memory is left alone while the writes may read it. */
    memset(host, 7, SIZE);
    for (int i = 0; i < n; i++)
        CHECK(clEnqueueWriteBuffer(writes, buf, CL_FALSE, 0, SIZE, host, 0, NULL,
                                   i == n - 1 ? &last : NULL));
    static char back[SIZE];
    CHECK(clEnqueueReadBuffer(reads, buf, CL_TRUE, 0, SIZE, back, 1, &last, NULL));
    mix(back, SIZE);
    CHECK(clReleaseEvent(last));
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseCommandQueue(reads));
    CHECK(clReleaseCommandQueue(writes));
    CHECK(clReleaseContext(g_ctx));
    printf("checksum %016llx\n", (unsigned long long)g_sum);
    return 0;
}
