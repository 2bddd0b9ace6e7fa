/* INT8 GEMM, AVX2: 6 x 16 register-blocked microkernel over the k-pair packed B (gemm_s8.h).
 *
 * AVX2 has no vpdpbusd, and vpmaddubsw saturates its pair sums (255 * 127 * 2 > 32767), so the
 * products are taken in 16 bits, where vpmaddwd sums two u16 x s16 products into int32 exactly:
 * B is packed as int8 k pairs and sign-extended as it is loaded (B stays as small as the other
 * ISAs' and is read at half the bytes, which counts where few rows meet each panel), and each
 * block of A rows is widened to u16 once into scratch (m k conversions against m n k products).
 * Per k pair: two ymm of B (16 columns) and, per row, one vpbroadcastd of a u16 pair feeding two
 * vpmaddwd and two vpaddd: 12 accumulators + 2 B + broadcast + product = 16 ymm. The
 * accumulators start at the packed -128 * column sums.
 *
 * Loops: blocks of MC rows (their u16 copy <= A_BLOCK_BYTES, stays in L2)
 *          16-column panel (kp x 16 bytes <= 8 KiB for k <= 512: stays in L1)
 *            micro-panels of <= 6 rows of the block: one microkernel each.
 * Compiled with function-level target attributes: the library needs no global -m flags. */
#include "cpu/gemm_s8.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>
#include <string.h>

#define TGT __attribute__((target("avx2")))

enum { MR = 6 };
#define A_BLOCK_BYTES (256 * 1024)

/* acc += a (u16 pair) . b (s16 pair) per 32-bit lane, through the product register t. */
#define MADD(acc, a, b, t)                                                                         \
    do {                                                                                           \
        t = _mm256_madd_epi16(a, b);                                                               \
        acc = _mm256_add_epi32(acc, t);                                                            \
    } while (0)
#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define DECL(i) __m256i c##i##0 = n0, c##i##1 = n1;
#define STEP(i)                                                                                    \
    if ((i) < MR_) {                                                                               \
        int32_t a2;                                                                                \
        memcpy(&a2, a + (ptrdiff_t)(i) * lda + 2 * h, 4);                                          \
        const __m256i ai = _mm256_set1_epi32(a2);                                                  \
        MADD(c##i##0, ai, b0, t);                                                                  \
        MADD(c##i##1, ai, b1, t);                                                                  \
    }
#define STORE(i)                                                                                   \
    if ((i) < MR_) {                                                                               \
        int32_t *ci = c + (ptrdiff_t)(i) * ldc;                                                    \
        if (w == 16) {                                                                             \
            _mm256_storeu_si256((__m256i *)ci, c##i##0);                                           \
            _mm256_storeu_si256((__m256i *)(ci + 8), c##i##1);                                     \
        } else {                                                                                   \
            _mm256_maskstore_epi32(ci, m0, c##i##0);                                               \
            _mm256_maskstore_epi32(ci + 8, m1, c##i##1);                                           \
        }                                                                                          \
    }
/* C[0:MR_][0:w] = negsum + A[0:MR_][0:2 nh] x B (one panel at b); A is u16, row stride lda
 * elements. One instance per row count, with one named variable per accumulator (kept in
 * registers); the row guards fold at compile time. */
#define KDEF(mr)                                                                                   \
    TGT static void kernel_##mr(int nh, const uint16_t *a, ptrdiff_t lda, const int8_t *b,         \
                                const int32_t *negsum, int32_t *c, ptrdiff_t ldc, int w)          \
    {                                                                                              \
        enum { MR_ = mr };                                                                         \
        const __m256i n0 = _mm256_loadu_si256((const __m256i *)negsum),                            \
                      n1 = _mm256_loadu_si256((const __m256i *)(negsum + 8));                      \
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);                            \
        const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(w), lane),                         \
                      m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(w - 8), lane);                     \
        __m256i t;                                                                                 \
        int h;                                                                                     \
        ROWS(DECL)                                                                                 \
        for (h = 0; h < nh; h++) {                                                                 \
            const __m128i *bh = (const __m128i *)(b + 32 * h);                                     \
            const __m256i b0 = _mm256_cvtepi8_epi16(_mm_load_si128(bh)),                           \
                          b1 = _mm256_cvtepi8_epi16(_mm_load_si128(bh + 1));                       \
            ROWS(STEP)                                                                             \
        }                                                                                          \
        ROWS(STORE)                                                                                \
    }

typedef void (*kernel_fn)(int nh, const uint16_t *a, ptrdiff_t lda, const int8_t *b,
                          const int32_t *negsum, int32_t *c, ptrdiff_t ldc, int w);
KDEF(1) KDEF(2) KDEF(3) KDEF(4) KDEF(5) KDEF(6)
/* kernels[mr - 1] */
static const kernel_fn kernels[MR] = {kernel_1, kernel_2, kernel_3, kernel_4, kernel_5, kernel_6};
#undef KDEF
#undef STORE
#undef STEP
#undef DECL
#undef ROWS
#undef MADD

/* Rows of the u16 copy of A: its stride is kp elements. */
static int block_rows(size_t kp)
{
    const int mc = (int)(A_BLOCK_BYTES / (kp * sizeof(uint16_t))) / MR * MR;
    return mc < MR ? MR : mc;
}

size_t wino_s8_gemm_scratch_bytes__avx2(int m, int n, int k)
{
    const size_t kp = wino_s8_gemm_lda(k);
    const int mc = block_rows(kp);
    (void)n;
    return (size_t)(m < mc ? m : mc) * kp * sizeof(uint16_t);
}

/* dst[i][0:kp] = a[i][0:kp] widened to u16 (kp is a multiple of 64, within lda). */
TGT static void widen_rows(int rows, size_t kp, const uint8_t *a, ptrdiff_t lda, uint16_t *dst)
{
    int i;
    size_t p;
    for (i = 0; i < rows; i++)
        for (p = 0; p < kp; p += 16)
            _mm256_store_si256(
                (__m256i *)(dst + (size_t)i * kp + p),
                _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(a + i * lda + p))));
}

