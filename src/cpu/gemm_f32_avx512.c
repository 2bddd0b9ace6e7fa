/* FP32 GEMM, AVX-512: packed B panels, 14x32 register-blocked microkernel (28 zmm accumulators,
 * two zmm of B per k step, each A element broadcast once per k step: vbroadcastss + 2 vfmadd231ps).
 *
 * Loops (BLIS-like, roles chosen for row-major C with vectors along n):
 *   jc over n in NC = 1024 columns
 *     pc over k in blocks of at most KC = 256 (split evenly: k = 300 -> 150 + 150)
 *       B block kc x nc packed in 32-column panels (kc x 32 each, zero padded)   -> L2
 *         (pre-packed once by wino_f32_gemm_pack_b in the packed variant)
 *       ir over m in MR = 14 rows: the A micro-panel (14 x kc, <= 14 KiB)        -> L1
 *         read in place (no packing) when all 14 rows exist and lda is not a multiple of 1024
 *         floats; else packed as [p][14], zero padded; tails of <= 7 rows use a 7x32 kernel
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

/* C[0:mr, 0:32 masked] (+)= A (kc columns; element (i, p) at a[i * RS + p * PS]) * B_panel
 * (kc x 32). Two instances: A packed as [p][14] (RS = 1, PS = 14) and A read in place
 * (RS = lda, PS = 1; all 14 rows must exist). */
#define WINO_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)
#define WINO_ROWS7(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6)
#define DECL(i) __m512 c##i##a = _mm512_setzero_ps(), c##i##b = _mm512_setzero_ps();
#define STEP(i)                                                                                    \
    {                                                                                              \
        const __m512 ai = _mm512_set1_ps(a[(i) * RS]);                                             \
        c##i##a = _mm512_fmadd_ps(ai, b0, c##i##a);                                                \
        c##i##b = _mm512_fmadd_ps(ai, b1, c##i##b);                                                \
    }
