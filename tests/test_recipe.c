/* Tests of the recipe optimizer (src/gen/recipe.c, src/gen/recipe_opt.c).
 *  - Proof, not tolerance: for every F(m, r), m in [2, 10], r in [2, 7] (alpha <= 16), default
 *    points, and each of A^T, G, B^T, the recipe - fully optimized, with each pass switched off
 *    in turn, and with no pass - is evaluated in exact rationals on every unit vector e_j (a
 *    recipe is linear, so this proves recipe == M for every input) and on random rational
 *    vectors; the double evaluation agrees to rounding.
 *  - The same on random point sets a/b (|a|, b <= 9) and with the integer-B^T rescaling.
 *  - Op counts: no pass gives exactly the dense product; all passes stay below it; with the
 *    default points never above any single pass switched off, and over all of them each pass
 *    saves operations; FMA contraction turns exactly one mul and one add into each fma.
 * Usage: test_recipe (WINO_TEST_SEED=N to replay the random vectors and point sets). */
#include "gen/recipe.h"
#include "gen/tile.h"

#include <math.h>
#include <string.h>

#include "test_util.h"

#define RANDOM_VECTORS 3
#define RANDOM_POINT_SETS 40

static const unsigned configs[] = {
    WINO_PASS_ALL,
    WINO_PASS_ALL & ~WINO_PASS_TRIVIAL,
    WINO_PASS_ALL & ~WINO_PASS_FACTOR,
    WINO_PASS_ALL & ~WINO_PASS_CSE,
    WINO_PASS_ALL & ~WINO_PASS_SYMMETRIC,
    WINO_PASS_ALL & ~WINO_PASS_FMA,
    0,
};
#define N_CONFIGS (int)(sizeof configs / sizeof configs[0])
static const char *const config_names[N_CONFIGS] = {
    "all passes",       "no (a) trivial", "no (b) factor", "no (c) cse",
    "no (d) symmetric", "no (e) fma",     "no pass"};
static const char *const matrix_names[3] = {"A^T", "G", "B^T"};

static struct test_rng rng;
static long total_ops[N_CONFIGS];

static long ops(const struct wino_op_counts *c) { return c->add + c->mul + c->fma; }

static void random_rational(mpq_t q)
{
    long num = (long)(test_rng_next(&rng) % 199) - 99;
    unsigned long den = 1 + (unsigned long)(test_rng_next(&rng) % 20);
    mpq_set_si(q, num, den);
    mpq_canonicalize(q);
}

/* Exact check of rc against m on the unit vectors and random vectors; double check too. */
static int recipe_equals(const wino_recipe *rc, const wino_qmat *m, char *why, size_t cap)
{
    const int n = m->cols, p = m->rows;
    mpq_t x[WINO_MAX_ALPHA], y[WINO_MAX_ALPHA], want, t;
    double xd[WINO_MAX_ALPHA], yd[WINO_MAX_ALPHA];
    for (int k = 0; k < WINO_MAX_ALPHA; k++)
        mpq_inits(x[k], y[k], NULL);
    mpq_inits(want, t, NULL);
    int ok = rc->n_in == n && rc->n_out == p;
    for (int v = 0; ok && v < n + RANDOM_VECTORS; v++) {
        for (int k = 0; k < n; k++) { /* v < n: e_v; then random rationals */
            if (v < n)
                mpq_set_ui(x[k], k == v, 1);
            else
                random_rational(x[k]);
            xd[k] = mpq_get_d(x[k]);
        }
        if (wino_recipe_eval_q(rc, x, y) || wino_recipe_eval_d(rc, xd, yd)) {
            snprintf(why, cap, "out of memory");
            ok = 0;
        }
        for (int i = 0; ok && i < p; i++) {
            double scale = 0.0;
            mpq_set_ui(want, 0, 1);
            for (int k = 0; k < n; k++) {
                mpq_mul(t, wino_qmat_at(m, i, k), x[k]);
                mpq_add(want, want, t);
                scale += fabs(mpq_get_d(wino_qmat_at(m, i, k)) * xd[k]);
            }
            if (!mpq_equal(want, y[i])) {
                snprintf(why, cap, "row %d differs on %s %d", i,
                         v < n ? "unit vector" : "random vector", v);
                ok = 0;
            } else if (!(fabs(yd[i] - mpq_get_d(want)) <= 1e-13 * scale)) {
                snprintf(why, cap, "double evaluation of row %d off by %g", i,
                         fabs(yd[i] - mpq_get_d(want)));
                ok = 0;
            }
        }
    }
    for (int k = 0; k < WINO_MAX_ALPHA; k++)
        mpq_clears(x[k], y[k], NULL);
    mpq_clears(want, t, NULL);
    return ok;
}

