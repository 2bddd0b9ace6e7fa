/* Layout conversion shared by the CPU paths, which compute in NHWC. */
#ifndef WINO_CPU_LAYOUT_F32_H
#define WINO_CPU_LAYOUT_F32_H

#include <stddef.h>

/* out[b][j][i] = in[b][i][j] for n matrices of rows x cols (NCHW <-> NHWC with rows = C,
 * cols = H W, or back), in 32 x 32 blocks over `threads` threads (src/cpu/thread_pool.h). */
void wino_f32_transpose_batched(const float *in, float *out, int n, size_t rows, size_t cols,
                                int threads);

/* dst[0 .. n) = src[0 .. n) with non-temporal stores where the ISA has them (dst 16-byte
 * aligned, n a multiple of 4): no read of dst's lines before they are written, and no room
 * taken in the caches. wino_f32_stream_fence orders such stores before the thread's later
 * ones (the end of a worker's share). */
int wino_f32_stream_ok(const float *dst, size_t n);
void wino_f32_stream_copy(float *dst, const float *src, size_t n);
void wino_f32_stream_fence(void);

#endif
