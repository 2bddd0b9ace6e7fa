/* FP32 / FP16 Winograd transform kernels (non-fused): one thread transforms one (tile, channel)
 * or (filter, channel) in registers with the generator's emitted device functions, and
 * consecutive threads take consecutive channels so that NHWC loads and every store of the
 * V / U / M layouts (winograd_kernels.h) coalesce. Arithmetic is FP32; FP16 only in storage. */
#include "cuda/winograd_tile_io.cuh"

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
                      : s.nhwc ? load_value(w, (((long long)k * R + i) * R + j) * s.c + c)
                               : load_value(w, (((long long)k * s.c + c) * R + i) * R + j);
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
    const int c = (int)idx % s.cp; /* idx < tn * cp < 2^31 (plan_workspace) */
    const long long t = s.t0 + (int)idx / s.cp;
    int n, th, tw;
    wino_cuda_tile_of(&s, t, &n, &th, &tw);
    float d[A][A], vv[A][A];
    gather_window<T, float, A>(x, s, n, th * M - s.pad_h, tw * M - s.pad_w, c, d);
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
    const int k = (int)idx % s.k, tl = (int)idx / s.k; /* idx < tn * kp < 2^31 */
    const long long t = s.t0 + tl, plane = (long long)s.tn * s.kp;
    int n, th, tw;
    wino_cuda_tile_of(&s, t, &n, &th, &tw);
    float mm[A][A], yy[M][M];
#pragma unroll
    for (int i = 0; i < A; i++)
#pragma unroll
        for (int j = 0; j < A; j++)
            mm[i][j] = mt[(i * A + j) * plane + tl * s.kp + k];
    tile_fn<M, R>::output(mm, yy);
    store_output_tile<T, M>(y, s, n, th, tw, k, yy, bias ? bias[k] : 0.0f, relu);
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
