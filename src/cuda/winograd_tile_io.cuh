/* Per-tile device code shared by the non-fused and the fused Winograd kernels: the generated
 * float transforms by template argument, window gathers and output stores in NCHW or NHWC, and
 * the INT8 pipeline's integer transforms (the generator's straight-line recipes). */
#ifndef WINO_CUDA_WINOGRAD_TILE_IO_CUH
#define WINO_CUDA_WINOGRAD_TILE_IO_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include "op/int8_layer.h"
#include "cuda/generated/wino_f32_tiles.cuh"
#include "cuda/winograd_kernels.h"

#include "cpu/generated/int8_recipes.h"

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
#undef WINO_TILE_FN

/* Element i of a tensor as the transforms read it: float, or int for 8-bit tensors. */
static __device__ __forceinline__ float load_value(const float *p, long long i)
{
    return p[i];
}
static __device__ __forceinline__ float load_value(const __half *p, long long i)
{
    return __half2float(p[i]);
}
static __device__ __forceinline__ int load_value(const int8_t *p, long long i)
{
    return p[i];
}
static __device__ __forceinline__ int load_value(const uint8_t *p, long long i)
{
    return p[i];
}
static __device__ __forceinline__ void store(float *p, long long i, float v)
{
    p[i] = v;
}
static __device__ __forceinline__ void store(__half *p, long long i, float v)
{
    p[i] = __float2half_rn(v);
}

/* The A x A window of channel c at rows h0.., columns w0.. of image n, zeros outside the image
 * and for c >= C; Value is float (T float or __half) or int (T int8_t or uint8_t). One 64-bit
 * row offset per row, the columns as one multiply-add each. */
template <typename T, typename Value, int A>
static __device__ __forceinline__ void gather_window(const T *x, const struct wino_cuda_shape &s,
                                                     int n, int h0, int w0, int c,
                                                     Value d[A][A])
{
    const long long col = s.nhwc ? s.c : 1; /* element step from one column to the next */
#pragma unroll
    for (int i = 0; i < A; i++) {
        const int h = h0 + i, row_ok = c < s.c && h >= 0 && h < s.h;
        const T *row = x + (s.nhwc ? ((long long)n * s.h + h) * s.w * s.c + c
                                   : (((long long)n * s.c + c) * s.h + h) * s.w);
#pragma unroll
        for (int j = 0; j < A; j++) {
            const int w = w0 + j;
            d[i][j] = row_ok && w >= 0 && w < s.w ? (Value)load_value(row, w * col) : (Value)0;
        }
    }
}

