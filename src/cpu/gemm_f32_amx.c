/* FP32 GEMM on AMX-BF16 tiles, as exact as an FP32 one ("6xBF16").
 *
 * Each operand is split into three BF16 values, x = x0 + x1 + x2 (x0 = bf16(x), x1 =
 * bf16(x - x0), x2 = bf16(x - x0 - x1): 3 x 8 significant bits, about FP32's 24), and
 * a b is summed as the six products whose parts' orders add up to at most 2:
 * a0 b0 + a0 b1 + a1 b0 + a0 b2 + a1 b1 + a2 b0. The three left out are below 2^-24 of |a b|.
 * TDPBF16PS multiplies BF16 pairs exactly and adds in FP32 (round to nearest even), so the sums
 * behave like an FP32 GEMM's over 6 k terms. Denormals are flushed (inputs or parts below
 * 2^-126: a part of a value below about 2^-110 is lost) and an infinite input gives NaN.
 *
 * Packed B: k and n padded to 32, [part][16-column panel][k pair][16 columns][2] BF16: a B tile
 * (16 k pairs x 16 columns) is 1 KiB of contiguous bytes. A is split per call into the scratch,
 * tiles of 16 rows x 32 k with m padded to 16 and k to 32 (zeros). C: 2 x 2 blocks of 16 x 16
 * FP32 tiles (tmm0-3; 1 x 2 for the last 16 rows), A tiles tmm4-5, B tiles tmm6-7; per 32 k, A2
 * is loaded once for B0, A1 for B1 and B0, A0 for B2, B1 and B0 (the small products first):
 * 6 tile-pair loads for 24 TDPBF16PS. Edge blocks go through a 32 x 32 scratch block. */
#define _GNU_SOURCE
#include "cpu/gemm_f32.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)

#include <immintrin.h>
#include <stdint.h>

#include "cpu/amx.h"
#include "cpu/transpose16.h"

#define TGT __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512bf16")))
#define PARTS 3

static size_t round32(int v)
{
    return ((size_t)v + 31) / 32 * 32;
}

static size_t round16(int v)
{
    return ((size_t)v + 15) / 16 * 16;
}

size_t wino_f32_gemm_packed_b_bytes__amx(int k, int n)
{
    return PARTS * round32(k) * round32(n) * sizeof(uint16_t);
}

/* The 32 x 32 FP32 edge block, then the split A. */
size_t wino_f32_gemm_packed_scratch_bytes__amx(int m, int n, int k)
{
    (void)n;
    return 32 * 32 * sizeof(float) + PARTS * round16(m) * round32(k) * sizeof(uint16_t);
}

/* FP32 of the BF16 words 0-15 (low) or 16-31 (high) of b. */
TGT static inline __m512 bf16_low(__m512i b)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(b)), 16));
}
TGT static inline __m512 bf16_high(__m512i b)
{
    return _mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(b, 1)), 16));
}

/* The three BF16 parts of 32 FP32 values (lo: values 0-15, hi: 16-31), in order. */
TGT static inline void split32(__m512 lo, __m512 hi, __m512i part[PARTS])
{
    for (int p = 0; p < PARTS; p++) {
        part[p] = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
        if (p + 1 < PARTS) {
            lo = _mm512_sub_ps(lo, bf16_low(part[p]));
            hi = _mm512_sub_ps(hi, bf16_high(part[p]));
        }
    }
}

/* 32 values of row x from column j (zeros past cols), as two vectors. */
TGT static inline void load32(const float *x, int j, int cols, __m512 *lo, __m512 *hi)
{
    const int left = cols - j;
    if (left >= 32) {
        *lo = _mm512_loadu_ps(x + j);
        *hi = _mm512_loadu_ps(x + j + 16);
        return;
    }
    const __mmask16 mlo = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
    const __mmask16 mhi = left <= 16 ? 0 : (__mmask16)((1u << (left - 16)) - 1);
    *lo = _mm512_maskz_loadu_ps(mlo, x + j);
    *hi = _mm512_maskz_loadu_ps(mhi, x + j + 16);
}

