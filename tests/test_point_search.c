/* Tests of the interpolation-point search (src/gen/point_search.c) on small tiles and few trials:
 *  - the search, exhaustive or beam and refinement, is deterministic, also across thread
 *    counts and with screening, and the exhaustive one is never beaten;
 *  - it returns alpha - 1 distinct points starting with 0, 1, -1;
 *  - its reported error is exactly the error of re-measuring the returned set;
 *  - a clearly bad set measures worse than the found one; F(2x2, 3x3) from 0, 1, -1 is near
 *    exact in FP32;
 *  - bad arguments are refused with WINO_INVALID_ARGUMENT;
 *  - the recipe database (src/gen/point_db.c) holds what this evaluator measures. */
#include "gen/point_db.h"
#include "gen/point_search.h"
#include "gen/points.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TRIALS 200

static int passed, failed;

static void check(int ok, const char *what, int alpha)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL alpha %d: %s (%s)\n", alpha, what, wino_last_error());
    }
}

static long progress_calls;
static int progress_sane = 1;

static void count_progress(void *user, const struct wino_point_search_progress *p)
{
    (void)user;
    progress_calls++;
    if (p->done < 1 || p->done > p->total || !p->stage)
        progress_sane = 0;
}

/* exhaustive: 1 measures every set, 0 forces the beam (of 2, to keep the test short) and
 * refinement. */
static enum wino_status search(int alpha, int exhaustive, int threads, long screen,
                               struct wino_point_search_result *r)
{
    struct wino_point_search_options o = wino_point_search_defaults();
    o.trials = TRIALS;
    o.screen_trials = screen;
    o.exhaustive_max = exhaustive ? o.exhaustive_max : 0;
    o.beam = 2;
    o.threads = threads;
    o.progress = count_progress;
    return wino_point_search(alpha, &o, r);
}

/* Searches twice (2 threads, then 1) and once with screening; *median gets the error found. */
static void test_search(int alpha, int exhaustive, double *median)
{
    struct wino_point_search_result a, b;
    check(search(alpha, exhaustive, 2, 0, &a) == WINO_SUCCESS, "search succeeds", alpha);
    check(search(alpha, exhaustive, 1, 0, &b) == WINO_SUCCESS, "second search succeeds", alpha);
    check(!strcmp(a.points, b.points) && a.median_rel_l1 == b.median_rel_l1,
          "same result twice, on 2 threads and on 1", alpha);
    check(a.alpha == alpha && a.trials == TRIALS && a.screen_trials == TRIALS &&
              a.exhaustive == exhaustive && a.evaluations >= 1 && a.seconds >= 0.0,
          "result fields", alpha);
    check(!strncmp(a.points, "0,1,-1", 6) && (a.points[6] == ',' || a.points[6] == '\0'),
          "starts with 0,1,-1", alpha);

    mpq_t *q = NULL;
    char err[160] = "";
    int rc = wino_points_parse(a.points, alpha - 1, &q, err, sizeof err);
    check(rc == 0, "alpha - 1 distinct points", alpha);
    if (rc)
        printf("  %s: %s\n", a.points, err);
    wino_points_free(q, alpha - 1);

    double again = -1.0;
    check(wino_point_eval(alpha, a.points, TRIALS, wino_point_search_defaults().seed, &again) ==
                  WINO_SUCCESS &&
              again == a.median_rel_l1,
          "reported error equals re-measuring the set", alpha);

    struct wino_point_search_result s;
    check(search(alpha, exhaustive, 2, TRIALS / 4, &s) == WINO_SUCCESS,
          "screened search succeeds", alpha);
    check(wino_point_eval(alpha, s.points, TRIALS, 1, &again) == WINO_SUCCESS &&
              again == s.median_rel_l1 && s.trials == TRIALS && s.screen_trials == TRIALS / 4,
          "screened search reports the error on all trials", alpha);
    *median = a.median_rel_l1;
}

