/* The public wino_tile object: an exact 1D Toom-Cook algorithm plus its derived products. */
#ifndef WINO_GEN_TILE_H
#define WINO_GEN_TILE_H

#include "gen/toom_cook.h"
#include "wino_gen.h"

struct wino_tile {
    wino_toom toom;
};

/* The exact matrix `which`, or NULL for an unknown value. */
const wino_qmat *wino_tile_matrix(const wino_tile *tile, enum wino_matrix which);

/* WINO_SUCCESS when every entry of the matrix `which` is zero or has a magnitude in [lo, hi] (a
 * format's smallest normal and largest finite number, e.g. FLT_MIN and FLT_MAX); else
 * WINO_UNSUPPORTED naming the first entry outside, its value and `format` ("FP32", "double"). */
enum wino_status wino_tile_check_range(const wino_tile *tile, enum wino_matrix which, double lo,
                                       double hi, const char *format);

#endif
