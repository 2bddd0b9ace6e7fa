/* FP32 GEMM, AVX2 + FMA: the packed-panel design of gemm_f32_avx512.c with a 6x16 microkernel
 * (12 ymm accumulators, two ymm of B per k step, A broadcast straight from its rows).
 * Loops: jc over n (NC), pc over k (about KC, split evenly; B block packed in 16-column panels,
 * L2), ir over m (nearly equal micro-panels of at most MR = 6 rows, L1), jr over the panels
 * (the microkernel of the micro-panel's row count).
 * Edges: zero padding in the packed B; C columns past n masked (vmaskmovps).
 * Compiled with function-level target attributes: the library needs no global -m flags. */
#include "cpu/gemm_f32.h"

#define WINO_GEMM_NAME(f) f##__avx2

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>
#include <stdint.h>

#define TGT __attribute__((target("avx2,fma")))

enum { MR = 6, NR = 16, KC = 256, NC = 1024 };

#include "cpu/gemm_f32_blocks.h"

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

/* C[0:rows, 0:16] (+)= A (rows x kc, row stride lda) * B_panel (kc x 16), with rows a
 * compile-time constant in each instance (1..6), so a short micro-panel costs only its own FMAs;
 * full: all 16 columns valid. */
#define WINO_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define DECL(i) __m256 c##i##a = _mm256_setzero_ps(), c##i##b = _mm256_setzero_ps();
#define STEP(i)                                                                                    \
    if ((i) < rows) {                                                                              \
        const __m256 ai = _mm256_broadcast_ss(a + (i) * lda);                                     \
        c##i##a = _mm256_fmadd_ps(ai, b0, c##i##a);                                                \
        c##i##b = _mm256_fmadd_ps(ai, b1, c##i##b);                                                \
    }
#define STORE(i)                                                                                   \
    if ((i) < rows) {                                                                              \
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
TGT static inline __attribute__((always_inline)) void
kernel_body(const int rows, int kc, const float *restrict a, ptrdiff_t lda,
            const float *restrict b, float *c, ptrdiff_t ldc, int full, __m256i m0, __m256i m1,
            int acc)
{
    int p;
    WINO_ROWS(DECL)
    for (p = 0; p < kc; p++) {
        const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
        WINO_ROWS(STEP)
        a++;
        b += NR;
    }
    WINO_ROWS(STORE)
}
#undef DECL
#undef STEP
#undef STORE
#undef WINO_ROWS

typedef void (*kernel_fn)(int kc, const float *a, ptrdiff_t lda, const float *b, float *c,
                          ptrdiff_t ldc, int full, __m256i m0, __m256i m1, int acc);
#define KERNEL(r)                                                                                  \
    TGT static void kernel_##r##x16(int kc, const float *a, ptrdiff_t lda, const float *b,         \
                                    float *c, ptrdiff_t ldc, int full, __m256i m0, __m256i m1,     \
                                    int acc)                                                       \
    {                                                                                              \
        kernel_body(r, kc, a, lda, b, c, ldc, full, m0, m1, acc);                                  \
    }
WINO_ROW_COUNTS_6(KERNEL)
#undef KERNEL
static const kernel_fn kernels[MR + 1] = {
    NULL, kernel_1x16, kernel_2x16, kernel_3x16, kernel_4x16, kernel_5x16, kernel_6x16,
};

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

/* C[0:m, 0:nc] (+)= A[0:m, 0:kc] * Bblock, Bblock packed (panels of kc x 16). The rows are cut
 * into ceil(m / 6) nearly equal micro-panels (m = 16: 6 + 5 + 5, not 6 + 6 + 4 padded to 6),
 * each run by the kernel of its exact row count, broadcasting A straight from its rows; a
 * micro-panel whose lda is a multiple of 1024 floats (rows in one L1 set) is copied to ap first. */
TGT static void macro(int m, int nc, int kc, const float *a, ptrdiff_t lda, const float *bp,
                      float *c, ptrdiff_t ldc, int acc, float *ap)
{
    int i0, j0, pi;
    const int np = micro_panels(m), copy = (lda & 1023) == 0;
    const __m256i ones = _mm256_set1_epi32(-1), e0 = mask8(nc % NR), e1 = mask8(nc % NR - 8);
    for (i0 = 0, pi = 0; i0 < m; pi++) {
        const int mr = micro_panel_rows(m, np, pi);
        const float *ai = a + (ptrdiff_t)i0 * lda;
        ptrdiff_t ld = lda;
        float *ci = c + (ptrdiff_t)i0 * ldc;
        if (copy) {
            copy_a_panel(mr, kc, ai, lda, ap);
            ai = ap;
            ld = A_LD(kc);
        }
        for (j0 = 0; j0 + NR <= nc; j0 += NR)
            kernels[mr](kc, ai, ld, bp + (size_t)j0 * (size_t)kc, ci + j0, ldc, 1, ones, ones, acc);
        if (j0 < nc)
            kernels[mr](kc, ai, ld, bp + (size_t)j0 * (size_t)kc, ci + j0, ldc, 0, e0, e1, acc);
        i0 += mr;
    }
}

#include "cpu/gemm_f32_driver.h"

#else /* not x86-64 GCC/Clang: never dispatched to (wino_cpu_isa says scalar) */

#define WINO_GEMM_STUB
#include "cpu/gemm_f32_driver.h"

#endif
