/* A purpose-built ICD for what PoCL cannot show: a second platform whose driver offers every
 * extension function clxfer wraps (cl_intel_unified_shared_memory, cl_arm_shared_virtual_memory,
 * cl_arm_import_memory) through clGetExtensionFunctionAddressForPlatform, and a driver that
 * misbehaves on demand. Host memory stands in for every kind of USM and SVM allocation; enqueues run at
 * once and their events are complete on return (each "took" 1 µs of device time).
 * TESTICD_MODE=refuse-profiling: queue creation with CL_QUEUE_PROFILING_ENABLE fails;
 * TESTICD_MODE=zero-durations: every command's START equals its END (as NVIDIA's migrations);
 * TESTICD_MODE=profiling-fails: clGetEventProfilingInfo fails;
 * TESTICD_MODE=locked-callbacks: completion callbacks run on a thread of the driver's own while it
 *   holds the driver's (recursive) lock, which clGetEventInfo, clGetEventProfilingInfo and
 *   clReleaseEvent take too, as a real driver's completion thread might.
 * Always: clCreateFromGLBuffer hands back (cl_mem)SIZE_MAX and sets no error code, as the Khronos
 * ICD loader's test stub does (a handle no driver made); clSetCommandQueueProperty works (PoCL's
 * slot is empty).
 * Only what the tests call is implemented; everything else in its dispatch table is NULL. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl_icd.h>
#include <CL/cl_ext.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct _cl_platform_id { cl_icd_dispatch *dispatch; };
struct _cl_device_id { cl_icd_dispatch *dispatch; };
struct _cl_context { cl_icd_dispatch *dispatch; int refs; };
struct _cl_command_queue { cl_icd_dispatch *dispatch; int refs; cl_context ctx; cl_command_queue_properties props; };
struct _cl_event { cl_icd_dispatch *dispatch; int refs; int profiled; cl_ulong t[4]; cl_command_queue q; };

/* TESTICD_MODE, read once (in the constructor): every event asks. */
static const char *g_mode;
static int mode_is(const char *m) { return g_mode && !strcmp(g_mode, m); }

static cl_icd_dispatch dispatch;
static void lock(void);
static void unlock(void);
static struct _cl_platform_id platform = {&dispatch};
static struct _cl_device_id device = {&dispatch};

static cl_int answer(const void *v, size_t n, size_t size, void *out, size_t *size_ret) {
    if (out && size < n) return CL_INVALID_VALUE;
    if (out) memcpy(out, v, n);
    if (size_ret) *size_ret = n;
    return CL_SUCCESS;
}
#define ANSWER_STR(s) answer(s, strlen(s) + 1, size, value, size_ret)
#define ANSWER(v) answer(&(v), sizeof(v), size, value, size_ret)

static cl_int CL_API_CALL get_platform_ids(cl_uint n, cl_platform_id *ps, cl_uint *count) {
    if ((n == 0 && ps) || (!ps && !count)) return CL_INVALID_VALUE;
    if (ps && n > 0) ps[0] = &platform;
    if (count) *count = 1;
    return CL_SUCCESS;
}

static cl_int CL_API_CALL platform_info(cl_platform_id p, cl_platform_info param, size_t size, void *value,
                                        size_t *size_ret) {
    if (p != &platform) return CL_INVALID_PLATFORM;
    switch (param) {
    case CL_PLATFORM_PROFILE: return ANSWER_STR("FULL_PROFILE");
    case CL_PLATFORM_VERSION: return ANSWER_STR("OpenCL 3.0 clxfer-test");
    case CL_PLATFORM_NAME: return ANSWER_STR("clxfer test ICD");
    case CL_PLATFORM_VENDOR: return ANSWER_STR("clxfer");
    case CL_PLATFORM_EXTENSIONS: return ANSWER_STR("cl_khr_icd cl_intel_unified_shared_memory cl_arm_shared_virtual_memory cl_arm_import_memory");
    case CL_PLATFORM_ICD_SUFFIX_KHR: return ANSWER_STR("CLXT");
    default: return CL_INVALID_VALUE;
    }
}

static cl_int CL_API_CALL device_ids(cl_platform_id p, cl_device_type type, cl_uint n, cl_device_id *ds,
                                     cl_uint *count) {
    if (p != &platform) return CL_INVALID_PLATFORM;
    if (!(type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT))) return CL_DEVICE_NOT_FOUND;
    if (ds && n > 0) ds[0] = &device;
    if (count) *count = 1;
    return CL_SUCCESS;
}

