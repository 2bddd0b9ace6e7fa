#include "cpu/winograd_s8_transforms.h"

#include "cpu/generated/int8_recipes.h"

/* Each transform is built for AVX-512 (BW for 16-bit lanes), AVX2 and the baseline; the caller
 * picks one (normally wino_cpu_isa()). */
#if defined(__GNUC__) && defined(__x86_64__)
#define X86 1
#define TGT_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define TGT_AVX2 __attribute__((target("avx2")))
#endif
#define TGT_BASE

typedef int16_t v32s __attribute__((vector_size(64)));
typedef int16_t v16s __attribute__((vector_size(32)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef float v16f __attribute__((vector_size(64)));

/* Unaligned vector access (macros: vector-valued functions would change ABIs across clones). */
typedef int16_t v32s_u __attribute__((vector_size(64), aligned(2), may_alias));
typedef int16_t v16s_u __attribute__((vector_size(32), aligned(2), may_alias));
typedef int32_t v16i_u __attribute__((vector_size(64), aligned(4), may_alias));
typedef uint8_t v16b_u __attribute__((vector_size(16), aligned(1), may_alias));
#define LOAD(type, p) (*(const type *)(p))

/* dst = quantize_v(v) + 128 (docs/int8-winograd.md step 2) lane-wise: (float)v exact (|v| <
 * 2^24), one rounding of the product (this file is built without contraction), the clamp to
 * +-127 on the product, then the rounding to nearest even (the clamp may come first: the
 * rounding is monotone and +-127 are integers; it also keeps every value small for the
 * conversions). */
#define ROUND_MAGIC 12582912.0f
#define QUANTIZE_STORE_base QUANTIZE_STORE
#ifdef X86
#include <immintrin.h>
/* The same steps on two halves of 8 lanes with AVX2's rounding conversion; the bytes (1..255)
 * are narrowed by unsigned saturating packs, whose lane interleaving one 64-bit permute
 * undoes. */
#define QUANTIZE_STORE_avx2(v, f_a, dst)                                                           \
    do {                                                                                           \
        const v16i v_ = (v);                                                                       \
        const __m256 f_ = _mm256_set1_ps(f_a), top_ = _mm256_set1_ps(127.0f);                       \
        __m256i h_[2];                                                                             \
        h_[0] = (__m256i)__builtin_shufflevector(v_, v_, 0, 1, 2, 3, 4, 5, 6, 7);                  \
        h_[1] = (__m256i)__builtin_shufflevector(v_, v_, 8, 9, 10, 11, 12, 13, 14, 15);            \
        for (int i_ = 0; i_ < 2; i_++) {                                                           \
            const __m256 t_ = _mm256_min_ps(                                                       \
                _mm256_max_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(h_[i_]), f_),                       \
                              _mm256_set1_ps(-127.0f)),                                            \
                top_);                                                                              \
            h_[i_] = _mm256_add_epi32(_mm256_cvtps_epi32(t_), _mm256_set1_epi32(128));             \
        }                                                                                          \
        const __m256i w_ = _mm256_permute4x64_epi64(_mm256_packus_epi32(h_[0], h_[1]), 0xd8);      \
        _mm_storeu_si128((__m128i *)(dst), _mm_packus_epi16(_mm256_castsi256_si128(w_),            \
                                                            _mm256_extracti128_si256(w_, 1)));     \
    } while (0)
/* The same steps with AVX-512's own rounding conversion (vcvtps2dq rounds to nearest even in
 * the default mode); the low bytes of -127..127, their sign bit flipped, are the value + 128. */
#define QUANTIZE_STORE_avx512(v, f_a, dst)                                                         \
    do {                                                                                           \
        const __m512 t_ = _mm512_min_ps(                                                           \
            _mm512_max_ps(_mm512_mul_ps(_mm512_cvtepi32_ps((__m512i)(v)), _mm512_set1_ps(f_a)),    \
                          _mm512_set1_ps(-127.0f)),                                                \
            _mm512_set1_ps(127.0f));                                                               \
        _mm_storeu_si128((__m128i *)(dst),                                                         \
                         _mm_xor_si128(_mm512_cvtepi32_epi8(_mm512_cvtps_epi32(t_)),               \
                                       _mm_set1_epi8((char)0x80)));                                \
    } while (0)
#endif
/* Comparisons give all-ones lanes: the clamps are mask selects; the adder rounds (t + 1.5 * 2^23
 * - 1.5 * 2^23 is t rounded to nearest even for |t| < 2^22). */
