/* An OpenCL device for the OpenCL backend's tests (tests/test_opencl*.c): the first device of
 * the first platform that has one (a GPU preferred), its context and in-order queue, buffers
 * filled from the host (FP32 or FP16 elements), the wino_context that names them, and the error
 * bounds. */
#ifndef WINO_TESTS_OPENCL_ENV_H
#define WINO_TESTS_OPENCL_ENV_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "wino.h"

struct cl_env {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    char name[256];
};

/* 1 when a device was found and its context and queue were made. */
static inline int open_device(struct cl_env *env)
{
    cl_platform_id platforms[8];
    cl_uint np = 0;
    memset(env, 0, sizeof *env);
    if (clGetPlatformIDs(8, platforms, &np) != CL_SUCCESS)
        np = 0;
    for (int want_gpu = 1; want_gpu >= 0 && !env->device; want_gpu--)
        for (cl_uint i = 0; i < np && i < 8 && !env->device; i++) {
            cl_uint nd = 0;
            const cl_device_type type = want_gpu ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL;
            if (clGetDeviceIDs(platforms[i], type, 1, &env->device, &nd) != CL_SUCCESS || !nd)
                env->device = NULL;
            else
                env->platform = platforms[i];
        }
    if (!env->device)
        return 0;
    cl_int err = CL_SUCCESS;
    env->context = clCreateContext(NULL, 1, &env->device, NULL, NULL, &err);
    if (err == CL_SUCCESS)
        env->queue = clCreateCommandQueue(env->context, env->device, 0, &err);
    clGetDeviceInfo(env->device, CL_DEVICE_NAME, sizeof env->name - 1, env->name, NULL);
    return err == CL_SUCCESS;
}

/* The failure line of a build with the component on a machine without a device. */
#define NO_DEVICE                                                                                 \
    "FAIL: no OpenCL platform with a device: this build has the OpenCL component, so its test "   \
    "needs one (Debian: pocl-opencl-icd; or OCL_ICD_VENDORS naming the vendor's .icd file)\n"

static inline void close_device(struct cl_env *env)
{
    clReleaseCommandQueue(env->queue);
    clReleaseContext(env->context);
}

static inline struct wino_context context_of(const struct cl_env *env)
{
    struct wino_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.backend = WINO_BACKEND_OPENCL;
    ctx.cl_context = env->context;
    ctx.cl_device = env->device;
    ctx.stream = env->queue;
    return ctx;
}

/* A device buffer of bytes (at least 4) holding host's first bytes (host may be NULL). */
static inline cl_mem device_copy(const struct cl_env *env, const void *host, size_t bytes)
{
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(env->context, CL_MEM_READ_WRITE, bytes ? bytes : 4, NULL, &err);
    if (err == CL_SUCCESS && host && bytes)
        err = clEnqueueWriteBuffer(env->queue, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "OpenCL buffer of %zu bytes: error %d\n", bytes, (int)err);
        exit(2);
    }
    return m;
}

/* The FP32 error bound of a tile of size alpha (as the CUDA backend's). */
static inline double f32_bound(int alpha)
{
    static const double by_alpha[11] = {0, 0, 0, 1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4};
    return alpha >= 3 && alpha <= 10 ? by_alpha[alpha] : 0.0;
}

/* FP16's bound, every alpha: y rounded to FP16 (2^-11 of each value at most) over FP32
 * arithmetic, whose own error stays below 2e-5 up to alpha 10. */
#define F16_BOUND 1e-3

/* A device buffer holding n values as d's elements (FP16: values already FP16, NaN kept). */
static inline cl_mem device_elements(const struct cl_env *env,
                                     const struct wino_conv2d_desc *d, const float *v, size_t n)
{
    if (d->dtype != WINO_DTYPE_F16)
        return device_copy(env, v, n * 4);
    uint16_t *h = malloc(2 * n + 2);
    wino_halves_from_floats(v, h, n);
    const cl_mem m = device_copy(env, h, 2 * n);
    free(h);
    return m;
}

/* Writes (write) or reads n values of d's elements between m and v. 0 on success. */
static inline int transfer_elements(const struct cl_env *env,
                                    const struct wino_conv2d_desc *d, cl_mem m, float *v,
                                    size_t n, int write)
{
    const int half = d->dtype == WINO_DTYPE_F16;
    uint16_t *h = half ? malloc(2 * n + 2) : NULL;
    if (half && write)
        wino_halves_from_floats(v, h, n);
    void *at = half ? (void *)h : (void *)v;
    const size_t bytes = (half ? 2 : 4) * n;
    const cl_int err =
        write ? clEnqueueWriteBuffer(env->queue, m, CL_TRUE, 0, bytes, at, 0, NULL, NULL)
              : clEnqueueReadBuffer(env->queue, m, CL_TRUE, 0, bytes, at, 0, NULL, NULL);
    if (half && !write && err == CL_SUCCESS)
        wino_floats_from_halves(h, v, n);
    free(h);
    return err != CL_SUCCESS;
}

#endif