/* y[n, k, tile rows and columns] = yy + b, ReLU'd on request; the part inside P x Q. */
template <typename T, int M>
static __device__ __forceinline__ void store_output_tile(T *y, const struct wino_cuda_shape &s,
                                                         int n, int th, int tw, int k,
                                                         const float yy[M][M], float b,
                                                         int relu)
{
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

/* The generated recipes of B'^T (alpha x alpha) and A'^T (m x alpha) of the INT8 tile F(M, 3)
 * (src/cpu/generated/int8_recipes.h) on int lanes: int32 values, or two 16-bit lanes packed as
 * lo + 65536 hi, since the recipes are exact in wrapping arithmetic. */
template <int M> struct s8_recipe;
#define WINO_S8_RECIPE(tm)                                                                     \
    template <> struct s8_recipe<tm> {                                                         \
        static __device__ __forceinline__ void bt(const int (&x)[tm + 2], int (&y)[tm + 2])   \
        {                                                                                      \
            WINO_S8_BT_F##tm(int, x, y);                                                       \
        }                                                                                      \
        static __device__ __forceinline__ void at(const int (&x)[tm + 2], int (&y)[tm])       \
        {                                                                                      \
            WINO_S8_AT_F##tm(int, x, y);                                                       \
        }                                                                                      \
    };
WINO_S8_RECIPE(2)
WINO_S8_RECIPE(4)
WINO_S8_RECIPE(6)
#undef WINO_S8_RECIPE

/* One recipe of F(M, 3): A'^T (AT) or B'^T. */
template <int M, bool AT>
static __device__ __forceinline__ void s8_apply(const int (&x)[M + 2], int (&y)[AT ? M : M + 2])
{
    if constexpr (AT)
        s8_recipe<M>::at(x, y);
    else
        s8_recipe<M>::bt(x, y);
}

/* L x for each column j of x (alpha x COLS): out[.][j], L = A'^T (AT) or B'^T. */
template <int M, bool AT, int COLS>
static __device__ __forceinline__ void s8_columns(const int x[M + 2][COLS],
                                                  int out[AT ? M : M + 2][COLS])
{
    enum { A = M + 2, R = AT ? M : M + 2 };
#pragma unroll
    for (int j = 0; j < COLS; j++) {
        int col[A], res[R];
#pragma unroll
        for (int u = 0; u < A; u++)
            col[u] = x[u][j];
        s8_apply<M, AT>(col, res);
#pragma unroll
        for (int i = 0; i < R; i++)
            out[i][j] = res[i];
    }
}

/* out = L x L^T (x alpha x alpha), L = A'^T (AT) or B'^T: the recipe on the columns, then on
 * the rows. */
template <int M, bool AT>
static __device__ __forceinline__ void s8_transform_2d(const int x[M + 2][M + 2],
                                                       int out[AT ? M : M + 2][AT ? M : M + 2])
{
    int lx[AT ? M : M + 2][M + 2];
    s8_columns<M, AT, M + 2>(x, lx);
#pragma unroll
    for (int i = 0; i < (AT ? M : M + 2); i++)
        s8_apply<M, AT>(lx[i], out[i]);
}

/* The specification's roundings without conversion instructions (a quarter of the issue rate
 * on sm_90): adding 1.5 * 2^23 to a float of magnitude below 2^22 rounds it to an integer, ties
 * to even as rintf does, and leaves that integer in the low bits of the sum's representation
 * (0x4B400000 + integer); read backwards, those bits minus 1.5 * 2^23 are an int's exact float. */
#define S8_MAGIC 12582912.0f /* 1.5 * 2^23 */

/* wino_int8_quantize_v(v, f_a) in the low byte: rintf((float)v * f_a) clamped to +-127, the
 * clamp first (rintf is monotone and +-127 are integers). |v| < 2^22: the input transforms'
 * values are at most 50^2 * 255 (F(6, 3)). */
static __device__ __forceinline__ unsigned s8_quantize_bits(int v, float f_a)
{
    const float fv = __fsub_rn(__int_as_float(0x4B400000 + v), S8_MAGIC);
    const float t = fminf(fmaxf(__fmul_rn(fv, f_a), -127.0f), 127.0f);
    return (unsigned)__float_as_int(__fadd_rn(t, S8_MAGIC));
}

/* wino_int8_requantize: fmaf((float)y, scale, bias) clamped to [lo, hi] (|lo|, |hi| <= 255),
 * rounded by the addition above. */
static __device__ __forceinline__ int s8_requantize(int y, float scale, float bias, float lo,
                                                    float hi)
{
    const float r = fminf(fmaxf(fmaf((float)y, scale, bias), lo), hi);
    return __float_as_int(__fadd_rn(r, S8_MAGIC)) - 0x4B400000;
}

/* Steps 1-2 of the INT8 pipeline for one window: Vq = quantize(B'^T d B'), exact in int32. */
template <int M>
static __device__ __forceinline__ void s8_input_tile(const int d[M + 2][M + 2], float f_a,
                                                     int8_t v[M + 2][M + 2])
{
    enum { A = M + 2 };
    int bdb[A][A];
    s8_transform_2d<M, false>(d, bdb);
#pragma unroll
    for (int i = 0; i < A; i++)
#pragma unroll
        for (int j = 0; j < A; j++)
            v[i][j] = (int8_t)s8_quantize_bits(bdb[i][j], f_a);
}

/* Steps 5-6 for one tile of one output channel: the 8-bit values of A'^T M A', requantized. */
template <int M>
static __device__ __forceinline__ void s8_output_tile(const int mm[M + 2][M + 2], float scale,
                                                      float bias, float lo, float hi,
                                                      int q[M][M])
{
    int ama[M][M];
    s8_transform_2d<M, true>(mm, ama);
#pragma unroll
    for (int i = 0; i < M; i++)
#pragma unroll
        for (int j = 0; j < M; j++)
            q[i][j] = s8_requantize(ama[i][j], scale, bias, lo, hi);
}

/* The 8-bit outputs of one tile, L consecutive channels from k0 packed per pixel; NHWC. */
template <int M, int L>
static __device__ __forceinline__ void s8_store_tile(void *y, const struct wino_cuda_shape &s,
                                                     int n, int th, int tw, int k0,
                                                     const unsigned out[M][M])
{
#pragma unroll
    for (int i = 0; i < M; i++)
#pragma unroll
        for (int j = 0; j < M; j++) {
            const int p = th * M + i, q = tw * M + j;
            if (p >= s.p || q >= s.q)
                continue;
            uint8_t *at = (uint8_t *)y + (((long long)n * s.p + p) * s.q + q) * s.k + k0;
            if (L == 4)
                *(unsigned *)at = out[i][j];
            else
                *at = (uint8_t)out[i][j];
        }
}

#endif