static cl_int CL_API_CALL device_info(cl_device_id d, cl_device_info param, size_t size, void *value,
                                      size_t *size_ret) {
    if (d != &device) return CL_INVALID_DEVICE;
    cl_device_type gpu = CL_DEVICE_TYPE_GPU;
    cl_ulong mem = 1ull << 30;
    cl_platform_id p = &platform;
    switch (param) {
    case CL_DEVICE_NAME: return ANSWER_STR("clxfer test GPU");
    case CL_DEVICE_VENDOR: return ANSWER_STR("clxfer");
    case CL_DEVICE_VERSION: return ANSWER_STR("OpenCL 3.0 clxfer-test");
    case CL_DEVICE_EXTENSIONS: return ANSWER_STR("cl_intel_unified_shared_memory cl_arm_shared_virtual_memory cl_arm_import_memory");
    case CL_DEVICE_TYPE: return ANSWER(gpu);
    case CL_DEVICE_GLOBAL_MEM_SIZE: return ANSWER(mem);
    case CL_DEVICE_PLATFORM: return ANSWER(p);
    default: return CL_INVALID_VALUE;
    }
}

static cl_context CL_API_CALL create_context(const cl_context_properties *props, cl_uint n,
                                             const cl_device_id *ds, void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                             void *user, cl_int *err) {
    (void)props, (void)notify, (void)user;
    if (n != 1 || !ds || ds[0] != &device) {
        if (err) *err = CL_INVALID_DEVICE;
        return NULL;
    }
    struct _cl_context *c = calloc(1, sizeof *c);
    c->dispatch = &dispatch;
    c->refs = 1;
    if (err) *err = CL_SUCCESS;
    return c;
}

static cl_int CL_API_CALL release_context(cl_context c) {
    if (!c) return CL_INVALID_CONTEXT;
    if (--c->refs == 0) free(c);
    return CL_SUCCESS;
}

static cl_command_queue CL_API_CALL create_queue(cl_context c, cl_device_id d, const cl_queue_properties *p,
                                                 cl_int *err) {
    if (!c || d != &device) {
        if (err) *err = !c ? CL_INVALID_CONTEXT : CL_INVALID_DEVICE;
        return NULL;
    }
    cl_command_queue_properties props = 0;
    for (; p && p[0]; p += 2)
        if (p[0] == CL_QUEUE_PROPERTIES) props = p[1];
    if ((props & CL_QUEUE_PROFILING_ENABLE) && mode_is("refuse-profiling")) {
        if (err) *err = CL_INVALID_QUEUE_PROPERTIES;
        return NULL;
    }
    struct _cl_command_queue *q = calloc(1, sizeof *q);
    q->dispatch = &dispatch;
    q->refs = 1;
    q->ctx = c;
    q->props = props;
    if (err) *err = CL_SUCCESS;
    return q;
}

static cl_int CL_API_CALL queue_info(cl_command_queue q, cl_command_queue_info param, size_t size, void *value,
                                     size_t *size_ret) {
    if (!q) return CL_INVALID_COMMAND_QUEUE;
    cl_device_id d = &device;
    switch (param) {
    case CL_QUEUE_DEVICE: return ANSWER(d);
    case CL_QUEUE_CONTEXT: return ANSWER(q->ctx);
    case CL_QUEUE_PROPERTIES: return ANSWER(q->props);
    case CL_QUEUE_REFERENCE_COUNT: {
        lock();
        cl_uint refs = (cl_uint)q->refs;
        unlock();
        return ANSWER(refs);
    }
    default: return CL_INVALID_VALUE;
    }
}

static cl_int CL_API_CALL set_queue_property(cl_command_queue q, cl_command_queue_properties props, cl_bool enable,
                                             cl_command_queue_properties *old) {
    if (!q) return CL_INVALID_COMMAND_QUEUE;
    if (old) *old = q->props;
    q->props = enable ? q->props | props : q->props & ~props;
    return CL_SUCCESS;
}

/* The Khronos loader's stub: a handle that is no object, and no error code. */
static cl_mem CL_API_CALL create_from_gl_buffer(cl_context c, cl_mem_flags flags, cl_GLuint buf, cl_int *err) {
    (void)c, (void)flags, (void)buf, (void)err;
    return (cl_mem)SIZE_MAX;
}

static cl_ulong now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (cl_ulong)t.tv_sec * 1000000000u + (cl_ulong)t.tv_nsec;
}

