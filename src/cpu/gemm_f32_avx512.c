/* FP32 GEMM, AVX-512: packed B panels, 14x32 register-blocked microkernel (28 zmm accumulators,
 * two zmm of B per k step, each A element broadcast once per k step: vbroadcastss + 2 vfmadd231ps).
 *
 * Loops (BLIS-like, roles chosen for row-major C with vectors along n):
 *   jc over n in NC = 1024 columns
 *     pc over k in blocks of at most KC = 256 (split evenly: k = 300 -> 150 + 150)
 *       B block kc x nc packed in 32-column panels (kc x 32 each, zero padded)   -> L2
 *         (pre-packed once by wino_f32_gemm_pack_b in the packed variant)
 *       ir over m in ceil(m / 14) nearly equal micro-panels of at most MR = 14 rows: A read in
 *         place (no packing; copied with a padded row stride when lda is a multiple of 1024
 *         floats), each micro-panel by the kernel of its exact row count
 *         jr over the 32-column panels: microkernel, B panel streamed from L2 (hardware
 *         prefetch); during the first jr call the next A micro-panel is prefetched, one line
 *         per k step
 * Edges: rows past m are never stored; columns past n are zero in the packed B and masked off
 * when loading/storing C.
 * Compiled with function-level target attributes: the library needs no global -m flags. */
#include "cpu/gemm_f32.h"

#define WINO_GEMM_NAME(f) f##__avx512

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>
#include <stdint.h>

#define TGT __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,fma")))

enum { MR = 14, NR = 32, KC = 256, NC = 1024 };

#include "cpu/gemm_f32_blocks.h"

TGT static __mmask16 mask_lo(int w)
{
    return w >= 16 ? (__mmask16)0xffff : (w <= 0 ? (__mmask16)0 : (__mmask16)((1u << w) - 1u));
}

/* C[0:rows, 0:32 masked] (+)= A (rows x kc, row stride lda) * B_panel (kc x 32), with rows a
 * compile-time constant in each instance (1..14), so a short micro-panel costs only its own
 * FMAs: 28 zmm accumulators at 14 rows. */
#define WINO_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)
#define DECL(i) __m512 c##i##a = _mm512_setzero_ps(), c##i##b = _mm512_setzero_ps();
#define STEP(i)                                                                                    \
    if ((i) < rows) {                                                                              \
        const __m512 ai = _mm512_set1_ps(a[(i) * lda]);                                            \
        c##i##a = _mm512_fmadd_ps(ai, b0, c##i##a);                                                \
        c##i##b = _mm512_fmadd_ps(ai, b1, c##i##b);                                                \
    }
