/* Caller-given interpolation points: a tile whose transforms cannot be written or run soundly in
 * FP32 is refused with WINO_UNSUPPORTED and a reason, never a crash or a silently wrong result.
 *  (a) Range checks of exact rationals against float and double (src/gen/q_range.c).
 *  (b) Emission: recipe constants that overflow or underflow FP32 make wino_tile_emit refuse,
 *      naming the constant; the exact op counts still work.
 *  (c) wino_tile_matrix_double refuses an entry outside the double range.
 *  (d) Convolution: can_implement and create refuse a caller's tile (built on its points by the
 *      generator, handed over as struct wino_conv2d_options.matrices) whose matrices leave the
 *      FP32 range or whose error bound exceeds the limit stated in wino.h; they accept the
 *      recorded points of every tile the library offers and the
 *      classic hand-picked sets, which compute the right result.
 *  (e) wino_point_eval fails on a set that cannot be measured in FP32 instead of reporting NaN.
 * Usage: test_custom_points (WINO_TEST_SEED=N to replay the random inputs). */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <float.h>
#include <string.h>

#include "caller_tile.h"
#include "conv_check.h"
#include "base/tile_check.h"
#include "gen/point_search.h"
#include "gen/q_range.h"
#include "gen/tile_accuracy.h"

static struct test_rng rng;
static struct test_counts counts;

/* 1 followed by `zeros` zeros, or its inverse with `inverse`: the digits callers type. */
static const char *power_of_ten(int zeros, int inverse)
{
    static char text[400];
    int n = 0;
    if (inverse)
        n = snprintf(text, sizeof text, "1/");
    text[n++] = '1';
    for (int i = 0; i < zeros; i++)
        text[n++] = '0';
    text[n] = '\0';
    return text;
}

/* ---- (a) range checks ---- */

static int range_of(const char *value, double lo, double hi)
{
    mpq_t q;
    mpq_init(q);
    mpq_set_str(q, value, 10);
    mpq_canonicalize(q);
    const int range = wino_q_range(q, lo, hi);
    mpq_clear(q);
    return range;
}

/* The float boundaries themselves, exactly: FLT_MAX = (2^24 - 1) 2^104, FLT_MIN = 2^-126. */
static void check_ranges(void)
{
    mpq_t q;
    mpq_init(q);
    mpq_set_d(q, FLT_MAX);
    const int at_max = wino_q_range(q, FLT_MIN, FLT_MAX);
    mpq_set_d(q, FLT_MIN);
    const int at_min = wino_q_range(q, FLT_MIN, FLT_MAX);
    mpq_neg(q, q);
    const int at_neg_min = wino_q_range(q, FLT_MIN, FLT_MAX);
    mpq_set_d(q, nextafter(FLT_MIN, 0.0));
    const int below_min = wino_q_range(q, FLT_MIN, FLT_MAX);
    mpq_set_d(q, nextafter(FLT_MAX, HUGE_VAL));
    const int above_max = wino_q_range(q, FLT_MIN, FLT_MAX);
    mpq_neg(q, q);
    const int below_neg_max = wino_q_range(q, FLT_MIN, FLT_MAX);
    test_check(&counts,
               !at_max && !at_min && !at_neg_min && below_min == -1 && above_max == 1 &&
                   below_neg_max == 1 && !range_of("0", FLT_MIN, FLT_MAX) &&
                   !range_of("-1/3", FLT_MIN, FLT_MAX) &&
                   range_of(power_of_ten(39, 0), FLT_MIN, FLT_MAX) == 1 &&
                   !range_of(power_of_ten(39, 0), DBL_MIN, DBL_MAX) &&
                   range_of(power_of_ten(39, 1), FLT_MIN, FLT_MAX) == -1 &&
                   range_of(power_of_ten(330, 1), DBL_MIN, DBL_MAX) == -1,
               "range checks: FLT_MIN and FLT_MAX are in, the next doubles out; double range");
    char text[40];
    mpq_set_str(q, "-21/4", 10);
    wino_q_describe(q, text, sizeof text);
    const int exact = !strcmp(text, "-21/4");
    mpq_set_str(q, power_of_ten(100, 0), 10);
    wino_q_describe(q, text, sizeof text);
    test_check(&counts, exact && !strcmp(text, "about 1.000000e+100"),
               "values in messages: exact when short, else scientific");
    mpq_clear(q);
}

