/* Buffers: every host-pointer flag, sub-buffers, read/write/rect/copy/fill, map/unmap (READ,
 * WRITE, WRITE_INVALIDATE_REGION), migrate (to host, back, CONTENT_UNDEFINED), an image, a kernel. */
#include "common.h"

#define N 4096 /* floats per buffer */

static const char *SRC =
    "__kernel void scale(__global float *a, float s) { a[get_global_id(0)] *= s; }\n";

static void fill_host(float *h, size_t n, float base) {
    for (size_t i = 0; i < n; i++) h[i] = base + (float)i;
}

int main(void) {
    setup();
    cl_command_queue q = make_queue(0);
    cl_int err;
    size_t bytes = N * sizeof(float);
    float *host = aligned_alloc(4096, bytes), *back = aligned_alloc(4096, bytes);
    fill_host(host, N, 1.0f);

    /* Creation with every host-pointer flag. */
    struct { const char *name; cl_mem_flags flags; int use_ptr; } kinds[] = {
        {"default", CL_MEM_READ_WRITE, 0},
        {"copy", CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, 1},
        {"use", CL_MEM_USE_HOST_PTR, 1},
        {"alloc", CL_MEM_ALLOC_HOST_PTR, 0},
        {"alloc_copy", CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR, 1},
        {"write_only_host_read", CL_MEM_WRITE_ONLY | CL_MEM_HOST_READ_ONLY, 0},
        {"host_write_only", CL_MEM_HOST_WRITE_ONLY, 0},
        {"host_no_access", CL_MEM_HOST_NO_ACCESS, 0},
    };
    cl_mem mems[8];
    for (int k = 0; k < 8; k++) {
        mems[k] = clCreateBuffer(g_ctx, kinds[k].flags, bytes, kinds[k].use_ptr ? host : NULL, &err);
        CHECK_ERR(err);
        cl_mem_flags got;
        size_t size;
        CHECK(clGetMemObjectInfo(mems[k], CL_MEM_FLAGS, sizeof got, &got, NULL));
        CHECK(clGetMemObjectInfo(mems[k], CL_MEM_SIZE, sizeof size, &size, NULL));
        printf("create %-22s flags=%#llx size=%zu\n", kinds[k].name, (unsigned long long)got, size);
    }
    cl_mem_properties noprops[] = {0};
    cl_mem withprops = clCreateBufferWithProperties(g_ctx, noprops, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK_ERR(err);

    /* Read/write, blocking and not. */
    cl_mem dev = mems[0];
    cl_event ev;
    CHECK(clEnqueueWriteBuffer(q, dev, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dev, CL_FALSE, 0, bytes, back, 0, NULL, &ev));
    CHECK(clWaitForEvents(1, &ev));
    CHECK(clReleaseEvent(ev));
    mix(back, bytes);
    /* From the USE_HOST_PTR and COPY buffers. */
    CHECK(clEnqueueReadBuffer(q, mems[1], CL_TRUE, 0, bytes, back, 0, NULL, NULL));
    mix(back, bytes);
    CHECK(clEnqueueReadBuffer(q, mems[2], CL_TRUE, 64, bytes - 128, back, 0, NULL, NULL));
    mix(back, bytes - 128);

    /* Rect: a 16x8 float block at (4, 2) of a 64x64 matrix. */
    size_t origin[3] = {4 * sizeof(float), 2, 0}, hostorig[3] = {0, 0, 0};
    size_t region[3] = {16 * sizeof(float), 8, 1};
    CHECK(clEnqueueWriteBufferRect(q, withprops, CL_TRUE, origin, hostorig, region, 64 * sizeof(float), 0,
                                   16 * sizeof(float), 0, host, 0, NULL, NULL));
    memset(back, 0, bytes);
    CHECK(clEnqueueReadBufferRect(q, withprops, CL_TRUE, origin, hostorig, region, 64 * sizeof(float), 0,
                                  16 * sizeof(float), 0, back, 0, NULL, NULL));
    mix(back, 16 * 8 * sizeof(float));

    /* Copy, copy rect, fill. */
    CHECK(clEnqueueCopyBuffer(q, dev, mems[3], 0, 0, bytes, 0, NULL, NULL));
    size_t dorig[3] = {0, 10, 0};
    CHECK(clEnqueueCopyBufferRect(q, dev, mems[3], origin, dorig, region, 64 * sizeof(float), 0,
                                  64 * sizeof(float), 0, 0, NULL, NULL));
    float pattern = 3.5f;
    CHECK(clEnqueueFillBuffer(q, mems[5], &pattern, sizeof pattern, 0, bytes, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, mems[3], CL_TRUE, 0, bytes, back, 0, NULL, NULL));
    mix(back, bytes);
    CHECK(clEnqueueReadBuffer(q, mems[5], CL_TRUE, 0, bytes, back, 0, NULL, NULL));
    mix(back, bytes);

    /* Sub-buffer at the device's base-address alignment. */
    cl_uint align_bits;
    CHECK(clGetDeviceInfo(g_device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL));
    cl_buffer_region sub_region = {align_bits / 8, 1024};
    cl_mem sub = clCreateSubBuffer(dev, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &sub_region, &err);
    CHECK_ERR(err);
    float ones[256];
    for (int i = 0; i < 256; i++) ones[i] = 1.0f + i;
    CHECK(clEnqueueWriteBuffer(q, sub, CL_TRUE, 0, sizeof ones, ones, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dev, CL_TRUE, 0, bytes, back, 0, NULL, NULL));
    mix(back, bytes);

    /* Map for READ, WRITE and WRITE_INVALIDATE_REGION. */
    float *m = clEnqueueMapBuffer(q, dev, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL, NULL, &err);
    CHECK_ERR(err);
    mix(m, bytes);
    CHECK(clEnqueueUnmapMemObject(q, dev, m, 0, NULL, NULL));
    m = clEnqueueMapBuffer(q, mems[3], CL_TRUE, CL_MAP_WRITE, 256, 1024, 0, NULL, NULL, &err);
    CHECK_ERR(err);
    for (int i = 0; i < 256; i++) m[i] += 1.0f;
    CHECK(clEnqueueUnmapMemObject(q, mems[3], m, 0, NULL, NULL));
    m = clEnqueueMapBuffer(q, mems[3], CL_FALSE, CL_MAP_WRITE_INVALIDATE_REGION, 0, 512, 0, NULL, &ev, &err);
    CHECK_ERR(err);
    CHECK(clWaitForEvents(1, &ev));
    CHECK(clReleaseEvent(ev));
    for (int i = 0; i < 128; i++) m[i] = -1.0f * i;
    CHECK(clEnqueueUnmapMemObject(q, mems[3], m, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, mems[3], CL_TRUE, 0, bytes, back, 0, NULL, NULL));
    mix(back, bytes);
    /* Map the ALLOC_HOST_PTR buffer and write from the mapped pointer (the pinned recipe). */
    float *pinned = clEnqueueMapBuffer(q, mems[3], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &err);
    CHECK_ERR(err);
    CHECK(clEnqueueWriteBuffer(q, withprops, CL_TRUE, 0, bytes, pinned, 0, NULL, NULL));
    CHECK(clEnqueueUnmapMemObject(q, mems[3], pinned, 0, NULL, NULL));

    /* Migrate to the host, back, and with undefined contents. */
    CHECK(clEnqueueMigrateMemObjects(q, 1, &dev, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL));
    CHECK(clEnqueueMigrateMemObjects(q, 1, &dev, 0, 0, NULL, NULL));
    CHECK(clEnqueueMigrateMemObjects(q, 1, &mems[6], CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dev, CL_TRUE, 0, bytes, back, 0, NULL, NULL));
    mix(back, bytes);

    /* An image: write and read a 16x16 RGBA float image. */
    cl_image_format fmt = {CL_RGBA, CL_FLOAT};
    cl_image_desc desc = {0};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 16;
    desc.image_height = 16;
    cl_mem img = clCreateImage(g_ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    CHECK_ERR(err);
    size_t iorigin[3] = {0, 0, 0}, iregion[3] = {16, 16, 1};
    CHECK(clEnqueueWriteImage(q, img, CL_TRUE, iorigin, iregion, 0, 0, host, 0, NULL, NULL));
    CHECK(clEnqueueReadImage(q, img, CL_TRUE, iorigin, iregion, 0, 0, back, 0, NULL, NULL));
    mix(back, 16 * 16 * 4 * sizeof(float));
    /* An image made from the program's bytes: CL_MEM_COPY_HOST_PTR copies them at creation. */
    cl_mem copied = clCreateImage(g_ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &fmt, &desc, host, &err);
    CHECK_ERR(err);
    CHECK(clEnqueueReadImage(q, copied, CL_TRUE, iorigin, iregion, 0, 0, back, 0, NULL, NULL));
    mix(back, 16 * 16 * 4 * sizeof(float));
    CHECK(clReleaseMemObject(copied));

    /* A kernel on the buffer. */
    cl_program prog = build(SRC);
    cl_kernel k = clCreateKernel(prog, "scale", &err);
    CHECK_ERR(err);
    float two = 2.0f;
    CHECK(clSetKernelArg(k, 0, sizeof dev, &dev));
    CHECK(clSetKernelArg(k, 1, sizeof two, &two));
    size_t global = N;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dev, CL_TRUE, 0, bytes, back, 0, NULL, NULL));
    mix(back, bytes);
    CHECK(clFinish(q));

    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseMemObject(img));
    CHECK(clReleaseMemObject(sub));
    for (int i = 0; i < 8; i++) CHECK(clReleaseMemObject(mems[i]));
    CHECK(clReleaseMemObject(withprops));
    CHECK(clReleaseCommandQueue(q));
    free(host);
    free(back);
    finish_program();
    return 0;
}
