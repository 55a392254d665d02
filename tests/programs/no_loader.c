/* Linked against libclxfer.so instead of the ICD loader: dlsym(RTLD_NEXT) finds no OpenCL, so clxfer
 * must dlopen CLXFER_OPENCL_LIB (as for a Python extension that opened OpenCL privately), or, when
 * that fails or names clxfer itself, answer as a loader with no platforms. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>

int main(void) {
    cl_uint n = 77;
    cl_int err = clGetPlatformIDs(0, NULL, &n);
    printf("clGetPlatformIDs -> %d, platforms %u\n", err, n);
    cl_int e2 = 5;
    cl_context c = clCreateContextFromType(NULL, CL_DEVICE_TYPE_ALL, NULL, NULL, &e2);
    printf("clCreateContextFromType -> %s, %d\n", c ? "context" : "null", e2);
    if (c) clReleaseContext(c);
    return 0;
}
