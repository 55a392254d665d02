/* Four threads enqueueing at once on their own queues in one context: 100 writes and 100 reads each.
 * clxfer must see exactly 400 clEnqueueWriteBuffer and 400 clEnqueueReadBuffer calls. */
#include "common.h"
#include <pthread.h>

#define THREADS 4
#define ITERS 100
#define WORDS 1024

static uint32_t results[THREADS][WORDS];

static void *worker(void *arg) {
    int id = (int)(intptr_t)arg;
    cl_command_queue q = make_queue(0);
    cl_int err;
    cl_mem buf = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, sizeof results[0], NULL, &err);
    CHECK_ERR(err);
    uint32_t data[WORDS];
    for (int it = 0; it < ITERS; it++) {
        for (int i = 0; i < WORDS; i++) data[i] = (uint32_t)(id * 1000003 + it * 7919 + i);
        CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof data, data, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof results[id], results[id], 0, NULL, NULL));
        for (int i = 0; i < WORDS; i++)
            if (results[id][i] != data[i]) {
                printf("FAIL thread %d iteration %d word %d\n", id, it, i);
                exit(1);
            }
    }
    CHECK(clFinish(q));
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseCommandQueue(q));
    return NULL;
}

int main(void) {
    setup();
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++) mix(results[i], sizeof results[i]);
    printf("threads=%d writes=%d reads=%d\n", THREADS, THREADS * ITERS, THREADS * ITERS);
    finish_program();
    return 0;
}
