#include "cpu/layout_f32.h"

#include "cpu/thread_pool.h"

struct transpose {
    const float *in;
    float *out;
    size_t rows, cols, bi, bj; /* bi x bj blocks of 32 x 32 per matrix */
};

static void transpose_blocks(void *arg, long begin, long end, int worker)
{
    const struct transpose *t = arg;
    (void)worker;
    for (long b = begin; b < end; b++) {
        const size_t img = (size_t)b / (t->bi * t->bj), i0 = (size_t)b / t->bj % t->bi * 32,
                     j0 = (size_t)b % t->bj * 32;
        const float *src = t->in + img * t->rows * t->cols;
        float *dst = t->out + img * t->rows * t->cols;
        for (size_t i = i0; i < i0 + 32 && i < t->rows; i++)
            for (size_t j = j0; j < j0 + 32 && j < t->cols; j++)
                dst[j * t->rows + i] = src[i * t->cols + j];
    }
}

void wino_f32_transpose_batched(const float *in, float *out, int n, size_t rows, size_t cols,
                                int threads)
{
    struct transpose t = {in, out, rows, cols, (rows + 31) / 32, (cols + 31) / 32};
    wino_parallel_for(threads, (long)((size_t)n * t.bi * t.bj), 16, transpose_blocks, &t);
}
