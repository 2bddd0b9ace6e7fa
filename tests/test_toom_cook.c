/* Exact checks of the Toom-Cook generator: known matrices from the literature, and a proof of
 * A^T[(G g) .* (B^T d)] == correlation(d, g) over the whole (m, r) range. The identity is
 * bilinear in (d, g), so checking it on every pair of unit vectors proves it for all inputs;
 * random rational inputs are checked as well. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/tile.h"
#include "test_util.h"

/* Builds a tile or fails the test. */
static wino_tile *make(int m, int r, const char *points, unsigned flags)
{
    wino_tile *t = NULL;
    enum wino_status st = wino_tile_create(m, r, points, flags, &t);
    if (st) {
        printf("wino_tile_create(%d, %d, %s): %s\n", m, r, points ? points : "default",
               wino_last_error());
        return NULL;
    }
    return t;
}

/* 1 if matrix `which` of t equals the given rational strings exactly. */
static int matrix_is(const wino_tile *t, enum wino_matrix which, int rows, int cols,
                     const char *const *expect)
{
    int R, C;
    wino_tile_matrix_shape(t, which, &R, &C);
    if (R != rows || C != cols) {
        printf("  shape %dx%d, expected %dx%d\n", R, C, rows, cols);
        return 0;
    }
    int ok = 1;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            char buf[64];
            wino_tile_entry_string(t, which, i, j, buf, sizeof buf, NULL);
            if (strcmp(buf, expect[i * cols + j])) {
                printf("  entry (%d,%d) = %s, expected %s\n", i, j, buf, expect[i * cols + j]);
                ok = 0;
            }
        }
    return ok;
}

/* Mori et al. (Electronics 2024) eq. (5): F(4,3) with points (0, 1, -1, 2, -2). */
static int test_f43_mori(void)
{
    static const char *const BT[] = {"4", "0", "-5", "0", "1", "0",  "0", "-4", "-4", "1", "1", "0",
                                     "0", "4", "-4", "-1", "1", "0", "0", "-2", "-1", "2", "1", "0",
                                     "0", "2", "-1", "-2", "1", "0", "0", "4", "0", "-5", "0", "1"};
    static const char *const G[] = {"1/4",  "0",     "0",    "-1/6", "-1/6", "-1/6",
                                    "-1/6", "1/6",   "-1/6", "1/24", "1/12", "1/6",
                                    "1/24", "-1/12", "1/6",  "0",    "0",    "1"};
    static const char *const AT[] = {"1", "1", "1",  "1", "1", "0", "0", "1", "-1", "2",  "-2", "0",
                                     "0", "1", "1", "4", "4", "0", "0", "1", "-1", "8", "-8", "1"};
    wino_tile *t = make(4, 3, "0,1,-1,2,-2", 0);
    if (!t)
        return 0;
    int ok = matrix_is(t, WINO_MATRIX_BT, 6, 6, BT) && matrix_is(t, WINO_MATRIX_G, 6, 3, G) &&
             matrix_is(t, WINO_MATRIX_AT, 4, 6, AT);
    wino_tile_destroy(t);
    return ok;
}

/* Writes s (a rational string) multiplied by sign (+1 or -1) into out. */
static void signed_copy(const char *s, int sign, char *out, size_t cap)
{
    if (sign > 0 || !strcmp(s, "0"))
        snprintf(out, cap, "%s", s);
    else
        snprintf(out, cap, s[0] == '-' ? "%s" : "-%s", s[0] == '-' ? s + 1 : s);
}

/* 1 if every entry of matrix `which` equals expect[i][j] times row_sign[i] * col_sign[j]. */
static int matrix_is_signed(const wino_tile *t, enum wino_matrix which, int rows, int cols,
                            const char *const *expect, const int *row_sign, const int *col_sign)
{
    int ok = 1;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            char buf[64], want[64];
            wino_tile_entry_string(t, which, i, j, buf, sizeof buf, NULL);
            signed_copy(expect[i * cols + j], row_sign[i] * col_sign[j], want, sizeof want);
            ok &= !strcmp(buf, want);
        }
    return ok;
}

