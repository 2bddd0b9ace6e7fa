/* The transforms of the WinRS kernels (filter G g, input B^T d, output A^T M): one sparse
 * matrix times a few 16-float channel vectors, in the widest vectors of each ISA (AVX-512: one
 * zmm per 16 floats, AVX2: two ymm, baseline: four xmm), with runtime dispatch like the GEMM.
 * The matrices are the generator's, rounded to float, kept as rows of their nonzero entries;
 * emitting them as straight-line code (as src/cpu/generated does for the 2D forward tiles)
 * would also turn the +-1 entries into plain additions and share the products of symmetric
 * pairs of rows, about halving the multiplications (docs/transform-ops.md), at the price of one
 * function per kernel. */
#include <stddef.h>

#include "cpu/winrs_f32.h"

#if !defined(__GNUC__)
#error "the WinRS transforms use GCC / Clang vector extensions"
#endif

/* Defines NAME(m, in, in_stride, lo, hi, out, out_stride, vecs) for vectors of W floats, built
 * for the target TGT: up to 4 x 16 floats per row, accumulated in 64 / W registers with
 * MADD(a, b, acc) = acc + a * b (one fused multiply-add where the ISA has it). */
#define WINRS_TRANSFORM(NAME, TGT, W, MADD)                                                     \
    typedef float NAME##_vec __attribute__((vector_size(4 * W)));                              \
    typedef float NAME##_in __attribute__((vector_size(4 * W), aligned(4)));                   \
    static inline __attribute__((always_inline)) TGT void NAME##_n(                            \
        const struct wino_winrs_matrix *m, const float *in, ptrdiff_t in_stride, int lo,        \
        int hi, float *out, ptrdiff_t out_stride, const int n)                                 \
    {                                                                                          \
        for (int a = 0; a < m->rows; a++) {                                                    \
            NAME##_vec acc[64 / W];                                                            \
            for (int v = 0; v < n; v++)                                                        \
                acc[v] = (NAME##_vec){0};                                                      \
            for (int e = m->start[a]; e < m->start[a + 1]; e++) {                              \
                if (m->col[e] < lo || m->col[e] >= hi)                                         \
                    continue;                                                                  \
                const NAME##_vec c = m->val[e] - (NAME##_vec){0};                              \
                const NAME##_in *row = (const NAME##_in *)(in + (m->col[e] - lo) * in_stride);  \
                for (int v = 0; v < n; v++)                                                    \
                    acc[v] = MADD(c, (NAME##_vec)row[v], acc[v]);                              \
            }                                                                                  \
            NAME##_vec *dst = (NAME##_vec *)(out + a * out_stride);                            \
            for (int v = 0; v < n; v++)                                                        \
                dst[v] = acc[v];                                                               \
        }                                                                                      \
    }                                                                                          \
    static TGT void NAME(const struct wino_winrs_matrix *m, const float *in,                   \
                         ptrdiff_t in_stride, int lo, int hi, float *out,                      \
                         ptrdiff_t out_stride, int vecs)                                       \
    {                                                                                          \
        switch (vecs) {                                                                        \
        case 1:                                                                                \
            NAME##_n(m, in, in_stride, lo, hi, out, out_stride, 16 / W);                       \
            break;                                                                             \
        case 2:                                                                                \
            NAME##_n(m, in, in_stride, lo, hi, out, out_stride, 32 / W);                       \
            break;                                                                             \
        case 3:                                                                                \
            NAME##_n(m, in, in_stride, lo, hi, out, out_stride, 48 / W);                       \
            break;                                                                             \
        default:                                                                               \
            NAME##_n(m, in, in_stride, lo, hi, out, out_stride, 64 / W);                       \
            break;                                                                             \
        }                                                                                      \
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
