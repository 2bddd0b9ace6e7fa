/* FP32 GEMM, AVX2 + FMA: the packed-panel design of gemm_f32_avx512.c with a 6x16 microkernel
 * (12 ymm accumulators, two ymm of B per k step, A broadcast from a packed [p][6] micro-panel).
 * Loops: jc over n (NC), pc over k (about KC, split evenly; B block packed in 16-column panels,
 * L2), ir over m (MR = 6 rows, A micro-panel packed, L1), jr over the panels (microkernel).
 * Edges: zero padding in the packed operands; C columns past n masked (vmaskmovps).
 * Compiled with function-level target attributes: the library needs no global -m flags. */
#include "cpu/gemm_f32.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>
#include <stdint.h>

#define TGT __attribute__((target("avx2,fma")))

enum { MR = 6, NR = 16, KC = 256, NC = 1024 };

static size_t round64(size_t x)
{
    return (x + 63) & ~(size_t)63;
}

static int kc_step(int k)
{
    int nb = (k + KC - 1) / KC;
    if (nb < 1)
        nb = 1;
    return (k + nb - 1) / nb;
}

static int npad(int n)
{
    return (n + NR - 1) / NR * NR;
}

/* Lanes 0..w-1 set (w clamped to 0..8). */
TGT static __m256i mask8(int w)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    if (w < 0)
        w = 0;
    if (w > 8)
        w = 8;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(w), idx);
}

