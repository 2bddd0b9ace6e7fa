/* How the WinRS kernels (winrs_cuda.cu, winrs_fused.cu) see x, dy and dw: their shapes and
 * layout, the index of an element, and loads and stores of FP32, FP16 and BF16 elements in FP32. */
#ifndef WINO_CUDA_WINRS_TENSORS_CUH
#define WINO_CUDA_WINRS_TENSORS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stddef.h>

#include "base/conv_desc.h"
#include "wino.h"

/* The tensors' shapes (x: n c h w, dy: n k p q, dw: k c r s) and layout. */
struct dims {
    int n, c, h, w, k, p, q, r, s, pad_h, pad_w;
    int nhwc;    /* x and dy in NHWC, else NCHW */
    int dw_nhwc; /* dw in KRSC, else KCRS: as x and dy, except where NCHW x and dy were staged
                  * in NHWC for the tensor-core kernel (winrs_cuda.cu) */
};

static inline dims dims_of(const struct wino_conv2d_desc *d, const struct wino_conv_sizes *s)
{
    const int nhwc = d->layout == WINO_LAYOUT_NHWC;
    const dims out = {d->n, d->c, d->h, d->w, d->k, s->p, s->q, d->r, d->s, d->pad_h, d->pad_w,
                      nhwc, nhwc};
    return out;
}

static __device__ __forceinline__ size_t x_at(const dims &d, int n, int c, int h, int w)
{
    return d.nhwc ? (((size_t)n * d.h + h) * d.w + w) * d.c + c
                  : (((size_t)n * d.c + c) * d.h + h) * d.w + w;
}
static __device__ __forceinline__ size_t dy_at(const dims &d, int n, int k, int p, int q)
{
    return d.nhwc ? (((size_t)n * d.p + p) * d.q + q) * d.k + k
                  : (((size_t)n * d.k + k) * d.p + p) * d.q + q;
}
/* dw[k][c][i][j] in KRSC, dw's layout with NHWC x and dy, and that of the segments' buckets of
 * partial sums whatever dw's: the kernels' writes of consecutive channels of C are contiguous
 * (KCRS buckets of NCHW layers staged in NHWC made the tensor-core kernel 1.2x slower: ResNet-18
 * conv2_x, FP16, H100). */
static __device__ __forceinline__ size_t krsc_at(const dims &d, int k, int c, int i, int j)
{
    return (((size_t)k * d.r + i) * d.s + j) * d.c + c;
}
static __device__ __forceinline__ size_t dw_at(const dims &d, int k, int c, int i, int j)
{
    return d.dw_nhwc ? krsc_at(d, k, c, i, j) : (((size_t)k * d.c + c) * d.r + i) * d.s + j;
}

static __device__ __forceinline__ float load(const float *p, size_t i) { return p[i]; }
static __device__ __forceinline__ float load(const __half *p, size_t i)
{
    return __half2float(p[i]);
}
static __device__ __forceinline__ float load(const __nv_bfloat16 *p, size_t i)
{
    return __bfloat162float(p[i]);
}
static __device__ __forceinline__ void store(float *p, size_t i, float v) { p[i] = v; }
static __device__ __forceinline__ void store(__half *p, size_t i, float v)
{
    p[i] = __float2half_rn(v);
}
static __device__ __forceinline__ void store(__nv_bfloat16 *p, size_t i, float v)
{
    p[i] = __float2bfloat16_rn(v);
}

#endif
