/* Tests: a tile on the caller's own points, built with libwino_gen and handed to the runtime as
 * struct wino_conv2d_options.matrices (the migration path from the deprecated options.points). */
#ifndef WINO_TESTS_CALLER_TILE_H
#define WINO_TESTS_CALLER_TILE_H

#include "wino_gen.h"

struct caller_tile {
    double storage[WINO_MAX_ALPHA * 3 * WINO_MAX_ALPHA];
    struct wino_tile_matrices matrices;
};

/* F(m, r) on points into *ct: WINO_SUCCESS, or the generator's refusal (its reason in
 * wino_last_error()). */
static inline enum wino_status caller_tile_make(int m, int r, const char *points,
                                                struct caller_tile *ct)
{
    wino_tile *tile = NULL;
    enum wino_status st = wino_tile_create(m, r, points, 0, &tile);
    if (!st)
        st = wino_tile_matrices_get(tile, ct->storage,
                                    sizeof ct->storage / sizeof ct->storage[0], &ct->matrices);
    wino_tile_destroy(tile);
    return st;
}

#endif