#define STORE(i)                                                                                   \
    if (i < mr) {                                                                                  \
        float *ci = c + (ptrdiff_t)(i) * ldc;                                                      \
        if (acc) {                                                                                 \
            c##i##a = _mm512_add_ps(c##i##a, _mm512_maskz_loadu_ps(m0, ci));                       \
            c##i##b = _mm512_add_ps(c##i##b, _mm512_maskz_loadu_ps(m1, ci + 16));                  \
        }                                                                                          \
        _mm512_mask_storeu_ps(ci, m0, c##i##a);                                                    \
        _mm512_mask_storeu_ps(ci + 16, m1, c##i##b);                                               \
    }
/* pf: while pf->rows > 0, one line of the next A micro-panel (pf->rows rows of kc floats, row
 * stride pf->ld) is prefetched per k step, row by row, 16 columns at a time. */
#define KERNEL_BODY                                                                                \
    int p, pr = 0, pcol = 0;                                                                       \
    const float *pfp = pf->a;                                                                      \
    KROWS(DECL)                                                                                    \
    for (p = 0; p < kc; p++) {                                                                     \
        const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);                          \
        if (pcol < pf->kc) {                                                                       \
            _mm_prefetch((const char *)pfp, _MM_HINT_T0);                                          \
            pfp += pf->ld;                                                                         \
            if (++pr == pf->rows) {                                                                \
                pr = 0;                                                                            \
                pcol += 16;                                                                        \
                pfp = pf->a + (pcol < pf->kc ? pcol : 0);                                          \
            }                                                                                      \
        }                                                                                          \
        KROWS(STEP)                                                                                \
        a += PS;                                                                                   \
        b += NR;                                                                                   \
    }                                                                                              \
    KROWS(STORE)

struct prefetch_a {
    const float *a; /* first row of the next micro-panel */
    ptrdiff_t ld;
    int rows, kc; /* kc = 0: nothing to prefetch */
};

TGT static void kernel_14x32_packed(int kc, const float *restrict a, const float *restrict b,
                                    float *c, ptrdiff_t ldc, int mr, __mmask16 m0, __mmask16 m1,
                                    int acc, const struct prefetch_a *pf)
{
#define RS 1
#define PS MR
#define KROWS WINO_ROWS
    KERNEL_BODY
#undef KROWS
#undef RS
#undef PS
}

/* Same for edge micro-panels of at most 7 rows (half the FMAs of the 14-row kernel). */
TGT static void kernel_7x32_packed(int kc, const float *restrict a, const float *restrict b,
                                   float *c, ptrdiff_t ldc, int mr, __mmask16 m0, __mmask16 m1,
                                   int acc, const struct prefetch_a *pf)
{
#define RS 1
#define PS MR
#define KROWS WINO_ROWS7
    KERNEL_BODY
#undef KROWS
#undef RS
#undef PS
}

TGT static void kernel_14x32_direct(int kc, const float *restrict a, ptrdiff_t lda,
                                    const float *restrict b, float *c, ptrdiff_t ldc,
                                    __mmask16 m0, __mmask16 m1, int acc,
                                    const struct prefetch_a *pf)
{
    const int mr = MR;
#define RS lda
#define PS 1
#define KROWS WINO_ROWS
    KERNEL_BODY
#undef KROWS
#undef RS
#undef PS
}
#undef KERNEL_BODY
#undef DECL
#undef STEP
#undef STORE
#undef WINO_ROWS
#undef WINO_ROWS7

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

/* mr x kc of A (row stride lda) -> [p][MR], rows past mr zero. */
TGT static void pack_a_panel(int mr, int kc, const float *a, ptrdiff_t lda, float *dst)
{
    int i, p;
    if (mr == MR) {
        /* 16 columns at a time: 14 row loads, scattered into the [p][14] layout by a store
         * per element would be slow; transpose through a small buffer instead. */
        for (p = 0; p + 16 <= kc; p += 16) {
            __m512 r[MR];
            for (i = 0; i < MR; i++)
                r[i] = _mm512_loadu_ps(a + (ptrdiff_t)i * lda + p);
            {
                /* gather-free transpose: write rows into [i][16], then read columns. */
                float t[MR][16] __attribute__((aligned(64)));
                int q;
                for (i = 0; i < MR; i++)
                    _mm512_store_ps(t[i], r[i]);
                for (q = 0; q < 16; q++)
                    for (i = 0; i < MR; i++)
                        dst[(p + q) * MR + i] = t[i][q];
            }
        }
        for (; p < kc; p++)
            for (i = 0; i < MR; i++)
                dst[p * MR + i] = a[(ptrdiff_t)i * lda + p];
        return;
    }
    for (p = 0; p < kc; p++) {
        for (i = 0; i < mr; i++)
            dst[p * MR + i] = a[(ptrdiff_t)i * lda + p];
        for (; i < MR; i++)
            dst[p * MR + i] = 0.0f;
    }
}

/* The edge micro-panel (mr < 14 rows, packed in ap) times the column panels [j0, nc). */
TGT static void edge_panels(int mr, int j0, int nc, int kc, const float *ap, const float *bp,
                            float *ci, ptrdiff_t ldc, int acc, struct prefetch_a *pf)
{
    const __mmask16 e0 = mask_lo(nc % NR), e1 = mask_lo(nc % NR - 16);
    for (; j0 < nc; j0 += NR, pf->kc = 0) {
        const int full = j0 + NR <= nc;
        const float *b = bp + (size_t)j0 * (size_t)kc;
        if (mr <= 7)
            kernel_7x32_packed(kc, ap, b, ci + j0, ldc, mr, full ? 0xffff : e0,
                               full ? 0xffff : e1, acc, pf);
        else
            kernel_14x32_packed(kc, ap, b, ci + j0, ldc, mr, full ? 0xffff : e0,
                                full ? 0xffff : e1, acc, pf);
    }
}

/* A block of at most this many bytes (m x kc) stays in L1/L2 while every B panel passes it. */
#define FEW_ROWS_A_BYTES (32 * 1024)

/* C[0:m, 0:nc] (+)= A[0:m, 0:kc] * Bblock, Bblock packed (panels of kc x 32). Full 14-row
 * micro-panels read A in place (broadcasts straight from the rows; no packing cost, which
 * matters for the small n of Winograd) unless lda is a multiple of 1024 floats, where the 14 rows
 * would share L1 sets; edge micro-panels and those are packed (zero padded) into ap.
 * Many rows: i outer, each micro-panel streams the B block from L2. Few rows (Winograd on small
 * images, where B is the large operand): j outer, so each B panel is loaded once for all rows. */
TGT static void macro(int m, int nc, int kc, const float *a, ptrdiff_t lda, const float *bp,
                      float *c, ptrdiff_t ldc, int acc, float *ap)
{
    int i0, j0;
    const int direct_ok = (lda & 1023) != 0;
    const __mmask16 e0 = mask_lo(nc % NR), e1 = mask_lo(nc % NR - 16);
    struct prefetch_a none = {a, lda, 1, 0};
    if (direct_ok && (size_t)m * (size_t)kc * sizeof(float) <= FEW_ROWS_A_BYTES) {
        const int full_rows = m / MR * MR;
        if (full_rows < m)
            pack_a_panel(m - full_rows, kc, a + (ptrdiff_t)full_rows * lda, lda, ap);
        for (j0 = 0; j0 < nc; j0 += NR) {
            const int full = j0 + NR <= nc;
            const float *b = bp + (size_t)j0 * (size_t)kc;
            for (i0 = 0; i0 < full_rows; i0 += MR)
                kernel_14x32_direct(kc, a + (ptrdiff_t)i0 * lda, lda, b,
                                    c + (ptrdiff_t)i0 * ldc + j0, ldc, full ? 0xffff : e0,
                                    full ? 0xffff : e1, acc, &none);
            if (full_rows < m)
                edge_panels(m - full_rows, j0, j0 + NR < nc ? j0 + NR : nc, kc, ap, bp,
                            c + (ptrdiff_t)full_rows * ldc, ldc, acc, &none);
        }
        return;
    }
    for (i0 = 0; i0 < m; i0 += MR) {
        const int mr = m - i0 < MR ? m - i0 : MR;
        const float *ai = a + (ptrdiff_t)i0 * lda;
        float *ci = c + (ptrdiff_t)i0 * ldc;
        struct prefetch_a pf = none; /* the next micro-panel's A, during the first kernel call */
        if (i0 + MR < m) {
            pf.a = ai + (ptrdiff_t)MR * lda;
            pf.rows = m - i0 - MR < MR ? m - i0 - MR : MR;
            pf.kc = kc;
        }
        if (mr == MR && direct_ok) {
            for (j0 = 0; j0 < nc; j0 += NR, pf.kc = 0) {
                const int full = j0 + NR <= nc;
                kernel_14x32_direct(kc, ai, lda, bp + (size_t)j0 * (size_t)kc, ci + j0, ldc,
                                    full ? 0xffff : e0, full ? 0xffff : e1, acc, &pf);
            }
            continue;
        }
        pack_a_panel(mr, kc, ai, lda, ap);
        edge_panels(mr, 0, nc, kc, ap, bp, ci, ldc, acc, &pf);
    }
}

#include "cpu/gemm_f32_driver.h"

#else /* not x86-64 GCC/Clang: never dispatched to (wino_cpu_isa says scalar) */

#define WINO_GEMM_STUB
#include "cpu/gemm_f32_driver.h"

#endif