/* found: the error of the set searched for alpha 6. */
static void test_eval(double found)
{
    double good = 0.0, bad = 0.0, other = 0.0;
    check(wino_point_eval(6, "0,1,-1,9,-9", TRIALS, 1, &bad) == WINO_SUCCESS &&
              bad > 10.0 * found,
          "0,1,-1,9,-9 is far worse than the found set", 6);
    check(wino_point_eval(4, "0,1,-1", TRIALS, 1, &good) == WINO_SUCCESS && good > 0.0 &&
              good < 1e-6,
          "0,1,-1 is near exact", 4);
    check(wino_point_eval(4, "0,1,-1", TRIALS, 2, &other) == WINO_SUCCESS && other != good,
          "the seed changes the trials", 4);
}

static void test_bad_arguments(void)
{
    struct wino_point_search_options o = wino_point_search_defaults();
    struct wino_point_search_result r;
    double e;
    o.trials = TRIALS;
    check(wino_point_search(3, &o, &r) == WINO_INVALID_ARGUMENT, "alpha 3 refused", 3);
    check(wino_point_search(17, &o, &r) == WINO_INVALID_ARGUMENT, "alpha 17 refused", 17);
    check(wino_point_search(5, NULL, &r) == WINO_INVALID_ARGUMENT, "NULL options refused", 5);
    o.trials = 0;
    check(wino_point_search(5, &o, &r) == WINO_INVALID_ARGUMENT, "0 trials refused", 5);
    o.trials = TRIALS;
    o.screen_trials = -1;
    check(wino_point_search(5, &o, &r) == WINO_INVALID_ARGUMENT, "negative screen refused", 5);
    o.screen_trials = 0;
    o.threads = 0;
    check(wino_point_search(5, &o, &r) == WINO_INVALID_ARGUMENT, "0 threads refused", 5);
    o.threads = 2;
    o.rerank = 0;
    check(wino_point_search(5, &o, &r) == WINO_INVALID_ARGUMENT, "rerank 0 refused", 5);
    o.rerank = 1;
    o.beam = 0;
    check(wino_point_search(5, &o, &r) == WINO_INVALID_ARGUMENT, "beam 0 refused", 5);
    o.beam = 1;
    o.exhaustive_max = -1;
    check(wino_point_search(5, &o, &r) == WINO_INVALID_ARGUMENT, "exhaustive_max -1 refused",
          5);

    const char *bad_points[] = {"0,1,-1,1/0", "0,1,-1,abc", "0,1,-1,1", "0,1,-1", "0,1,-1,2,3",
                                ""};
    for (size_t i = 0; i < sizeof bad_points / sizeof bad_points[0]; i++)
        check(wino_point_eval(5, bad_points[i], TRIALS, 1, &e) == WINO_INVALID_ARGUMENT,
              "malformed, repeated or miscounted points refused", 5);
    check(wino_point_eval(5, NULL, TRIALS, 1, &e) == WINO_INVALID_ARGUMENT, "NULL points", 5);
    check(wino_point_eval(5, "0,1,-1,2", 0, 1, &e) == WINO_INVALID_ARGUMENT, "0 trials", 5);
    check(wino_point_eval(17, "0,1,-1,2", TRIALS, 1, &e) == WINO_INVALID_ARGUMENT, "alpha 17",
          17);
}

/* The database was written by `wino points --all` with the default seed: re-measuring each
 * recorded set reproduces its recorded median (printed to 7 significant digits). */
static void test_database(void)
{
    for (int alpha = WINO_POINT_SEARCH_MIN_ALPHA; alpha <= WINO_MAX_ALPHA; alpha++) {
        const struct wino_point_record *rec = wino_point_db_record(alpha);
        check(rec && rec->alpha == alpha && rec->trials >= 1 &&
                  !strcmp(wino_point_db_points(alpha), rec->points),
              "database record", alpha);
        if (!rec)
            continue;
        double e = 0.0;
        check(wino_point_eval(alpha, rec->points, rec->trials, wino_point_search_defaults().seed,
                              &e) == WINO_SUCCESS &&
                  fabs(e - rec->median_rel_l1) <= 1e-6 * rec->median_rel_l1,
              "recorded median reproduced", alpha);
    }
    check(!strcmp(wino_point_db_points(3), "0,1") && !strcmp(wino_point_db_points(1), "") &&
              !wino_point_db_record(3) && !wino_point_db_points(17),
          "small alphas are prefixes of 0,1,-1", 3);
}