/* ---- (b) emission ---- */

struct emit_case {
    int m, r;
    const char *points;
};

static void check_emit_refusals(void)
{
    char huge[64], tiny[64];
    snprintf(huge, sizeof huge, "0,1,%s", power_of_ten(40, 0));
    snprintf(tiny, sizeof tiny, "0,1,%s", power_of_ten(50, 1));
    const struct emit_case cases[] = {
        {2, 3, huge},                          /* entries beyond FLT_MAX */
        {2, 3, tiny},                          /* entries below FLT_MIN */
        {1, 3, "1,1000000000000000000000096"}, /* entries fit, a recipe constant does not */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct emit_case *c = &cases[i];
        wino_tile *t = NULL;
        int ok = !wino_tile_create(c->m, c->r, c->points, 0, &t);
        for (int lang = WINO_EMIT_C; ok && lang <= WINO_EMIT_OPENCL; lang++) {
            size_t need = 0;
            char buf[64];
            ok = wino_tile_emit(t, (enum wino_emit_lang)lang, NULL, 0, &need) ==
                     WINO_UNSUPPORTED &&
                 strstr(wino_last_error(), "FP32") && strstr(wino_last_error(), "constant") &&
                 wino_tile_emit(t, (enum wino_emit_lang)lang, buf, sizeof buf, NULL) ==
                     WINO_UNSUPPORTED;
        }
        if (ok)
            printf("  F(%d, %d) %s: %s\n", c->m, c->r, c->points, wino_last_error());
        struct wino_op_counts base, opt;
        for (int w = WINO_TRANSFORM_INPUT; ok && w <= WINO_TRANSFORM_OUTPUT; w++)
            ok = !wino_tile_op_counts(t, (enum wino_transform)w, &base, &opt);
        char what[240];
        snprintf(what, sizeof what,
                 "F(%d, %d) points %s: emit refuses (C and CUDA) naming the constant; op counts "
                 "work",
                 c->m, c->r, c->points);
        test_check(&counts, ok, what);
        wino_tile_destroy(t);
    }
}

/* ---- (c) matrices in double ---- */

static void check_matrix_double(void)
{
    char points[420];
    double d[16 * 16];
    int ok = 1;
    for (int inverse = 0; inverse <= 1 && ok; inverse++) {
        snprintf(points, sizeof points, "0,1,-1,2,%s", power_of_ten(110, inverse));
        wino_tile *t = NULL;
        ok = !wino_tile_create(4, 3, points, 0, &t) &&
             wino_tile_matrix_double(t, WINO_MATRIX_AT, d) == WINO_UNSUPPORTED &&
             strstr(wino_last_error(), "A^T[3][4]") && strstr(wino_last_error(), "double");
        printf("  %s\n", wino_last_error());
        ok = ok && !wino_tile_matrix_double(t, WINO_MATRIX_BT, d);
        wino_tile_destroy(t);
    }
    test_check(&counts, ok,
               "matrix_double: an entry 1e330 or 1e-330 is refused, naming it; B^T passes");
}

/* ---- (d) convolution ---- */

/* The points of the recorded tile F(m, r), comma-separated, into buf. */
static int recorded_points(int m, int r, char *buf, size_t cap)
{
    wino_tile *t = NULL;
    if (wino_tile_create(m, r, NULL, 0, &t))
        return 0;
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i + 1 < wino_tile_alpha(t); i++) {
        size_t need = 0;
        if (i)
            buf[at++] = ',';
        if (wino_tile_point_string(t, i, buf + at, cap - at, &need))
            break;
        at += need - 1;
    }
    wino_tile_destroy(t);
    return 1;
}

