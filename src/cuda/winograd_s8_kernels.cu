/* The integer steps of the INT8 Winograd pipeline (docs/int8-winograd.md) on the GPU, NHWC: one
 * thread per (tile, channels) for the input transform and per (tile, output channels) for the
 * output transform. Integer arithmetic in int32 is exact (the layer's bounds were checked at
 * create), and the float steps give the spec's functions' results (winograd_tile_io.cuh), so
 * the bits equal the CPU's. */
#include "cuda/winograd_tile_io.cuh"

/* One channel per thread: any C, and F(6, 3). */
template <int M, int A>
__global__ void s8_input_transform(const void *x, int8_t *v, struct wino_cuda_shape s,
                                   struct wino_cuda_s8_consts k)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)s.tn * s.cp)
        return;
    const int c = (int)idx % s.cp, tl = (int)idx / s.cp; /* idx < tn * cp < 2^31 */
    const long long plane = (long long)s.tn * s.cp;
    int n, th, tw;
    wino_cuda_tile_of(&s, s.t0 + tl, &n, &th, &tw);
    const int h0 = th * M - s.pad_h, w0 = tw * M - s.pad_w;
    int d[A][A];
    int8_t vq[A][A];
#pragma unroll
    for (int i = 0; i < A; i++)
#pragma unroll
        for (int j = 0; j < A; j++) {
            const int h = h0 + i, w = w0 + j;
            const uint8_t b = c >= s.c || h < 0 || h >= s.h || w < 0 || w >= s.w
                                  ? 0
                                  : ((const uint8_t *)x)[(((long long)n * s.h + h) * s.w + w) *
                                                             s.c + c];
            d[i][j] = k.x_signed ? (int)(int8_t)b : (int)b;
        }
    s8_input_tile<M>(d, k.f_a, vq);
#pragma unroll
    for (int i = 0; i < A; i++)
#pragma unroll
        for (int j = 0; j < A; j++)
            v[(i * A + j) * plane + tl * s.cp + c] = vq[i][j];
}

/* L consecutive output channels per thread (1, or 4 when K is a multiple of 4): 4-byte stores of
 * the int8 output instead of single bytes; the lanes are transformed one by one. */
template <int M, int A, int L>
__global__ void s8_output_transform(const int32_t *mt, const float *scale, const float *bias,
                                    void *y, struct wino_cuda_shape s, struct wino_cuda_s8_consts k)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int groups = s.k / L;
    if (idx >= (long long)s.tn * groups)
        return;
    const int k0 = (int)idx % groups * L, tl = (int)idx / groups; /* idx < tn * kp < 2^31 */
    const long long t = s.t0 + tl, plane = (long long)s.tn * s.kp;
    int n, th, tw;
    wino_cuda_tile_of(&s, t, &n, &th, &tw);
    unsigned out[M][M] = {}; /* L output bytes per pixel, packed */
#pragma unroll
    for (int l = 0; l < L; l++) {
        int mm[A][A], q[M][M];
#pragma unroll
        for (int i = 0; i < A; i++)
#pragma unroll
            for (int j = 0; j < A; j++)
                mm[i][j] = mt[(i * A + j) * plane + tl * s.kp + k0 + l];
        s8_output_tile<M>(mm, scale[k0 + l], bias[k0 + l], k.lo, k.hi, q);
#pragma unroll
        for (int i = 0; i < M; i++)
#pragma unroll
            for (int j = 0; j < M; j++) /* int8 or uint8: the same byte */
                out[i][j] |= (unsigned)(uint8_t)q[i][j] << (8 * l);
    }
    s8_store_tile<M, L>(y, s, n, th, tw, k0, out);
}

/* ---- F(2, 3) and F(4, 3) with four channels per thread, two per 32-bit register ----
 * The integer transform is linear, so two channels a (low) and b (high) travel as one int32
 * a + 65536 b through it: the products and sums with B'^T's constants act on both at once,
 * modulo 2^32, and the result splits back exactly while each lane's final value is within
 * +-32767. B'^T's rows sum to at most 2 (F(2, 3)) and 10 (F(4, 3)) in absolute value, so
 * |B'^T d B'| <= 100 * 255 = 25500 there (F(6, 3): 50^2 * 255, too wide). The quantization
 * (s8_quantize_bits) needs no conversion instruction, and four channels share each 4-byte load
 * and store. */

/* Two 8-bit channels (bytes b and b + 1 of word) as one packed int32 lo + 65536 hi. */
template <typename X>
static __device__ __forceinline__ int s8_pack_pair(unsigned word, int b)
{
    if ((X)-1 > 0) /* uint8: the two bytes into the low bytes of the two halfwords */
        return (int)__byte_perm(word, 0u, b ? 0x4342 : 0x4140);
    return (int)(X)(word >> (16 * b)) + 65536 * (int)(X)(word >> (16 * b + 8));
}

