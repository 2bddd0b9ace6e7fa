/* INT8 GEMM, AVX512-VNNI: 14 x 32 register-blocked microkernel over packed B (gemm_s8.h).
 *
 * Per k quad (4 bytes of k): two zmm of B (two 16-column panels, 16 int32 lanes x 4 bytes each),
 * and per row one vpbroadcastd of 4 bytes of A (read in place from the row) feeding two vpdpbusd:
 * 28 accumulators + 2 B + 1 broadcast = 31 zmm; 28 vpdpbusd against 16 loads per quad.
 * The accumulators start at the packed -128 * column sums, so the +128 offset of A is removed
 * without a pass over C; C is written once, masked past n.
 *
 * Loops: blocks of MC rows (A block <= A_BLOCK_BYTES, stays in L2)
 *          32-column B pair (kp x 32 bytes <= 16 KiB for k <= 512: stays in L1)
 *            micro-panels of <= 14 rows of the block: one microkernel each.
 * Compiled with function-level target attributes: the library needs no global -m flags. */
#include "cpu/gemm_s8.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>
#include <string.h>

#define TGT __attribute__((target("avx512f,avx512vnni")))

enum { MR = 14, NV = 2 };
#define A_BLOCK_BYTES (512 * 1024)

/* acc += a (u8) . b (s8) per 4-byte group. As inline asm: GCC 12 allocates the intrinsic's
 * accumulator badly at this register pressure (copies and stack stores every k step). */
