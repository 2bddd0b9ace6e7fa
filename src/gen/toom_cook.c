#include "gen/toom_cook.h"

#include <stdlib.h>
#include <string.h>

/* p (degree deg, deg + 2 coefficients allocated) *= (x - a), lowest power first. */
static void poly_mul_linear(mpq_t *p, int deg, const mpq_t a)
{
    mpq_t t;
    mpq_init(t);
    mpq_set(p[deg + 1], p[deg]);
    for (int i = deg; i >= 1; i--) {
        mpq_mul(t, a, p[i]);
        mpq_sub(p[i], p[i - 1], t);
    }
    mpq_mul(t, a, p[0]);
    mpq_neg(p[0], t);
    mpq_clear(t);
}

/* Coefficients of prod_{k != skip} (x - points[k]) into row `row` of m (skip = -1: no skip). */
static void set_product_row(wino_qmat *m, int row, mpq_t *points, int n, int skip)
{
    int deg = 0;
    for (int c = 0; c < m->cols; c++)
        mpq_set_ui(wino_qmat_at(m, row, c), 0, 1);
    mpq_set_ui(wino_qmat_at(m, row, 0), 1, 1);
    for (int k = 0; k < n; k++) {
        if (k == skip)
            continue;
        poly_mul_linear(&m->e[(size_t)row * (size_t)m->cols], deg, points[k]);
        deg++;
    }
}

int wino_toom_build(wino_toom *t, int m, int r, mpq_t *points)
{
    memset(t, 0, sizeof *t);
    t->m = m;
    t->r = r;
    t->alpha = m + r - 1;
    t->npoints = t->alpha - 1;
    const int n = t->npoints, alpha = t->alpha;

    t->points = malloc((size_t)(n ? n : 1) * sizeof(mpq_t));
    if (!t->points)
        return -1;
    for (int j = 0; j < n; j++) {
        mpq_init(t->points[j]);
        mpq_set(t->points[j], points[j]);
    }
    if (wino_qmat_init(&t->AT, m, alpha) || wino_qmat_init(&t->G, alpha, r) ||
        wino_qmat_init(&t->BT, alpha, alpha)) {
        wino_toom_clear(t);
        return -1;
    }

    /* A^T: Vandermonde rows a_j^i; infinity column e_{m-1}. */
    for (int j = 0; j < n; j++) {
        mpq_set_ui(wino_qmat_at(&t->AT, 0, j), 1, 1);
        for (int i = 1; i < m; i++)
            mpq_mul(wino_qmat_at(&t->AT, i, j), wino_qmat_at(&t->AT, i - 1, j), points[j]);
    }
    mpq_set_ui(wino_qmat_at(&t->AT, m - 1, n), 1, 1);

    /* G: a_j^k / N_j with N_j = prod_{k != j} (a_j - a_k); infinity row e_{r-1}. */
    mpq_t nj, diff;
    mpq_init(nj);
    mpq_init(diff);
    for (int j = 0; j < n; j++) {
        mpq_set_ui(nj, 1, 1);
        for (int k = 0; k < n; k++) {
            if (k == j)
                continue;
            mpq_sub(diff, points[j], points[k]);
            mpq_mul(nj, nj, diff);
        }
        mpq_inv(nj, nj);
        mpq_set(wino_qmat_at(&t->G, j, 0), nj);
        for (int k = 1; k < r; k++)
            mpq_mul(wino_qmat_at(&t->G, j, k), wino_qmat_at(&t->G, j, k - 1), points[j]);
    }
    mpq_set_ui(wino_qmat_at(&t->G, n, r - 1), 1, 1);
    mpq_clear(nj);
    mpq_clear(diff);

    /* B^T: coefficients of the Lagrange numerators; infinity row the full product. */
    for (int j = 0; j < n; j++)
        set_product_row(&t->BT, j, points, n, j);
    set_product_row(&t->BT, n, points, n, -1);
    return 0;
}

void wino_toom_clear(wino_toom *t)
{
    if (t->points) {
        for (int j = 0; j < t->npoints; j++)
            mpq_clear(t->points[j]);
        free(t->points);
    }
    wino_qmat_clear(&t->AT);
    wino_qmat_clear(&t->G);
    wino_qmat_clear(&t->BT);
    memset(t, 0, sizeof *t);
}

/* Point j's line of M (row j of B^T when rows, column j of A^T otherwise), count entries long,
 * times the least common multiple of its denominators; row j of G divided by the same. */
static void integer_line(wino_toom *t, wino_qmat *M, int j, int rows, int count, mpz_t l,
                         mpq_t f)
{
    mpz_set_ui(l, 1);
    for (int e = 0; e < count; e++)
        mpz_lcm(l, l, mpq_denref(rows ? wino_qmat_at(M, j, e) : wino_qmat_at(M, e, j)));
    if (!mpz_cmp_ui(l, 1))
        return;
    mpq_set_z(f, l);
    for (int e = 0; e < count; e++) {
        mpq_ptr x = rows ? wino_qmat_at(M, j, e) : wino_qmat_at(M, e, j);
        mpq_mul(x, x, f);
    }
    for (int k = 0; k < t->r; k++)
        mpq_div(wino_qmat_at(&t->G, j, k), wino_qmat_at(&t->G, j, k), f);
}

/* Every point's line of M made integer (see integer_line). */
static void integer_lines(wino_toom *t, wino_qmat *M, int rows, int count)
{
    mpz_t l;
    mpq_t f;
    mpz_init(l);
    mpq_init(f);
    for (int j = 0; j < t->alpha; j++)
        integer_line(t, M, j, rows, count, l, f);
    mpz_clear(l);
    mpq_clear(f);
}

void wino_toom_integer_bt(wino_toom *t)
{
    integer_lines(t, &t->BT, 1, t->alpha);
}

void wino_toom_integer_at(wino_toom *t)
{
    integer_lines(t, &t->AT, 0, t->m);
}