template <int M, typename X>
__global__ void __launch_bounds__(256)
    s8_input_transform_pairs(const void *x, int8_t *v, struct wino_cuda_shape s, float f_a)
{
    enum { A = M + 2 };
    const int idx = blockIdx.x * blockDim.x + threadIdx.x, groups = s.cp / 4;
    if (idx >= s.tn * groups) /* tn * cp < 2^31 (plan_workspace) */
        return;
    const int c0 = idx % groups * 4, tl = idx / groups;
    int n, th, tw;
    wino_cuda_tile_of(&s, s.t0 + tl, &n, &th, &tw);
    const int h0 = th * M - s.pad_h, w0 = tw * M - s.pad_w;
    const uint8_t *img = (const uint8_t *)x + (long long)n * s.h * s.w * s.c + c0;
    int p0[A][A], p1[A][A]; /* channels c0, c0 + 1 and c0 + 2, c0 + 3, packed */
#pragma unroll
    for (int i = 0; i < A; i++) {
        const int h = h0 + i, row_ok = c0 < s.c && h >= 0 && h < s.h;
        const uint8_t *row = img + (long long)h * s.w * s.c;
#pragma unroll
        for (int j = 0; j < A; j++) {
            const int w = w0 + j;
            const unsigned word =
                row_ok && w >= 0 && w < s.w ? *(const unsigned *)(row + (long long)w * s.c) : 0u;
            p0[i][j] = s8_pack_pair<X>(word, 0);
            p1[i][j] = s8_pack_pair<X>(word, 1);
        }
    }
    int b0[A][A], b1[A][A]; /* B'^T of the windows; each row's B' as it is quantized */
    s8_columns<M, false, A>(p0, b0);
    s8_columns<M, false, A>(p1, b1);
    const long long plane = (long long)s.tn * s.cp;
    int8_t *out = v + (long long)tl * s.cp + c0;
#pragma unroll
    for (int i = 0; i < A; i++) {
        int r0[A], r1[A]; /* row i of B'^T d B' */
        s8_apply<M, false>(b0[i], r0);
        s8_apply<M, false>(b1[i], r1);
#pragma unroll
        for (int j = 0; j < A; j++) {
            /* lo = the low halfword sign-extended; hi = (packed + 2^15) >> 16 */
            const unsigned q0 = s8_quantize_bits((int)(short)r0[j], f_a);
            const unsigned q1 = s8_quantize_bits((r0[j] + 0x8000) >> 16, f_a);
            const unsigned q2 = s8_quantize_bits((int)(short)r1[j], f_a);
            const unsigned q3 = s8_quantize_bits((r1[j] + 0x8000) >> 16, f_a);
            *(unsigned *)(out + (i * A + j) * plane) =
                __byte_perm(__byte_perm(q0, q1, 0x40), __byte_perm(q2, q3, 0x40), 0x5410);
        }
    }
}

#define WINO_S8_TILES(X) X(2, 4) X(4, 6) X(6, 8)

cudaError_t wino_cuda_s8_input_transform(const struct wino_cuda_shape *s,
                                         const struct wino_cuda_s8_consts *k, const void *x,
                                         signed char *v, cudaStream_t stream)
{
    if (s->c % 4 == 0 && s->m <= 4 && (uintptr_t)x % 4 == 0) { /* four channels, in pairs */
        const unsigned blocks = wino_cuda_blocks((long long)s->tn * s->cp / 4);
#define WINO_LAUNCH(tm)                                                                        \
        if (s->m == tm) {                                                                      \
            if (k->x_signed)                                                                   \
                s8_input_transform_pairs<tm, int8_t>                                           \
                    <<<blocks, 256, 0, stream>>>(x, (int8_t *)v, *s, k->f_a);                  \
            else                                                                               \
                s8_input_transform_pairs<tm, uint8_t>                                          \
                    <<<blocks, 256, 0, stream>>>(x, (int8_t *)v, *s, k->f_a);                  \
            return cudaGetLastError();                                                         \
        }
        WINO_LAUNCH(2)
        WINO_LAUNCH(4)
#undef WINO_LAUNCH
    }
    /* one channel per thread: C not a multiple of 4, x not 4-byte aligned, or F(6, 3) */
    const unsigned blocks = wino_cuda_blocks((long long)s->tn * s->cp);
#define WINO_LAUNCH(tm, ta)                                                                    \
    if (s->m == tm) {                                                                          \
        s8_input_transform<tm, ta><<<blocks, 256, 0, stream>>>(x, (int8_t *)v, *s, *k);        \
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
    const int four = s->k % 4 == 0 && s->alpha <= 4;
    const unsigned blocks = wino_cuda_blocks((long long)s->tn * s->k / (four ? 4 : 1));
#define WINO_LAUNCH(tm, ta)                                                                    \
    if (s->m == tm) {                                                                          \
        if (four)                                                                              \
            s8_output_transform<tm, ta, 4><<<blocks, 256, 0, stream>>>((const int32_t *)m,     \
                                                                       scale, bias, y, *s, *k); \
        else                                                                                   \
            s8_output_transform<tm, ta, 1><<<blocks, 256, 0, stream>>>((const int32_t *)m,     \
                                                                       scale, bias, y, *s, *k); \
        return cudaGetLastError();                                                             \
    }
    WINO_S8_TILES(WINO_LAUNCH)
#undef WINO_LAUNCH
    return cudaErrorInvalidValue;
}
