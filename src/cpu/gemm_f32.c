/* FP32 GEMM: ISA detection, dispatch and the portable scalar path. */
#include "cpu/gemm_f32.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "cpu/amx.h"
#include "cpu/cpu_features.h"

static enum wino_isa detect_isa(void)
{
#ifdef WINO_CPU_X86
    __builtin_cpu_init();
    const uint64_t xcr0 = wino_xcr0();
    if ((xcr0 & 0x6) != 0x6) /* SSE and AVX (ymm) state */
        return WINO_ISA_SCALAR;
    if ((xcr0 & 0xe0) == 0xe0 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma"))
        return WINO_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return WINO_ISA_AVX2;
#endif
    return WINO_ISA_SCALAR;
}

static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
static enum wino_isa detected;

static void detect(void)
{
    detected = detect_isa();
}

/* Asked once per process, as cpu/amx.c asks for the tiles: XGETBV can trap to the hypervisor in
 * a virtual machine (there an NCHW layer whose transposes asked per row spent 41% of its time in
 * it, docs/cpu-winograd.md). */
enum wino_isa wino_cpu_isa(void)
{
    pthread_once(&detect_once, detect);
    return detected;
}

enum wino_isa wino_f32_packed_gemm_isa(void)
{
    const enum wino_isa isa = wino_cpu_isa();
    return isa == WINO_ISA_AVX512 && wino_amx_bf16_usable() ? WINO_ISA_AMX_BF16 : isa;
}

enum wino_isa wino_f32_packed_gemm_isa_for(int k, int n)
{
    const enum wino_isa isa = wino_f32_packed_gemm_isa();
    if (isa == WINO_ISA_AMX_BF16 &&
        (k < 256 || wino_f32_gemm_packed_b_estimate(isa, k, n) > (double)(4 << 20)))
        return wino_cpu_isa();
    return isa;
}

double wino_f32_gemm_packed_b_estimate(enum wino_isa isa, int k, int n)
{
    if (isa == WINO_ISA_AMX_BF16) /* k and n padded to 32 */
        return 6.0 * ((double)k + 31) * ((double)n + 31);
    return 4.0 * k * n;
}

int wino_f32_gemm_kernel_rows(enum wino_isa isa)
{
    return isa == WINO_ISA_AMX_BF16 ? 32 : 14;
}

const char *wino_isa_name(enum wino_isa isa)
{
    switch (isa) {
    case WINO_ISA_AMX_BF16:
        return "amx-bf16";
    case WINO_ISA_SCALAR:
        return "scalar";
    case WINO_ISA_AVX2:
        return "avx2";
    case WINO_ISA_AVX512:
        return "avx512";
    }
    return "unknown";
}

/* ---- scalar ---------------------------------------------------------------------------- */

/* i-p-j order: unit stride over B and C rows; k blocked so a C row slice stays in L1. */
static void gemm_scalar(int m, int n, int k, const float *a, ptrdiff_t lda, const float *b,
                        ptrdiff_t ldb, float *c, ptrdiff_t ldc, int accumulate)
{
    int i, j, p;
    for (i = 0; i < m; i++) {
        float *ci = c + (ptrdiff_t)i * ldc;
        const float *ai = a + (ptrdiff_t)i * lda;
        if (!accumulate)
            for (j = 0; j < n; j++)
                ci[j] = 0.0f;
        for (p = 0; p < k; p++) {
            const float aip = ai[p];
            const float *bp = b + (ptrdiff_t)p * ldb;
            for (j = 0; j < n; j++)
                ci[j] += aip * bp[j];
        }
    }
}

/* ---- dispatch -------------------------------------------------------------------------- */

size_t wino_f32_gemm_scratch_bytes(enum wino_isa isa, int m, int n, int k)
{
    switch (isa) {
    case WINO_ISA_AMX_BF16: /* unpacked B: the AVX-512 GEMM */
    case WINO_ISA_AVX512:
        return wino_f32_gemm_scratch_bytes__avx512(m, n, k);
    case WINO_ISA_AVX2:
        return wino_f32_gemm_scratch_bytes__avx2(m, n, k);
    default:
        return 0;
    }
}

void wino_f32_gemm(enum wino_isa isa, int m, int n, int k, const float *a, ptrdiff_t lda,
                   const float *b, ptrdiff_t ldb, float *c, ptrdiff_t ldc, int accumulate,
                   void *scratch)
{
    if (m <= 0 || n <= 0 || k < 0)
        return;
    switch (isa) {
    case WINO_ISA_AMX_BF16:
    case WINO_ISA_AVX512:
        wino_f32_gemm__avx512(m, n, k, a, lda, b, ldb, c, ldc, accumulate, scratch);
        return;
    case WINO_ISA_AVX2:
        wino_f32_gemm__avx2(m, n, k, a, lda, b, ldb, c, ldc, accumulate, scratch);
        return;
    default:
        gemm_scalar(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
        return;
    }
}

size_t wino_f32_gemm_packed_b_bytes(enum wino_isa isa, int k, int n)
{
    if (k <= 0 || n <= 0)
        return 0;
    switch (isa) {
    case WINO_ISA_AMX_BF16:
        return wino_f32_gemm_packed_b_bytes__amx(k, n);
    case WINO_ISA_AVX512:
        return wino_f32_gemm_packed_b_bytes__avx512(k, n);
    case WINO_ISA_AVX2:
        return wino_f32_gemm_packed_b_bytes__avx2(k, n);
    default:
        return (size_t)k * (size_t)n * sizeof(float);
    }
}

void wino_f32_gemm_pack_b(enum wino_isa isa, int k, int n, const float *b, ptrdiff_t ldb,
                          void *packed)
{
    int p;
    if (k <= 0 || n <= 0)
        return;
    switch (isa) {
    case WINO_ISA_AMX_BF16:
        wino_f32_gemm_pack_b__amx(k, n, b, ldb, packed);
        return;
    case WINO_ISA_AVX512:
        wino_f32_gemm_pack_b__avx512(k, n, b, ldb, packed);
        return;
    case WINO_ISA_AVX2:
        wino_f32_gemm_pack_b__avx2(k, n, b, ldb, packed);
        return;
    default:
        for (p = 0; p < k; p++)
            memcpy((float *)packed + (size_t)p * (size_t)n, b + (ptrdiff_t)p * ldb,
                   (size_t)n * sizeof(float));
        return;
    }
}

size_t wino_f32_gemm_packed_scratch_bytes(enum wino_isa isa, int m, int n, int k)
{
    switch (isa) {
    case WINO_ISA_AMX_BF16:
        return wino_f32_gemm_packed_scratch_bytes__amx(m, n, k);
    case WINO_ISA_AVX512:
        return wino_f32_gemm_packed_scratch_bytes__avx512(m, n, k);
    case WINO_ISA_AVX2:
        return wino_f32_gemm_packed_scratch_bytes__avx2(m, n, k);
    default:
        return 0;
    }
}

void wino_f32_gemm_packed(enum wino_isa isa, int m, int n, int k, const float *a, ptrdiff_t lda,
                          const void *packed_b, float *c, ptrdiff_t ldc, int accumulate,
                          void *scratch)
{
    if (m <= 0 || n <= 0 || k < 0)
        return;
    switch (isa) {
    case WINO_ISA_AMX_BF16:
        wino_f32_gemm_packed__amx(m, n, k, a, lda, packed_b, c, ldc, accumulate, scratch);
        return;
    case WINO_ISA_AVX512:
        wino_f32_gemm_packed__avx512(m, n, k, a, lda, packed_b, c, ldc, accumulate, scratch);
        return;
    case WINO_ISA_AVX2:
        wino_f32_gemm_packed__avx2(m, n, k, a, lda, packed_b, c, ldc, accumulate, scratch);
        return;
    default:
        gemm_scalar(m, n, k, a, lda, (const float *)packed_b, n, c, ldc, accumulate);
        return;
    }
}
