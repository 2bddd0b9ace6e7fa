#include "gen/tile_accuracy.h"

#include <float.h>
#include <math.h>

#include "base/error.h"
#include "gen/float_literal.h"
#include "gen/tile.h"

double wino_tile_error_bound(const wino_tile *tile)
{
    double storage[WINO_MAX_ALPHA * (3 * WINO_MAX_ALPHA)];
    struct wino_tile_matrices t;
    if (wino_tile_matrices_get(tile, storage, sizeof storage / sizeof storage[0], &t))
        return HUGE_VAL;
    return wino_tile_f32_error_bound(&t);
}

enum wino_status wino_tile_f32_check(const wino_tile *tile)
{
    for (int w = WINO_MATRIX_AT; w <= WINO_MATRIX_BT; w++) {
        enum wino_status st = wino_tile_check_range(tile, (enum wino_matrix)w, FLT_MIN, FLT_MAX,
                                                     "FP32");
        if (st)
            return st;
    }
    double storage[WINO_MAX_ALPHA * (3 * WINO_MAX_ALPHA)];
    struct wino_tile_matrices t;
    enum wino_status st =
        wino_tile_matrices_get(tile, storage, sizeof storage / sizeof storage[0], &t);
    return st ? st : wino_tile_matrices_check(&t);
}

enum wino_status wino_tile_matrix_f32(const wino_tile *tile, enum wino_matrix which, float *out)
{
    enum wino_status st = wino_tile_check_range(tile, which, FLT_MIN, FLT_MAX, "FP32");
    if (st)
        return st;
    const wino_qmat *m = wino_tile_matrix(tile, which);
    for (int i = 0; i < m->rows; i++)
        for (int j = 0; j < m->cols; j++)
            out[(size_t)i * (size_t)m->cols + (size_t)j] = wino_q_to_float(wino_qmat_at(m, i, j));
    return WINO_SUCCESS;
}