/* Lavin and Gray's F(2,3). Their matrices are the standard ones (points 0, 1, -1) with the sign of
 * the point-0 row flipped in both B^T and G, and the sign of the infinity row of B^T flipped
 * together with the infinity column of A^T: each flip appears twice, so the product is equal. */
static int test_f23_lavin(void)
{
    static const char *const BT_lavin[] = {"1", "0",  "-1", "0", "0", "1", "1", "0",
                                           "0", "-1", "1",  "0", "0", "1", "0", "-1"};
    static const char *const G_lavin[] = {"1",   "0",    "0",   "1/2", "1/2", "1/2",
                                          "1/2", "-1/2", "1/2", "0",   "0",   "1"};
    static const char *const AT_lavin[] = {"1", "1", "1", "0", "0", "1", "-1", "-1"};
    static const int ones[4] = {1, 1, 1, 1};
    static const int flip_bt[4] = {-1, 1, 1, -1}, flip_g[4] = {-1, 1, 1, 1},
                     flip_at[4] = {1, 1, 1, -1};
    wino_tile *t = make(2, 3, "0,1,-1", 0);
    if (!t)
        return 0;
    int ok = matrix_is_signed(t, WINO_MATRIX_BT, 4, 4, BT_lavin, flip_bt, ones) &&
             matrix_is_signed(t, WINO_MATRIX_G, 4, 3, G_lavin, flip_g, ones) &&
             matrix_is_signed(t, WINO_MATRIX_AT, 2, 4, AT_lavin, ones, flip_at);
    if (!ok)
        printf("  F(2,3) differs from Lavin and Gray beyond the documented sign flips\n");
    wino_tile_destroy(t);
    return ok;
}

/* WinRS (Zhang et al., ICPP'25) Fig. 8: alpha = 8 input transform has a row +-(1 0 -21/4 0 21/4 0 -1 0); with integer
 * B^T that row becomes +-(4 0 -21 0 21 0 -4 0). */
static int test_alpha8_row(void)
{
    static const char *const row[] = {"1", "0", "-21/4", "0", "21/4", "0", "-1", "0"};
    static const char *const row_int[] = {"4", "0", "-21", "0", "21", "0", "-4", "0"};
    int ok = 1;
    for (int pass = 0; pass < 2; pass++) {
        wino_tile *t = make(6, 3, "0,1,-1,2,-2,1/2,-1/2", pass ? WINO_TILE_INTEGER_BT : 0);
        if (!t)
            return 0;
        const char *const *want = pass ? row_int : row;
        int plus = 1, minus = 1;
        for (int j = 0; j < 8; j++) {
            char buf[64], neg[64];
            wino_tile_entry_string(t, WINO_MATRIX_BT, 0, j, buf, sizeof buf, NULL);
            signed_copy(want[j], -1, neg, sizeof neg);
            plus &= !strcmp(buf, want[j]);
            minus &= !strcmp(buf, neg);
        }
        if (!plus && !minus) {
            printf("  alpha=8 row 0 of B^T%s is not +-(%s ...)\n", pass ? " (integer)" : "",
                   want[2]);
            ok = 0;
        }
        wino_tile_destroy(t);
    }
    return ok;
}

/* Copies one exact matrix out of a tile. */
static const wino_qmat *mat(const wino_tile *t, enum wino_matrix w)
{
    return w == WINO_MATRIX_AT ? &t->toom.AT : w == WINO_MATRIX_G ? &t->toom.G : &t->toom.BT;
}