void wino_s8_gemm__avx2(int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                        const void *packed_b, int32_t *c, ptrdiff_t ldc, void *scratch)
{
    const int np = wino_s8_panels(n), nh = (k + 1) / 2;
    const size_t kp = wino_s8_gemm_lda(k);
    const int32_t *negsum = wino_s8_negsum(packed_b);
    const int mc = block_rows(kp);
    uint16_t *a16 = (uint16_t *)scratch;
    int i0, i, jp, p, mr;
    for (i0 = 0; i0 < m; i0 += mc) {
        /* The block's rows in nearly equal micro-panels (8 -> 4 + 4): a panel of few rows has
         * too few accumulator chains to hide the vpmaddwd latency. */
        const int rows = m - i0 < mc ? m - i0 : mc, panels = (rows + MR - 1) / MR;
        widen_rows(rows, kp, a + (ptrdiff_t)i0 * lda, lda, a16);
        for (jp = 0; jp < np; jp++) {
            const int rest = n - jp * WINO_S8_NPANEL;
            const int w = rest < WINO_S8_NPANEL ? rest : WINO_S8_NPANEL;
            const int8_t *b = wino_s8_panel(packed_b, np, kp, jp);
            for (p = 0, i = 0; p < panels; p++, i += mr) {
                mr = rows / panels + (p < rows % panels);
                kernels[mr - 1](nh, a16 + (size_t)i * kp, (ptrdiff_t)kp, b,
                                negsum + jp * WINO_S8_NPANEL,
                                c + (ptrdiff_t)(i0 + i) * ldc + jp * WINO_S8_NPANEL, ldc, w);
            }
        }
    }
}

#else /* not x86-64 GCC/Clang: never dispatched to (wino_s8_isa says scalar) */

size_t wino_s8_gemm_scratch_bytes__avx2(int m, int n, int k)
{
    (void)m, (void)n, (void)k;
    return 0;
}

void wino_s8_gemm__avx2(int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                        const void *packed_b, int32_t *c, ptrdiff_t ldc, void *scratch)
{
    (void)m, (void)n, (void)k, (void)a, (void)lda, (void)packed_b, (void)c, (void)ldc;
    (void)scratch;
}

#endif