/* Operations (fma as one) of the 2D transforms of F(m x m, 3 x 3) for a point set. */
static long ops_of(int alpha, const char *points)
{
    wino_tile *t = NULL;
    long ops = 0;
    if (wino_tile_create(alpha - 2, 3, points, 0, &t))
        return -1;
    for (int k = 0; k < 3; k++) {
        struct wino_op_counts c;
        wino_tile_op_counts(t, (enum wino_transform)k, NULL, &c);
        ops += c.add + c.mul + c.fma;
    }
    wino_tile_destroy(t);
    return ops;
}

/* The tie margin trades accuracy within the margin for cheaper transforms, never more. */
static void test_tie(void)
{
    const int alpha = 6;
    struct wino_point_search_options o = wino_point_search_defaults();
    struct wino_point_search_result strict, loose;
    o.trials = TRIALS;
    o.screen_trials = TRIALS / 4;
    o.tie = 0.0;
    int ok = wino_point_search(alpha, &o, &strict) == WINO_SUCCESS;
    o.tie = 1.0;
    ok &= wino_point_search(alpha, &o, &loose) == WINO_SUCCESS;
    check(ok && strict.median_rel_l1 <= loose.median_rel_l1 &&
              loose.median_rel_l1 <= 2.0 * strict.median_rel_l1 &&
              ops_of(alpha, loose.points) <= ops_of(alpha, strict.points),
          "a looser tie margin gives cheaper transforms within the margin", alpha);
    o.tie = -0.5;
    check(wino_point_search(alpha, &o, &loose) == WINO_INVALID_ARGUMENT, "negative tie refused",
          alpha);
}

/* The public face (wino_gen.h): recorded points, a search and its error re-measured. */
static void test_public_api(void)
{
    check(strcmp(wino_points_recorded(6), wino_point_db_points(6)) == 0 &&
              wino_points_recorded(0) == NULL && wino_points_recorded(17) == NULL,
          "wino_points_recorded is the database", 6);
    char buf[WINO_POINT_TEXT_CAP], small[4];
    size_t needed = 0;
    double median = 0, again = -1;
    check(wino_points_search(5, TRIALS, 1, 7, buf, sizeof buf, &needed, &median) ==
                  WINO_SUCCESS &&
              needed == strlen(buf) + 1 && median > 0 &&
              wino_points_error(5, buf, TRIALS, 7, &again) == WINO_SUCCESS && again == median,
          "wino_points_search's median is its points' error", 5);
    check(wino_points_search(5, TRIALS, 1, 7, small, sizeof small, &needed, NULL) ==
                  WINO_INVALID_ARGUMENT &&
              needed == strlen(buf) + 1,
          "a small buffer: refused, the size needed told", 5);
    check(wino_points_search(3, 0, 0, 1, buf, sizeof buf, NULL, NULL) == WINO_INVALID_ARGUMENT &&
              wino_points_search(5, -1, 0, 1, buf, sizeof buf, NULL, NULL) ==
                  WINO_INVALID_ARGUMENT &&
              wino_points_error(5, NULL, 0, 1, &again) == WINO_INVALID_ARGUMENT,
          "bad alpha, trials or points refused", 3);
}

int main(void)
{
    double found[7], all;
    for (int alpha = 4; alpha <= 6; alpha++)
        test_search(alpha, 0, &found[alpha]);
    for (int alpha = 4; alpha <= 5; alpha++) {
        test_search(alpha, 1, &all);
        check(all <= found[alpha], "no set beats the exhaustive search", alpha);
    }
    check(progress_calls > 0 && progress_sane, "progress reported", 0);
    test_eval(found[6]);
    test_tie();
    test_bad_arguments();
    test_database();
    test_public_api();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
