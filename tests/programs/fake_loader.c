/* Plays the Khronos loader: dlopens libclxfer.so, asks clGetLayerInfo, calls
 * clInitLayerWithProperties with a table of argv[2] entries that ends at a PROT_NONE page (reading past
 * num_entries crashes), calls through the returned table, then clDeinitLayer and dlclose. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>
#include <CL/cl_layer.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Debian 12's cl_layer.h predates the newer entry points. */
typedef cl_properties layer_properties;
typedef cl_int(CL_API_CALL *init_with_properties_fn)(cl_uint, const cl_icd_dispatch *, cl_uint *,
                                                     const cl_icd_dispatch **, const layer_properties *);
typedef cl_int(CL_API_CALL *deinit_fn)(void);

static int calls;

static cl_int CL_API_CALL fake_platform_ids(cl_uint n, cl_platform_id *ps, cl_uint *count) {
    (void)n, (void)ps;
    calls++;
    if (count) *count = 7;
    return CL_SUCCESS;
}

static void dummy(void) {}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    unsigned n = (unsigned)atoi(argv[2]);
    void *lib = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
    if (!lib) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    pfn_clGetLayerInfo info = (pfn_clGetLayerInfo)dlsym(lib, "clGetLayerInfo");
    init_with_properties_fn init = (init_with_properties_fn)dlsym(lib, "clInitLayerWithProperties");
    deinit_fn deinit = (deinit_fn)dlsym(lib, "clDeinitLayer");
    if (!info || !init || !deinit || !dlsym(lib, "clInitLayer")) {
        printf("missing layer entry points\n");
        return 1;
    }
    cl_layer_api_version version = 0;
    size_t size = 0;
    cl_int err = info(CL_LAYER_API_VERSION, sizeof version, &version, &size);
    printf("version: %d %u size %zu\n", err, version, size);
    char name[64];
    err = info(CL_LAYER_NAME, sizeof name, name, NULL);
    printf("name: %d %s\n", err, name);
    printf("name too small: %d\n", info(CL_LAYER_NAME, 2, name, NULL));
    printf("unknown: %d\n", info(0x1234, sizeof name, name, NULL));

    /* The table ends exactly where an inaccessible page begins. */
    long page = sysconf(_SC_PAGESIZE);
    size_t bytes = n * sizeof(void *);
    size_t span = (bytes + page - 1) / page * page;
    char *mem = mmap(NULL, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(mem + span, page, PROT_NONE);
    void **target = (void **)(mem + span - bytes);
    for (unsigned i = 0; i < n; i++) target[i] = (i % 5 == 3) ? NULL : (void *)dummy;
    target[0] = (void *)fake_platform_ids;

    cl_uint got = 0;
    const cl_icd_dispatch *table = NULL;
    layer_properties props[] = {0};
    err = init(n, (const cl_icd_dispatch *)target, &got, &table, props);
    printf("init: %d entries %u\n", err, got);
    const void *const *slots = (const void *const *)table;
    int wrapped = 0, kept_null = 1, same = 0;
    for (unsigned i = 0; i < got; i++) {
        if (!target[i] && slots[i]) kept_null = 0;
        if (target[i] && slots[i] != target[i]) wrapped++;
        if (target[i] && slots[i] == target[i]) same++;
    }
    printf("slot 0 wrapped: %d, NULL slots kept NULL: %d\n", slots[0] != target[0], kept_null);
    fprintf(stderr, "wrapped %d, copied %d\n", wrapped, same);
    cl_uint count = 0;
    err = table->clGetPlatformIDs(0, NULL, &count);
    printf("call through table: %d count %u, target called %d time(s)\n", err, count, calls);
    printf("deinit: %d\n", deinit());
    dlclose(lib);
    printf("done\n");
    return 0;
}