/* B's pairs of rows (k, k + 1) interleaved, 16 columns a panel: element (k, c) of part p at
 * [p][c / 16][k / 2][c % 16][k % 2]. */
TGT void wino_f32_gemm_pack_b__amx(int k, int n, const float *b, ptrdiff_t ldb, void *packed)
{
    const size_t kp = round32(k), np = round32(n);
    uint16_t *out = packed;
    memset(out, 0, wino_f32_gemm_packed_b_bytes__amx(k, n));
    const __m512i mix = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9,
                                         24, 8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1,
                                         16, 0);
    for (int r = 0; r < k; r += 2)
        for (int c = 0; c < n; c += 16) {
            /* rows r and r + 1 of 16 columns: their parts, interleaved by mix */
            __m512 even, odd, unused;
            load32(b + (size_t)r * ldb, c, c + 16 < n ? c + 16 : n, &even, &unused);
            if (r + 1 < k)
                load32(b + (size_t)(r + 1) * ldb, c, c + 16 < n ? c + 16 : n, &odd, &unused);
            else
                odd = _mm512_setzero_ps();
            __m512i part[PARTS];
            split32(even, odd, part);
            for (int p = 0; p < PARTS; p++)
                _mm512_storeu_si512(out + (((size_t)p * (np / 16) + c / 16) * (kp / 2) + r / 2) * 32,
                                    _mm512_permutexvar_epi16(mix, part[p]));
        }
}

/* A's parts into out as tiles of 16 rows x 32 k, each 1 KiB contiguous (rows 64 bytes apart):
 * [part][row / 16][k / 32][row % 16][k % 32], rows and k padded with zeros to mp and kp. */
TGT static void split_a(int m, int k, const float *a, ptrdiff_t lda, uint16_t *out, size_t mp,
                        size_t kp)
{
    for (size_t i = 0; i < mp; i++)
        for (size_t j = 0; j < kp; j += 32) {
            __m512 lo = _mm512_setzero_ps(), hi = _mm512_setzero_ps();
            if (i < (size_t)m)
                load32(a + i * lda, (int)j, k, &lo, &hi);
            __m512i part[PARTS];
            split32(lo, hi, part);
            for (int p = 0; p < PARTS; p++)
                _mm512_storeu_si512(out + (((size_t)p * mp + i / 16 * 16) * kp + j * 16 + i % 16 * 32),
                                    part[p]);
        }
}

/* split_a's tiles of A = at^T (at: k x m, rows ldat apart): each tile's 32 rows of at (16 of
 * its columns each) loaded and transposed in two 16 x 16 halves. */
TGT static void split_at(int m, int k, const float *at, ptrdiff_t ldat, uint16_t *out, size_t mp,
                         size_t kp)
{
    for (size_t i = 0; i < mp; i += 16) {
        const int left = m - (int)i;
        const __mmask16 cols = left >= 16 ? 0xffff : left > 0 ? (__mmask16)((1u << left) - 1) : 0;
        for (size_t j = 0; j < kp; j += 32) {
            __m512 lo[16], hi[16];
            for (int jj = 0; jj < 16; jj++) {
                const size_t r0 = j + jj, r1 = j + 16 + jj;
                lo[jj] = r0 < (size_t)k ? _mm512_maskz_loadu_ps(cols, at + r0 * ldat + i)
                                        : _mm512_setzero_ps();
                hi[jj] = r1 < (size_t)k ? _mm512_maskz_loadu_ps(cols, at + r1 * ldat + i)
                                        : _mm512_setzero_ps();
            }
            wino_transpose16(lo);
            wino_transpose16(hi);
            for (int ii = 0; ii < 16; ii++) {
                __m512i part[PARTS];
                split32(lo[ii], hi[ii], part);
                for (int p = 0; p < PARTS; p++)
                    _mm512_storeu_si512(out + ((size_t)p * mp + i) * kp + j * 16 + ii * 32,
                                        part[p]);
            }
        }
    }
}

