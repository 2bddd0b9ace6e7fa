/* Helpers shared by the GPU tests (tests/gpu/test_*.cu, compiled as C++ by nvcc but written in
 * C style): a checked CUDA runtime call, check counting with a printf-style description, device
 * buffers, a CUDA context, the FP32 accuracy bounds, and one FP32/FP16 convolution on the GPU
 * checked against the FP64 reference. */
#ifndef WINO_TESTS_GPU_TEST_UTIL_H
#define WINO_TESTS_GPU_TEST_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "ref/conv_ref.h"
#include "test_util.h"
#include "wino.h"
extern "C" {
#include "ref/error_metrics.h"
}

/* A CUDA runtime call that must succeed: on failure prints file:line, the call and the error,
 * and ends the test with status 1. */
#define CUDA_CHECK(call)                                                                        \
    do {                                                                                        \
        const cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                                \
            printf("FAIL: %s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call,                     \
                   cudaGetErrorName(e_), cudaGetErrorString(e_));                               \
            printf("aborted: CUDA runtime error\n");                                            \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

/* Counts one check; a failed one prints "FAIL: " and the description. */
static inline void gpu_checkf(struct test_counts *tc, int ok, const char *fmt, ...)
{
    if (ok) {
        tc->passed++;
        return;
    }
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    printf("FAIL: %s\n", what);
    tc->failed++;
}

/* Prints the summary line "N/M checks passed" and returns the exit status. */
static inline int gpu_report(const struct test_counts *tc)
{
    printf("%d/%d checks passed\n", tc->passed, tc->passed + tc->failed);
    return tc->failed ? 1 : 0;
}

/* Prints the device the tests run on. */
/* Makes device current, prints its name and returns a new stream of it. */
static inline cudaStream_t gpu_open_device(int device)
{
    cudaDeviceProp prop;
    cudaStream_t stream;
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    printf("device %d: %s (sm_%d%d)\n", device, prop.name, prop.major, prop.minor);
    CUDA_CHECK(cudaStreamCreate(&stream));
    return stream;
}

/* A CUDA context for device and stream (NULL: the default stream). */
static inline struct wino_context gpu_context(int device, cudaStream_t stream)
{
    struct wino_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.backend = WINO_BACKEND_CUDA;
    ctx.device = device;
    ctx.stream = (void *)stream;
    return ctx;
}

/* A device copy of bytes host bytes (NULL for 0 bytes). */
static inline void *gpu_upload(const void *host, size_t bytes)
{
    void *d = NULL;
    if (!bytes)
        return NULL;
    CUDA_CHECK(cudaMalloc(&d, bytes));
    CUDA_CHECK(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
    return d;
}

/* Device memory of bytes bytes (NULL for 0 bytes). */
static inline void *gpu_alloc(size_t bytes)
{
    void *d = NULL;
    if (bytes)
        CUDA_CHECK(cudaMalloc(&d, bytes));
    return d;
}

static inline const char *gpu_status_name(enum wino_status s)
{
    static const char *names[] = {"SUCCESS",     "INVALID_ARGUMENT",       "UNSUPPORTED",
                                  "OUT_OF_MEMORY", "INSUFFICIENT_WORKSPACE", "DEVICE_ERROR",
                                  "INTERNAL_ERROR"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown status";
}

static inline const char *gpu_variant_name(enum wino_variant v)
{
    return v == WINO_VARIANT_FUSED          ? "fused"
           : v == WINO_VARIANT_FUSED_OUTPUT ? "fused-output"
           : v == WINO_VARIANT_NON_FUSED    ? "non-fused"
           : v == WINO_VARIANT_ROWS         ? "rows"
                                            : "auto";
}

/* Relative L1 bound of FP32 Winograd F(m x m, r x r) on inputs in (-1, 1), by alpha = m + r - 1:
 * the bounds of tests/test_winograd_f32.c (docs/cpu-winograd.md's table, 6x to 13x the largest
 * error measured on the CPU engine). The GPU runs the same generated recipes with fused
 * multiply-adds and FP32 GEMMs, so it is held to the same bounds. */
static inline double gpu_f32_bound(int alpha)
{
    static const double by_alpha[11] = {0, 0, 0, 1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4};
    return alpha >= 3 && alpha <= 10 ? by_alpha[alpha] : 0.0;
}

/* Relative L1 bound of FP16 Winograd (FP16 tensors, FP32 transforms and sums) by alpha: first
 * bounds, the worst errors measured (docs/cuda-winograd.md, Numerics) with room. */
static inline double gpu_f16_bound(int alpha)
{
    return alpha <= 4 ? 2e-3 : alpha <= 6 ? 1e-2 : 5e-2;
}

/* ---------------------------------------------------------------------------------------------
 * One FP32 or FP16 convolution on the GPU against the FP64 reference
 * ------------------------------------------------------------------------------------------- */

struct gpu_conv_result {
    enum wino_status status; /* the first failing wino call's status, or WINO_SUCCESS */
    const char *call;        /* that call's name */
    char error[256];         /* its wino_last_error() */
    enum wino_algo algo;     /* what wino_conv2d_algo and wino_conv2d_variant report */
    int tile_m;
    enum wino_variant variant;
    size_t workspace_bytes;
    double err; /* worst relative L1 error of two runs (NaN when an output held a NaN) */
};

static inline int gpu_conv_fail(struct gpu_conv_result *res, enum wino_status st,
                                const char *call)
{
    if (st != WINO_SUCCESS && res->status == WINO_SUCCESS) {
        res->status = st;
        res->call = call;
        snprintf(res->error, sizeof res->error, "%s", wino_last_error());
    }
    return st != WINO_SUCCESS;
}

/* v rounded to the 16-bit dtype (FP16 or BF16) at h[i], and back. */
static inline float gpu_round16(enum wino_dtype dtype, float v, void *h, size_t i)
{
    if (dtype == WINO_DTYPE_BF16) {
        ((__nv_bfloat16 *)h)[i] = __float2bfloat16_rn(v);
        return __bfloat162float(((__nv_bfloat16 *)h)[i]);
    }
    ((__half *)h)[i] = __float2half_rn(v);
    return __half2float(((__half *)h)[i]);
}
static inline float gpu_load16(enum wino_dtype dtype, const void *h, size_t i)
{
    return dtype == WINO_DTYPE_BF16 ? __bfloat162float(((const __nv_bfloat16 *)h)[i])
                                    : __half2float(((const __half *)h)[i]);
}

/* Convolves random x and w, uniform in (-1, 1) from seed (for FP16 and BF16 rounded to the
 * type: the reference sees the values the GPU sees), on ctx with options o (with_bias adds random bias
 * values; o->relu is honoured) and compares y with the FP64 reference. The operator runs twice
 * on the same workspace, y poisoned with all-ones bytes (NaN in FP32 and FP16) before each run;
 * res->err is the larger of the two errors. */
static inline void gpu_conv_check(const struct wino_conv2d_desc *d,
                                  const struct wino_conv2d_options *o,
                                  const struct wino_context *ctx, int with_bias, uint64_t seed,
                                  struct gpu_conv_result *res)
{
    memset(res, 0, sizeof *res);
    res->err = NAN;
    res->call = "";
    struct test_rng rng = {seed ? seed : 1};
    int p = 0, q = 0;
    if (gpu_conv_fail(res, wino_conv2d_output_size(d, &p, &q), "wino_conv2d_output_size"))
        return;
    const int half = d->dtype == WINO_DTYPE_F16 || d->dtype == WINO_DTYPE_BF16;
    const size_t es = half ? 2 : sizeof(float);
    const size_t xn = (size_t)d->n * d->c * d->h * d->w, wn = (size_t)d->k * d->c * d->r * d->s,
                 yn = (size_t)d->n * d->k * p * q;
    float *x = (float *)malloc(xn * sizeof(float)), *w = (float *)malloc(wn * sizeof(float));
    float *y = (float *)malloc(yn * sizeof(float)), *bias = (float *)malloc(d->k * sizeof(float));
    double *ref = (double *)malloc(yn * sizeof(double));
    void *hx = malloc(xn * es), *hw = malloc(wn * es), *hy = malloc(yn * es);
    for (size_t i = 0; i < xn; i++)
        x[i] = (float)test_rng_sym(&rng);
    for (size_t i = 0; i < wn; i++)
        w[i] = (float)test_rng_sym(&rng);
    for (int k = 0; k < d->k; k++)
        bias[k] = (float)test_rng_sym(&rng);
    if (half) {
        for (size_t i = 0; i < xn; i++)
            x[i] = gpu_round16(d->dtype, x[i], hx, i);
        for (size_t i = 0; i < wn; i++)
            w[i] = gpu_round16(d->dtype, w[i], hw, i);
    } else {
        memcpy(hx, x, xn * es);
        memcpy(hw, w, wn * es);
    }
    struct wino_conv2d_options opt = *o;
    opt.bias = with_bias ? bias : NULL;
    wino_ref_conv2d_fwd(d, x, w, ref);
    for (size_t i = 0; i < yn && (opt.bias || opt.relu); i++) {
        const size_t k = d->layout == WINO_LAYOUT_NHWC ? i % (size_t)d->k
                                                       : i / ((size_t)p * q) % (size_t)d->k;
        ref[i] += opt.bias ? opt.bias[k] : 0.0;
        if (opt.relu && ref[i] < 0.0)
            ref[i] = 0.0;
    }

    cudaStream_t stream = (cudaStream_t)ctx->stream;
    void *dx = gpu_upload(hx, xn * es), *dw = gpu_upload(hw, wn * es), *dy = gpu_alloc(yn * es);
    void *ws = NULL;
    wino_conv2d *op = NULL;
    if (!gpu_conv_fail(res, wino_conv2d_create(d, dw, ctx, &opt, &op), "wino_conv2d_create") &&
        !gpu_conv_fail(res, wino_conv2d_algo(op, &res->algo, &res->tile_m), "wino_conv2d_algo") &&
        !gpu_conv_fail(res, wino_conv2d_variant(op, &res->variant), "wino_conv2d_variant") &&
        !gpu_conv_fail(res, wino_conv2d_workspace_size(op, &res->workspace_bytes),
                       "wino_conv2d_workspace_size")) {
        CUDA_CHECK(cudaFree(dw)); /* create() copied the weights */
        dw = NULL;
        ws = gpu_alloc(res->workspace_bytes);
        double worst = 0.0;
        for (int run = 0; run < 2; run++) {
            CUDA_CHECK(cudaMemsetAsync(dy, 0xff, yn * es, stream));
            if (gpu_conv_fail(res, wino_conv2d_run(op, dx, dy, ws, res->workspace_bytes),
                              "wino_conv2d_run")) {
                worst = NAN;
                break;
            }
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaStreamSynchronize(stream));
            CUDA_CHECK(cudaMemcpy(hy, dy, yn * es, cudaMemcpyDeviceToHost));
            if (half)
                for (size_t i = 0; i < yn; i++)
                    y[i] = gpu_load16(d->dtype, hy, i);
            else
                memcpy(y, hy, yn * es);
            const double err = wino_rel_l1_f32(y, ref, yn);
            if (!(err <= worst)) /* NaN sticks */
                worst = err;
        }
        res->err = worst;
    }
    wino_conv2d_destroy(op);
    CUDA_CHECK(cudaFree(ws));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dw));
    CUDA_CHECK(cudaFree(dy));
    free(x), free(w), free(y), free(bias), free(ref), free(hx), free(hw), free(hy);
}

/* The descriptor as "n2 c17 9x13 k3 3x3 pad 1,2 stride 1,1 dil 1,1 NHWC f16", written into buf. */
static inline const char *gpu_desc_string(const struct wino_conv2d_desc *d, char *buf,
                                          size_t cap)
{
    static const char *types[] = {"f32", "f16", "s8", "u8", "bf16"};
    snprintf(buf, cap, "n%d c%d %dx%d k%d %dx%d pad %d,%d stride %d,%d dil %d,%d %s %s", d->n,
             d->c, d->h, d->w, d->k, d->r, d->s, d->pad_h, d->pad_w, d->stride_h, d->stride_w,
             d->dilation_h, d->dilation_w, d->layout == WINO_LAYOUT_NHWC ? "NHWC" : "NCHW",
             (unsigned)d->dtype < 5 ? types[d->dtype] : "?");
    return buf;
}

#endif
