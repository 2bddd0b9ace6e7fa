/* A 16 x 16 block of floats transposed in AVX-512 registers, shared by the AMX GEMM's split of
 * A^T (src/cpu/gemm_f32_amx.c) and the NCHW <-> NHWC copies (src/cpu/layout_f32.c). x86-64 with
 * GCC or Clang only; callers compile it under their own target attributes (a superset of
 * avx512f). */
#ifndef WINO_CPU_TRANSPOSE16_H
#define WINO_CPU_TRANSPOSE16_H

#include <immintrin.h>

/* r[0..15] transposed in place (r[i][j] becomes r[j][i]). */
__attribute__((target("avx512f"))) static inline void wino_transpose16(__m512 r[16])
{
    __m512 t[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    /* then r[4 i + c], 128-bit lane l: column 4 l + c of rows 4 i .. 4 i + 3 */
    for (int i = 0; i < 4; i++)
        for (int h = 0; h < 2; h++) {
            const __m512d x = _mm512_castps_pd(t[4 * i + h]);
            const __m512d y = _mm512_castps_pd(t[4 * i + h + 2]);
            r[4 * i + 2 * h] = _mm512_castpd_ps(_mm512_unpacklo_pd(x, y));
            r[4 * i + 2 * h + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(x, y));
        }
    for (int c = 0; c < 4; c++) {
        const __m512 a = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x44);
        const __m512 b = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xee);
        const __m512 d = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x44);
        const __m512 e = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xee);
        t[c] = _mm512_shuffle_f32x4(a, d, 0x88);
        t[4 + c] = _mm512_shuffle_f32x4(a, d, 0xdd);
        t[8 + c] = _mm512_shuffle_f32x4(b, e, 0x88);
        t[12 + c] = _mm512_shuffle_f32x4(b, e, 0xdd);
    }
    for (int i = 0; i < 16; i++)
        r[i] = t[i];
}

#endif
