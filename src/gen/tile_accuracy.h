/* Whether a tile's transforms are sound in FP32: every entry of A^T, G and B^T representable, and
 * a bounded rounding error. The convolution operator refuses caller-given points that fail
 * (rule and limit stated at struct wino_conv2d_options.points in wino.h). */
#ifndef WINO_GEN_TILE_ACCURACY_H
#define WINO_GEN_TILE_ACCURACY_H

#include "wino_gen.h"

/* The largest FP32 error bound accepted for caller-given points. The recorded points of every
 * tile F(m, r), alpha <= 16, stay below it (the largest, F(16, 1), is 1.29). */
#define WINO_F32_ERROR_BOUND_LIMIT 2.0

/* The first-order bound on the FP32 rounding error of the 2D tile F(m x m, r x r), relative to
 * the scale r^2 max|g| max|d| of a direct correlation: u kappa^2 / r^2 with u = 2^-24 and
 * kappa = max_i sum_j |A^T[i][j]| sum_k |G[j][k]| sum_l |B^T[j][l]|. kappa^2 bounds every
 * intermediate value of the tile for |g|, |d| <= 1 (and the FP32 rounding of the matrices'
 * entries adds at most u relative to each term), where a direct correlation's sum is at most
 * r^2. The recorded tiles' measured median errors are 0.15% to 67% of it (docs/points.md). Needs
 * entries within the double range (wino_tile_f32_check tests that first). */
double wino_tile_f32_error_bound(const wino_tile *tile);

/* WINO_SUCCESS when every entry of A^T, G and B^T is zero or a normal float (|x| in
 * [FLT_MIN, FLT_MAX]) and wino_tile_f32_error_bound <= WINO_F32_ERROR_BOUND_LIMIT; else
 * WINO_UNSUPPORTED with the entry or the bound in wino_last_error(). */
enum wino_status wino_tile_f32_check(const wino_tile *tile);

/* The matrix `which` of tile rounded to the nearest floats (ties to even), row-major; refuses
 * like wino_tile_f32_check when an entry is not zero or a normal float. */
enum wino_status wino_tile_matrix_f32(const wino_tile *tile, enum wino_matrix which, float *out);

#endif
