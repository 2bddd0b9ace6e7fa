/* Interpolation-point search (Mazaheri et al. (EuroSys'20) section 3.1.1): for a tile size alpha, the finite points
 * of F(m x m, 3 x 3), m = alpha - 2, whose FP32 Winograd result is closest to an FP64 direct
 * correlation. The error of a point set is the median, over N random trials, of the relative L1
 * error sum|Y32 - Y64| / sum|Y64| of one m x m output tile; input tile d and filter g are uniform
 * in (-1, 1) (drawn as floats). All sets of one alpha are measured on the same trials (common
 * random numbers from the seed), so comparisons are fair and the search is deterministic.
 *
 * Candidates: the distinct rationals a/b, |a| <= 9, 1 <= b <= 9. Every set starts with 0, 1, -1.
 * The search measures, compares and returns every set in one canonical order: 0, 1, -1, then
 * simplest first (smaller denominator, then smaller |numerator|, p before -p). The output
 * transform sums over the points in their order, and that rounding order alone moves the median
 * by a few percent; fixing it makes the error a property of the set.
 * The search:
 *  0. When there are at most exhaustive_max sets (alpha <= 7 by default: C(108, 3) = 204,156),
 *     every set is measured and the lowest median wins. Otherwise (C(108, 12) at alpha 16):
 *  1. Beam growth from (0, 1, -1). The beam of k points holds the `beam` best sets of k points,
 *     each measured as the tile it makes (alpha = k + 1), among: every set of the beam of k - 1
 *     points plus one unused candidate, and every set of the beam of k - 2 points plus a
 *     symmetric pair {p, -p} or {p, -1/p} (the shape of the best known sets, Mazaheri et al. (EuroSys'20) Table 3).
 *     A beam of 1 is plain greedy growth.
 *  2. Refinement of each set of the final beam, until a whole pass changes nothing (at most 10
 *     passes): for each chosen point, every unused candidate in its place; for each chosen
 *     symmetric pair, every other symmetric pair in its place; the best change is kept when it
 *     lowers the median. The lowest refined set wins.
 *  3. Screening: steps 0 to 2 may run on the first screen_trials trials only (common random
 *     numbers keep the ranking sharper than the median itself); the best `rerank` distinct
 *     sets met at the target alpha are then measured on all trials and the lowest median wins,
 *     so the reported error is always the median over all trials.
 *  4. Ties: among the reranked sets whose median is within `tie` of the lowest, the set whose
 *     2D transforms (input, filter, output of F(m x m, 3 x 3), an fma counted as one operation)
 *     need the fewest operations wins; simple points are cheap points (Mazaheri et al. (EuroSys'20) section 3.1.1).
 * The library prints nothing: progress goes to a callback. */
#ifndef WINO_GEN_POINT_SEARCH_H
#define WINO_GEN_POINT_SEARCH_H

#include <stdint.h>

#include "wino_gen.h"

#define WINO_POINT_SEARCH_MIN_ALPHA 4
#define WINO_POINT_SEARCH_MAX_TRIALS 200000L /* bounds the trial data (about 2.6 KiB each) */
#define WINO_POINT_SEARCH_MAX_BEAM 16
#define WINO_POINT_SEARCH_MAX_EXHAUSTIVE 1000000L
#define WINO_POINT_SEARCH_MAX_THREADS 64
#define WINO_POINT_TEXT_CAP 128              /* text form of up to 15 points like "-9/8" */

/* Where a running search is, for a progress display. */
struct wino_point_search_progress {
    int alpha;         /* target tile size */
    const char *stage; /* "exhaustive", "beam", "refine" or "rerank" */
    int round;         /* beam: points in the sets being grown; refine: pass number (from 1) */
    int start;         /* refine: which set of the final beam is refined (from 1) */
    long done, total;  /* point sets measured / to measure in the current batch */
    double best;       /* lowest median so far at the target alpha (0 before there is one) */
};

struct wino_point_search_options {
    long trials;         /* N >= 1: trials behind the reported median (10,000 for the search) */
    long screen_trials;  /* trials while searching; 0 or >= trials: all (no screening) */
    long exhaustive_max; /* search exhaustively up to this many sets, 0..MAX_EXHAUSTIVE */
    int beam;            /* sets kept per size while growing, all refined: 1..MAX_BEAM */
    int rerank;          /* sets re-measured on all trials after screening, 1..222 */
    double tie;          /* after the rerank, sets within this relative margin of the lowest
                          * median (0..1; measurement noise is about 1%) count as equally
                          * accurate, and the one whose transforms need the fewest operations
                          * wins */
    int threads;         /* threads measuring candidate sets, 1..MAX_THREADS */
    uint64_t seed;       /* fixes the random trials (each alpha derives its own stream) */
    /* Called after each measured set, serialized, from any search thread; may be NULL. */
    void (*progress)(void *user, const struct wino_point_search_progress *p);
    void *progress_user;
};

struct wino_point_search_result {
    int alpha;
    char points[WINO_POINT_TEXT_CAP]; /* alpha - 1 finite points, canonical order, "0,1,-1,..." */
    double median_rel_l1;             /* median over opts.trials trials */
    long trials;
    long screen_trials;               /* trials the search ranked sets on (= trials: none) */
    int exhaustive;                   /* 1: every set was measured; 0: beam and refinement */
    long evaluations;                 /* point sets measured, all trial counts together */
    double seconds;                   /* wall time of the search */
};

/* Defaults: 10,000 trials, screening on 2,000, exhaustive up to 250,000 sets, beam 4,
 * rerank 16, tie 2%, 2 threads, seed 1, no progress. */
struct wino_point_search_options wino_point_search_defaults(void);

/* Searches the points for 4 <= alpha <= WINO_MAX_ALPHA. Returns WINO_SUCCESS,
 * WINO_INVALID_ARGUMENT (bad alpha or options), WINO_OUT_OF_MEMORY or WINO_INTERNAL_ERROR, with
 * the reason in wino_last_error(). */
enum wino_status wino_point_search(int alpha, const struct wino_point_search_options *opts,
                                   struct wino_point_search_result *result);

/* The median relative L1 error of a given set of alpha - 1 finite points (text form as in
 * wino_tile_create, measured in the order given), 4 <= alpha <= WINO_MAX_ALPHA, on the same
 * trials the search uses for this alpha, trials and seed: re-measuring a searched set
 * reproduces its reported error exactly. WINO_UNSUPPORTED (with the reason) when an entry of the
 * matrices is not zero or a normal float, or when the median is not finite; a finite median,
 * however large, is a measurement and succeeds (wino_tile_f32_check in gen/tile_accuracy.h says
 * whether the convolution operator would accept the points). */
enum wino_status wino_point_eval(int alpha, const char *points, long trials, uint64_t seed,
                                 double *median_rel_l1);

#endif
