/* Whether a tile given by its matrices (struct wino_tile_matrices) is sound in FP32: the rule of
 * wino_conv2d_options.matrices, which the runtime applies to a caller's tile and the generator
 * (src/gen/tile_accuracy.c) to any exact tile. Pure arithmetic on doubles, so both libraries
 * compile this file. */
#ifndef WINO_BASE_TILE_CHECK_H
#define WINO_BASE_TILE_CHECK_H

#include "wino.h"

/* The largest FP32 error bound accepted for a caller's tile. The recorded points of every tile
 * F(m, r), alpha <= 16, stay below it (the largest, F(16, 1), is 1.29). */
#define WINO_F32_ERROR_BOUND_LIMIT 2.0

/* The first-order bound on the FP32 rounding error of the 2D tile F(m x m, r x r), relative to
 * the scale r^2 max|g| max|d| of a direct correlation: u kappa^2 / r^2 with u = 2^-24 and
 * kappa = max_i sum_j |A^T[i][j]| sum_k |G[j][k]| sum_l |B^T[j][l]|. kappa^2 bounds every
 * intermediate value of the tile for |g|, |d| <= 1 (and the FP32 rounding of the matrices'
 * entries adds at most u relative to each term), where a direct correlation's sum is at most
 * r^2. The recorded tiles' measured median errors are 0.15% to 67% of it (docs/points.md). */
double wino_tile_f32_error_bound(const struct wino_tile_matrices *t);

/* WINO_SUCCESS when t is a well-formed tile F(m, r) (1 <= m, r; alpha <= WINO_MAX_ALPHA; no NULL
 * matrix) whose every entry is zero or a normal float (|x| in [FLT_MIN, FLT_MAX]) and whose
 * error bound is at most WINO_F32_ERROR_BOUND_LIMIT: the rule of wino_conv2d_options.matrices.
 * Else WINO_INVALID_ARGUMENT (malformed) or WINO_UNSUPPORTED, naming the entry or the bound. */
enum wino_status wino_tile_matrices_check(const struct wino_tile_matrices *t);

#endif
