// Size sweep for the cost model (issue #26): device time of transfers by memory kind and size,
// on the first GPU of the first platform whose name contains argv[1] (default "NVIDIA").
// Prints CSV: what,direction,bytes,median_us,best_us,host_median_us (7 runs after one warm-up;
// device time is END - START of the command's own event on a profiling queue).
// Build: cc -O2 sizes.c -o sizes -lOpenCL
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x) do { cl_int e_ = (x); if (e_) { fprintf(stderr, "%s:%d error %d\n", __FILE__, __LINE__, e_); exit(1); } } while (0)
#define RUNS 7

static cl_command_queue q;
static cl_context ctx;

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double event_us(cl_event e) {
  cl_ulong a, b;
  CK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, 8, &a, 0));
  CK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, 8, &b, 0));
  return (b - a) * 1e-3;
}

enum op { WRITE, READ, COPY, FILL };

static void one(const char *what, enum op op, cl_mem dev, cl_mem other, void *host, size_t n) {
  double dev_us[RUNS], host_us[RUNS];
  for (int r = -1; r < RUNS; r++) {
    cl_event e;
    double t0 = now_us();
    int pattern = 7;
    switch (op) {
    case WRITE: CK(clEnqueueWriteBuffer(q, dev, CL_TRUE, 0, n, host, 0, 0, &e)); break;
    case READ: CK(clEnqueueReadBuffer(q, dev, CL_TRUE, 0, n, host, 0, 0, &e)); break;
    case COPY: CK(clEnqueueCopyBuffer(q, other, dev, 0, 0, n, 0, 0, &e)); CK(clWaitForEvents(1, &e)); break;
    case FILL: CK(clEnqueueFillBuffer(q, dev, &pattern, 4, 0, n, 0, 0, &e)); CK(clWaitForEvents(1, &e)); break;
    }
    double t = now_us() - t0;
    if (r >= 0) {
      dev_us[r] = event_us(e);
      host_us[r] = t;
    }
    CK(clReleaseEvent(e));
  }
  qsort(dev_us, RUNS, sizeof(double), cmp);
  qsort(host_us, RUNS, sizeof(double), cmp);
  const char *dir = op == WRITE ? "H2D" : op == READ ? "D2H" : "D2D";
  printf("%s,%s,%zu,%.3f,%.3f,%.3f\n", what, dir, n, dev_us[RUNS / 2], dev_us[0], host_us[RUNS / 2]);
  fflush(stdout);
}

int main(int argc, char **argv) {
  const char *want = argc > 1 ? argv[1] : "NVIDIA";
  cl_platform_id ps[8];
  cl_uint np;
  CK(clGetPlatformIDs(8, ps, &np));
  cl_platform_id p = 0;
  for (cl_uint i = 0; i < np; i++) {
    char name[256];
    CK(clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, 0));
    if (strstr(name, want)) { p = ps[i]; break; }
  }
  if (!p) { fprintf(stderr, "no platform named %s\n", want); return 1; }
  cl_device_id d;
  CK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, 0));
  char dn[256];
  CK(clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof dn, dn, 0));
  fprintf(stderr, "device %s\n", dn);
  cl_int err;
  ctx = clCreateContext(0, 1, &d, 0, 0, &err);
  CK(err);
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  q = clCreateCommandQueueWithProperties(ctx, d, props, &err);
  CK(err);
  const size_t max = 256u << 20;
  cl_mem dev = clCreateBuffer(ctx, CL_MEM_READ_WRITE, max, 0, &err);
  CK(err);
  cl_mem dev2 = clCreateBuffer(ctx, CL_MEM_READ_WRITE, max, 0, &err);
  CK(err);
  void *pageable = malloc(max);
  memset(pageable, 1, max);
  cl_mem pin = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, max, 0, &err);
  CK(err);
  void *mapped = clEnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, max, 0, 0, 0, &err);
  CK(err);
  memset(mapped, 1, max);
  printf("what,direction,bytes,median_us,best_us,host_median_us\n");
  const size_t sizes[] = {4u << 10, 64u << 10, 256u << 10, 1u << 20, 2u << 20, 4u << 20, 8u << 20,
                          16u << 20, 32u << 20, 64u << 20, 128u << 20, 256u << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    size_t n = sizes[i];
    one("pageable", WRITE, dev, 0, pageable, n);
    one("pageable", READ, dev, 0, pageable, n);
    one("pinned", WRITE, dev, 0, mapped, n);
    one("pinned", READ, dev, 0, mapped, n);
    one("copy", COPY, dev, dev2, 0, n);
    one("fill", FILL, dev, 0, 0, n);
  }
  CK(clEnqueueUnmapMemObject(q, pin, mapped, 0, 0, 0));
  CK(clFinish(q));
  return 0;
}
