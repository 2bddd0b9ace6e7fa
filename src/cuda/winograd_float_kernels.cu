/* FP32 / FP16 Winograd transform kernels (non-fused): one thread transforms one (tile, channel)
 * or (filter, channel) in registers with the generator's emitted device functions, and
 * consecutive threads take consecutive channels so that NHWC loads and every store of the
 * V / U / M layouts (winograd_kernels.h) coalesce. Arithmetic is FP32; FP16 only in storage. */
#include <cuda_fp16.h>

#include "cuda/generated/wino_f32_tiles.cuh"
#include "cuda/winograd_kernels.h"

/* The generated transforms of F(m x m, r x r), by template argument. */
template <int M, int R> struct tile_fn;
#define WINO_TILE_FN(name, m, r)                                                               \
    template <> struct tile_fn<m, r> {                                                         \
        static __device__ __forceinline__ void input(const float d[m + r - 1][m + r - 1],     \
                                                     float v[m + r - 1][m + r - 1])            \
        {                                                                                      \
            wino_f32_input_transform_##name(d, v);                                             \
        }                                                                                      \
        static __device__ __forceinline__ void filter(const float g[r][r],                     \
                                                      float u[m + r - 1][m + r - 1])           \
        {                                                                                      \
            wino_f32_filter_transform_##name(g, u);                                            \
        }                                                                                      \
        static __device__ __forceinline__ void output(const float mm[m + r - 1][m + r - 1],   \
                                                      float y[m][m])                           \
        {                                                                                      \
            wino_f32_output_transform_##name(mm, y);                                           \
        }                                                                                      \
    };
WINO_CUDA_DEFAULT_TILES(WINO_TILE_FN)

static __device__ __forceinline__ float load(const float *p, long long i)
{
    return p[i];
}
static __device__ __forceinline__ float load(const __half *p, long long i)
{
    return __half2float(p[i]);
}
static __device__ __forceinline__ void store(float *p, long long i, float v)
{
    p[i] = v;
}
static __device__ __forceinline__ void store(__half *p, long long i, float v)
{
    p[i] = __float2half_rn(v);
}

template <typename T, int M, int R>
__global__ void filter_transform(const T *w, T *u, struct wino_cuda_shape s)
{
    enum { A = M + R - 1 };
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long plane = (long long)s.kp * s.cp;
    if (idx >= plane)
        return;
    const int c = (int)(idx % s.cp), k = (int)(idx / s.cp);
    float g[R][R], uu[A][A];
    const int real = c < s.c && k < s.k;
#pragma unroll
    for (int i = 0; i < R; i++)
#pragma unroll
        for (int j = 0; j < R; j++)
            g[i][j] = !real ? 0.0f
                      : s.nhwc ? load(w, (((long long)k * R + i) * R + j) * s.c + c)
                               : load(w, (((long long)k * s.c + c) * R + i) * R + j);
    tile_fn<M, R>::filter(g, uu);
#pragma unroll
    for (int i = 0; i < A; i++)
#pragma unroll
        for (int j = 0; j < A; j++)
            store(u, (i * A + j) * plane + idx, uu[i][j]);
}

template <typename T, int M, int R>
__global__ void input_transform(const T *x, T *v, struct wino_cuda_shape s)
{
    enum { A = M + R - 1 };
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long plane = (long long)s.tn * s.cp;
    if (idx >= plane)
        return;
    const int c = (int)(idx % s.cp);
    const long long t = s.t0 + idx / s.cp;
    int n, th, tw;
    wino_cuda_tile_of(&s, t, &n, &th, &tw);
    const int h0 = th * M - s.pad_h, w0 = tw * M - s.pad_w;
    float d[A][A], vv[A][A];
#pragma unroll
    for (int i = 0; i < A; i++)
#pragma unroll
        for (int j = 0; j < A; j++) {
            const int h = h0 + i, ww = w0 + j;
            const int inside = c < s.c && h >= 0 && h < s.h && ww >= 0 && ww < s.w;
            d[i][j] = !inside ? 0.0f
                      : s.nhwc ? load(x, (((long long)n * s.h + h) * s.w + ww) * s.c + c)
                               : load(x, (((long long)n * s.c + c) * s.h + h) * s.w + ww);
        }
    tile_fn<M, R>::input(d, vv);
#pragma unroll
    for (int i = 0; i < A; i++)
#pragma unroll
        for (int j = 0; j < A; j++)
            store(v, (i * A + j) * plane + idx, vv[i][j]);
}