/* All checks for one matrix; returns 1 when every one holds, printing the first failure. */
static int check_matrix(const wino_qmat *m, const char *label, int default_points)
{
    struct wino_op_counts c[N_CONFIGS];
    char why[160] = "";
    int ok = 1;
    for (int k = 0; ok && k < N_CONFIGS; k++) {
        wino_recipe rc;
        if (wino_recipe_build(&rc, m, configs[k])) {
            printf("FAIL %s: out of memory\n", label);
            return 0;
        }
        if (!recipe_equals(&rc, m, why, sizeof why)) {
            printf("FAIL %s, %s: %s\n", label, config_names[k], why);
            ok = 0;
        }
        wino_recipe_counts(&rc, &c[k]);
        wino_recipe_clear(&rc);
        if (default_points)
            total_ops[k] += ops(&c[k]);
    }
    if (!ok)
        return 0;
    const long dense_add = (long)m->rows * (m->cols - 1), dense_mul = (long)m->rows * m->cols;
    const struct wino_op_counts *all = &c[0], *nofma = &c[5], *none = &c[N_CONFIGS - 1];
    if (none->add != dense_add || none->mul != dense_mul || none->fma) {
        printf("FAIL %s: without passes %ld add %ld mul %ld fma, dense is %ld add %ld mul\n", label,
               none->add, none->mul, none->fma, dense_add, dense_mul);
        return 0;
    }
    if (ops(all) > dense_add + dense_mul || all->mul + all->fma > dense_mul) {
        printf("FAIL %s: optimized %ld add %ld mul %ld fma exceeds the dense product\n", label,
               all->add, all->mul, all->fma);
        return 0;
    }
    for (int k = 1; k < N_CONFIGS && default_points; k++) /* greedy: not a theorem elsewhere */
        if (ops(all) > ops(&c[k])) {
            printf("FAIL %s: %ld ops with all passes, %ld with %s\n", label, ops(all), ops(&c[k]),
                   config_names[k]);
            return 0;
        }
    if (nofma->add != all->add + all->fma || nofma->mul != all->mul + all->fma || nofma->fma) {
        printf("FAIL %s: fma contraction does not pair one mul with one add\n", label);
        return 0;
    }
    return 1;
}

static int check_tile(int m, int r, const char *points, unsigned flags)
{
    wino_tile *tile;
    char label[160];
    if (wino_tile_create(m, r, points, flags, &tile)) {
        printf("FAIL F(%d, %d) points %s: %s\n", m, r, points ? points : "default",
               wino_last_error());
        return 0;
    }
    const wino_qmat *mats[3] = {&tile->toom.AT, &tile->toom.G, &tile->toom.BT};
    int ok = 1;
    for (int w = 0; w < 3; w++) {
        snprintf(label, sizeof label, "F(%d, %d) %s, points %s%s", m, r, matrix_names[w],
                 points ? points : "default", flags ? ", integer B^T" : "");
        ok &= check_matrix(mats[w], label, !points && !flags);
    }
    wino_tile_destroy(tile);
    return ok;
}

/* Pass (e) on hand-built programs of every shape it rewrites: y0 = x0 + 3 x1, y1 = x0 - 3 x1,
 * y2 = 3 x1 + x0, y3 = 3 x1 - x0, plus a multiplication used twice that must stay. The result
 * must have the right instruction kinds and evaluate exactly as before. */
