/* The Winograd transform kernels of the CUDA backend and their launchers (C++ callers only).
 * Layouts in device memory, for alpha^2 positions pos = i * alpha + j:
 *   V[pos][tile][cp]  transformed input tiles of a chunk, channels padded to cp with zeros
 *   U[pos][kp][cp]    transformed filters, both counts padded with zeros
 *   M[pos][tile][kp]  the chunk's GEMM results M[pos] = V[pos] U[pos]^T (float; int32 INT8)
 * so each position is one GEMM whose operands are contiguous along the reduction (C). */
#ifndef WINO_CUDA_WINOGRAD_KERNELS_H
#define WINO_CUDA_WINOGRAD_KERNELS_H

#include <cuda_runtime.h>


struct wino_cuda_shape {
    int n, c, h, w, k, p, q, pad_h, pad_w;
    int nhwc;                /* 1: x N*H*W*C, w K*R*S*C, y N*P*Q*K; 0: NCHW, K*C*R*S, N*K*P*Q */
    int m, r, alpha;         /* the tile */
    int tiles_h, tiles_w;    /* tiles per image: ceil(P / m), ceil(Q / m) */
    long long tiles;         /* n * tiles_h * tiles_w */
    int cp, kp;              /* C and K padded for the GEMMs */
    long long t0;            /* the chunk of tiles a launch covers: t0 .. t0 + tn - 1; V and M */
    int tn;                  /* hold that chunk only (tile t at row t - t0) */
};

/* The image n and the tile row th and column tw of tile t; tiles < 2^31 (checked at create), so
 * 32-bit divisions, which cost a fraction of 64-bit ones. */
static __device__ __forceinline__ void wino_cuda_tile_of(const struct wino_cuda_shape *s,
                                                         long long t, int *n, int *th, int *tw)
{
    const int i = (int)t, row = i / s->tiles_w;
    *tw = i - row * s->tiles_w;
    *n = row / s->tiles_h;
    *th = row - *n * s->tiles_h;
}

/* 1 when F(m, r) has generated CUDA transforms. */
int wino_cuda_has_tile(int m, int r);

/* FP32 (half == 0) or FP16 (half == 1) elements; M is float either way. */
cudaError_t wino_cuda_filter_transform(const struct wino_cuda_shape *s, int half, const void *w,
                                       void *u, cudaStream_t stream);
cudaError_t wino_cuda_input_transform(const struct wino_cuda_shape *s, int half, const void *x,
                                      void *v, cudaStream_t stream);
cudaError_t wino_cuda_output_transform(const struct wino_cuda_shape *s, int half, const float *m,
                                       const float *bias, int relu, void *y,
                                       cudaStream_t stream);

/* The INT8 pipeline's integer steps (docs/int8-winograd.md); NHWC. B'^T and A'^T are the
 * generated constants of the tile (src/cpu/generated/int8_tiles.h), the layer's scalars: */
struct wino_cuda_s8_consts {
    float f_a, lo, hi;
    int x_signed, y_signed;
};
/* Steps 1-2: Vq (int8) from x. */
cudaError_t wino_cuda_s8_input_transform(const struct wino_cuda_shape *s,
                                         const struct wino_cuda_s8_consts *k, const void *x,
                                         signed char *v, cudaStream_t stream);
/* Steps 5-7: y from the int32 M, with K requantization scales and biases. */
cudaError_t wino_cuda_s8_output_transform(const struct wino_cuda_shape *s,
                                          const struct wino_cuda_s8_consts *k, const int *m,
                                          const float *scale, const float *bias, void *y,
                                          cudaStream_t stream);

/* The fused kernels (winograd_fused_kernels.cu) for the tiles s->t0 .. s->t0 + s->tn - 1 with U
 * from create: v NULL, from x to y in one launch; else from v (the chunk's V, FP16 and INT8
 * only) to y, the GEMMs and the output transform in one launch. wino_cuda_has_fused: 1 when
 * F(m, r) has them (F(2x2,3x3), F(4x4,3x3)). U's channel padding cp must be a multiple of 4
 * (FP32), 8 (FP16), 16 (INT8). */
int wino_cuda_has_fused(int m, int r);
cudaError_t wino_cuda_fused(const struct wino_cuda_shape *s, int half, const void *u,
                            const void *v, const void *x, const float *bias, int relu, void *y,
                            cudaStream_t stream);
cudaError_t wino_cuda_s8_fused(const struct wino_cuda_shape *s,
                               const struct wino_cuda_s8_consts *k, const signed char *u,
                               const signed char *v, const void *x, const float *scale,
                               const float *bias, void *y, cudaStream_t stream);
/* Once per operator, at create and on its device: what the fused kernels of s need set before
 * they may be launched (their shared-memory limit), so that launches are all that runs do. */
cudaError_t wino_cuda_fused_setup(const struct wino_cuda_shape *s, int half);
cudaError_t wino_cuda_s8_fused_setup(const struct wino_cuda_shape *s,
                                     const struct wino_cuda_s8_consts *k);

/* Blocks of 256 threads covering count threads. */
static inline unsigned wino_cuda_blocks(long long count)
{
    return (unsigned)((count + 255) / 256);
}

#endif
