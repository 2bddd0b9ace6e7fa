#include "core/tile_matrices.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define UNIT_ROUNDOFF_F32 (1.0 / 16777216.0) /* 2^-24 */

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

/* sum_k |row[k]| */
static double abs_sum(const double *row, int n)
{
    double sum = 0.0;
    for (int k = 0; k < n; k++)
        sum += fabs(row[k]);
    return sum;
}

double wino_tile_f32_error_bound(const struct wino_tile_matrices *t)
{
    const int alpha = t->m + t->r - 1;
    double gb[WINO_MAX_ALPHA]; /* sum_k |G[j][k]| sum_l |B^T[j][l]| */
    for (int j = 0; j < alpha; j++)
        gb[j] = abs_sum(t->g + j * t->r, t->r) * abs_sum(t->bt + j * alpha, alpha);
    double kappa = 0.0;
    for (int i = 0; i < t->m; i++) {
        double sum = 0.0;
        for (int j = 0; j < alpha; j++)
            sum += fabs(t->at[i * alpha + j]) * gb[j];
        kappa = fmax(kappa, sum);
    }
    return UNIT_ROUNDOFF_F32 * kappa * kappa / ((double)t->r * t->r);
}

enum wino_status wino_tile_matrices_check(const struct wino_tile_matrices *t)
{
    if (!t || !t->at || !t->g || !t->bt)
        return wino_fail(WINO_INVALID_ARGUMENT, "tile matrices: NULL matrix");
    if (t->m < 1 || t->r < 1 || t->m > WINO_MAX_ALPHA || t->r > WINO_MAX_ALPHA ||
        t->m + t->r - 1 > WINO_MAX_ALPHA)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "tile matrices: F(%d, %d) is not a tile (m, r >= 1, m + r - 1 <= %d)",
                         t->m, t->r, WINO_MAX_ALPHA);
    static const char *const names[3] = {"A^T", "G", "B^T"};
    const int alpha = t->m + t->r - 1;
    const double *const mats[3] = {t->at, t->g, t->bt};
    const int rows[3] = {t->m, alpha, alpha}, cols[3] = {alpha, t->r, alpha};
    for (int w = 0; w < 3; w++)
        for (int i = 0; i < rows[w]; i++)
            for (int j = 0; j < cols[w]; j++) {
                const double v = fabs(mats[w][i * cols[w] + j]);
                if (v != 0.0 && !(v >= FLT_MIN && v <= FLT_MAX))
                    return wino_fail(WINO_UNSUPPORTED,
                                     "F(%d, %d): %s[%d][%d] = %g is not zero or a normal float",
                                     t->m, t->r, names[w], i, j, mats[w][i * cols[w] + j]);
            }
    const double bound = wino_tile_f32_error_bound(t);
    if (!(bound <= WINO_F32_ERROR_BOUND_LIMIT))
        return wino_fail(WINO_UNSUPPORTED,
                         "F(%dx%d, %dx%d) with these points: FP32 error bound %.3g exceeds %g "
                         "(2^-24 kappa^2 / r^2; see wino_conv2d_options.matrices)",
                         t->m, t->m, t->r, t->r, bound, WINO_F32_ERROR_BOUND_LIMIT);
    return WINO_SUCCESS;
}

struct wino_tile_matrices *wino_tile_matrices_copy(const struct wino_tile_matrices *t)
{
    const size_t alpha = (size_t)(t->m + t->r - 1), n_at = (size_t)t->m * alpha,
                 n_g = alpha * (size_t)t->r, n_bt = alpha * alpha;
    struct wino_tile_matrices *c =
        malloc(sizeof *c + sizeof(double) * (n_at + n_g + n_bt));
    if (!c)
        return NULL;
    double *at = (double *)(c + 1), *g = at + n_at, *bt = g + n_g;
    memcpy(at, t->at, sizeof(double) * n_at);
    memcpy(g, t->g, sizeof(double) * n_g);
    memcpy(bt, t->bt, sizeof(double) * n_bt);
    const struct wino_tile_matrices made = {.m = t->m, .r = t->r, .at = at, .g = g, .bt = bt};
    *c = made;
    return c;
}