/* C[0:mr, 0:16] (+)= A_panel (kc x 6) * B_panel (kc x 16); full: all 16 columns valid. */
TGT static void kernel_6x16(int kc, const float *restrict a, const float *restrict b, float *c,
                            ptrdiff_t ldc, int mr, int full, __m256i m0, __m256i m1, int acc)
{
#define WINO_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define DECL(i) __m256 c##i##a = _mm256_setzero_ps(), c##i##b = _mm256_setzero_ps();
#define STEP(i)                                                                                    \
    {                                                                                              \
        const __m256 ai = _mm256_broadcast_ss(a + i);                                              \
        c##i##a = _mm256_fmadd_ps(ai, b0, c##i##a);                                                \
        c##i##b = _mm256_fmadd_ps(ai, b1, c##i##b);                                                \
    }
#define STORE(i)                                                                                   \
    if (i < mr) {                                                                                  \
        float *ci = c + (ptrdiff_t)(i) * ldc;                                                      \
        if (full) {                                                                                \
            if (acc) {                                                                             \
                c##i##a = _mm256_add_ps(c##i##a, _mm256_loadu_ps(ci));                             \
                c##i##b = _mm256_add_ps(c##i##b, _mm256_loadu_ps(ci + 8));                         \
            }                                                                                      \
            _mm256_storeu_ps(ci, c##i##a);                                                         \
            _mm256_storeu_ps(ci + 8, c##i##b);                                                     \
        } else {                                                                                   \
            if (acc) {                                                                             \
                c##i##a = _mm256_add_ps(c##i##a, _mm256_maskload_ps(ci, m0));                      \
                c##i##b = _mm256_add_ps(c##i##b, _mm256_maskload_ps(ci + 8, m1));                  \
            }                                                                                      \
            _mm256_maskstore_ps(ci, m0, c##i##a);                                                  \
            _mm256_maskstore_ps(ci + 8, m1, c##i##b);                                              \
        }                                                                                          \
    }
    int p;
    WINO_ROWS(DECL)
    for (p = 0; p < kc; p++) {
        const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
        WINO_ROWS(STEP)
        a += MR;
        b += NR;
    }
    WINO_ROWS(STORE)
#undef DECL
#undef STEP
#undef STORE
#undef WINO_ROWS
}

/* kc x nc block of B -> 16-column panels, each kc x 16, zero padded. */
TGT static void pack_b_block(int kc, int nc, const float *b, ptrdiff_t ldb, float *dst)
{
    int j0, p;
    for (j0 = 0; j0 < nc; j0 += NR) {
        const int w = nc - j0 < NR ? nc - j0 : NR;
        const float *src = b + j0;
        if (w == NR) {
            for (p = 0; p < kc; p++) {
                _mm256_store_ps(dst, _mm256_loadu_ps(src));
                _mm256_store_ps(dst + 8, _mm256_loadu_ps(src + 8));
                src += ldb;
                dst += NR;
            }
        } else {
            const __m256i m0 = mask8(w), m1 = mask8(w - 8);
            for (p = 0; p < kc; p++) {
                _mm256_store_ps(dst, _mm256_maskload_ps(src, m0));
                _mm256_store_ps(dst + 8, _mm256_maskload_ps(src + 8, m1));
                src += ldb;
                dst += NR;
            }
        }
    }
}

/* mr x kc of A -> [p][MR], rows past mr zero. */
static void pack_a_panel(int mr, int kc, const float *a, ptrdiff_t lda, float *dst)
{
    int i, p;
    for (p = 0; p < kc; p++) {
        for (i = 0; i < mr; i++)
            dst[p * MR + i] = a[(ptrdiff_t)i * lda + p];
        for (; i < MR; i++)
            dst[p * MR + i] = 0.0f;
    }
}

TGT static void macro(int m, int nc, int kc, const float *a, ptrdiff_t lda, const float *bp,
                      float *c, ptrdiff_t ldc, int acc, float *ap)
{
    int i0, j0;
    const __m256i ones = _mm256_set1_epi32(-1);
    for (i0 = 0; i0 < m; i0 += MR) {
        const int mr = m - i0 < MR ? m - i0 : MR;
        float *ci = c + (ptrdiff_t)i0 * ldc;
        pack_a_panel(mr, kc, a + (ptrdiff_t)i0 * lda, lda, ap);
        for (j0 = 0; j0 + NR <= nc; j0 += NR)
            kernel_6x16(kc, ap, bp + (size_t)j0 * (size_t)kc, ci + j0, ldc, mr, 1, ones, ones,
                        acc);
        if (j0 < nc)
            kernel_6x16(kc, ap, bp + (size_t)j0 * (size_t)kc, ci + j0, ldc, mr, 0,
                        mask8(nc - j0), mask8(nc - j0 - 8), acc);
    }
}

static void zero_c(int m, int n, float *c, ptrdiff_t ldc)
{
    int i, j;
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++)
            c[(ptrdiff_t)i * ldc + j] = 0.0f;
}

size_t wino_f32_gemm_scratch_bytes__avx2(int m, int n, int k)
{
    int kc, nc;
    (void)m;
    if (k <= 0 || n <= 0)
        return 0;
    kc = kc_step(k);
    nc = n < NC ? n : NC;
    return round64((size_t)kc * (size_t)npad(nc) * sizeof(float)) +
           round64((size_t)MR * (size_t)kc * sizeof(float));
}

TGT void wino_f32_gemm__avx2(int m, int n, int k, const float *a, ptrdiff_t lda, const float *b,
                             ptrdiff_t ldb, float *c, ptrdiff_t ldc, int accumulate,
                             void *scratch)
{
    int jc, pc, kstep, ncmax;
    float *bp, *ap;
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        if (!accumulate)
            zero_c(m, n, c, ldc);
        return;
    }
    kstep = kc_step(k);
    ncmax = n < NC ? n : NC;
    bp = (float *)scratch;
    ap = (float *)((char *)scratch + round64((size_t)kstep * (size_t)npad(ncmax) * sizeof(float)));
    for (jc = 0; jc < n; jc += NC) {
        const int nc = n - jc < NC ? n - jc : NC;
        for (pc = 0; pc < k; pc += kstep) {
            const int kc = k - pc < kstep ? k - pc : kstep;
            pack_b_block(kc, nc, b + (ptrdiff_t)pc * ldb + jc, ldb, bp);
            macro(m, nc, kc, a + pc, lda, bp, c + jc, ldc, accumulate || pc > 0, ap);
        }
    }
}

/* Packed layout: as in the AVX-512 file with 16-column panels. */
size_t wino_f32_gemm_packed_b_bytes__avx2(int k, int n)
{
    if (k <= 0 || n <= 0)
        return 0;
    return (size_t)k * (size_t)npad(n) * sizeof(float);
}

TGT void wino_f32_gemm_pack_b__avx2(int k, int n, const float *b, ptrdiff_t ldb, void *packed)
{
    int pc, kstep;
    const size_t np = (size_t)npad(n);
    if (k <= 0 || n <= 0)
        return;
    kstep = kc_step(k);
    for (pc = 0; pc < k; pc += kstep) {
        const int kc = k - pc < kstep ? k - pc : kstep;
        pack_b_block(kc, n, b + (ptrdiff_t)pc * ldb, ldb, (float *)packed + (size_t)pc * np);
    }
}

size_t wino_f32_gemm_packed_scratch_bytes__avx2(int m, int n, int k)
{
    (void)m;
    (void)n;
    if (k <= 0)
        return 0;
    return round64((size_t)MR * (size_t)kc_step(k) * sizeof(float));
}

TGT void wino_f32_gemm_packed__avx2(int m, int n, int k, const float *a, ptrdiff_t lda,
                                    const void *packed_b, float *c, ptrdiff_t ldc, int accumulate,
                                    void *scratch)
{
    int jc, pc, kstep;
    const size_t np = (size_t)npad(n);
    const float *bpk = (const float *)packed_b;
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        if (!accumulate)
            zero_c(m, n, c, ldc);
        return;
    }
    kstep = kc_step(k);
    for (pc = 0; pc < k; pc += kstep) {
        const int kc = k - pc < kstep ? k - pc : kstep;
        const float *blk = bpk + (size_t)pc * np;
        for (jc = 0; jc < n; jc += NC) {
            const int nc = n - jc < NC ? n - jc : NC;
            macro(m, nc, kc, a + pc, lda, blk + (size_t)jc * (size_t)kc, c + jc, ldc,
                  accumulate || pc > 0, (float *)scratch);
        }
    }
}

#else /* not x86-64 GCC/Clang: never dispatched to (wino_cpu_isa says scalar) */

size_t wino_f32_gemm_scratch_bytes__avx2(int m, int n, int k)
{
    (void)m, (void)n, (void)k;
    return 0;
}
void wino_f32_gemm__avx2(int m, int n, int k, const float *a, ptrdiff_t lda, const float *b,
                         ptrdiff_t ldb, float *c, ptrdiff_t ldc, int accumulate, void *scratch)
{
    (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc;
    (void)accumulate, (void)scratch;
}
size_t wino_f32_gemm_packed_b_bytes__avx2(int k, int n)
{
    (void)k, (void)n;
    return 0;
}
void wino_f32_gemm_pack_b__avx2(int k, int n, const float *b, ptrdiff_t ldb, void *packed)
{
    (void)k, (void)n, (void)b, (void)ldb, (void)packed;
}
size_t wino_f32_gemm_packed_scratch_bytes__avx2(int m, int n, int k)
{
    (void)m, (void)n, (void)k;
    return 0;
}
void wino_f32_gemm_packed__avx2(int m, int n, int k, const float *a, ptrdiff_t lda,
                                const void *packed_b, float *c, ptrdiff_t ldc, int accumulate,
                                void *scratch)
{
    (void)m, (void)n, (void)k, (void)a, (void)lda, (void)packed_b, (void)c, (void)ldc;
    (void)accumulate, (void)scratch;
}

#endif
