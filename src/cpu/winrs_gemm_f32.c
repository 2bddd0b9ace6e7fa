/* The GEMMs of WinRS: M[a] += U[a]^T V[a], both operands as the transforms write them (one row
 * of channels per unit), so neither is transposed nor packed: per unit l, MR consecutive
 * output channels of U are broadcast against a few vectors of input channels of V, into an
 * MR x NR block summed from zero in registers over the chunk's units and added to M once
 * (blocked summation: M's long sum takes one rounding per chunk, not per unit). Rows (K) and
 * columns (C) are padded to 16 by the caller, so blocks have no edges. AVX-512: panels of 64
 * columns in blocks of 6 rows x 4 zmm (24 accumulators; 4 or 2 rows at the end), the columns
 * past them in 8 rows x 2 zmm (16); AVX2 + FMA: 4 rows x 3 ymm (12), 4 x 2 for the last 16
 * columns; baseline: plain loops. Function-level target attributes, runtime dispatch by the
 * caller's isa. */
#include "cpu/winrs_f32.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#define TGT512 __attribute__((target("avx512f,fma")))
#define TGT256 __attribute__((target("avx2,fma")))

#define ROWS8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define ROWS6(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define ROWS4(X) X(0) X(1) X(2) X(3)

/* c[0:8][0:16 or 32] += (set: =) a^T b over the spans' units (two: the second 16 columns
 * too). */