/* A completed command's event, if the caller asked for one. */
static void make_event(cl_command_queue q, cl_event *ev) {
    if (!ev) return;
    struct _cl_event *e = calloc(1, sizeof *e);
    e->dispatch = &dispatch;
    e->refs = 1;
    e->profiled = (q->props & CL_QUEUE_PROFILING_ENABLE) != 0;
    cl_ulong t = now_ns();
    e->t[0] = t;
    e->t[1] = t + 100;
    e->t[2] = t + 200;
    e->t[3] = mode_is("zero-durations") ? t + 200 : t + 1200;
    e->q = q;
    lock();
    q->refs++; /* an event holds its queue, as a driver's does */
    unlock();
    *ev = e;
}

static cl_int CL_API_CALL enqueue_marker(cl_command_queue q, cl_uint n, const cl_event *wait, cl_event *ev) {
    if (!q) return CL_INVALID_COMMAND_QUEUE;
    if ((n == 0) != (wait == NULL)) return CL_INVALID_EVENT_WAIT_LIST;
    make_event(q, ev);
    return CL_SUCCESS;
}

/* locked-callbacks: the driver's lock and its list of callbacks to run. */
static pthread_mutex_t g_lock;
struct pending_cb {
    cl_event e;
    void(CL_CALLBACK *notify)(cl_event, cl_int, void *);
    void *user;
    struct pending_cb *next;
};
static struct pending_cb *g_callbacks;
static void lock(void) { if (mode_is("locked-callbacks")) pthread_mutex_lock(&g_lock); }
static void unlock(void) { if (mode_is("locked-callbacks")) pthread_mutex_unlock(&g_lock); }

static cl_int CL_API_CALL retain_event(cl_event e) {
    if (!e) return CL_INVALID_EVENT;
    lock();
    e->refs++;
    unlock();
    return CL_SUCCESS;
}

static cl_int CL_API_CALL release_event(cl_event e) {
    if (!e) return CL_INVALID_EVENT;
    lock();
    if (--e->refs == 0) {
        if (--e->q->refs == 0) free(e->q);
        free(e);
    }
    unlock();
    return CL_SUCCESS;
}

