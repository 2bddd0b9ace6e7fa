/* The public face of the point search and the recorded points (wino_gen.h, "Interpolation
 * points"): defaults filled in, the text handed out under the public buffer rules. */
#include <string.h>

#include "base/error.h"
#include "gen/point_db.h"
#include "gen/point_search.h"
#include "wino_gen.h"

#define DEFAULT_TRIALS 10000L

const char *wino_points_recorded(int alpha)
{
    return wino_point_db_points(alpha);
}

enum wino_status wino_points_search(int alpha, long trials, int threads, unsigned long long seed,
                                    char *buf, size_t cap, size_t *needed,
                                    double *median_rel_l1)
{
    wino_ok();
    if (trials < 0 || threads < 0)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_points_search: trials = %ld and threads "
                                                "= %d must be >= 0 (0: the default)",
                         trials, threads);
    struct wino_point_search_options o = wino_point_search_defaults();
    if (trials)
        o.trials = trials;
    if (threads)
        o.threads = threads;
    o.seed = (uint64_t)seed;
    struct wino_point_search_result r;
    const enum wino_status st = wino_point_search(alpha, &o, &r);
    if (st)
        return st;
    const size_t n = strlen(r.points) + 1;
    if (needed)
        *needed = n;
    if (median_rel_l1)
        *median_rel_l1 = r.median_rel_l1;
    if (!buf || cap < n)
        return wino_fail(WINO_INVALID_ARGUMENT, "buffer of %zu bytes too small for %zu", cap, n);
    memcpy(buf, r.points, n);
    return WINO_SUCCESS;
}

enum wino_status wino_points_error(int alpha, const char *points, long trials,
                                   unsigned long long seed, double *median_rel_l1)
{
    wino_ok();
    if (!points || !median_rel_l1)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_points_error: points or median_rel_l1 "
                                                "is NULL");
    if (trials < 0)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_points_error: trials = %ld < 0", trials);
    return wino_point_eval(alpha, points, trials ? trials : DEFAULT_TRIALS, (uint64_t)seed,
                           median_rel_l1);
}