/* C[0:16 rt][0:32] (tmm0 + 2 row tile + column tile; rt = 2 or 1 row tiles) += the block's
 * products over all of k: A's tiles at a (parts a_part apart), B's two panels at b (panels
 * b_panel, parts b_part apart). */
TGT static inline __attribute__((always_inline)) void block(const int rt, const uint16_t *a,
                                                            size_t a_part, size_t kp,
                                                            const uint16_t *b, size_t b_part,
                                                            size_t b_panel)
{
#define LOAD_A(p)                                                                                  \
    _tile_loadd(4, a + (p) * a_part + s * 16, 64);                                                 \
    if (rt == 2)                                                                                   \
        _tile_loadd(5, a + (p) * a_part + 16 * kp + s * 16, 64);
#define PRODUCTS(p)                                                                                \
    _tile_loadd(6, b + (p) * b_part + s * 16, 64);                                                 \
    _tile_loadd(7, b + (p) * b_part + b_panel + s * 16, 64);                                       \
    _tile_dpbf16ps(0, 4, 6);                                                                       \
    _tile_dpbf16ps(1, 4, 7);                                                                       \
    if (rt == 2) {                                                                                 \
        _tile_dpbf16ps(2, 5, 6);                                                                   \
        _tile_dpbf16ps(3, 5, 7);                                                                   \
    }
    for (size_t s = 0; s < kp; s += 32) {
        LOAD_A(2)
        PRODUCTS(0)
        LOAD_A(1)
        PRODUCTS(1)
        PRODUCTS(0)
        LOAD_A(0)
        PRODUCTS(2)
        PRODUCTS(1)
        PRODUCTS(0)
    }
#undef LOAD_A
#undef PRODUCTS
}

/* C (m x n) = or += rows i0 .. i0 + m - 1 of A (a_rows rows split into a, i0 a multiple of 16)
 * times columns j0 .. j0 + n - 1 of B (b_cols columns packed into b, j0 a multiple of 32), over
 * k; edge blocks through edge (32 x 32 floats). */
TGT static void multiply(const uint16_t *a, int a_rows, int i0, int m, const uint16_t *b,
                         int b_cols, int j0, int n, int k, float *c, ptrdiff_t ldc,
                         int accumulate, float *edge)
{
    const size_t kp = round32(k), mp = round16(m), np = round32(n);
    const size_t a_part = round16(a_rows) * kp, b_panel = kp / 2 * 32;
    const size_t b_part = round32(b_cols) / 16 * b_panel;
    const uint16_t *as = a + (size_t)i0 * kp, *bp = b + (size_t)j0 / 16 * b_panel;
    /* GCC 12's tileloadd asm names no memory input: the splits' stores stay before the loads */
    __asm__ volatile("" : : : "memory");
    wino_amx_tiles_16x64();
    for (size_t j = 0; j < np; j += 32)
        for (size_t i = 0; i < mp; i += 32) {
            const int rt = mp - i >= 32 ? 2 : 1; /* row tiles */
            const int rows = (size_t)m - i < 16 * (size_t)rt ? (int)((size_t)m - i) : 16 * rt;
            const int cols = (size_t)n - j < 32 ? (int)((size_t)n - j) : 32;
            const int inside = rows == 16 * rt && cols == 32;
            float *cb = inside ? c + i * ldc + j : edge;
            const int stride = (int)((inside ? ldc : 32) * (ptrdiff_t)sizeof(float));
            const ptrdiff_t row16 = 16 * (inside ? ldc : 32);
            if (!inside) {
                memset(edge, 0, 32 * 32 * sizeof(float));
                if (accumulate)
                    for (int r = 0; r < rows; r++)
                        memcpy(edge + r * 32, c + (i + r) * ldc + j, sizeof(float) * cols);
                __asm__ volatile("" : : : "memory"); /* (as above) */
            }
            if (accumulate || !inside) {
                _tile_loadd(0, cb, stride);
                _tile_loadd(1, cb + 16, stride);
                if (rt == 2) {
                    _tile_loadd(2, cb + row16, stride);
                    _tile_loadd(3, cb + row16 + 16, stride);
                }
            } else {
                _tile_zero(0);
                _tile_zero(1);
                _tile_zero(2);
                _tile_zero(3);
            }
            if (rt == 2)
                block(2, as + i * kp, a_part, kp, bp + j / 16 * b_panel, b_part, b_panel);
            else
                block(1, as + i * kp, a_part, kp, bp + j / 16 * b_panel, b_part, b_panel);
            _tile_stored(0, cb, stride);
            _tile_stored(1, cb + 16, stride);
            if (rt == 2) {
                _tile_stored(2, cb + row16, stride);
                _tile_stored(3, cb + row16 + 16, stride);
            }
            if (!inside)
                for (int r = 0; r < rows; r++)
                    memcpy(c + (i + r) * ldc + j, edge + r * 32, sizeof(float) * cols);
        }
}

