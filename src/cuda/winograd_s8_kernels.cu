/* The integer steps of the INT8 Winograd pipeline (docs/int8-winograd.md) on the GPU, NHWC: one
 * thread per (tile, channel) for the input transform and per (tile, output channel) for the
 * output transform. Integer arithmetic in int32 is exact (the layer's bounds were checked at
 * create), and the float steps are the spec's own functions, so the bits equal the CPU's. */
#include <stdint.h>

#include "core/int8_layer.h"
#include "cuda/winograd_kernels.h"

template <int M, int A>
__global__ void s8_input_transform(const void *x, int8_t *v, struct wino_cuda_shape s,
                                   struct wino_cuda_s8_consts k)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long plane = (long long)s.tn * s.cp;
    if (idx >= plane)
        return;
    const int c = (int)(idx % s.cp);
    const long long t = s.t0 + idx / s.cp;
    const int tw = (int)(t % s.tiles_w), th = (int)(t / s.tiles_w % s.tiles_h);
    const int n = (int)(t / ((long long)s.tiles_w * s.tiles_h));
    const int h0 = th * M - s.pad_h, w0 = tw * M - s.pad_w;
    int d[A][A], bd[A][A];
#pragma unroll
    for (int i = 0; i < A; i++)
#pragma unroll
        for (int j = 0; j < A; j++) {
            const int h = h0 + i, w = w0 + j;
            const long long at = (((long long)n * s.h + h) * s.w + w) * s.c + c;
            d[i][j] = c >= s.c || h < 0 || h >= s.h || w < 0 || w >= s.w ? 0
                      : k.x_signed ? ((const int8_t *)x)[at]
                                   : ((const uint8_t *)x)[at];
        }
#pragma unroll
    for (int i = 0; i < A; i++) /* B'^T d */
#pragma unroll
        for (int j = 0; j < A; j++) {
            int acc = 0;
#pragma unroll
            for (int u = 0; u < A; u++)
                acc += k.bt[i][u] * d[u][j];
            bd[i][j] = acc;
        }
#pragma unroll
    for (int i = 0; i < A; i++) /* (B'^T d) B' */
#pragma unroll
        for (int j = 0; j < A; j++) {
            int acc = 0;
#pragma unroll
            for (int u = 0; u < A; u++)
                acc += bd[i][u] * k.bt[j][u];
            v[(i * A + j) * plane + idx] = wino_int8_quantize_v(acc, k.f_a);
        }
}

template <int M, int A>
__global__ void s8_output_transform(const int32_t *mt, const float *scale, const float *bias,
                                    void *y, struct wino_cuda_shape s, struct wino_cuda_s8_consts k)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)s.tn * s.k)
        return;
    const int kk = (int)(idx % s.k);
    const long long tl = idx / s.k, t = s.t0 + tl, plane = (long long)s.tn * s.kp;
    const int tw = (int)(t % s.tiles_w), th = (int)(t / s.tiles_w % s.tiles_h);
    const int n = (int)(t / ((long long)s.tiles_w * s.tiles_h));
    int mm[A][A], am[M][A];
#pragma unroll
    for (int i = 0; i < A; i++)
#pragma unroll
        for (int j = 0; j < A; j++)
            mm[i][j] = mt[(i * A + j) * plane + tl * s.kp + kk];
#pragma unroll
    for (int i = 0; i < M; i++) /* A'^T M */
#pragma unroll
        for (int j = 0; j < A; j++) {
            int acc = 0;
#pragma unroll
            for (int u = 0; u < A; u++)
                acc += k.at[i][u] * mm[u][j];
            am[i][j] = acc;
        }
    const float sc = scale[kk], b = bias[kk];
#pragma unroll
    for (int i = 0; i < M; i++)
#pragma unroll
        for (int j = 0; j < M; j++) {
            const int p = th * M + i, q = tw * M + j;
            if (p >= s.p || q >= s.q)
                continue;
            int acc = 0; /* (A'^T M) A' */
#pragma unroll
            for (int u = 0; u < A; u++)
                acc += am[i][u] * k.at[j][u];
            const int out = wino_int8_requantize(acc, sc, b, k.lo, k.hi);
            const long long at = (((long long)n * s.p + p) * s.q + q) * s.k + kk;
            if (k.y_signed)
                ((int8_t *)y)[at] = (int8_t)out;
            else
                ((uint8_t *)y)[at] = (uint8_t)out;
        }
}

#define WINO_S8_TILES(X) X(2, 4) X(4, 6) X(6, 8)

cudaError_t wino_cuda_s8_input_transform(const struct wino_cuda_shape *s,
                                         const struct wino_cuda_s8_consts *k, const void *x,
                                         signed char *v, cudaStream_t stream)
{
    const unsigned blocks = wino_cuda_blocks((long long)s->tn * s->cp);
#define WINO_LAUNCH(tm, ta)                                                                    \
    if (s->m == tm) {                                                                          \
        s8_input_transform<tm, ta><<<blocks, 256, 0, stream>>>(x, (int8_t *)v, *s, *k);          \
        return cudaGetLastError();                                                             \
    }
    WINO_S8_TILES(WINO_LAUNCH)
#undef WINO_LAUNCH
    return cudaErrorInvalidValue;
}

cudaError_t wino_cuda_s8_output_transform(const struct wino_cuda_shape *s,
                                          const struct wino_cuda_s8_consts *k, const int *m,
                                          const float *scale, const float *bias, void *y,
                                          cudaStream_t stream)
{
    const unsigned blocks = wino_cuda_blocks((long long)s->tn * s->k);
#define WINO_LAUNCH(tm, ta)                                                                    \
    if (s->m == tm) {                                                                          \
        s8_output_transform<tm, ta><<<blocks, 256, 0, stream>>>((const int32_t *)m, scale,     \
                                                               bias, y, *s, *k);              \
        return cudaGetLastError();                                                             \
    }
    WINO_S8_TILES(WINO_LAUNCH)
#undef WINO_LAUNCH
    return cudaErrorInvalidValue;
}
