/* Layout conversion shared by the CPU paths, which compute in NHWC. */
#ifndef WINO_CPU_LAYOUT_F32_H
#define WINO_CPU_LAYOUT_F32_H

#include <stddef.h>

/* out[b][j][i] = in[b][i][j] for n matrices of rows x cols (NCHW <-> NHWC with rows = C,
 * cols = H W, or back), in 32 x 32 blocks over `threads` threads (src/cpu/thread_pool.h). */
void wino_f32_transpose_batched(const float *in, float *out, int n, size_t rows, size_t cols,
                                int threads);

#endif
