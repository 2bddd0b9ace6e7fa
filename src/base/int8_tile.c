#include "base/int8_tile.h"

#include <math.h>
#include <string.h>

static int abs_row_sum(const int *row, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += row[i] < 0 ? -row[i] : row[i];
    return s;
}

void wino_int8_tile_balance(const struct wino_tile_matrices *exact, struct wino_int8_tile *t)
{
    memset(t, 0, sizeof *t);
    const int m = exact->m, a = m + 2;
    const double *bt = exact->bt, *g = exact->g;
    double at[WINO_INT8_MAX_M * WINO_INT8_MAX_ALPHA];
    memcpy(at, exact->at, sizeof(double) * (size_t)(m * a));
    t->m = m;
    t->alpha = a;
    /* Balance the transformed weights: row p of G' scaled by 2^-e[p], column p of A'^T by
     * 2^e[p] (exact, A'^T stays integer), e[p] = round(log2(|G'_p| / min_q |G'_q|)), so that
     * every position's U has about the same magnitude and one alpha_tw suits them all. */
    double norm[WINO_INT8_MAX_ALPHA], least = HUGE_VAL;
    for (int i = 0; i < a; i++) {
        norm[i] = sqrt(g[i * 3] * g[i * 3] + g[i * 3 + 1] * g[i * 3 + 1] +
                       g[i * 3 + 2] * g[i * 3 + 2]);
        least = norm[i] < least ? norm[i] : least;
    }
    for (int i = 0; i < a; i++) {
        const int e = (int)lround(log2(norm[i] / least));
        t->shift[i] = e;
        for (int j = 0; j < a; j++)
            t->bt[i][j] = (int)lround(bt[i * a + j]); /* integers, exact in double */
        for (int j = 0; j < 3; j++)
            t->g[i][j] = ldexp(g[i * 3 + j], -e);
        for (int r = 0; r < m; r++)
            at[r * a + i] = ldexp(at[r * a + i], e);
    }
    for (int i = 0; i < a; i++) {
        const int s = abs_row_sum(t->bt[i], a);
        t->beta_b = s > t->beta_b ? s : t->beta_b;
    }
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < a; j++)
            t->at[i][j] = (int)lround(at[i * a + j]);
        const int s = abs_row_sum(t->at[i], a);
        t->beta_a = s > t->beta_a ? s : t->beta_a;
    }
}

void wino_int8_filter_transform(const struct wino_int8_tile *t, double g[3][3],
                                double u[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA])
{
    double gg[WINO_INT8_MAX_ALPHA][3]; /* G' g */
    for (int p = 0; p < t->alpha; p++)
        for (int j = 0; j < 3; j++)
            gg[p][j] = t->g[p][0] * g[0][j] + t->g[p][1] * g[1][j] + t->g[p][2] * g[2][j];
    for (int p = 0; p < t->alpha; p++)
        for (int r = 0; r < t->alpha; r++)
            u[p][r] = gg[p][0] * t->g[r][0] + gg[p][1] * t->g[r][1] + gg[p][2] * t->g[r][2];
}

void wino_int8_input_transform(const struct wino_int8_tile *t,
                               long long d[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA],
                               long long v[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA])
{
    const int a = t->alpha;
    long long bd[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA]; /* B'^T d */
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++) {
            bd[i][j] = 0;
            for (int u = 0; u < a; u++)
                bd[i][j] += (long long)t->bt[i][u] * d[u][j];
        }
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++) {
            v[i][j] = 0;
            for (int s = 0; s < a; s++)
                v[i][j] += bd[i][s] * t->bt[j][s];
        }
}