TGT void wino_f32_gemm_packed__amx(int m, int n, int k, const float *a, ptrdiff_t lda,
                                   const void *packed_b, float *c, ptrdiff_t ldc, int accumulate,
                                   void *scratch)
{
    if (m <= 0 || n <= 0)
        return;
    uint16_t *as = (uint16_t *)((char *)scratch + 32 * 32 * sizeof(float));
    split_a(m, k, a, lda, as, round16(m), round32(k));
    multiply(as, m, 0, m, packed_b, n, 0, n, k, c, ldc, accumulate, scratch);
}

size_t wino_f32_amx_split_bytes(int m, int k)
{
    return PARTS * round16(m) * round32(k) * sizeof(uint16_t);
}

TGT void wino_f32_amx_split_at(int m, int k, const float *at, ptrdiff_t ldat, void *split)
{
    split_at(m, k, at, ldat, split, round16(m), round32(k));
}

TGT void wino_f32_amx_multiply(const void *split, int a_rows, int i0, int m,
                               const void *packed_b, int b_cols, int j0, int n, int k, float *c,
                               ptrdiff_t ldc, int accumulate, void *edge)
{
    if (m > 0 && n > 0)
        multiply(split, a_rows, i0, m, packed_b, b_cols, j0, n, k, c, ldc, accumulate, edge);
}

#else /* no AMX build or not Linux: never called (wino_amx_bf16_usable says no) */

size_t wino_f32_gemm_packed_b_bytes__amx(int k, int n)
{
    (void)k, (void)n;
    return 0;
}

size_t wino_f32_gemm_packed_scratch_bytes__amx(int m, int n, int k)
{
    (void)m, (void)n, (void)k;
    return 0;
}

void wino_f32_gemm_pack_b__amx(int k, int n, const float *b, ptrdiff_t ldb, void *packed)
{
    (void)k, (void)n, (void)b, (void)ldb, (void)packed;
}

void wino_f32_gemm_packed__amx(int m, int n, int k, const float *a, ptrdiff_t lda,
                               const void *packed_b, float *c, ptrdiff_t ldc, int accumulate,
                               void *scratch)
{
    (void)m, (void)n, (void)k, (void)a, (void)lda, (void)packed_b, (void)c, (void)ldc;
    (void)accumulate, (void)scratch;
}

size_t wino_f32_amx_split_bytes(int m, int k)
{
    (void)m, (void)k;
    return 0;
}

void wino_f32_amx_split_at(int m, int k, const float *at, ptrdiff_t ldat, void *split)
{
    (void)m, (void)k, (void)at, (void)ldat, (void)split;
}

void wino_f32_amx_multiply(const void *split, int a_rows, int i0, int m, const void *packed_b,
                           int b_cols, int j0, int n, int k, float *c, ptrdiff_t ldc,
                           int accumulate, void *edge)
{
    (void)split, (void)a_rows, (void)i0, (void)m, (void)packed_b, (void)b_cols, (void)j0, (void)n;
    (void)k, (void)c, (void)ldc, (void)accumulate, (void)edge;
}

#endif
