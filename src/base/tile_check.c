#include "base/tile_check.h"

#include <float.h>
#include <math.h>

#include "base/error.h"

#define UNIT_ROUNDOFF_F32 (1.0 / 16777216.0) /* 2^-24 */

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
