#include "cpu/layout_f32.h"

void wino_f32_transpose_batched(const float *in, float *out, int n, size_t rows, size_t cols,
                                int threads)
{
    const size_t bi = (rows + 31) / 32, bj = (cols + 31) / 32;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long b = 0; b < (long)((size_t)n * bi * bj); b++) {
        const size_t img = (size_t)b / (bi * bj), i0 = (size_t)b / bj % bi * 32,
                     j0 = (size_t)b % bj * 32;
        const float *src = in + img * rows * cols;
        float *dst = out + img * rows * cols;
        for (size_t i = i0; i < i0 + 32 && i < rows; i++)
            for (size_t j = j0; j < j0 + 32 && j < cols; j++)
                dst[j * rows + i] = src[i * cols + j];
    }
}