/* Winograd options with the tile F(tile_m, 3) on points (ct holds it): the generator's status. */
static enum wino_status winograd(struct caller_tile *ct, int tile_m, int r, const char *points,
                                 struct wino_conv2d_options *o)
{
    const struct wino_conv2d_options w = {.algo = WINO_ALGO_WINOGRAD, .tile_m = tile_m,
                                          .matrices = &ct->matrices};
    *o = w;
    return caller_tile_make(tile_m, r, points, ct);
}

static void check_recorded_points_accepted(void)
{
    int tiles = 0, ok = 1;
    double worst = 0.0;
    char points[WINO_POINT_TEXT_CAP], why[200] = "";
    for (int r = 1; r <= WINO_MAX_ALPHA && ok; r++)
        for (int m = 1; m + r - 1 <= WINO_MAX_ALPHA && ok; m++) {
            const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 2, m + r, m + r, 2, r, r,
                                                                    0, 0);
            struct wino_conv2d_options o;
            struct caller_tile ct;
            ok = recorded_points(m, r, points, sizeof points) &&
                 !winograd(&ct, m, r, points, &o) && !wino_conv2d_can_implement(&d, &o);
            if (ok && wino_tile_f32_error_bound(&ct.matrices) > worst)
                worst = wino_tile_f32_error_bound(&ct.matrices);
            if (!ok)
                snprintf(why, sizeof why, "F(%d, %d) points %s: %s", m, r, points,
                         wino_last_error());
            tiles++;
        }
    printf("  largest FP32 error bound of a recorded tile: %.3g (limit %g)\n", worst,
           WINO_F32_ERROR_BOUND_LIMIT);
    char what[320];
    snprintf(what, sizeof what, "the recorded points of all %d tiles F(m, r), alpha <= %d, are "
             "accepted as caller points %s", tiles, WINO_MAX_ALPHA, why);
    test_check(&counts, ok && tiles == 136 && worst <= WINO_F32_ERROR_BOUND_LIMIT, what);
}

/* Hand-picked sets from the literature: accepted, and right to the accuracy table of
 * docs/cpu-winograd.md (alpha 5 and 6: 5e-6 and 1e-5; alpha 8: 5e-5). */
static void check_classic_points(void)
{
    static const struct {
        int m;
        const char *points;
        double bound;
    } sets[] = {
        {3, "0,1,-1,2", 5e-6},
        {3, "0,1,-1,1/2", 5e-6},
        {4, "0,1,-1,2,-2", 1e-5},
        {4, "0,1,-1,1/2,-2", 1e-5},
        {4, "0,1,-1,1/2,-1/2", 1e-5},
        {6, "0,1,-1,2,-2,1/2,-1/2", 5e-5},
        {6, "0,1,-1,1/2,-2,2,-1/2", 5e-5},
    };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 8, 12, 12, 8, 3, 3, 1, 1);
        struct wino_conv2d_options o;
        struct caller_tile ct;
        const double err = winograd(&ct, sets[i].m, 3, sets[i].points, &o)
                               ? HUGE_VAL
                               : conv_check(&d, &o, NULL, &rng, 0, NULL);
        char what[160];
        snprintf(what, sizeof what, "F(%dx%d, 3x3) points %s accepted, rel. L1 error %.2e <= %g",
                 sets[i].m, sets[i].m, sets[i].points, err, sets[i].bound);
        test_check(&counts, !wino_conv2d_can_implement(&d, &o) && err <= sets[i].bound, what);
        if (!(err <= sets[i].bound))
            printf("  %s\n", wino_last_error());
    }
}

