/* Ends by a signal, or as asked, after its first OpenCL work: `signalled HOW`. The caught signals
 * are blocked until ten 1 MiB writes are done, so one sent early (by `timeout`) waits for them.
 * HOW: term, int, hup, quit, kill, segv, abort, _exit (it does that to itself at once); wait
 * (writes on until a signal ends it); handler (a SIGINT handler of its own, then SIGINT to
 * itself: the handler stops the writes and the program exits normally). */
#include "common.h"
#include <signal.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_int(int sig) {
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv) {
    const char *how = argc > 1 ? argv[1] : "wait";
    sigset_t caught;
    sigemptyset(&caught);
    sigaddset(&caught, SIGTERM);
    sigaddset(&caught, SIGINT);
    sigaddset(&caught, SIGHUP);
    sigaddset(&caught, SIGQUIT);
    sigprocmask(SIG_BLOCK, &caught, NULL);
    if (!strcmp(how, "handler")) signal(SIGINT, on_int);
    setup();
    cl_command_queue q = make_queue(0);
    cl_int err;
    enum { N = 1 << 20 };
    cl_mem b = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, N, NULL, &err);
    CHECK_ERR(err);
    static char h[N];
    for (int i = 0; i < 10; i++) CHECK(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, N, h, 0, NULL, NULL));
    CHECK(clFinish(q));
    printf("wrote\n");
    fflush(stdout);
    sigprocmask(SIG_UNBLOCK, &caught, NULL);
    if (!strcmp(how, "term")) raise(SIGTERM);
    if (!strcmp(how, "int") || !strcmp(how, "handler")) raise(SIGINT);
    if (!strcmp(how, "hup")) raise(SIGHUP);
    if (!strcmp(how, "quit")) raise(SIGQUIT);
    if (!strcmp(how, "kill")) raise(SIGKILL);
    if (!strcmp(how, "segv")) *(volatile int *)0 = 0;
    if (!strcmp(how, "abort")) abort();
    if (!strcmp(how, "_exit")) _exit(3);
    while (!stop) CHECK(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, N, h, 0, NULL, NULL));
    printf("handled SIGINT\n");
    CHECK(clReleaseMemObject(b));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(g_ctx));
    return 0;
}
