/* Issue #59: one rank per device, as MPI jobs run. Each rank writes a buffer up and reads it
 * back in chunks, then the ranks agree on a checksum over MPI. The ranks' host memory differs
 * in one place: the rank named by the first argument (default 1) transfers from malloc'd
 * memory (pageable: staged under NVIDIA's rules), the others from a mapped
 * CL_MEM_ALLOC_HOST_PTR buffer (pinned): the job's report must say which rank differs.
 * Usage: mpirun -np N ranks [staged rank=1] [chunks=8] [chunk KiB=512] */
#include "common.h"
#include <mpi.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int staged = argc > 1 ? atoi(argv[1]) : 1;
    int chunks = argc > 2 ? atoi(argv[2]) : 8;
    size_t chunk = (size_t)(argc > 3 ? atoi(argv[3]) : 512) << 10;
    size_t total = (size_t)chunks * chunk;
    setup();
    cl_int err;
    cl_command_queue q = make_queue(0);
    cl_mem dev = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, total, NULL, &err);
    CHECK_ERR(err);
    cl_mem pinned = NULL;
    unsigned char *host;
    if (rank == staged) {
        host = malloc(total);
    } else {
        pinned = clCreateBuffer(g_ctx, CL_MEM_ALLOC_HOST_PTR, total, NULL, &err);
        CHECK_ERR(err);
        host = clEnqueueMapBuffer(q, pinned, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, total, 0,
                                  NULL, NULL, &err);
        CHECK_ERR(err);
    }
    for (size_t i = 0; i < total; i++) host[i] = (unsigned char)(i * 7 + rank);
    for (int c = 0; c < chunks; c++)
        CHECK(clEnqueueWriteBuffer(q, dev, CL_FALSE, c * chunk, chunk, host + c * chunk, 0, NULL,
                                   NULL));
    CHECK(clFinish(q));
    memset(host, 0, total);
    for (int c = 0; c < chunks; c++)
        CHECK(clEnqueueReadBuffer(q, dev, CL_FALSE, c * chunk, chunk, host + c * chunk, 0, NULL,
                                  NULL));
    CHECK(clFinish(q));
    unsigned long long mine = 0, all = 0;
    for (size_t i = 0; i < total; i++) mine = mine * 31 + host[i];
    MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (pinned) {
        CHECK(clEnqueueUnmapMemObject(q, pinned, host, 0, NULL, NULL));
        CHECK(clFinish(q));
        CHECK(clReleaseMemObject(pinned));
    } else {
        free(host);
    }
    CHECK(clReleaseMemObject(dev));
    CHECK(clReleaseCommandQueue(q));
    g_sum = all;
    if (rank == 0) finish_program();
    else CHECK(clReleaseContext(g_ctx));
    MPI_Finalize();
    return 0;
}
