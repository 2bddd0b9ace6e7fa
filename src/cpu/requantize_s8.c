#include "cpu/requantize_s8.h"

#include "cpu/cpu_features.h"

/* The channels of a row from the first one on: y, offset (or NULL), out and the layer's
 * scales and biases all start there. */
struct span {
    const int32_t *y, *offset;
    const float *scale, *bias;
    float lo, hi;
    uint8_t *out;
};

/* out[k] for the channels from k to n - 1. */
static void row_scalar(const struct span *p, int k, int n)
{
    for (; k < n; k++)
        p->out[k] = (uint8_t)wino_int8_requantize(p->y[k] + (p->offset ? p->offset[k] : 0),
                                                  p->scale[k], p->bias[k], p->lo, p->hi);
}

#ifdef WINO_CPU_X86
#include <immintrin.h>

/* fmadd rounds once like fmaf; max then min is the scalar clamp (no NaN here); vcvtps2dq
 * rounds to nearest even like rintf in the default mode. */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void row_avx512(const struct span *p,
                                                                             int n)
{
    const __m512 lo = _mm512_set1_ps(p->lo), hi = _mm512_set1_ps(p->hi);
    int k = 0;
    for (; k + 16 <= n; k += 16) {
        __m512i s = _mm512_loadu_si512(p->y + k);
        if (p->offset)
            s = _mm512_add_epi32(s, _mm512_loadu_si512(p->offset + k));
        __m512 r = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_loadu_ps(p->scale + k),
                                   _mm512_loadu_ps(p->bias + k));
        r = _mm512_min_ps(_mm512_max_ps(r, lo), hi);
        _mm_storeu_si128((__m128i *)(p->out + k), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(r)));
    }
    row_scalar(p, k, n);
}

/* The same steps on 8 lanes; the low byte of each lane is picked by a byte shuffle within each
 * 128-bit half, and the halves' 4 bytes are brought together by a lane permute. */
__attribute__((target("avx2,fma"))) static void row_avx2(const struct span *p, int n)
{
    const __m256 lo = _mm256_set1_ps(p->lo), hi = _mm256_set1_ps(p->hi);
    const __m256i low_bytes = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                               -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1,
                                               -1, -1, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
    int k = 0;
    for (; k + 8 <= n; k += 8) {
        __m256i s = _mm256_loadu_si256((const __m256i *)(p->y + k));
        if (p->offset)
            s = _mm256_add_epi32(s, _mm256_loadu_si256((const __m256i *)(p->offset + k)));
        __m256 r = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_loadu_ps(p->scale + k),
                                   _mm256_loadu_ps(p->bias + k));
        r = _mm256_min_ps(_mm256_max_ps(r, lo), hi);
        const __m256i b = _mm256_permutevar8x32_epi32(
            _mm256_shuffle_epi8(_mm256_cvtps_epi32(r), low_bytes), join);
        _mm_storel_epi64((__m128i *)(p->out + k), _mm256_castsi256_si128(b));
    }
    row_scalar(p, k, n);
}
#endif

static void requantize(enum wino_isa isa, const struct span *p, int n)
{
#ifdef WINO_CPU_X86
    if (isa == WINO_ISA_AVX512) {
        row_avx512(p, n);
        return;
    }
    if (isa == WINO_ISA_AVX2) {
        row_avx2(p, n);
        return;
    }
#else
    (void)isa;
#endif
    row_scalar(p, 0, n);
}

void wino_s8_requantize_row(enum wino_isa isa, const struct wino_int8_layer *L, const int32_t *y,
                            const int32_t *offset, int k0, int k1, uint8_t *out)
{
    const struct span p = {y + k0, offset ? offset + k0 : NULL, L->scale + k0, L->bias + k0,
                           L->lo, L->hi, out + k0};
    requantize(isa, &p, k1 - k0);
}

void wino_s8_requantize_chunk(enum wino_isa isa, const struct wino_int8_layer *L,
                              const int32_t *y, int k0, int k1, uint8_t *out)
{
    const struct span p = {y, NULL, L->scale + k0, L->bias + k0, L->lo, L->hi, out + k0};
    requantize(isa, &p, k1 - k0);
}