/* Exact 1D check of y = A^T[(G g) .* (B^T d)] against y_i = sum_k g_k d_{i+k}. */
static int identity_1d(const wino_tile *t, mpq_t *d, mpq_t *g)
{
    const int m = t->toom.m, r = t->toom.r, a = t->toom.alpha;
    const wino_qmat *AT = mat(t, WINO_MATRIX_AT), *G = mat(t, WINO_MATRIX_G),
                    *BT = mat(t, WINO_MATRIX_BT);
    mpq_t u, v, acc, y, p;
    mpq_inits(u, v, acc, y, p, NULL);
    mpq_t *M = malloc(sizeof(mpq_t) * (size_t)a);
    for (int j = 0; j < a; j++) {
        mpq_init(M[j]);
        mpq_set_ui(u, 0, 1);
        for (int k = 0; k < r; k++) {
            mpq_mul(p, wino_qmat_at(G, j, k), g[k]);
            mpq_add(u, u, p);
        }
        mpq_set_ui(v, 0, 1);
        for (int k = 0; k < a; k++) {
            mpq_mul(p, wino_qmat_at(BT, j, k), d[k]);
            mpq_add(v, v, p);
        }
        mpq_mul(M[j], u, v);
    }
    int ok = 1;
    for (int i = 0; i < m; i++) {
        mpq_set_ui(acc, 0, 1);
        for (int j = 0; j < a; j++) {
            mpq_mul(p, wino_qmat_at(AT, i, j), M[j]);
            mpq_add(acc, acc, p);
        }
        mpq_set_ui(y, 0, 1);
        for (int k = 0; k < r; k++) {
            mpq_mul(p, g[k], d[i + k]);
            mpq_add(y, y, p);
        }
        ok &= mpq_equal(acc, y) != 0;
    }
    for (int j = 0; j < a; j++)
        mpq_clear(M[j]);
    free(M);
    mpq_clears(u, v, acc, y, p, NULL);
    return ok;
}

static void random_rational(mpq_t q, struct test_rng *rng)
{
    long num = (long)(test_rng_next(rng) % 201) - 100;
    unsigned long den = 1 + test_rng_next(rng) % 30;
    mpq_set_si(q, num, den);
    mpq_canonicalize(q);
}

/* Proof over m in [1,10], r in [1,9], alpha <= 16 with the default points. */
static int test_identity_range(uint64_t seed)
{
    struct test_rng rng = {seed};
    int ok = 1, checked = 0;
    mpq_t d[WINO_MAX_ALPHA], g[WINO_MAX_ALPHA];
    for (int i = 0; i < WINO_MAX_ALPHA; i++) {
        mpq_init(d[i]);
        mpq_init(g[i]);
    }
    for (int m = 1; m <= 10; m++)
        for (int r = 1; r <= 9; r++) {
            if (m + r - 1 > WINO_MAX_ALPHA)
                continue;
            wino_tile *t = make(m, r, NULL, 0);
            if (!t)
                return 0;
            const int a = m + r - 1;
            int good = 1;
            for (int bd = 0; bd < a; bd++) /* basis pairs: a proof of the bilinear identity */
                for (int bg = 0; bg < r; bg++) {
                    for (int i = 0; i < a; i++)
                        mpq_set_ui(d[i], i == bd, 1);
                    for (int i = 0; i < r; i++)
                        mpq_set_ui(g[i], i == bg, 1);
                    good &= identity_1d(t, d, g);
                }
            for (int trial = 0; trial < 3; trial++) {
                for (int i = 0; i < a; i++)
                    random_rational(d[i], &rng);
                for (int i = 0; i < r; i++)
                    random_rational(g[i], &rng);
                good &= identity_1d(t, d, g);
            }
            if (!good) {
                printf("  identity fails for F(%d,%d) (seed %llu)\n", m, r,
                       (unsigned long long)seed);
                ok = 0;
            }
            checked++;
            wino_tile_destroy(t);
        }
    for (int i = 0; i < WINO_MAX_ALPHA; i++) {
        mpq_clear(d[i]);
        mpq_clear(g[i]);
    }
    return ok && checked == 87; /* 90 pairs less (9,9), (10,8), (10,9) */
}