#define STORE(i)                                                                                   \
    if ((i) < rows) {                                                                              \
        float *ci = c + (ptrdiff_t)(i) * ldc;                                                      \
        if (acc) {                                                                                 \
            c##i##a = _mm512_add_ps(c##i##a, _mm512_maskz_loadu_ps(m0, ci));                       \
            c##i##b = _mm512_add_ps(c##i##b, _mm512_maskz_loadu_ps(m1, ci + 16));                  \
        }                                                                                          \
        _mm512_mask_storeu_ps(ci, m0, c##i##a);                                                    \
        _mm512_mask_storeu_ps(ci + 16, m1, c##i##b);                                               \
    }

/* While pf->kc > 0, one line of the next A micro-panel (pf->rows rows of kc floats, row stride
 * pf->ld) is prefetched per k step, row by row, 16 columns at a time. */
struct prefetch_a {
    const float *a; /* first row of the next micro-panel */
    ptrdiff_t ld;
    int rows, kc; /* kc = 0: nothing to prefetch */
};

TGT static inline __attribute__((always_inline)) void
kernel_body(const int rows, int kc, const float *restrict a, ptrdiff_t lda,
            const float *restrict b, float *c, ptrdiff_t ldc, __mmask16 m0, __mmask16 m1, int acc,
            const struct prefetch_a *pf)
{
    int p, pr = 0, pcol = 0;
    const float *pfp = pf->a;
    WINO_ROWS(DECL)
    for (p = 0; p < kc; p++) {
        const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
        if (pcol < pf->kc) {
            _mm_prefetch((const char *)pfp, _MM_HINT_T0);
            pfp += pf->ld;
            if (++pr == pf->rows) {
                pr = 0;
                pcol += 16;
                pfp = pf->a + (pcol < pf->kc ? pcol : 0);
            }
        }
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
                          ptrdiff_t ldc, __mmask16 m0, __mmask16 m1, int acc,
                          const struct prefetch_a *pf);
#define KERNEL(r)                                                                                  \
    TGT static void kernel_##r##x32(int kc, const float *a, ptrdiff_t lda, const float *b,         \
                                    float *c, ptrdiff_t ldc, __mmask16 m0, __mmask16 m1, int acc,  \
                                    const struct prefetch_a *pf)                                   \
    {                                                                                              \
        kernel_body(r, kc, a, lda, b, c, ldc, m0, m1, acc, pf);                                    \
    }
WINO_ROW_COUNTS_14(KERNEL)
#undef KERNEL
static const kernel_fn kernels[MR + 1] = {
    NULL,         kernel_1x32,  kernel_2x32,  kernel_3x32,  kernel_4x32,
    kernel_5x32,  kernel_6x32,  kernel_7x32,  kernel_8x32,  kernel_9x32,
    kernel_10x32, kernel_11x32, kernel_12x32, kernel_13x32, kernel_14x32,
};

/* kc x nc block of B (row stride ldb) -> 32-column panels, each kc x 32, zero padded. */
TGT static void pack_b_block(int kc, int nc, const float *b, ptrdiff_t ldb, float *dst)
{
    int j0, p;
    for (j0 = 0; j0 < nc; j0 += NR) {
        const int w = nc - j0 < NR ? nc - j0 : NR;
        const __mmask16 m0 = mask_lo(w), m1 = mask_lo(w - 16);
        const float *src = b + j0;
        if (w == NR) {
            for (p = 0; p < kc; p++) {
                _mm512_store_ps(dst, _mm512_loadu_ps(src));
                _mm512_store_ps(dst + 16, _mm512_loadu_ps(src + 16));
                src += ldb;
                dst += NR;
            }
        } else {
            for (p = 0; p < kc; p++) {
                _mm512_store_ps(dst, _mm512_maskz_loadu_ps(m0, src));
                _mm512_store_ps(dst + 16, _mm512_maskz_loadu_ps(m1, src + 16));
                src += ldb;
                dst += NR;
            }
        }
    }
}

/* A block of at most this many bytes (m x kc) stays in L1/L2 while every B panel passes it. */
#define FEW_ROWS_A_BYTES (32 * 1024)

/* C[0:m, 0:nc] (+)= A[0:m, 0:kc] * Bblock, Bblock packed (panels of kc x 32). The rows are cut
 * into ceil(m / 14) nearly equal micro-panels (m = 16: 8 + 8, not 14 + 2 padded to 7), each run
 * by the kernel of its exact row count. A is broadcast straight from its rows (no packing cost,
 * which matters for the small n of Winograd), except when lda is a multiple of 1024 floats, where
 * the rows of a micro-panel would share L1 sets: then each micro-panel is copied to ap first.
 * Many rows: i outer, each micro-panel streams the B block from L2. Few rows (Winograd on small
 * images, where B is the large operand): j outer, so each B panel is loaded once for all rows. */
TGT static void macro(int m, int nc, int kc, const float *a, ptrdiff_t lda, const float *bp,
                      float *c, ptrdiff_t ldc, int acc, float *ap)
{
    int i0, j0, pi;
    const int np = micro_panels(m), copy = (lda & 1023) == 0;
    const __mmask16 e0 = mask_lo(nc % NR), e1 = mask_lo(nc % NR - 16);
    const struct prefetch_a none = {a, lda, 1, 0};
    if (!copy && (size_t)m * (size_t)kc * sizeof(float) <= FEW_ROWS_A_BYTES) {
        for (j0 = 0; j0 < nc; j0 += NR) {
            const int full = j0 + NR <= nc;
            const float *b = bp + (size_t)j0 * (size_t)kc;
            for (i0 = 0, pi = 0; i0 < m; pi++) {
                const int mr = micro_panel_rows(m, np, pi);
                kernels[mr](kc, a + (ptrdiff_t)i0 * lda, lda, b, c + (ptrdiff_t)i0 * ldc + j0, ldc,
                            full ? 0xffff : e0, full ? 0xffff : e1, acc, &none);
                i0 += mr;
            }
        }
        return;
    }
    for (i0 = 0, pi = 0; i0 < m; pi++) {
        const int mr = micro_panel_rows(m, np, pi);
        const float *ai = a + (ptrdiff_t)i0 * lda;
        ptrdiff_t ld = lda;
        float *ci = c + (ptrdiff_t)i0 * ldc;
        struct prefetch_a pf = none; /* the next micro-panel's A, during the first kernel call */
        if (i0 + mr < m) {
            pf.a = ai + (ptrdiff_t)mr * lda;
            pf.rows = micro_panel_rows(m, np, pi + 1);
            pf.kc = kc;
        }
        if (copy) {
            copy_a_panel(mr, kc, ai, lda, ap);
            ai = ap;
            ld = A_LD(kc);
        }
        for (j0 = 0; j0 < nc; j0 += NR, pf.kc = 0) {
            const int full = j0 + NR <= nc;
            kernels[mr](kc, ai, ld, bp + (size_t)j0 * (size_t)kc, ci + j0, ldc,
                        full ? 0xffff : e0, full ? 0xffff : e1, acc, &pf);
        }
        i0 += mr;
    }
}

#include "cpu/gemm_f32_driver.h"

#else /* not x86-64 GCC/Clang: never dispatched to (wino_cpu_isa says scalar) */

#define WINO_GEMM_STUB
#include "cpu/gemm_f32_driver.h"

#endif
