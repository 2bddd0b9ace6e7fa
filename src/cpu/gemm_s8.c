/* INT8 GEMM: ISA detection, dispatch, B packing and the portable scalar path. */
#include "cpu/gemm_s8.h"

#include <string.h>

#include "cpu/amx.h"
#include "cpu/cpu_features.h"
#include "cpu/gemm_f32.h"

#ifdef WINO_CPU_X86
/* AVX-512 F and VNNI (CPUID.7.0:EBX bit 16, ECX bit 11) with the OS saving SSE, ymm, opmask
 * and zmm state (XCR0 bits 1, 2, 5, 6, 7). */
static int vnni_usable(void)
{
    uint32_t r[4];
    if (wino_cpuid_max_leaf() < 7 || (wino_xcr0() & 0xe6) != 0xe6)
        return 0;
    wino_cpuid(7, 0, r);
    return ((r[1] >> 16) & 1u) && ((r[2] >> 11) & 1u);
}
#endif

enum wino_s8_isa wino_s8_isa(void)
{
#ifdef WINO_CPU_X86
    if (!vnni_usable())
        return wino_cpu_isa() >= WINO_ISA_AVX2 ? WINO_S8_AVX2 : WINO_S8_SCALAR;
    /* The AMX path also uses AVX-512 (edge tiles), so AMX implies VNNI here. */
    return wino_amx_int8_usable() ? WINO_S8_AMX : WINO_S8_VNNI;
#else
    return WINO_S8_SCALAR;
#endif
}

const char *wino_s8_isa_name(enum wino_s8_isa isa)
{
    switch (isa) {
    case WINO_S8_SCALAR:
        return "scalar";
    case WINO_S8_AVX2:
        return "avx2";
    case WINO_S8_VNNI:
        return "avx512-vnni";
    case WINO_S8_AMX:
        return "amx";
    }
    return "unknown";
}

size_t wino_s8_gemm_lda(int k)
{
    return ((size_t)(k > 0 ? k : 1) + WINO_S8_KPAD - 1) / WINO_S8_KPAD * WINO_S8_KPAD;
}

/* ---- packed B (k quads, or k pairs for AVX2: see gemm_s8.h) ------------------------------ */

size_t wino_s8_gemm_packed_b_bytes(enum wino_s8_isa isa, int k, int n)
{
    const size_t np = (size_t)wino_s8_panels(n);
    (void)isa;
    return np * WINO_S8_NPANEL * sizeof(int32_t) + np * wino_s8_gemm_lda(k) * WINO_S8_NPANEL;
}

void wino_s8_gemm_pack_b(enum wino_s8_isa isa, int k, int n, const int8_t *b, ptrdiff_t ldb,
                         void *packed)
{
    const int np = wino_s8_panels(n);
    const size_t kp = wino_s8_gemm_lda(k);
    int32_t *negsum = (int32_t *)packed;
    int8_t *panels = (int8_t *)wino_s8_panel(packed, np, kp, 0);
    const int group = isa == WINO_S8_AVX2 ? 2 : 4; /* k pairs or k quads */
    int p, j;
    memset(packed, 0, wino_s8_gemm_packed_b_bytes(isa, k, n));
    for (p = 0; p < k; p++) {
        const int8_t *bp = b + (ptrdiff_t)p * ldb;
        for (j = 0; j < n; j++) {
            const size_t jp = (size_t)j / WINO_S8_NPANEL, jj = (size_t)j % WINO_S8_NPANEL;
            panels[jp * kp * WINO_S8_NPANEL + (size_t)(p / group) * WINO_S8_NPANEL * group +
                   jj * group + (size_t)(p % group)] = bp[j];
            negsum[j] -= 128 * bp[j];
        }
    }
}

/* ---- scalar ---------------------------------------------------------------------------- */

/* Same arithmetic as the vector kernels: the accumulator starts at -128 * column sum and adds
 * u8 x s8 products over whole k quads (the A bytes past k meet zero rows of B). */
static void gemm_scalar(int m, int n, int k, const uint8_t *a, ptrdiff_t lda, const void *packed,
                        int32_t *c, ptrdiff_t ldc)
{
    const int np = wino_s8_panels(n), nq = (k + 3) / 4;
    const size_t kp = wino_s8_gemm_lda(k);
    const int32_t *negsum = wino_s8_negsum(packed);
    int i, jp, q, jj, t;
    for (i = 0; i < m; i++) {
        const uint8_t *ai = a + (ptrdiff_t)i * lda;
        int32_t *ci = c + (ptrdiff_t)i * ldc;
        for (jp = 0; jp < np; jp++) {
            const int8_t *bq = wino_s8_panel(packed, np, kp, jp);
            const int w = n - jp * WINO_S8_NPANEL < WINO_S8_NPANEL ? n - jp * WINO_S8_NPANEL
                                                                  : WINO_S8_NPANEL;
            int32_t acc[WINO_S8_NPANEL];
            memcpy(acc, negsum + jp * WINO_S8_NPANEL, sizeof acc);
            for (q = 0; q < nq; q++, bq += 64)
                for (jj = 0; jj < WINO_S8_NPANEL; jj++)
                    for (t = 0; t < 4; t++)
                        acc[jj] += (int32_t)ai[4 * q + t] * (int32_t)bq[4 * jj + t];
            memcpy(ci + jp * WINO_S8_NPANEL, acc, (size_t)w * sizeof(int32_t));
        }
    }
}

/* ---- dispatch -------------------------------------------------------------------------- */

size_t wino_s8_gemm_scratch_bytes(enum wino_s8_isa isa, int m, int n, int k)
{
    switch (isa) {
    case WINO_S8_AMX:
        return wino_s8_gemm_scratch_bytes__amx(m, n, k);
    case WINO_S8_AVX2:
        return wino_s8_gemm_scratch_bytes__avx2(m, n, k);
    default:
        return 0;
    }
}

void wino_s8_gemm(enum wino_s8_isa isa, int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                  const void *packed_b, int32_t *c, ptrdiff_t ldc, void *scratch)
{
    if (m <= 0 || n <= 0 || k <= 0)
        return;
    switch (isa) {
    case WINO_S8_AMX:
        wino_s8_gemm__amx(m, n, k, a, lda, packed_b, c, ldc, scratch);
        return;
    case WINO_S8_VNNI:
        wino_s8_gemm__vnni(m, n, k, a, lda, packed_b, c, ldc);
        return;
    case WINO_S8_AVX2:
        wino_s8_gemm__avx2(m, n, k, a, lda, packed_b, c, ldc, scratch);
        return;
    default:
        gemm_scalar(m, n, k, a, lda, packed_b, c, ldc);
        return;
    }
}

void wino_s8_gemm_chunked(enum wino_s8_isa isa, int m, int n, int k, const uint8_t *a,
                          ptrdiff_t lda, const int32_t *chunk, const void *packed_b, int32_t *c,
                          ptrdiff_t ldc, void *scratch, const struct wino_s8_rows_done *done)
{
    if (m <= 0 || n <= 0 || k <= 0)
        return;
    if (isa == WINO_S8_AMX) {
        wino_s8_gemm_chunked__amx(m, n, k, a, lda, chunk, packed_b, c, ldc, scratch, done);
        return;
    }
    wino_s8_gemm_chunked__vnni(m, n, k, a, lda, chunk, packed_b, c, ldc);
    if (done)
        done->fn(done->ctx, 0, m);
}

void wino_s8_gemm_unsigned_a(void *packed_b, int n)
{
    memset(packed_b, 0, (size_t)wino_s8_panels(n) * WINO_S8_NPANEL * sizeof(int32_t));
}