/* Exact 2D check of Y = A1^T [(G1 g G2^T) .* (B1^T d B2)] A2 on basis pairs and random data. */
static int identity_2d(const wino_tile *t1, const wino_tile *t2, struct test_rng *rng)
{
    const int m1 = t1->toom.m, r1 = t1->toom.r, a1 = t1->toom.alpha;
    const int m2 = t2->toom.m, r2 = t2->toom.r, a2 = t2->toom.alpha;
    wino_qmat d, g, G2T, B2, A2, tmp, U, V, M, tmp2, Y;
    wino_qmat_init(&d, a1, a2);
    wino_qmat_init(&g, r1, r2);
    wino_qmat_transpose(&G2T, mat(t2, WINO_MATRIX_G));
    wino_qmat_transpose(&B2, mat(t2, WINO_MATRIX_BT));
    wino_qmat_transpose(&A2, mat(t2, WINO_MATRIX_AT));
    int ok = 1;
    const int basis = a1 * a2 * r1 * r2;
    for (int trial = 0; trial < basis + 2; trial++) {
        for (int i = 0; i < a1; i++)
            for (int j = 0; j < a2; j++)
                if (trial < basis)
                    mpq_set_ui(wino_qmat_at(&d, i, j), (trial / (r1 * r2)) == i * a2 + j, 1);
                else
                    random_rational(wino_qmat_at(&d, i, j), rng);
        for (int i = 0; i < r1; i++)
            for (int j = 0; j < r2; j++)
                if (trial < basis)
                    mpq_set_ui(wino_qmat_at(&g, i, j), (trial % (r1 * r2)) == i * r2 + j, 1);
                else
                    random_rational(wino_qmat_at(&g, i, j), rng);
        wino_qmat_mul(&tmp, mat(t1, WINO_MATRIX_G), &g);
        wino_qmat_mul(&U, &tmp, &G2T);
        wino_qmat_clear(&tmp);
        wino_qmat_mul(&tmp, mat(t1, WINO_MATRIX_BT), &d);
        wino_qmat_mul(&V, &tmp, &B2);
        wino_qmat_clear(&tmp);
        wino_qmat_init(&M, a1, a2);
        for (int i = 0; i < a1; i++)
            for (int j = 0; j < a2; j++)
                mpq_mul(wino_qmat_at(&M, i, j), wino_qmat_at(&U, i, j), wino_qmat_at(&V, i, j));
        wino_qmat_mul(&tmp2, mat(t1, WINO_MATRIX_AT), &M);
        wino_qmat_mul(&Y, &tmp2, &A2);
        mpq_t y, p;
        mpq_inits(y, p, NULL);
        for (int i = 0; i < m1; i++)
            for (int j = 0; j < m2; j++) {
                mpq_set_ui(y, 0, 1);
                for (int u = 0; u < r1; u++)
                    for (int v = 0; v < r2; v++) {
                        mpq_mul(p, wino_qmat_at(&g, u, v), wino_qmat_at(&d, i + u, j + v));
                        mpq_add(y, y, p);
                    }
                ok &= mpq_equal(y, wino_qmat_at(&Y, i, j)) != 0;
            }
        mpq_clears(y, p, NULL);
        wino_qmat_clear(&U);
        wino_qmat_clear(&V);
        wino_qmat_clear(&M);
        wino_qmat_clear(&tmp2);
        wino_qmat_clear(&Y);
    }
    wino_qmat_clear(&d);
    wino_qmat_clear(&g);
    wino_qmat_clear(&G2T);
    wino_qmat_clear(&B2);
    wino_qmat_clear(&A2);
    return ok;
}

static int test_identity_2d(uint64_t seed)
{
    static const int pairs[][4] = {{2, 3, 2, 3}, {4, 3, 4, 3}, {6, 3, 6, 3}, {4, 3, 2, 3},
                                   {2, 5, 3, 3}, {3, 2, 5, 4}, {1, 1, 2, 2}, {6, 5, 2, 7}};
    struct test_rng rng = {seed};
    int ok = 1;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        wino_tile *t1 = make(pairs[i][0], pairs[i][1], NULL, 0);
        wino_tile *t2 = make(pairs[i][2], pairs[i][3], NULL, WINO_TILE_INTEGER_BT);
        if (!t1 || !t2 || !identity_2d(t1, t2, &rng)) {
            printf("  2D identity fails for F(%dx%d, %dx%d) (seed %llu)\n", pairs[i][0],
                   pairs[i][2], pairs[i][1], pairs[i][3], (unsigned long long)seed);
            ok = 0;
        }
        wino_tile_destroy(t1);
        wino_tile_destroy(t2);
    }
    return ok;
}

/* Integer B^T, integer A^T and both: every entry of the rescaled matrices an integer, identity
 * intact, for fractional point sets. */
