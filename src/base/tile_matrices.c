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

enum wino_status wino_int8_tile_matrices(int tile_m, double *storage, size_t storage_count,
                                         struct wino_tile_matrices *matrices)
{
    wino_ok();
    struct wino_int8_tile t;
    if (!storage || !matrices)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "wino_int8_tile_matrices: storage or matrices is NULL");
    const enum wino_status st = wino_int8_tile_make(tile_m, &t);
    if (st)
        return st;
    const int m = t.m, a = t.alpha;
    const size_t needed = (size_t)(m * a + 3 * a + a * a);
    if (storage_count < needed)
        return wino_fail(WINO_INSUFFICIENT_WORKSPACE,
                         "wino_int8_tile_matrices: %zu doubles of storage, %zu needed",
                         storage_count, needed);
    double *at = storage, *g = at + m * a, *bt = g + 3 * a;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < a; j++)
            at[i * a + j] = t.at[i][j];
    for (int i = 0; i < a; i++)
        for (int j = 0; j < 3; j++)
            g[i * 3 + j] = t.g[i][j];
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++)
            bt[i * a + j] = t.bt[i][j];
    *matrices = (struct wino_tile_matrices){.m = m, .r = 3, .at = at, .g = g, .bt = bt};
    return WINO_SUCCESS;
}
