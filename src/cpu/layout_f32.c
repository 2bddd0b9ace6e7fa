#include "cpu/layout_f32.h"

#include <stdint.h>
#include <string.h>

#include "cpu/thread_pool.h"

#if defined(__x86_64__) && defined(__SSE2__)
#include <immintrin.h>
#define STREAMS 1
#else
#define STREAMS 0
#endif

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

int wino_f32_stream_ok(const float *dst, size_t n)
{
    return STREAMS && (uintptr_t)dst % 16 == 0 && n % 4 == 0;
}

void wino_f32_stream_copy(float *dst, const float *src, size_t n)
{
#if STREAMS
    for (size_t i = 0; i < n; i += 4)
        _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
#else
    memcpy(dst, src, n * sizeof(float));
#endif
}

void wino_f32_stream_fence(void)
{
#if STREAMS
    _mm_sfence();
#endif
}