static int test_integer_matrices(void)
{
    static const char *const sets[] = {"0,1,-1,1/2,-2", "0,1,-1,2,-2,1/2,-1/2",
                                       "0,-1,1,1/2,-2,2,-1/2,4/3,-3/4,1/4,-4,4"};
    static const int ms[] = {4, 6, 11};
    int ok = 1;
    static const unsigned flags[] = {WINO_TILE_INTEGER_BT, WINO_TILE_INTEGER_AT,
                                     WINO_TILE_INTEGER_BT | WINO_TILE_INTEGER_AT};
    for (int s = 0; s < 9; s++) {
        const unsigned f = flags[s % 3];
        wino_tile *t = make(ms[s / 3], 3, sets[s / 3], f);
        if (!t)
            return 0;
        for (int i = 0; i < t->toom.alpha; i++)
            for (int j = 0; j < t->toom.alpha; j++)
                ok &= !(f & WINO_TILE_INTEGER_BT) ||
                      mpz_cmp_ui(mpq_denref(wino_qmat_at(&t->toom.BT, i, j)), 1) == 0;
        for (int i = 0; i < t->toom.m; i++)
            for (int j = 0; j < t->toom.alpha; j++)
                ok &= !(f & WINO_TILE_INTEGER_AT) ||
                      mpz_cmp_ui(mpq_denref(wino_qmat_at(&t->toom.AT, i, j)), 1) == 0;
        mpq_t d[WINO_MAX_ALPHA], g[3];
        for (int i = 0; i < t->toom.alpha; i++)
            mpq_init(d[i]);
        for (int i = 0; i < 3; i++)
            mpq_init(g[i]);
        for (int bd = 0; bd < t->toom.alpha; bd++)
            for (int bg = 0; bg < 3; bg++) {
                for (int i = 0; i < t->toom.alpha; i++)
                    mpq_set_ui(d[i], i == bd, 1);
                for (int i = 0; i < 3; i++)
                    mpq_set_ui(g[i], i == bg, 1);
                ok &= identity_1d(t, d, g);
            }
        for (int i = 0; i < t->toom.alpha; i++)
            mpq_clear(d[i]);
        for (int i = 0; i < 3; i++)
            mpq_clear(g[i]);
        wino_tile_destroy(t);
    }
    return ok;
}

/* Point order is row order; degenerate tiles F(1,1), F(1,r), F(m,1). */
static int test_order_and_edges(void)
{
    int ok = 1;
    wino_tile *a = make(2, 3, "0,1,-1", 0), *b = make(2, 3, "1,0,-1", 0);
    char x[32], y[32];
    for (int j = 0; j < 3 && a && b; j++) { /* G row of point 0 moves with the point */
        wino_tile_entry_string(a, WINO_MATRIX_G, 0, j, x, sizeof x, NULL);
        wino_tile_entry_string(b, WINO_MATRIX_G, 1, j, y, sizeof y, NULL);
        ok &= !strcmp(x, y);
    }
    wino_tile_destroy(a);
    wino_tile_destroy(b);
    wino_tile *one = make(1, 1, NULL, 0);
    if (one) {
        wino_tile_entry_string(one, WINO_MATRIX_BT, 0, 0, x, sizeof x, NULL);
        ok &= !strcmp(x, "1") && wino_tile_alpha(one) == 1;
    } else
        ok = 0;
    wino_tile_destroy(one);
    return ok;
}

int main(void)
{
    uint64_t seed = test_seed();
    struct test_counts c = {0, 0};
    test_check(&c, test_f43_mori(), "F(4,3) equals Mori et al. (Electronics 2024) eq. (5)");
    test_check(&c, test_f23_lavin(), "F(2,3) equals Lavin and Gray up to paired sign flips");
    test_check(&c, test_alpha8_row(), "alpha = 8 row +-(1 0 -21/4 0 21/4 0 -1 0)");
    test_check(&c, test_identity_range(seed), "exact identity, m in [1,10], r in [1,9]");
    test_check(&c, test_identity_2d(seed), "exact 2D nesting identity");
    test_check(&c, test_integer_matrices(), "integer B^T, A^T and both keep the identity");
    test_check(&c, test_order_and_edges(), "point order is row order; F(1,1)");
    return test_report(&c);
}
