/* The transforms of the WinRS kernels (filter G g, input B^T d, output A^T M): one sparse
 * matrix times a few 16-float channel vectors, in the widest vectors of each ISA (AVX-512: one
 * zmm per 16 floats, AVX2: two ymm, baseline: four xmm), with runtime dispatch like the GEMM.
 * The matrices are the generator's, rounded to float, kept as rows of their nonzero entries in
 * two parts (src/cpu/winrs_f32.c): a row's two parts are summed in two sets of accumulators,
 * so that twice as many chains of FMAs overlap their latency, and a symmetric pair of rows
 * takes the multiplications of one (E + O, E - O). The channels go by groups of at most eight
 * vectors (AVX2: a block of 64 channels at once; measured faster than two groups of four that
 * keep both sets in registers, as each group reads the matrix and the input columns again). */
#include <stddef.h>

#include "cpu/winrs_f32.h"

#if !defined(__GNUC__)
#error "the WinRS transforms use GCC / Clang vector extensions"
#endif

/* A group of N vectors, N known to the compiler. */
#define WINRS_CASE(NAME, N)                                                                    \
    case N:                                                                                    \
        NAME##_n(m, in, in_stride, lo, hi, out, out_stride, N);                                \
        break;

/* Defines NAME(m, in, in_stride, lo, hi, out, out_stride, vecs) for vectors of W floats, built
 * for the target TGT, with MADD(a, b, acc) = acc + a * b (one fused multiply-add where the ISA
 * has it). */
#define WINRS_TRANSFORM(NAME, TGT, W, MADD)                                                     \
    typedef float NAME##_vec __attribute__((vector_size(4 * W)));                              \
    typedef float NAME##_in __attribute__((vector_size(4 * W), aligned(4)));                   \
    /* acc[v] (+)= the entries [e0, e1) of a row times in, n vectors */                        \
    static inline __attribute__((always_inline)) TGT void NAME##_part(                         \
        const struct wino_winrs_matrix *m, int e0, int e1, const float *in,                    \
        ptrdiff_t in_stride, int lo, int hi, NAME##_vec *acc, const int n)                     \
    {                                                                                          \
        for (int v = 0; v < n; v++)                                                            \
            acc[v] = (NAME##_vec){0};                                                          \
        for (int e = e0; e < e1; e++) {                                                        \
            if (m->col[e] < lo || m->col[e] >= hi)                                             \
                continue;                                                                      \
            const NAME##_vec c = m->val[e] - (NAME##_vec){0};                                  \
            const NAME##_in *row = (const NAME##_in *)(in + (m->col[e] - lo) * in_stride);     \
            for (int v = 0; v < n; v++)                                                        \
                acc[v] = MADD(c, (NAME##_vec)row[v], acc[v]);                                  \
        }                                                                                      \
    }                                                                                          \
    /* n (at most 8) vectors of every row */                                                   \
    static inline __attribute__((always_inline)) TGT void NAME##_n(                            \
        const struct wino_winrs_matrix *m, const float *in, ptrdiff_t in_stride, int lo,        \
        int hi, float *out, ptrdiff_t out_stride, const int n)                                 \
    {                                                                                          \
        for (int a = 0; a < m->rows; a++) {                                                    \
            NAME##_vec e_acc[8], o_acc[8];                                                     \
            NAME##_part(m, m->start[a], m->mid[a], in, in_stride, lo, hi, e_acc, n);           \
            NAME##_part(m, m->mid[a], m->start[a + 1], in, in_stride, lo, hi, o_acc, n);       \
            NAME##_vec *dst = (NAME##_vec *)(out + a * out_stride);                            \
            for (int v = 0; v < n; v++)                                                        \
                dst[v] = e_acc[v] + o_acc[v];                                                  \
            if (m->paired[a]) {                                                                \
                dst = (NAME##_vec *)(out + ++a * out_stride);                                  \
                for (int v = 0; v < n; v++)                                                    \
                    dst[v] = e_acc[v] - o_acc[v];                                              \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
    /* left, a multiple of 16 / W, takes one of the cases */                                   \
    static TGT void NAME(const struct wino_winrs_matrix *m, const float *in,                   \
                         ptrdiff_t in_stride, int lo, int hi, float *out,                      \
                         ptrdiff_t out_stride, int vecs)                                       \
    {                                                                                          \
        for (int left = vecs * 16 / W; left > 0; left -= 8, in += 8 * W, out += 8 * W)        \
            switch (left) {                                                                    \
                WINRS_CASE(NAME, 1)                                                            \
                WINRS_CASE(NAME, 2)                                                            \
                WINRS_CASE(NAME, 3)                                                            \
                WINRS_CASE(NAME, 4)                                                            \
                WINRS_CASE(NAME, 6)                                                            \
            default:                                                                           \
                NAME##_n(m, in, in_stride, lo, hi, out, out_stride, 8);                        \
                break;                                                                         \
            }                                                                                  \
    }

#define MADD_PLAIN(a, b, acc) ((acc) + (a) * (b))
WINRS_TRANSFORM(transform_scalar, , 4, MADD_PLAIN)
#if defined(__x86_64__)
#include <immintrin.h>
WINRS_TRANSFORM(transform_avx2, __attribute__((target("avx2,fma"))), 8, _mm256_fmadd_ps)
WINRS_TRANSFORM(transform_avx512, __attribute__((target("avx512f"))), 16, _mm512_fmadd_ps)
#endif

void wino_f32_winrs_transform(enum wino_isa isa, const struct wino_winrs_matrix *m,
                              const float *in, ptrdiff_t in_stride, int lo, int hi, float *out,
                              ptrdiff_t out_stride, int vecs)
{
#if defined(__x86_64__)
    if (isa == WINO_ISA_AVX512)
        transform_avx512(m, in, in_stride, lo, hi, out, out_stride, vecs);
    else if (isa == WINO_ISA_AVX2)
        transform_avx2(m, in, in_stride, lo, hi, out, out_stride, vecs);
    else
#endif
        transform_scalar(m, in, in_stride, lo, hi, out, out_stride, vecs);
}
