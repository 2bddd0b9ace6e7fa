/* Layout conversion shared by the CPU paths, which compute in NHWC. */
#ifndef WINO_CPU_LAYOUT_F32_H
#define WINO_CPU_LAYOUT_F32_H

#include <stddef.h>

/* Outputs from this many bytes on are written by non-temporal stores: they would not stay in
 * the caches for the next layer, and ordinary stores read every line before writing it.
 * VGG-16 at batch 8 (25-103 MB of y) ran 1.03-1.4x faster on a Xeon with 2 MiB of L2 a core
 * (the least on conv3_2, whose arithmetic is the largest); 12.8 MB (conv4_1 at batch 8,
 * conv1_2 at batch 1) neither gained nor lost, and stays cached for whoever reads it next. */
#define WINO_F32_STREAM_BYTES ((size_t)16 << 20)

/* out[b][j][i] = in[b][i][j] for n matrices of rows x cols (NCHW <-> NHWC with rows = C,
 * cols = H W, or back), in 32 x 32 blocks over `threads` threads (src/cpu/thread_pool.h), on
 * AVX-512 as 16 x 16 blocks in registers, on AVX2 as 8 x 8; `stream`: out by non-temporal
 * stores where they fit (an out of WINO_F32_STREAM_BYTES or more that no one reads from cache:
 * the caller's y, or a copy read once from memory). */
void wino_f32_transpose_batched(const float *in, float *out, int n, size_t rows, size_t cols,
                                int threads, int stream);

/* dst[0 .. n) = src[0 .. n) with non-temporal stores where the ISA has them (dst 16-byte
 * aligned, n a multiple of 4): no read of dst's lines before they are written, and no room
 * taken in the caches. wino_f32_stream_fence orders such stores before the thread's later
 * ones (the end of a worker's share). */
int wino_f32_stream_ok(const float *dst, size_t n);
void wino_f32_stream_copy(float *dst, const float *src, size_t n);
void wino_f32_stream_fence(void);

#endif
