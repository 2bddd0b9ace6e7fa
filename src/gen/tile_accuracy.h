/* Whether a tile's transforms are sound in FP32: every entry of A^T, G and B^T representable, and
 * a bounded rounding error. The convolution operator refuses caller-given points that fail
 * (rule and limit stated at struct wino_conv2d_options.points in wino.h). */
#ifndef WINO_GEN_TILE_ACCURACY_H
#define WINO_GEN_TILE_ACCURACY_H

#include "base/tile_check.h"
#include "wino_gen.h"

/* wino_tile_f32_error_bound (base/tile_matrices.h) of the tile's matrices rounded to double, or
 * HUGE_VAL when an entry is outside the double range. */
double wino_tile_error_bound(const wino_tile *tile);

/* WINO_SUCCESS when every entry of A^T, G and B^T is zero or a normal float (|x| in
 * [FLT_MIN, FLT_MAX]) and wino_tile_error_bound <= WINO_F32_ERROR_BOUND_LIMIT; else
 * WINO_UNSUPPORTED with the entry or the bound in wino_last_error(). */
enum wino_status wino_tile_f32_check(const wino_tile *tile);

/* The matrix `which` of tile rounded to the nearest floats (ties to even), row-major; refuses
 * like wino_tile_f32_check when an entry is not zero or a normal float. */
enum wino_status wino_tile_matrix_f32(const wino_tile *tile, enum wino_matrix which, float *out);

#endif