#define DPBUSD(acc, a, b) __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b))
#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)
#define DECL(i) __m512i c##i##0 = n0, c##i##1 = n1;
#define ROW_PTR(i) ((i) < 7 ? a0t + (i) * lda : a7t + ((i) - 7) * lda)
#define STEP(i)                                                                                    \
    if ((i) < MR_) {                                                                               \
        int32_t a4;                                                                                \
        memcpy(&a4, ROW_PTR(i) + 4 * q, 4);                                                        \
        const __m512i ai = _mm512_set1_epi32(a4);                                                  \
        DPBUSD(c##i##0, ai, b0);                                                                   \
        if (NV_ == 2)                                                                              \
            DPBUSD(c##i##1, ai, b1);                                                               \
    }
#define STORE(i)                                                                                   \
    if ((i) < MR_) {                                                                               \
        int32_t *ci = c + (ptrdiff_t)(i) * ldc;                                                    \
        if (NV_ == 2) {                                                                            \
            _mm512_storeu_si512(ci, c##i##0);                                                      \
            _mm512_mask_storeu_epi32(ci + 16, last, c##i##1);                                      \
        } else {                                                                                   \
            _mm512_mask_storeu_epi32(ci, last, c##i##0);                                           \
        }                                                                                          \
    }
/* C[0:MR_][0:16 NV_] = negsum + A[0:MR_][0:4 nq] x B (NV_ panels at b, panel stride bs
 * bytes), with CH_ a row's 64-byte chunk t of A at + chunk[t] (wino_s8_gemm_chunked), else
 * its k in a row; the last 16-column vector is stored under mask last. One instance per
 * (MR_, NV_, CH_) (the chunks' loop cost GEMMs of few rows up to 1.2x),
 * with one named variable per accumulator (GCC keeps those in zmm registers; with an array it
 * spilled them every k step). The row guards fold at compile time. Rows 7..13 are addressed
 * from a second base pointer, so that every row is base + {0, 1, 2, 3, 4, 5, 6} lda. */
#define KDEF(mr, nv, ch)                                                                           \
    TGT static void kernel_##mr##x##nv##_##ch(int nq, const uint8_t *a0, ptrdiff_t lda,           \
                                       const int32_t *chunk, const int8_t *b, size_t bs,          \
                                       const int32_t *negsum, int32_t *c, ptrdiff_t ldc,          \
                                       __mmask16 last)                                            \
    {                                                                                              \
        enum { MR_ = mr, NV_ = nv, CH_ = ch };                                                     \
        const uint8_t *a7 = MR_ > 7 ? a0 + 7 * lda : a0; /* no pointer past A */                  \
        const __m512i n0 = _mm512_loadu_si512(negsum),                                             \
                      n1 = NV_ == 2 ? _mm512_loadu_si512(negsum + 16) : n0;                        \
        int t, q;                                                                                  \
        ROWS(DECL)                                                                                 \
        for (t = 0; CH_ ? 16 * t < nq : t < 1; t++, b += 1024) {                                   \
            const ptrdiff_t at = CH_ ? chunk[t] : 0;                                               \
            const uint8_t *a0t = a0 + at, *a7t = a7 + at;                                          \
            const int qn = !CH_ ? nq : nq - 16 * t < 16 ? nq - 16 * t : 16;                        \
            for (q = 0; q < qn; q++) {                                                             \
                const __m512i b0 = _mm512_load_si512(b + (size_t)q * 64),                          \
                              b1 = NV_ == 2 ? _mm512_load_si512(b + bs + (size_t)q * 64) : b0;     \
                ROWS(STEP)                                                                         \
            }                                                                                      \
        }                                                                                          \
        ROWS(STORE)                                                                                \
    }

typedef void (*kernel_fn)(int nq, const uint8_t *a, ptrdiff_t lda, const int32_t *chunk,
                          const int8_t *b, size_t bs, const int32_t *negsum, int32_t *c,
                          ptrdiff_t ldc, __mmask16 last);

#define KDEF_ROWS(nv, ch)                                                                          \
    KDEF(1, nv, ch) KDEF(2, nv, ch) KDEF(3, nv, ch) KDEF(4, nv, ch) KDEF(5, nv, ch)                \
    KDEF(6, nv, ch) KDEF(7, nv, ch) KDEF(8, nv, ch) KDEF(9, nv, ch) KDEF(10, nv, ch)               \
    KDEF(11, nv, ch) KDEF(12, nv, ch) KDEF(13, nv, ch) KDEF(14, nv, ch)
KDEF_ROWS(1, 0)
KDEF_ROWS(2, 0)
KDEF_ROWS(1, 1)
KDEF_ROWS(2, 1)
#define KROW(mr, ch) {kernel_##mr##x1_##ch, kernel_##mr##x2_##ch},
#define KROWS(ch)                                                                                  \
    {KROW(1, ch) KROW(2, ch) KROW(3, ch) KROW(4, ch) KROW(5, ch) KROW(6, ch) KROW(7, ch)           \
         KROW(8, ch) KROW(9, ch) KROW(10, ch) KROW(11, ch) KROW(12, ch) KROW(13, ch) KROW(14, ch)}
/* kernels[chunked][mr - 1][nv - 1] */
static const kernel_fn kernels[2][MR][NV] = {KROWS(0), KROWS(1)};
#undef KROWS
#undef KROW
#undef KDEF_ROWS
#undef KDEF
#undef STORE
#undef STEP
#undef ROW_PTR
#undef DECL
#undef ROWS
#undef DPBUSD

void wino_s8_gemm_chunked__vnni(int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                                const int32_t *chunk, const void *packed_b, int32_t *c,
                                ptrdiff_t ldc)
{
    const int np = wino_s8_panels(n), nq = (k + 3) / 4;
    const size_t kp = wino_s8_gemm_lda(k), bs = kp * WINO_S8_NPANEL;
    const int32_t *negsum = wino_s8_negsum(packed_b);
    int mc = (int)(A_BLOCK_BYTES / (size_t)lda) / MR * MR;
    int i0, i, jp, p, mr;
    if (mc < MR)
        mc = MR;
    for (i0 = 0; i0 < m; i0 += mc) {
        /* The block's rows in nearly equal micro-panels (16 -> 8 + 8, 49 -> 13 + 3 x 12): a
         * panel of few rows has too few accumulator chains to hide the vpdpbusd latency. */
        const int rows = m - i0 < mc ? m - i0 : mc, panels = (rows + MR - 1) / MR;
        for (jp = 0; jp < np; jp += NV) {
            const int nv = np - jp < NV ? np - jp : NV;
            const int rest = n - (jp + nv - 1) * WINO_S8_NPANEL;
            const int wlast = rest < WINO_S8_NPANEL ? rest : WINO_S8_NPANEL; /* 1..16 */
            const __mmask16 last = (__mmask16)(0xffffu >> (WINO_S8_NPANEL - wlast));
            const int8_t *b = wino_s8_panel(packed_b, np, kp, jp);
            for (p = 0, i = i0; p < panels; p++, i += mr) {
                mr = rows / panels + (p < rows % panels);
                kernels[chunk != NULL][mr - 1][nv - 1](
                    nq, a + (ptrdiff_t)i * lda, lda, chunk, b, bs, negsum + jp * WINO_S8_NPANEL,
                    c + (ptrdiff_t)i * ldc + jp * WINO_S8_NPANEL, ldc, last);
            }
        }
    }
}


void wino_s8_gemm__vnni(int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                        const void *packed_b, int32_t *c, ptrdiff_t ldc)
{
    wino_s8_gemm_chunked__vnni(m, n, k, a, lda, NULL, packed_b, c, ldc);
}

#else /* not x86-64 GCC/Clang: never dispatched to (wino_s8_isa says scalar) */

void wino_s8_gemm__vnni(int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                        const void *packed_b, int32_t *c, ptrdiff_t ldc)
{
    (void)m, (void)n, (void)k, (void)a, (void)lda, (void)packed_b, (void)c, (void)ldc;
}

void wino_s8_gemm_chunked__vnni(int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                                const int32_t *chunk, const void *packed_b, int32_t *c,
                                ptrdiff_t ldc)
{
    (void)m, (void)n, (void)k, (void)a, (void)lda, (void)chunk, (void)packed_b, (void)c,
        (void)ldc;
}

#endif
