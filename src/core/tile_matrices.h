/* The Winograd tiles the runtime works with, as matrices rounded to double (struct
 * wino_tile_matrices of wino.h): the tiles of the recorded points and the exact INT8 tiles come
 * from a table the generator writes (src/core/generated/recorded_tiles.c, `wino gen
 * --write-defaults`), so the runtime needs no exact arithmetic; a caller's own tile is checked
 * here before it is used. */
#ifndef WINO_CORE_TILE_MATRICES_H
#define WINO_CORE_TILE_MATRICES_H

#include <stddef.h>

#include "wino.h"

/* The largest FP32 error bound accepted for a caller's tile. The recorded points of every tile
 * F(m, r), alpha <= 16, stay below it (the largest, F(16, 1), is 1.29). */
#define WINO_F32_ERROR_BOUND_LIMIT 2.0

/* The generated table: every F(m, r) with 1 <= alpha <= WINO_MAX_ALPHA on the recorded points,
 * then the three INT8 tiles F(2, 3), F(4, 3), F(6, 3) (integer B^T and A^T). */
extern const struct wino_tile_matrices wino_recorded_tiles[];
extern const int wino_recorded_tile_count;
extern const struct wino_tile_matrices wino_int8_exact_tiles[];
extern const int wino_int8_exact_tile_count;

/* F(m, r) on the recorded points, or NULL when alpha = m + r - 1 is outside [1, 16]. */
const struct wino_tile_matrices *wino_recorded_tile(int m, int r);

/* The exact INT8 tile F(m, 3) before balancing (docs/int8-winograd.md), or NULL when m is not
 * 2, 4 or 6. */
const struct wino_tile_matrices *wino_int8_exact_tile(int m);

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

/* A copy of t in one allocation (free() releases it), or NULL when out of memory. */
struct wino_tile_matrices *wino_tile_matrices_copy(const struct wino_tile_matrices *t);

#endif