/* The completion thread: runs every waiting callback with the lock held. */
static void *completion_thread(void *arg) {
    (void)arg;
    struct timespec pause = {0, 20000};
    for (;;) {
        pthread_mutex_lock(&g_lock);
        struct pending_cb *cb = g_callbacks;
        g_callbacks = NULL;
        while (cb) {
            struct pending_cb *next = cb->next;
            /* Its own reference goes before the callback (the callback's user holds one, and
             * the driver touches the event no more): a driver that drops it after the callback
             * leaves a moment where its count is one higher, of its own (PoCL's commands do), which
             * no layer could hide and which would make the counts here vary as PoCL's do. */
            cl_event e = cb->e;
            int last = e->refs == 1; /* nobody else holds it: kept alive through the callback */
            if (!last) release_event(e);
            cb->notify(e, CL_COMPLETE, cb->user);
            if (last) release_event(e);
            free(cb);
            cb = next;
        }
        pthread_mutex_unlock(&g_lock);
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static cl_int CL_API_CALL event_callback(cl_event e, cl_int type, void(CL_CALLBACK *notify)(cl_event, cl_int, void *),
                                         void *user) {
    if (!e) return CL_INVALID_EVENT;
    if (!notify || type != CL_COMPLETE) return CL_INVALID_VALUE;
    if (mode_is("locked-callbacks")) {
        struct pending_cb *cb = malloc(sizeof *cb);
        lock();
        e->refs++;
        *cb = (struct pending_cb){e, notify, user, g_callbacks};
        g_callbacks = cb;
        unlock();
        return CL_SUCCESS;
    }
    notify(e, CL_COMPLETE, user); /* already complete: called at once, as the spec allows */
    return CL_SUCCESS;
}

static cl_int CL_API_CALL event_info(cl_event e, cl_event_info param, size_t size, void *value, size_t *size_ret) {
    if (!e) return CL_INVALID_EVENT;
    lock();
    cl_int complete = CL_COMPLETE, rc;
    cl_uint refs = (cl_uint)e->refs;
    switch (param) {
    case CL_EVENT_COMMAND_QUEUE: rc = ANSWER(e->q); break;
    case CL_EVENT_COMMAND_EXECUTION_STATUS: rc = ANSWER(complete); break;
    case CL_EVENT_REFERENCE_COUNT: rc = ANSWER(refs); break;
    default: rc = CL_INVALID_VALUE;
    }
    unlock();
    return rc;
}

static cl_int CL_API_CALL enqueue_marker(cl_command_queue q, cl_uint n, const cl_event *wait, cl_event *ev);

static cl_int CL_API_CALL event_profiling(cl_event e, cl_profiling_info param, size_t size, void *value,
                                          size_t *size_ret) {
    if (!e) return CL_INVALID_EVENT;
    if (!e->profiled || mode_is("profiling-fails")) return CL_PROFILING_INFO_NOT_AVAILABLE;
    if (param < CL_PROFILING_COMMAND_QUEUED || param > CL_PROFILING_COMMAND_END) return CL_INVALID_VALUE;
    lock();
    cl_int rc = ANSWER(e->t[param - CL_PROFILING_COMMAND_QUEUED]);
    unlock();
    return rc;
}

static cl_int CL_API_CALL wait_events(cl_uint n, const cl_event *es) {
    return n && es ? CL_SUCCESS : CL_INVALID_VALUE;
}

static cl_int CL_API_CALL release_queue(cl_command_queue q) {
    if (!q) return CL_INVALID_COMMAND_QUEUE;
    lock();
    if (--q->refs == 0) free(q);
    unlock();
    return CL_SUCCESS;
}

static cl_int CL_API_CALL finish(cl_command_queue q) { return q ? CL_SUCCESS : CL_INVALID_COMMAND_QUEUE; }

/* cl_intel_unified_shared_memory and cl_arm_shared_virtual_memory on host memory, checked as a
 * driver would: a size past the device's 1 GiB, or a range that wraps, is refused. */
#define LIMIT ((size_t)1 << 30)
static int bad_range(const void *p, size_t size) {
    return !p || size > LIMIT || (uintptr_t)p + size < (uintptr_t)p;
}
static void *usm_alloc(cl_context c, size_t size, cl_uint align, cl_int *err) {
    if (!c || size == 0 || size > LIMIT || (align & (align - 1)) || align > 4096) {
        if (err) *err = !c ? CL_INVALID_CONTEXT : size > LIMIT ? CL_INVALID_BUFFER_SIZE : CL_INVALID_VALUE;
        return NULL;
    }
    void *p = aligned_alloc(align ? align : 64, (size + 63) & ~(size_t)63);
    if (err) *err = p ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    return p;
}
static void *CL_API_CALL host_alloc(cl_context c, const cl_mem_properties_intel *p, size_t size, cl_uint align, cl_int *err) {
    (void)p;
    return usm_alloc(c, size, align, err);
}
static void *CL_API_CALL dev_alloc(cl_context c, cl_device_id d, const cl_mem_properties_intel *p, size_t size,
                                   cl_uint align, cl_int *err) {
    (void)p;
    if (c && d != &device) {
        if (err) *err = CL_INVALID_DEVICE;
        return NULL;
    }
    return usm_alloc(c, size, align, err);
}
static cl_int CL_API_CALL mem_free(cl_context c, void *ptr) {
    if (!c) return CL_INVALID_CONTEXT;
    free(ptr);
    return CL_SUCCESS;
}
static cl_int CL_API_CALL alloc_info(cl_context c, const void *ptr, cl_mem_info_intel param, size_t size, void *value,
                                     size_t *size_ret) {
    if (!c) return CL_INVALID_CONTEXT;
    cl_unified_shared_memory_type_intel type = ptr ? CL_MEM_TYPE_HOST_INTEL : CL_MEM_TYPE_UNKNOWN_INTEL;
    return param == CL_MEM_ALLOC_TYPE_INTEL ? ANSWER(type) : CL_INVALID_VALUE;
}
/* No kernels here. */
static cl_int CL_API_CALL kernel_arg_ptr(cl_kernel k, cl_uint i, const void *v) {
    (void)k, (void)i, (void)v;
    return CL_INVALID_KERNEL;
}
static cl_int CL_API_CALL kernel_exec_info(cl_kernel k, cl_kernel_exec_info_arm p, size_t n, const void *v) {
    (void)k, (void)p, (void)n, (void)v;
    return CL_INVALID_KERNEL;
}
static cl_int CL_API_CALL enqueue_memcpy(cl_command_queue q, cl_bool blocking, void *dst, const void *src, size_t size,
                                         cl_uint n, const cl_event *wait, cl_event *ev) {
    (void)blocking, (void)n, (void)wait;
    if (!q) return CL_INVALID_COMMAND_QUEUE;
    if (bad_range(dst, size) || bad_range(src, size)) return CL_INVALID_VALUE;
    memmove(dst, src, size);
    make_event(q, ev);
    return CL_SUCCESS;
}
static cl_int CL_API_CALL enqueue_fill(cl_command_queue q, void *dst, const void *pattern, size_t psize, size_t size,
                                       cl_uint n, const cl_event *wait, cl_event *ev) {
    (void)n, (void)wait;
    if (!q) return CL_INVALID_COMMAND_QUEUE;
    if (bad_range(dst, size) || !pattern || psize == 0 || psize > 128 || size % psize) return CL_INVALID_VALUE;
    for (size_t i = 0; i < size; i += psize) memcpy((char *)dst + i, pattern, psize);
    make_event(q, ev);
    return CL_SUCCESS;
}
static cl_int CL_API_CALL enqueue_memset(cl_command_queue q, void *dst, cl_int value, size_t size, cl_uint n,
                                         const cl_event *wait, cl_event *ev) {
    (void)n, (void)wait;
    if (!q) return CL_INVALID_COMMAND_QUEUE;
    if (bad_range(dst, size)) return CL_INVALID_VALUE;
    memset(dst, value, size);
    make_event(q, ev);
    return CL_SUCCESS;
}
/* Migrate and advise: nothing to do on host memory but check. */
static cl_int CL_API_CALL enqueue_migrate(cl_command_queue q, const void *ptr, size_t size, cl_mem_migration_flags f,
                                          cl_uint n, const cl_event *wait, cl_event *ev) {
    (void)f, (void)n, (void)wait;
    if (!q) return CL_INVALID_COMMAND_QUEUE;
    if (bad_range(ptr, size)) return CL_INVALID_VALUE;
    make_event(q, ev);
    return CL_SUCCESS;
}
static cl_int CL_API_CALL enqueue_advise(cl_command_queue q, const void *ptr, size_t size, cl_mem_advice_intel a,
                                         cl_uint n, const cl_event *wait, cl_event *ev) {
    return enqueue_migrate(q, ptr, size, a, n, wait, ev);
}
static void *CL_API_CALL svm_alloc_arm(cl_context c, cl_svm_mem_flags_arm flags, size_t size, cl_uint align) {
    (void)flags;
    return usm_alloc(c, size, align, NULL);
}
static void CL_API_CALL svm_free_arm(cl_context c, void *ptr) {
    if (c) free(ptr);
}
static cl_int CL_API_CALL enqueue_svm_free_arm(cl_command_queue q, cl_uint count, void *ptrs[],
                                               void(CL_CALLBACK *done)(cl_command_queue, cl_uint, void *[], void *),
                                               void *user, cl_uint n, const cl_event *wait, cl_event *ev) {
    (void)n, (void)wait;
    if (!q) return CL_INVALID_COMMAND_QUEUE;
    if (count == 0 || !ptrs) return CL_INVALID_VALUE;
    if (done) done(q, count, ptrs, user);
    else
        for (cl_uint i = 0; i < count; i++) free(ptrs[i]);
    make_event(q, ev);
    return CL_SUCCESS;
}
static cl_int CL_API_CALL enqueue_svm_map_arm(cl_command_queue q, cl_bool blocking, cl_map_flags flags, void *ptr,
                                              size_t size, cl_uint n, const cl_event *wait, cl_event *ev) {
    (void)blocking, (void)flags;
    if (size == 0) return q ? CL_INVALID_VALUE : CL_INVALID_COMMAND_QUEUE;
    return enqueue_migrate(q, ptr, size, 0, n, wait, ev);
}
static cl_int CL_API_CALL enqueue_svm_unmap_arm(cl_command_queue q, void *ptr, cl_uint n, const cl_event *wait,
                                                cl_event *ev) {
    return enqueue_migrate(q, ptr, 1, 0, n, wait, ev);
}
/* No memory objects here: a valid import is refused as unsupported. */
static cl_mem CL_API_CALL import_memory_arm(cl_context c, cl_mem_flags flags, const cl_import_properties_arm *props,
                                            void *memory, size_t size, cl_int *err) {
    (void)flags, (void)props;
    if (err) *err = !c ? CL_INVALID_CONTEXT : bad_range(memory, size) || !size ? CL_INVALID_VALUE : CL_INVALID_OPERATION;
    return NULL;
}

/* Every extension function clxfer wraps (its `extension` list). */
static const struct {
    const char *name;
    void *fn;
} EXTENSIONS[] = {
    {"clHostMemAllocINTEL", (void *)host_alloc},
    {"clDeviceMemAllocINTEL", (void *)dev_alloc},
    {"clSharedMemAllocINTEL", (void *)dev_alloc},
    {"clMemFreeINTEL", (void *)mem_free},
    {"clMemBlockingFreeINTEL", (void *)mem_free},
    {"clGetMemAllocInfoINTEL", (void *)alloc_info},
    {"clSetKernelArgMemPointerINTEL", (void *)kernel_arg_ptr},
    {"clEnqueueMemFillINTEL", (void *)enqueue_fill},
    {"clEnqueueMemcpyINTEL", (void *)enqueue_memcpy},
    {"clEnqueueMemAdviseINTEL", (void *)enqueue_advise},
    {"clEnqueueMigrateMemINTEL", (void *)enqueue_migrate},
    {"clEnqueueMemsetINTEL", (void *)enqueue_memset},
    {"clSVMAllocARM", (void *)svm_alloc_arm},
    {"clSVMFreeARM", (void *)svm_free_arm},
    {"clEnqueueSVMFreeARM", (void *)enqueue_svm_free_arm},
    {"clEnqueueSVMMemcpyARM", (void *)enqueue_memcpy},
    {"clEnqueueSVMMemFillARM", (void *)enqueue_fill},
    {"clEnqueueSVMMapARM", (void *)enqueue_svm_map_arm},
    {"clEnqueueSVMUnmapARM", (void *)enqueue_svm_unmap_arm},
    {"clSetKernelArgSVMPointerARM", (void *)kernel_arg_ptr},
    {"clSetKernelExecInfoARM", (void *)kernel_exec_info},
    {"clImportMemoryARM", (void *)import_memory_arm},
};

static void *CL_API_CALL ext_address(const char *name) {
    if (!strcmp(name, "clIcdGetPlatformIDsKHR")) return (void *)get_platform_ids;
    if (!strcmp(name, "clGetPlatformInfo")) return (void *)platform_info; /* ocl-icd asks for it */
    for (size_t i = 0; i < sizeof EXTENSIONS / sizeof *EXTENSIONS; i++)
        if (!strcmp(name, EXTENSIONS[i].name)) return EXTENSIONS[i].fn;
    return NULL;
}

static void *CL_API_CALL ext_address_for_platform(cl_platform_id p, const char *name) {
    return p == &platform ? ext_address(name) : NULL;
}

__attribute__((constructor)) static void init(void) {
    g_mode = getenv("TESTICD_MODE");
    if (mode_is("locked-callbacks")) {
        pthread_mutexattr_t attr;
        pthread_mutexattr_init(&attr);
        pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
        pthread_mutex_init(&g_lock, &attr);
        pthread_t t;
        pthread_create(&t, NULL, completion_thread, NULL);
        pthread_detach(t);
    }
    dispatch.clGetPlatformIDs = get_platform_ids;
    dispatch.clGetPlatformInfo = platform_info;
    dispatch.clGetDeviceIDs = device_ids;
    dispatch.clGetDeviceInfo = device_info;
    dispatch.clCreateContext = create_context;
    dispatch.clReleaseContext = release_context;
    dispatch.clCreateCommandQueueWithProperties = create_queue;
    dispatch.clReleaseCommandQueue = release_queue;
    dispatch.clFinish = finish;
    dispatch.clGetCommandQueueInfo = queue_info;
    dispatch.clSetCommandQueueProperty = set_queue_property;
    dispatch.clCreateFromGLBuffer = create_from_gl_buffer;
    dispatch.clRetainEvent = retain_event;
    dispatch.clReleaseEvent = release_event;
    dispatch.clSetEventCallback = event_callback;
    dispatch.clGetEventInfo = event_info;
    dispatch.clEnqueueMarkerWithWaitList = enqueue_marker;
    dispatch.clGetEventProfilingInfo = event_profiling;
    dispatch.clWaitForEvents = wait_events;
    dispatch.clGetExtensionFunctionAddress = ext_address;
    dispatch.clGetExtensionFunctionAddressForPlatform = ext_address_for_platform;
}

/* The ICD loader finds the driver through these two exports. */
__attribute__((visibility("default"))) void *clGetExtensionFunctionAddress(const char *name) { return ext_address(name); }
__attribute__((visibility("default"))) cl_int clIcdGetPlatformIDsKHR(cl_uint n, cl_platform_id *ps, cl_uint *count) {
    return get_platform_ids(n, ps, count);
}
