/* The Winograd tiles the runtime works with, as matrices rounded to double (struct
 * wino_tile_matrices of wino.h): the tiles of the recorded points and the exact INT8 tiles come
 * from a table the generator writes (src/base/generated/recorded_tiles.c, `wino gen
 * --write-defaults`), so the runtime needs no exact arithmetic; a caller's own tile is checked
 * in base/tile_check.h. */
#ifndef WINO_BASE_TILE_MATRICES_H
#define WINO_BASE_TILE_MATRICES_H

#include <stddef.h>

#include "base/int8_tile.h"
#include "wino.h"

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

/* The balanced INT8 tile F(m, 3) from the table: WINO_SUCCESS, or WINO_UNSUPPORTED when m is not
 * 2, 4 or 6. */
enum wino_status wino_int8_tile_make(int m, struct wino_int8_tile *t);

#endif