static int check_fma_shapes(void)
{
    wino_recipe rc;
    mpq_t three, x[2], before[5], after[5];
    mpq_inits(three, x[0], x[1], NULL);
    for (int i = 0; i < 5; i++)
        mpq_inits(before[i], after[i], NULL);
    mpq_set_ui(three, 3, 1);
    mpq_set_si(x[0], -7, 5);
    mpq_set_si(x[1], 2, 3);
    int ok = !wino_recipe_init(&rc, 2, 5);
    for (int i = 0; ok && i < 4; i++) { /* one single-use product per output */
        const int m = wino_recipe_push(&rc, WINO_ROP_MUL, 1, 0, 1, three);
        const int sum = i < 2 ? wino_recipe_push(&rc, WINO_ROP_ADD, 0, m, i ? -1 : 1, NULL)
                              : wino_recipe_push(&rc, WINO_ROP_ADD, m, 0, i == 3 ? -1 : 1, NULL);
        ok = m >= 0 && sum >= 0;
        rc.out[i] = sum;
    }
    const int shared = wino_recipe_push(&rc, WINO_ROP_MUL, 0, 0, 1, three);
    const int y4 = wino_recipe_push(&rc, WINO_ROP_ADD, shared, shared, 1, NULL);
    rc.out[4] = y4;
    ok = ok && shared >= 0 && y4 >= 0 && !wino_recipe_eval_q(&rc, x, before) &&
         !wino_recipe_contract_fma(&rc) && !wino_recipe_eval_q(&rc, x, after);
    struct wino_op_counts c;
    wino_recipe_counts(&rc, &c);
    ok = ok && c.fma == 4 && c.mul == 1 && c.add == 1;
    for (int i = 0; ok && i < 5; i++)
        ok = mpq_equal(before[i], after[i]);
    wino_recipe_clear(&rc);
    mpq_clears(three, x[0], x[1], NULL);
    for (int i = 0; i < 5; i++)
        mpq_clears(before[i], after[i], NULL);
    return ok;
}

/* alpha - 1 distinct random points a/b, |a| <= 9, 1 <= b <= 9, as text. */
static void random_points(int count, char *buf, size_t cap)
{
    mpq_t pts[WINO_MAX_ALPHA];
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < count; i++) {
        mpq_init(pts[i]);
        for (int fresh = 0; !fresh;) {
            mpq_set_si(pts[i], (long)(test_rng_next(&rng) % 19) - 9,
                       1 + (unsigned long)(test_rng_next(&rng) % 9));
            mpq_canonicalize(pts[i]);
            fresh = 1;
            for (int j = 0; j < i; j++)
                fresh &= !mpq_equal(pts[i], pts[j]);
        }
        len += (size_t)gmp_snprintf(buf + len, cap - len, "%s%Qd", i ? "," : "", pts[i]);
    }
    for (int i = 0; i < count; i++)
        mpq_clear(pts[i]);
}

int main(void)
{
    struct test_counts counts = {0, 0};
    rng.s = test_seed();
    char what[160];

    test_check(&counts, check_fma_shapes(),
               "pass (e) contracts a + c*x, a - c*x, c*x + b, c*x - b and keeps shared products");

    for (int r = 2; r <= 7; r++)
        for (int m = 2; m <= 10; m++) {
            if (m + r - 1 > WINO_MAX_ALPHA)
                continue;
            snprintf(what, sizeof what, "F(%d, %d), default points: recipes exact, counts sane", m,
                     r);
            test_check(&counts, check_tile(m, r, NULL, 0), what);
        }

    for (int k = 1; k < N_CONFIGS; k++) {
        snprintf(what, sizeof what, "pass effect: %ld ops with all passes < %ld with %s",
                 total_ops[0], total_ops[k], config_names[k]);
        test_check(&counts, total_ops[0] < total_ops[k], what);
    }

    int ok = 1;
    for (int s = 0; s < RANDOM_POINT_SETS; s++) {
        const int m = 2 + (int)(test_rng_next(&rng) % 9), r = 2 + (int)(test_rng_next(&rng) % 6);
        char points[256];
        random_points(m + r - 2, points, sizeof points);
        ok &= check_tile(m, r, points, s % 4 ? 0 : WINO_TILE_INTEGER_BT);
    }
    snprintf(what, sizeof what, "%d random point sets (every 4th with integer B^T): recipes exact",
             RANDOM_POINT_SETS);
    test_check(&counts, ok, what);

    return test_report(&counts);
}