/* The layer of the report: 1x8x12x12 -> 8, 3x3, pad 1, F(3x3, 3x3). */
static void check_bad_points_refused(void)
{
    char big[64], huge[64], tiny[64], wide[64], near[64];
    snprintf(big, sizeof big, "0,1,-1,%s", power_of_ten(6, 0));
    snprintf(huge, sizeof huge, "0,1,-1,%s", power_of_ten(20, 0));
    snprintf(tiny, sizeof tiny, "0,1,-1,%s", power_of_ten(40, 1));
    snprintf(wide, sizeof wide, "0,1,2,3,4,5,6"); /* F(6x6, 3x3): measured error about 70 */
    snprintf(near, sizeof near, "0,1,-1,%s", power_of_ten(6, 1));
    const struct {
        int m;
        const char *points;
    } cases[] = {{3, big}, {3, huge}, {3, tiny}, {3, near}, {6, wide}};
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 8, 12, 12, 8, 3, 3, 1, 1);
    float *w = calloc((size_t)(8 * 8 * 3 * 3), sizeof *w);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct wino_conv2d_options o;
        struct caller_tile ct;
        wino_conv2d *op = (wino_conv2d *)&rng; /* create must reset it */
        char reason[256], what[200];
        const enum wino_status built = winograd(&ct, cases[i].m, 3, cases[i].points, &o);
        if (built) { /* an entry outside the double range: the generator refuses already */
            snprintf(reason, sizeof reason, "%s", wino_last_error());
            snprintf(what, sizeof what, "F(%dx%d, 3x3) points %s: the generator refuses its "
                     "matrices (WINO_UNSUPPORTED, with the reason)", cases[i].m, cases[i].m,
                     cases[i].points);
            test_check(&counts, built == WINO_UNSUPPORTED && strstr(reason, "double"), what);
            printf("  %s\n", reason);
            continue;
        }
        const enum wino_status can = wino_conv2d_can_implement(&d, &o);
        snprintf(reason, sizeof reason, "%s", wino_last_error());
        const enum wino_status made = wino_conv2d_create(&d, w, NULL, &o, &op);
        snprintf(what, sizeof what, "F(%dx%d, 3x3) points %s: can_implement and create refuse "
                 "(WINO_UNSUPPORTED, with the reason)", cases[i].m, cases[i].m, cases[i].points);
        test_check(&counts,
                   can == WINO_UNSUPPORTED && made == WINO_UNSUPPORTED && !op &&
                       (strstr(reason, "float") || strstr(reason, "FP32")) &&
                       !strcmp(reason, wino_last_error()),
                   what);
        printf("  %s\n", reason);
        wino_conv2d_destroy(op);
    }
    free(w);
}

/* Tile creation with caller points stays cheap: the check is on exact matrices, no trials. */
static void check_biggest_tile_accepted(void)
{
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 3, 20, 20, 3, 3, 3, 1, 1);
    struct wino_conv2d_options o;
    struct caller_tile ct;
    const double err =
        winograd(&ct, 14, 3, "0,1,-1,1/2,-2,2,-1/2,4/3,-3/4,2/7,-7/2,4/5,-5/4,4,-1/4", &o)
            ? HUGE_VAL
            : conv_check(&d, &o, NULL, &rng, 1, NULL);
    char what[120];
    snprintf(what, sizeof what,
             "F(14x14, 3x3) with the paper's alpha 16 points: accepted, rel. L1 error %.2e", err);
    test_check(&counts, err < 1e-2, what);
}

/* ---- (e) point evaluation ---- */

static void check_point_eval(void)
{
    char huge[64], big[64];
    snprintf(huge, sizeof huge, "0,1,-1,%s", power_of_ten(20, 0));
    snprintf(big, sizeof big, "0,1,-1,%s", power_of_ten(6, 0));
    double med = 0.0;
    const enum wino_status st = wino_point_eval(5, huge, 200, 1, &med);
    printf("  %s\n", wino_last_error());
    test_check(&counts, st == WINO_UNSUPPORTED && strstr(wino_last_error(), "FP32"),
               "point eval: a set whose FP32 result is not finite is refused, not NaN");
    test_check(&counts, !wino_point_eval(5, big, 200, 1, &med) && isfinite(med) && med > 1.0,
               "point eval: a finite but inaccurate set is measured (median relative error > 1)");
}

int main(void)
{
    rng.s = test_seed();
    check_ranges();
    check_emit_refusals();
    check_matrix_double();
    check_bad_points_refused();
    check_recorded_points_accepted();
    check_classic_points();
    check_biggest_tile_accepted();
    check_point_eval();
    return test_report(&counts);
}