#define QUANTIZE_STORE(v, f_a, dst)                                                                \
    do {                                                                                           \
        const v16f top_ = (v16f){0} + 127.0f, bottom_ = -top_;                                           \
        v16f t_ = __builtin_convertvector((v16i)(v), v16f) * (f_a);                                \
        v16i m_ = t_ > top_;                                                                        \
        t_ = (v16f)((m_ & (v16i)top_) | (~m_ & (v16i)t_));                                          \
        m_ = t_ < bottom_;                                                                             \
        t_ = (v16f)((m_ & (v16i)bottom_) | (~m_ & (v16i)t_));                                          \
        const v16i r_ = __builtin_convertvector((t_ + ROUND_MAGIC) - ROUND_MAGIC, v16i);           \
        *(v16b_u *)(dst) = __builtin_convertvector(r_ + 128, v16b_u);                              \
    } while (0)

/* V = B'^T d B' in 16-bit lanes (|V| <= 255 beta_B^2 fits for F(2,3) and F(4,3)). */
#define INPUT16(M, A, ISA, TGT)                                                                    \
    TGT static void input_f##M##ISA(const int16_t *win, int cp, float f_a, uint8_t *out,            \
                                  size_t pos_stride)                                               \
    {                                                                                              \
        for (int c0 = 0; c0 < cp; c0 += 32) {                                                      \
            v32s d[A][A], t[A][A];                                                                 \
            _Pragma("GCC unroll 8") for (int i = 0; i < A; i++)                                    \
                _Pragma("GCC unroll 8") for (int j = 0; j < A; j++)                                \
                    d[i][j] = LOAD(v32s_u, win + (size_t)(i * A + j) * cp + c0);                         \
            _Pragma("GCC unroll 8") for (int j = 0; j < A; j++) {                                  \
                v32s col[A], res[A];                                                               \
                _Pragma("GCC unroll 8") for (int u = 0; u < A; u++) col[u] = d[u][j];              \
                WINO_S8_BT_F##M(v32s, col, res);                                                   \
                _Pragma("GCC unroll 8") for (int i = 0; i < A; i++) t[i][j] = res[i];              \
            }                                                                                      \
            _Pragma("GCC unroll 8") for (int i = 0; i < A; i++) {                                  \
                v32s row[A];                                                                       \
                WINO_S8_BT_F##M(v32s, t[i], row);                                                  \
                _Pragma("GCC unroll 8") for (int j = 0; j < A; j++) {                              \
                const v32s s = row[j];                                                             \
                uint8_t *o_ = out + (size_t)(i * A + j) * pos_stride + c0;                         \
                const v16s lo_ = __builtin_shufflevector(s, s, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,   \
                                                         11, 12, 13, 14, 15);                      \
                const v16s hi_ = __builtin_shufflevector(s, s, 16, 17, 18, 19, 20, 21, 22, 23, 24, \
                                                         25, 26, 27, 28, 29, 30, 31);              \
                QUANTIZE_STORE##ISA(__builtin_convertvector(lo_, v16i), f_a, o_);                  \
                QUANTIZE_STORE##ISA(__builtin_convertvector(hi_, v16i), f_a, o_ + 16);             \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

/* The same in 32-bit lanes (F(6,3): |V| <= 255 * 2500). */
#define INPUT32(M, A, ISA, TGT)                                                                    \
    TGT static void input_f##M##ISA(const int16_t *win, int cp, float f_a, uint8_t *out,            \
                                  size_t pos_stride)                                               \
    {                                                                                              \
        for (int c0 = 0; c0 < cp; c0 += 16) {                                                      \
            v16i d[A][A], t[A][A];                                                                 \
            _Pragma("GCC unroll 8") for (int i = 0; i < A; i++)                                    \
                _Pragma("GCC unroll 8") for (int j = 0; j < A; j++) {                              \
                d[i][j] = __builtin_convertvector(                                                 \
                    LOAD(v16s_u, win + (size_t)(i * A + j) * cp + c0), v16i);                      \
            }                                                                                      \
            _Pragma("GCC unroll 8") for (int j = 0; j < A; j++) {                                  \
                v16i col[A], res[A];                                                               \
                _Pragma("GCC unroll 8") for (int u = 0; u < A; u++) col[u] = d[u][j];              \
                WINO_S8_BT_F##M(v16i, col, res);                                                   \
                _Pragma("GCC unroll 8") for (int i = 0; i < A; i++) t[i][j] = res[i];              \
            }                                                                                      \
            _Pragma("GCC unroll 8") for (int i = 0; i < A; i++) {                                  \
                v16i row[A];                                                                       \
                WINO_S8_BT_F##M(v16i, t[i], row);                                                  \
                _Pragma("GCC unroll 8") for (int j = 0; j < A; j++)                                \
                    QUANTIZE_STORE##ISA(row[j], f_a, out + (size_t)(i * A + j) * pos_stride + c0); \
            }                                                                                      \
        }                                                                                          \
    }

/* Y = A'^T M A' in 32-bit lanes. */
#define OUTPUT(M, A, ISA, TGT)                                                                     \
    TGT static void output_f##M##ISA(const int32_t *m_rows, size_t pos_stride, int kp, int32_t *y)  \
    {                                                                                              \
        for (int k0 = 0; k0 < kp; k0 += 16) {                                                      \
            v16i t[M][A];                                                                          \
            _Pragma("GCC unroll 8") for (int s = 0; s < A; s++) {                                  \
                v16i col[A], res[M];                                                               \
                _Pragma("GCC unroll 8") for (int u = 0; u < A; u++)                                \
                    col[u] = LOAD(v16i_u, m_rows + (size_t)(u * A + s) * pos_stride + k0);         \
                WINO_S8_AT_F##M(v16i, col, res);                                                   \
                _Pragma("GCC unroll 8") for (int i = 0; i < M; i++) t[i][s] = res[i];              \
            }                                                                                      \
            _Pragma("GCC unroll 8") for (int i = 0; i < M; i++) {                                  \
                v16i row[M];                                                                       \
                WINO_S8_AT_F##M(v16i, t[i], row);                                                  \
                _Pragma("GCC unroll 8") for (int j = 0; j < M; j++)                                \
                    *(v16i_u *)(y + (size_t)(i * M + j) * kp + k0) = row[j];                       \
            }                                                                                      \
        }                                                                                          \
    }

#define ALL_TRANSFORMS(ISA, TGT)                                                                   \
    INPUT16(2, 4, ISA, TGT)                                                                        \
    INPUT16(4, 6, ISA, TGT)                                                                        \
    INPUT32(6, 8, ISA, TGT)                                                                        \
    OUTPUT(2, 4, ISA, TGT)                                                                         \
    OUTPUT(4, 6, ISA, TGT)                                                                         \
    OUTPUT(6, 8, ISA, TGT)
ALL_TRANSFORMS(_base, TGT_BASE)
#ifdef X86
ALL_TRANSFORMS(_avx2, TGT_AVX2)
ALL_TRANSFORMS(_avx512, TGT_AVX512)
#endif

static void widen_base(const void *src, int16_t *dst, size_t n, int x_signed)
{
    if (x_signed)
        for (size_t i = 0; i < n; i++)
            dst[i] = ((const int8_t *)src)[i];
    else
        for (size_t i = 0; i < n; i++)
            dst[i] = ((const uint8_t *)src)[i];
}

#ifdef X86
/* 32 bytes a step; the tail under a mask. */
TGT_AVX512 static void widen_avx512(const void *src, int16_t *dst, size_t n, int x_signed)
{
    const uint8_t *s = (const uint8_t *)src;
    for (size_t i = 0; i < n; i += 32) {
        const __mmask32 m = n - i >= 32 ? 0xffffffffu : (1u << (n - i)) - 1u;
        const __m256i v = _mm256_maskz_loadu_epi8(m, s + i);
        _mm512_mask_storeu_epi16(dst + i, m,
                                 x_signed ? _mm512_cvtepi8_epi16(v) : _mm512_cvtepu8_epi16(v));
    }
}

/* 16 bytes a step, the tail as the baseline's. */
TGT_AVX2 static void widen_avx2(const void *src, int16_t *dst, size_t n, int x_signed)
{
    const uint8_t *s = (const uint8_t *)src;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        _mm256_storeu_si256((__m256i *)(dst + i),
                            x_signed ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v));
    }
    widen_base(s + i, dst + i, n - i, x_signed);
}
#endif

wino_s8_widen_fn *wino_s8_widen(enum wino_isa isa)
{
#ifdef X86
    if (isa == WINO_ISA_AVX512)
        return widen_avx512;
    if (isa == WINO_ISA_AVX2)
        return widen_avx2;
#else
    (void)isa;
#endif
    return widen_base;
}

/* The instance for isa. */
#ifdef X86
#define DISPATCH(stage, m)                                                                         \
    do {                                                                                           \
        if (isa == WINO_ISA_AVX512)                                                                \
            return m == 2 ? stage##_f2_avx512 : m == 4 ? stage##_f4_avx512 : stage##_f6_avx512;    \
        if (isa == WINO_ISA_AVX2)                                                                  \
            return m == 2 ? stage##_f2_avx2 : m == 4 ? stage##_f4_avx2 : stage##_f6_avx2;          \
        return m == 2 ? stage##_f2_base : m == 4 ? stage##_f4_base : stage##_f6_base;              \
    } while (0)
#else
#define DISPATCH(stage, m)                                                                         \
    do {                                                                                           \
        (void)isa;                                                                                 \
        return m == 2 ? stage##_f2_base : m == 4 ? stage##_f4_base : stage##_f6_base;              \
    } while (0)
#endif

wino_s8_input_fn *wino_s8_input_transform(int m, enum wino_isa isa)
{
    if (m != 2 && m != 4 && m != 6)
        return NULL;
    DISPATCH(input, m);
}

wino_s8_output_fn *wino_s8_output_transform(int m, enum wino_isa isa)
{
    if (m != 2 && m != 4 && m != 6)
        return NULL;
    DISPATCH(output, m);
}