TGT512 static void block_avx512(int spans, const struct wino_winrs_span *span, int two, int set,
                                const float *a, ptrdiff_t lda, const float *b, ptrdiff_t ldb,
                                float *c, ptrdiff_t ldc)
{
#define LOAD(i) __m512 c##i##a = _mm512_setzero_ps(), c##i##b = _mm512_setzero_ps();
#define STEP(i)                                                                                    \
    {                                                                                              \
        const __m512 ai = _mm512_set1_ps(al[i]);                                                   \
        c##i##a = _mm512_fmadd_ps(ai, b0, c##i##a);                                                \
        if (two)                                                                                   \
            c##i##b = _mm512_fmadd_ps(ai, b1, c##i##b);                                            \
    }
#define STORE(i)                                                                                   \
    if (!set) {                                                                                    \
        c##i##a = _mm512_add_ps(_mm512_loadu_ps(c + (i) * ldc), c##i##a);                          \
        if (two)                                                                                   \
            c##i##b = _mm512_add_ps(_mm512_loadu_ps(c + (i) * ldc + 16), c##i##b);                 \
    }                                                                                              \
    _mm512_storeu_ps(c + (i) * ldc, c##i##a);                                                      \
    if (two)                                                                                       \
        _mm512_storeu_ps(c + (i) * ldc + 16, c##i##b);
    ROWS8(LOAD)
    for (int s = 0; s < spans; s++)
        for (int l = 0; l < span[s].k; l++) {
            const float *al = a + (span[s].a + l) * lda, *bl = b + (span[s].b + l) * ldb;
            const __m512 b0 = _mm512_loadu_ps(bl);
            const __m512 b1 = two ? _mm512_loadu_ps(bl + 16) : b0;
            ROWS8(STEP)
        }
    ROWS8(STORE)
#undef LOAD
#undef STEP
#undef STORE
}

/* c[0:rows][0:64] += (set: =) a^T b over the spans' units, rows 6, 4 or 2: per unit one
 * broadcast of a feeds 4 FMAs where the 8 x 32 block's feeds 2, and 24 accumulators hide more
 * of the loads' latency (ResNet-18's backward-filter at batch 8 on a Xeon: conv2_x 1.07x,
 * conv3_x 1.06x, conv4_x 1.035x faster; a block of 4 x 64, 16 accumulators, had gained
 * nothing). */
TGT512 static inline __attribute__((always_inline)) void
block_wide(const int rows, int spans, const struct wino_winrs_span *span, int set,
           const float *a, ptrdiff_t lda, const float *b, ptrdiff_t ldb, float *c, ptrdiff_t ldc)
{
#define LOAD(i)                                                                                    \
    __m512 c##i##a = _mm512_setzero_ps(), c##i##b = _mm512_setzero_ps(),                         \
           c##i##c = _mm512_setzero_ps(), c##i##d = _mm512_setzero_ps();
#define STEP(i)                                                                                    \
    if ((i) < rows) {                                                                              \
        const __m512 ai = _mm512_set1_ps(al[i]);                                                   \
        c##i##a = _mm512_fmadd_ps(ai, b0, c##i##a);                                                \
        c##i##b = _mm512_fmadd_ps(ai, b1, c##i##b);                                                \
        c##i##c = _mm512_fmadd_ps(ai, b2, c##i##c);                                                \
        c##i##d = _mm512_fmadd_ps(ai, b3, c##i##d);                                                \
    }
#define PUT(i, x, at)                                                                              \
    if (!set)                                                                                      \
        x = _mm512_add_ps(_mm512_loadu_ps(c + (i) * ldc + (at)), x);                               \
    _mm512_storeu_ps(c + (i) * ldc + (at), x);
#define STORE(i)                                                                                   \
    if ((i) < rows) {                                                                              \
        PUT(i, c##i##a, 0)                                                                         \
        PUT(i, c##i##b, 16)                                                                        \
        PUT(i, c##i##c, 32)                                                                        \
        PUT(i, c##i##d, 48)                                                                        \
    }
    ROWS6(LOAD)
    for (int s = 0; s < spans; s++)
        for (int l = 0; l < span[s].k; l++) {
            const float *al = a + (span[s].a + l) * lda, *bl = b + (span[s].b + l) * ldb;
            const __m512 b0 = _mm512_loadu_ps(bl), b1 = _mm512_loadu_ps(bl + 16);
            const __m512 b2 = _mm512_loadu_ps(bl + 32), b3 = _mm512_loadu_ps(bl + 48);
            ROWS6(STEP)
        }
    ROWS6(STORE)
#undef LOAD
#undef STEP
#undef PUT
#undef STORE
}

/* block_wide with its rows fixed, so that each keeps its accumulators in registers. */
TGT512 static void block_wide6(int spans, const struct wino_winrs_span *span, int set,
                               const float *a, ptrdiff_t lda, const float *b, ptrdiff_t ldb,
                               float *c, ptrdiff_t ldc)
{
    block_wide(6, spans, span, set, a, lda, b, ldb, c, ldc);
}

TGT512 static void block_wide4(int spans, const struct wino_winrs_span *span, int set,
                               const float *a, ptrdiff_t lda, const float *b, ptrdiff_t ldb,
                               float *c, ptrdiff_t ldc)
{
    block_wide(4, spans, span, set, a, lda, b, ldb, c, ldc);
}

TGT512 static void block_wide2(int spans, const struct wino_winrs_span *span, int set,
                               const float *a, ptrdiff_t lda, const float *b, ptrdiff_t ldb,
                               float *c, ptrdiff_t ldc)
{
    block_wide(2, spans, span, set, a, lda, b, ldb, c, ldc);
}

/* c[0:4][0:24] += a^T b over the spans' units: 4 x 3 ymm give the 12 accumulators that keep
 * both FMA pipes of a Zen 3 core busy (1-2% faster in the WinRS GEMMs than 8, 4 x 2 ymm); with
 * THIRD 0, 4 x 2 ymm for the last 16 columns of a block. */
TGT256 static inline __attribute__((always_inline)) void
block_avx2(int spans, const struct wino_winrs_span *span, int third, const float *a,
           ptrdiff_t lda, const float *b, ptrdiff_t ldb, float *c, ptrdiff_t ldc)
{
#define LOAD(i)                                                                                    \
    __m256 c##i##a = _mm256_setzero_ps(), c##i##b = _mm256_setzero_ps(),                         \
           c##i##c = _mm256_setzero_ps();
#define STEP(i)                                                                                    \
    {                                                                                              \
        const __m256 ai = _mm256_broadcast_ss(al + i);                                             \
        c##i##a = _mm256_fmadd_ps(ai, b0, c##i##a);                                                \
        c##i##b = _mm256_fmadd_ps(ai, b1, c##i##b);                                                \
        if (third)                                                                                 \
            c##i##c = _mm256_fmadd_ps(ai, b2, c##i##c);                                            \
    }
#define STORE(i)                                                                                   \
    _mm256_storeu_ps(c + (i) * ldc, _mm256_add_ps(_mm256_loadu_ps(c + (i) * ldc), c##i##a));       \
    _mm256_storeu_ps(c + (i) * ldc + 8,                                                            \
                     _mm256_add_ps(_mm256_loadu_ps(c + (i) * ldc + 8), c##i##b));                 \
    if (third)                                                                                     \
        _mm256_storeu_ps(c + (i) * ldc + 16,                                                       \
                         _mm256_add_ps(_mm256_loadu_ps(c + (i) * ldc + 16), c##i##c));
    ROWS4(LOAD)
    for (int s = 0; s < spans; s++)
        for (int l = 0; l < span[s].k; l++) {
            const float *al = a + (span[s].a + l) * lda, *bl = b + (span[s].b + l) * ldb;
            const __m256 b0 = _mm256_loadu_ps(bl), b1 = _mm256_loadu_ps(bl + 8);
            const __m256 b2 = third ? _mm256_loadu_ps(bl + 16) : b0;
            ROWS4(STEP)
        }
    ROWS4(STORE)
#undef LOAD
#undef STEP
#undef STORE
}

/* c[0:4][0:24] or [0:16] += a^T b, with the test on THIRD hoisted out of the loop. */
TGT256 static void block_avx2_24(int spans, const struct wino_winrs_span *span, const float *a,
                                 ptrdiff_t lda, const float *b, ptrdiff_t ldb, float *c,
                                 ptrdiff_t ldc)
{
    block_avx2(spans, span, 1, a, lda, b, ldb, c, ldc);
}

TGT256 static void block_avx2_16(int spans, const struct wino_winrs_span *span, const float *a,
                                 ptrdiff_t lda, const float *b, ptrdiff_t ldb, float *c,
                                 ptrdiff_t ldc)
{
    block_avx2(spans, span, 0, a, lda, b, ldb, c, ldc);
}

/* The next `count` lines of next's rows into L2 from (*row, *line): each row's a_lines of a,
 * then its n / 16 of b; the place advances without a division (this runs between blocks). */
static void prefetch_lines(const struct wino_winrs_next *next, int a_lines, int n, long count,
                           long *row, int *line)
{
    const int per_row = a_lines + n / 16;
    for (; count > 0; count--) {
        const float *at = *line < a_lines ? next->a + *row * next->lda + 16 * *line
                                          : next->b + *row * next->ldb + 16 * (*line - a_lines);
        __builtin_prefetch(at, 0, 2);
        if (++*line == per_row)
            *line = 0, ++*row;
    }
}

#endif

void wino_f32_winrs_gemm(enum wino_isa isa, int m, int n, int spans,
                         const struct wino_winrs_span *span, const float *a, ptrdiff_t lda,
                         const float *b, ptrdiff_t ldb, float *c, ptrdiff_t ldc)
{
    wino_f32_winrs_gemm_streaming(isa, m, n, spans, span, a, lda, b, ldb, c, ldc, 0, NULL);
}

void wino_f32_winrs_gemm_streaming(enum wino_isa isa, int m, int n, int spans,
                                   const struct wino_winrs_span *span, const float *a,
                                   ptrdiff_t lda, const float *b, ptrdiff_t ldb, float *c,
                                   ptrdiff_t ldc, int set, const struct wino_winrs_next *next)
{
    if (set && isa != WINO_ISA_AVX512) /* the other ISAs add to zeros */
        for (int i = 0; i < m; i++)
            memset(c + (ptrdiff_t)i * ldc, 0, sizeof(float) * (size_t)n);
#if defined(__x86_64__) && defined(__GNUC__)
    if (isa == WINO_ISA_AVX512) {
        /* A burst of prefetches before the GEMM brought nothing in a microbenchmark; a share
         * after each block kept the products of ResNet-18's conv4_x fed from L2
         * (src/cpu/bwd_filter_2d_f32.c, STRIP). */
        const int wide = n / 64 * 64; /* columns in panels of 64 */
        const long blocks =
            (long)(wide / 64) * ((m + 5) / 6) + (long)((n - wide + 31) / 32) * ((m + 7) / 8);
        const int a_lines = next && next->a ? m / 16 : 0;
        const long lines = next ? (long)next->rows * (a_lines + n / 16) : 0;
        long block = 0, row = 0;
        int line = 0;
        for (int j = 0; j < n; j += j < wide ? 64 : 32)
            for (int i = 0; i < m; i += j < wide ? 6 : 8) {
                const float *ai = a + i, *bj = b + j;
                float *cij = c + i * ldc + j;
                if (j >= wide)
                    block_avx512(spans, span, n - j >= 32, set, ai, lda, bj, ldb, cij, ldc);
                else if (m - i >= 6)
                    block_wide6(spans, span, set, ai, lda, bj, ldb, cij, ldc);
                else if (m - i == 4) /* m is a multiple of 16: 4 or 2 rows are left */
                    block_wide4(spans, span, set, ai, lda, bj, ldb, cij, ldc);
                else
                    block_wide2(spans, span, set, ai, lda, bj, ldb, cij, ldc);
                block++;
                if (next)
                    prefetch_lines(next, a_lines, n,
                                   lines * block / blocks - lines * (block - 1) / blocks, &row,
                                   &line);
            }
        return;
    }
    if (isa == WINO_ISA_AVX2) {
        int j = 0;
        for (; n - j >= 24 && n - j != 32; j += 24) /* 64 = 24 + 24 + 16, 32 = 16 + 16 */
            for (int i = 0; i < m; i += 4)
                block_avx2_24(spans, span, a + i, lda, b + j, ldb, c + i * ldc + j, ldc);
        for (; j < n; j += 16)
            for (int i = 0; i < m; i += 4)
                block_avx2_16(spans, span, a + i, lda, b + j, ldb, c + i * ldc + j, ldc);
        return;
    }
#else
    (void)isa, (void)next;
#endif
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float sum = 0.0f;
            for (int s = 0; s < spans; s++)
                for (int l = 0; l < span[s].k; l++)
                    sum += a[(span[s].a + l) * lda + i] * b[(span[s].b + l) * ldb + j];
            c[i * ldc + j] += sum;
        }
}
