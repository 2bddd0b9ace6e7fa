#include "gen/tile_accuracy.h"

#include <float.h>
#include <math.h>

#include "core/error.h"
#include "gen/float_literal.h"
#include "gen/tile.h"

#define UNIT_ROUNDOFF_F32 (1.0 / 16777216.0) /* 2^-24 */

/* sum_k |M[row][k]| */
static double row_abs_sum(const wino_qmat *m, int row)
{
    double sum = 0.0;
    for (int k = 0; k < m->cols; k++)
        sum += fabs(mpq_get_d(wino_qmat_at(m, row, k)));
    return sum;
}

/* kappa of the header */
static double amplification(const wino_toom *t)
{
    double gb[WINO_MAX_ALPHA]; /* sum_k |G[j][k]| sum_l |B^T[j][l]| */
    for (int j = 0; j < t->alpha; j++)
        gb[j] = row_abs_sum(&t->G, j) * row_abs_sum(&t->BT, j);
    double kappa = 0.0;
    for (int i = 0; i < t->m; i++) {
        double sum = 0.0;
        for (int j = 0; j < t->alpha; j++)
            sum += fabs(mpq_get_d(wino_qmat_at(&t->AT, i, j))) * gb[j];
        kappa = fmax(kappa, sum);
    }
    return kappa;
}

double wino_tile_f32_error_bound(const wino_tile *tile)
{
    const double kappa = amplification(&tile->toom), r = tile->toom.r;
    return UNIT_ROUNDOFF_F32 * kappa * kappa / (r * r);
}

enum wino_status wino_tile_f32_check(const wino_tile *tile)
{
    for (int w = WINO_MATRIX_AT; w <= WINO_MATRIX_BT; w++) {
        enum wino_status st = wino_tile_check_range(tile, (enum wino_matrix)w, FLT_MIN, FLT_MAX,
                                                     "FP32");
        if (st)
            return st;
    }
    const double bound = wino_tile_f32_error_bound(tile);
    if (!(bound <= WINO_F32_ERROR_BOUND_LIMIT)) {
        const wino_toom *t = &tile->toom;
        return wino_fail(WINO_UNSUPPORTED,
                         "F(%dx%d, %dx%d) with these points: FP32 error bound %.3g exceeds %g "
                         "(2^-24 kappa^2 / r^2, kappa = %.4g; see wino_conv2d_options.points)",
                         t->m, t->m, t->r, t->r, bound, WINO_F32_ERROR_BOUND_LIMIT,
                         amplification(t));
    }
    return WINO_SUCCESS;
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
