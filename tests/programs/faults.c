/* A program that ends badly, after enough transfers for clxfer to have written some of its trace
 * (it waits until the trace file holds at least MIN_BYTES, so the test need not sleep; 16 KiB:
 * under load the first 4 KiB written held only 8 slices):
 *   faults abort | segv | _exit | exit-in-callback | release-early | context-in-flight
 * abort, segv: die by the signal; _exit: skip atexit handlers; exit-in-callback: call exit() from
 * an event's completion callback, on the driver's thread; release-early: release events and
 * buffers before their commands complete, then exit normally; context-in-flight: release the
 * context, queue and buffers with commands still queued, then exit normally. Prints a checksum of
 * what it read back (release-early, context-in-flight) so runs can be compared. */
#define _GNU_SOURCE
#include "common.h"
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MIN_BYTES 16384

/* Bytes in clxfer's trace files in $CLXFER_DIR (0 when none). */
static long trace_bytes(void) {
    const char *dir = getenv("CLXFER_DIR");
    long total = 0;
    DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "clxfer-", 7)) continue;
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (!stat(path, &st)) total += st.st_size;
    }
    if (d) closedir(d);
    return total;
}

static void CL_CALLBACK exit_now(cl_event e, cl_int status, void *user) {
    (void)e, (void)status, (void)user;
    printf("exiting from a callback\n");
    fflush(stdout);
    exit(3);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "abort";
    setup();
    cl_command_queue q = make_queue(0);
    cl_int err;
    enum { N = 1 << 16 };
    static char host[N], back[N];
    for (int i = 0; i < N; i++) host[i] = (char)(i * 7);
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, N, NULL, &err);
    CHECK_ERR(err);
    /* Transfers until clxfer's writer has put some of them on disk (at most ~20 s). */
    int traced = getenv("CLXFER_DIR") && (getenv("OPENCL_LAYERS") || getenv("LD_PRELOAD"));
    for (int round = 0; round < 20000 && (round < 50 || (traced && trace_bytes() < MIN_BYTES)); round++) {
        CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, N, host, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, N, back, 0, NULL, NULL));
        if (round >= 50) usleep(1000);
    }
    fflush(stdout);
    if (!strcmp(mode, "abort")) abort();
    if (!strcmp(mode, "segv")) {
        volatile int *p = NULL;
        *p = 1;
    }
    if (!strcmp(mode, "_exit")) _exit(4);
    if (!strcmp(mode, "exit-in-callback")) {
        cl_event e;
        CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, N, host, 0, NULL, &e));
        CHECK(clSetEventCallback(e, CL_COMPLETE, exit_now, NULL));
        CHECK(clWaitForEvents(1, &e));
        for (;;) pause(); /* the callback exits the process */
    }
    if (!strcmp(mode, "release-early")) {
        for (int i = 0; i < 64; i++) {
            cl_event e;
            cl_mem b = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, N, NULL, &err);
            CHECK_ERR(err);
            CHECK(clEnqueueWriteBuffer(q, b, CL_FALSE, 0, N, host, 0, NULL, &e));
            CHECK(clReleaseEvent(e));       /* before it completes */
            CHECK(clReleaseMemObject(b));   /* likewise */
        }
        CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, N, back, 0, NULL, NULL));
        mix(back, N);
        CHECK(clFinish(q));
    }
    if (!strcmp(mode, "context-in-flight")) {
        for (int i = 0; i < 64; i++)
            CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, N, host, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(q, buf, CL_FALSE, 0, N, back, 0, NULL, NULL));
        CHECK(clReleaseMemObject(buf));
        CHECK(clReleaseCommandQueue(q));
        CHECK(clReleaseContext(g_ctx)); /* commands may still be queued */
        printf("released with commands in flight\n");
        return 0;
    }
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseCommandQueue(q));
    finish_program();
    return 0;
}
