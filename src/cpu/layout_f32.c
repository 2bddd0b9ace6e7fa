#include "cpu/layout_f32.h"

#include <stdint.h>
#include <string.h>

#include "cpu/gemm_f32.h"
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
    int avx512, avx2, stream;
};

#if STREAMS && defined(__GNUC__)
#include "cpu/transpose16.h"
/* The 16 x 16 block at (i, j) of src into dst through registers, ni rows by nj columns of it
 * where the matrix's edges cut it (through masks; out's whole rows of a whole block by
 * non-temporal stores with `stream`, where they lie on 64-byte boundaries). */
__attribute__((target("avx512f"))) static void block16(const struct transpose *t,
                                                       const float *src, float *dst, size_t i,
                                                       size_t j, int ni, int nj)
{
    __m512 r[16];
    if (ni == 16 && nj == 16) { /* constant trip counts: r stays in registers */
        for (int k = 0; k < 16; k++)
            r[k] = _mm512_loadu_ps(src + (i + k) * t->cols + j);
        wino_transpose16(r);
        for (int k = 0; k < 16; k++) {
            float *o = dst + (j + k) * t->rows + i;
            if (t->stream && (uintptr_t)o % 64 == 0)
                _mm512_stream_ps(o, r[k]);
            else
                _mm512_storeu_ps(o, r[k]);
        }
        return;
    }
    const __mmask16 cols = (__mmask16)((1u << nj) - 1), rows = (__mmask16)((1u << ni) - 1);
    for (int k = 0; k < 16; k++)
        r[k] = k < ni ? _mm512_maskz_loadu_ps(cols, src + (i + k) * t->cols + j)
                      : _mm512_setzero_ps();
    wino_transpose16(r);
    for (int k = 0; k < nj; k++)
        _mm512_mask_storeu_ps(dst + (j + k) * t->rows + i, rows, r[k]);
}

/* The 32 x 32 block at (i0, j0) of src into dst, 16 x 16 at a time. */
__attribute__((target("avx512f"))) static void block_avx512(const struct transpose *t,
                                                            const float *src, float *dst,
                                                            size_t i0, size_t j0)
{
    const size_t i1 = i0 + 32 < t->rows ? i0 + 32 : t->rows;
    const size_t j1 = j0 + 32 < t->cols ? j0 + 32 : t->cols;
    for (size_t i = i0; i < i1; i += 16)
        for (size_t j = j0; j < j1; j += 16)
            block16(t, src, dst, i, j, i1 - i < 16 ? (int)(i1 - i) : 16,
                    j1 - j < 16 ? (int)(j1 - j) : 16);
}

/* The whole 8 x 8 block at (i, j) of src into dst through AVX registers (out's rows by
 * non-temporal stores with `stream`, where they lie on 32-byte boundaries). */
__attribute__((target("avx2"))) static void block8(const struct transpose *t, const float *src,
                                                   float *dst, size_t i, size_t j)
{
    __m256 r[8], u[8];
    for (int k = 0; k < 8; k++)
        r[k] = _mm256_loadu_ps(src + (i + k) * t->cols + j);
    for (int k = 0; k < 4; k++) {
        u[2 * k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
        u[2 * k + 1] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
    /* then r[4 g + c], 128-bit half l: column 4 l + c of rows 4 g .. 4 g + 3 */
    for (int g = 0; g < 2; g++)
        for (int h = 0; h < 2; h++) {
            r[4 * g + 2 * h] = _mm256_shuffle_ps(u[4 * g + h], u[4 * g + h + 2], 0x44);
            r[4 * g + 2 * h + 1] = _mm256_shuffle_ps(u[4 * g + h], u[4 * g + h + 2], 0xee);
        }
    for (int c = 0; c < 4; c++) {
        u[c] = _mm256_permute2f128_ps(r[c], r[4 + c], 0x20);
        u[4 + c] = _mm256_permute2f128_ps(r[c], r[4 + c], 0x31);
    }
    for (int k = 0; k < 8; k++) {
        float *o = dst + (j + k) * t->rows + i;
        if (t->stream && (uintptr_t)o % 32 == 0)
            _mm256_stream_ps(o, u[k]);
        else
            _mm256_storeu_ps(o, u[k]);
    }
}

/* The 32 x 32 block at (i0, j0) of src into dst, whole 8 x 8 blocks in registers and the
 * matrix's ragged edges element by element. */
__attribute__((target("avx2"))) static void block_avx2(const struct transpose *t,
                                                       const float *src, float *dst, size_t i0,
                                                       size_t j0)
{
    const size_t i1 = i0 + 32 < t->rows ? i0 + 32 : t->rows;
    const size_t j1 = j0 + 32 < t->cols ? j0 + 32 : t->cols;
    const size_t i8 = i0 + (i1 - i0) / 8 * 8, j8 = j0 + (j1 - j0) / 8 * 8;
    for (size_t i = i0; i < i8; i += 8)
        for (size_t j = j0; j < j8; j += 8)
            block8(t, src, dst, i, j);
    for (size_t i = i0; i < i1; i++)
        for (size_t j = i < i8 ? j8 : j0; j < j1; j++)
            dst[j * t->rows + i] = src[i * t->cols + j];
}
#endif

static void transpose_blocks(void *arg, long begin, long end, int worker)
{
    const struct transpose *t = arg;
    (void)worker;
    for (long b = begin; b < end; b++) {
        const size_t img = (size_t)b / (t->bi * t->bj), i0 = (size_t)b / t->bj % t->bi * 32,
                     j0 = (size_t)b % t->bj * 32;
        const float *src = t->in + img * t->rows * t->cols;
        float *dst = t->out + img * t->rows * t->cols;
#if STREAMS && defined(__GNUC__)
        if (t->avx512) {
            block_avx512(t, src, dst, i0, j0);
            continue;
        }
        if (t->avx2) {
            block_avx2(t, src, dst, i0, j0);
            continue;
        }
#endif
        for (size_t i = i0; i < i0 + 32 && i < t->rows; i++)
            for (size_t j = j0; j < j0 + 32 && j < t->cols; j++)
                dst[j * t->rows + i] = src[i * t->cols + j];
    }
    if (t->stream)
        wino_f32_stream_fence();
}

void wino_f32_transpose_batched(const float *in, float *out, int n, size_t rows, size_t cols,
                                int threads, int stream)
{
    struct transpose t = {in, out, rows, cols, (rows + 31) / 32, (cols + 31) / 32,
                          wino_cpu_isa() >= WINO_ISA_AVX512, wino_cpu_isa() >= WINO_ISA_AVX2,
                          stream};
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
