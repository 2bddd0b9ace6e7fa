/* The integer steps of the INT8 Winograd pipeline (docs/int8-winograd.md) on the GPU, NHWC: one
 * thread per (tile, channels) for the input transform and per (tile, output channels) for the
 * output transform. Integer arithmetic in int32 is exact (the layer's bounds were checked at
 * create), and the float steps are the spec's own functions, so the bits equal the CPU's. */
#include "cuda/winograd_tile_io.cuh"

/* L consecutive channels per thread (1, or 4 when C or K is a multiple of 4): 4-byte loads and
 * stores of the int8 tensors instead of single bytes; the lanes are transformed one by one. */

template <int M, int A, int L>
__global__ void s8_input_transform(const void *x, int8_t *v, struct wino_cuda_shape s,
                                   struct wino_cuda_s8_consts k)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int groups = s.cp / L;
    if (idx >= (long long)s.tn * groups)
        return;
    const int c0 = (int)idx % groups * L, tl = (int)idx / groups; /* idx < tn * cp < 2^31 */
    const long long t = s.t0 + tl, plane = (long long)s.tn * s.cp;
    int n, th, tw;
    wino_cuda_tile_of(&s, t, &n, &th, &tw);
    const int h0 = th * M - s.pad_h, w0 = tw * M - s.pad_w;
    unsigned word[A][A], out[A][A]; /* L bytes of the window and of V, packed */
#pragma unroll
    for (int i = 0; i < A; i++)
#pragma unroll
        for (int j = 0; j < A; j++) {
            const int h = h0 + i, w = w0 + j;
            const uint8_t *at = (const uint8_t *)x + (((long long)n * s.h + h) * s.w + w) * s.c + c0;
            word[i][j] = c0 >= s.c || h < 0 || h >= s.h || w < 0 || w >= s.w ? 0u
                         : L == 4 ? *(const unsigned *)at
                                  : *at;
            out[i][j] = 0u;
        }
#pragma unroll
    for (int l = 0; l < L; l++) {
        int d[A][A];
        int8_t vq[A][A];
#pragma unroll
        for (int i = 0; i < A; i++)
#pragma unroll
            for (int j = 0; j < A; j++) {
                const unsigned byte = word[i][j] >> (8 * l) & 0xffu;
                d[i][j] = k.x_signed ? (int)(int8_t)byte : (int)byte;
            }
        s8_input_tile<M>(d, k.f_a, vq);
#pragma unroll
        for (int i = 0; i < A; i++)
#pragma unroll
            for (int j = 0; j < A; j++)
                out[i][j] |= (unsigned)(uint8_t)vq[i][j] << (8 * l);
    }
#pragma unroll
    for (int i = 0; i < A; i++)
#pragma unroll
        for (int j = 0; j < A; j++) {
            int8_t *at = v + (i * A + j) * plane + tl * s.cp + c0;
            if (L == 4)
                *(unsigned *)at = out[i][j];
            else
                *at = (int8_t)out[i][j];
        }
}

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

#define WINO_S8_TILES(X) X(2, 4) X(4, 6) X(6, 8)

cudaError_t wino_cuda_s8_input_transform(const struct wino_cuda_shape *s,
                                         const struct wino_cuda_s8_consts *k, const void *x,
                                         signed char *v, cudaStream_t stream)
{
    /* 4 lanes pay up to F(2,3) (7-25% faster on an H100); at F(4,3) they take 155 registers
     * and lose more occupancy than the wider accesses gain (about 10% slower) */
    const int four = s->c % 4 == 0 && s->alpha <= 4;
    const unsigned blocks = wino_cuda_blocks((long long)s->tn * s->cp / (four ? 4 : 1));
#define WINO_LAUNCH(tm, ta)                                                                    \
    if (s->m == tm) {                                                                          \
        if (four)                                                                              \
            s8_input_transform<tm, ta, 4><<<blocks, 256, 0, stream>>>(x, (int8_t *)v, *s, *k); \
        else                                                                                   \
            s8_input_transform<tm, ta, 1><<<blocks, 256, 0, stream>>>(x, (int8_t *)v, *s, *k); \
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