template <typename T, int M, int R>
__global__ void output_transform(const float *mt, const float *bias, int relu, T *y,
                                 struct wino_cuda_shape s)
{
    enum { A = M + R - 1 };
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)s.tn * s.k)
        return;
    const int k = (int)(idx % s.k);
    const long long tl = idx / s.k, t = s.t0 + tl, plane = (long long)s.tn * s.kp;
    int n, th, tw;
    wino_cuda_tile_of(&s, t, &n, &th, &tw);
    float mm[A][A], yy[M][M];
#pragma unroll
    for (int i = 0; i < A; i++)
#pragma unroll
        for (int j = 0; j < A; j++)
            mm[i][j] = mt[(i * A + j) * plane + tl * s.kp + k];
    tile_fn<M, R>::output(mm, yy);
    const float b = bias ? bias[k] : 0.0f;
#pragma unroll
    for (int i = 0; i < M; i++)
#pragma unroll
        for (int j = 0; j < M; j++) {
            const int p = th * M + i, q = tw * M + j;
            if (p >= s.p || q >= s.q)
                continue;
            float r = yy[i][j] + b;
            if (relu)
                r = fmaxf(r, 0.0f);
            store(y, s.nhwc ? (((long long)n * s.p + p) * s.q + q) * s.k + k
                            : (((long long)n * s.k + k) * s.p + p) * s.q + q,
                  r);
        }
}

int wino_cuda_has_tile(int m, int r)
{
#define WINO_HAS(name, tm, tr) if (m == tm && r == tr) return 1;
    WINO_CUDA_DEFAULT_TILES(WINO_HAS)
#undef WINO_HAS
    return 0;
}


cudaError_t wino_cuda_filter_transform(const struct wino_cuda_shape *s, int half, const void *w,
                                       void *u, cudaStream_t stream)
{
    const unsigned blocks = wino_cuda_blocks((long long)s->kp * s->cp);
#define WINO_LAUNCH(name, tm, tr)                                                                \
    if (s->m == tm && s->r == tr) {                                                            \
        if (half)                                                                              \
            filter_transform<__half, tm, tr><<<blocks, 256, 0, stream>>>((const __half *)w,      \
                                                                       (__half *)u, *s);      \
        else                                                                                   \
            filter_transform<float, tm, tr><<<blocks, 256, 0, stream>>>((const float *)w,        \
                                                                      (float *)u, *s);        \
        return cudaGetLastError();                                                             \
    }
    WINO_CUDA_DEFAULT_TILES(WINO_LAUNCH)
#undef WINO_LAUNCH
    return cudaErrorInvalidValue;
}

cudaError_t wino_cuda_input_transform(const struct wino_cuda_shape *s, int half, const void *x,
                                      void *v, cudaStream_t stream)
{
    const unsigned blocks = wino_cuda_blocks((long long)s->tn * s->cp);
#define WINO_LAUNCH(name, tm, tr)                                                                \
    if (s->m == tm && s->r == tr) {                                                            \
        if (half)                                                                              \
            input_transform<__half, tm, tr><<<blocks, 256, 0, stream>>>((const __half *)x,       \
                                                                      (__half *)v, *s);       \
        else                                                                                   \
            input_transform<float, tm, tr><<<blocks, 256, 0, stream>>>((const float *)x,         \
                                                                     (float *)v, *s);         \
        return cudaGetLastError();                                                             \
    }
    WINO_CUDA_DEFAULT_TILES(WINO_LAUNCH)
#undef WINO_LAUNCH
    return cudaErrorInvalidValue;
}

cudaError_t wino_cuda_output_transform(const struct wino_cuda_shape *s, int half, const float *m,
                                       const float *bias, int relu, void *y,
                                       cudaStream_t stream)
{
    const unsigned blocks = wino_cuda_blocks((long long)s->tn * s->k);
#define WINO_LAUNCH(name, tm, tr)                                                              \
    if (s->m == tm && s->r == tr) {                                                            \
        if (half)                                                                              \
            output_transform<__half, tm, tr><<<blocks, 256, 0, stream>>>(m, bias, relu,         \
                                                                        (__half *)y, *s);     \
        else                                                                                   \
            output_transform<float, tm, tr><<<blocks, 256, 0, stream>>>(m, bias, relu,          \
                                                                       (float *)y, *s);       \
        return cudaGetLastError();                                                             \
    }
    WINO_CUDA_DEFAULT_TILES(WINO_LAUNCH)
#undef WINO_LAUNCH
    return cudaErrorInvalidValue;
}
