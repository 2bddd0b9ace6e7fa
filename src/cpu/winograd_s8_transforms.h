/* The integer transforms of the INT8 Winograd engine for F(2,3), F(4,3), F(6,3): the
 * generator's straight-line recipes (src/cpu/generated/int8_recipes.h) on vectors of channel
 * lanes, built for AVX-512 / AVX2 / the baseline and picked at load. */
#ifndef WINO_CPU_WINOGRAD_S8_TRANSFORMS_H
#define WINO_CPU_WINOGRAD_S8_TRANSFORMS_H

#include <stddef.h>
#include <stdint.h>

#include "cpu/gemm_f32.h" /* enum wino_isa */

/* Lanes are processed in blocks: the caller pads channel counts to this many. */
#define WINO_S8_LANE_BLOCK 32

/* Steps 1-2 of docs/int8-winograd.md for one tile: win holds the alpha x alpha window as
 * [i * alpha + j][cp] int16 (cp a multiple of WINO_S8_LANE_BLOCK, zero-padded lanes allowed);
 * writes quantize_v(V) + 128 for all cp lanes of position pos at out + pos * pos_stride. */
typedef void wino_s8_input_fn(const int16_t *win, int cp, float f_a, uint8_t *out,
                              size_t pos_stride);

/* Step 5 for one tile: m_rows + pos * pos_stride is position pos's row of M (kp int32 lanes, kp
 * a multiple of 16, readable); writes Y as [i * m + j][kp] int32 into y. */
typedef void wino_s8_output_fn(const int32_t *m_rows, size_t pos_stride, int kp, int32_t *y);

/* dst[i] = src[i] for i < n, src int8 (x_signed) or uint8: the tile windows' int16 rows. */
typedef void wino_s8_widen_fn(const void *src, int16_t *dst, size_t n, int x_signed);

/* The transforms of F(m, 3), m in {2, 4, 6}, built for isa (which must be <= wino_cpu_isa());
 * NULL for other m. */
wino_s8_input_fn *wino_s8_input_transform(int m, enum wino_isa isa);
wino_s8_output_fn *wino_s8_output_transform(int m, enum wino_isa isa);
/* The widening copy built for isa (<= wino_cpu_isa()). */
wino_s8_widen_fn *wino_s8_widen(enum wino_isa isa);

#endif
