#include "cpu/requantize_s8.h"

#include "cpu/cpu_features.h"

/* out[k] for k in [k0, k1). */
static void row_scalar(const struct wino_int8_layer *L, const int32_t *y, const int32_t *offset,
                       uint8_t *out, int k0, int k1)
{
    for (int k = k0; k < k1; k++)
        out[k] = (uint8_t)wino_int8_requantize(y[k] + (offset ? offset[k] : 0), L->scale[k],
                                               L->bias[k], L->lo, L->hi);
}

#ifdef WINO_CPU_X86
#include <immintrin.h>

/* fmadd rounds once like fmaf; max then min is the scalar clamp (no NaN here); vcvtps2dq
 * rounds to nearest even like rintf in the default mode. */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void
row_avx512(const struct wino_int8_layer *L, const int32_t *y, const int32_t *offset, uint8_t *out,
           int k, int k1)
{
    const __m512 lo = _mm512_set1_ps(L->lo), hi = _mm512_set1_ps(L->hi);
    for (; k + 16 <= k1; k += 16) {
        __m512i s = _mm512_loadu_si512(y + k);
        if (offset)
            s = _mm512_add_epi32(s, _mm512_loadu_si512(offset + k));
        __m512 r = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_loadu_ps(L->scale + k),
                                   _mm512_loadu_ps(L->bias + k));
        r = _mm512_min_ps(_mm512_max_ps(r, lo), hi);
        _mm_storeu_si128((__m128i *)(out + k), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(r)));
    }
    row_scalar(L, y, offset, out, k, k1);
}

/* The same steps on 8 lanes; the low byte of each lane is picked by a byte shuffle within each
 * 128-bit half, and the halves' 4 bytes are brought together by a lane permute. */
__attribute__((target("avx2,fma"))) static void row_avx2(const struct wino_int8_layer *L,
                                                        const int32_t *y, const int32_t *offset,
                                                        uint8_t *out, int k, int k1)
{
    const __m256 lo = _mm256_set1_ps(L->lo), hi = _mm256_set1_ps(L->hi);
    const __m256i low_bytes = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                               -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1,
                                               -1, -1, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
    for (; k + 8 <= k1; k += 8) {
        __m256i s = _mm256_loadu_si256((const __m256i *)(y + k));
        if (offset)
            s = _mm256_add_epi32(s, _mm256_loadu_si256((const __m256i *)(offset + k)));
        __m256 r = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_loadu_ps(L->scale + k),
                                   _mm256_loadu_ps(L->bias + k));
        r = _mm256_min_ps(_mm256_max_ps(r, lo), hi);
        const __m256i b = _mm256_permutevar8x32_epi32(
            _mm256_shuffle_epi8(_mm256_cvtps_epi32(r), low_bytes), join);
        _mm_storel_epi64((__m128i *)(out + k), _mm256_castsi256_si128(b));
    }
    row_scalar(L, y, offset, out, k, k1);
}
#endif

void wino_s8_requantize_row(enum wino_isa isa, const struct wino_int8_layer *L, const int32_t *y,
                            const int32_t *offset, int k0, int k1, uint8_t *out)
{
#ifdef WINO_CPU_X86
    if (isa == WINO_ISA_AVX512) {
        row_avx512(L, y, offset, out, k0, k1);
        return;
    }
    if (isa == WINO_ISA_AVX2) {
        row_avx2(L, y, offset, out, k0, k1);
        return;
    }
#else
    (void)isa;
#endif
    row_scalar(L, y, offset, out, k0, k1);
}
