#include "base/tile_matrices.h"

#include <string.h>

#include "base/error.h"

const struct wino_tile_matrices *wino_recorded_tile(int m, int r)
{
    for (int i = 0; i < wino_recorded_tile_count; i++)
        if (wino_recorded_tiles[i].m == m && wino_recorded_tiles[i].r == r)
            return &wino_recorded_tiles[i];
    return NULL;
}

const struct wino_tile_matrices *wino_int8_exact_tile(int m)
{
    for (int i = 0; i < wino_int8_exact_tile_count; i++)
        if (wino_int8_exact_tiles[i].m == m)
            return &wino_int8_exact_tiles[i];
    return NULL;
}

enum wino_status wino_int8_tile_make(int m, struct wino_int8_tile *t)
{
    const struct wino_tile_matrices *exact = wino_int8_exact_tile(m);
    if (!exact) {
        memset(t, 0, sizeof *t);
        return wino_fail(WINO_UNSUPPORTED, "INT8 Winograd runs F(2,3), F(4,3), F(6,3), not m = %d",
                         m);
    }
    wino_int8_tile_balance(exact, t);
    return WINO_SUCCESS;
}
