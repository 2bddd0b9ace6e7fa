/* Interpolation-point search: exhaustive, or beam growth plus refinement, over common random
 * trials (the method is described in point_search.h, its results in docs/points.md). */
#define _POSIX_C_SOURCE 200112L /* clock_gettime */

#include "gen/point_search.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "gen/tile_accuracy.h"

#define FILTER 3         /* r: the search is for 3 x 3 filters */
#define TB 32            /* trials per block: the vector dimension of every inner loop */
#define MAX_POINTS (WINO_MAX_ALPHA - 1)
#define MAX_CANDIDATES 111 /* distinct a/b with |a| <= 9, 1 <= b <= 9 */
#define BASE_POINTS 3      /* 0, 1, -1: candidates 0, 1, 2 */
#define MAX_PASSES 10      /* refinement passes at most (a pass that changes nothing stops it) */

/* ---------------------------------------------------------------------------------------------
 * Candidate points
 * ------------------------------------------------------------------------------------------- */

struct candidates {
    int count;
    int num[MAX_CANDIDATES], den[MAX_CANDIDATES];
    int neg[MAX_CANDIDATES];    /* index of -p */
    int negrec[MAX_CANDIDATES]; /* index of -1/p, or -1 for p = 0 */
};

static int gcd(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int find_candidate(const struct candidates *c, int num, int den)
{
    for (int i = 0; i < c->count; i++)
        if (c->num[i] * den == num * c->den[i])
            return i;
    return -1;
}

/* Simplest first (denominator, then |numerator|, + before -), so 0, 1, -1 come first and exact
 * ties in the median go to the simpler point. */
static void build_candidates(struct candidates *c)
{
    c->count = 0;
    for (int b = 1; b <= 9; b++)
        for (int a = 0; a <= 9; a++) {
            if (gcd(a, b) != 1 || (a == 0 && b != 1))
                continue;
            c->num[c->count] = a;
            c->den[c->count++] = b;
            if (a) {
                c->num[c->count] = -a;
                c->den[c->count++] = b;
            }
        }
    for (int i = 0; i < c->count; i++) {
        c->neg[i] = find_candidate(c, -c->num[i], c->den[i]);
        c->negrec[i] = c->num[i] ? find_candidate(c, c->num[i] < 0 ? c->den[i] : -c->den[i],
                                                   abs(c->num[i]))
                                 : -1;
    }
}

static void format_points(const struct candidates *c, const int *idx, int npts, char *out)
{
    char *p = out;
    for (int i = 0; i < npts; i++) {
        int a = c->num[idx[i]], b = c->den[idx[i]];
        const char *sep = i ? "," : "";
        p += b == 1 ? sprintf(p, "%s%d", sep, a) : sprintf(p, "%s%d/%d", sep, a, b);
    }
    *p = '\0';
}

/* ---------------------------------------------------------------------------------------------
 * Random trials, blocked TB at a time with the trial index innermost (vectorizable)
 * ------------------------------------------------------------------------------------------- */

struct trials {
    int alpha, m;
    long n;
    float *d;     /* per block: alpha x alpha x TB input tiles */
    float *g;     /* per block: 3 x 3 x TB filters */
    double *y;    /* per block: m x m x TB direct correlation in double */
    double *ysum; /* per block: TB values sum|y| */
};

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static float uniform_pm1(uint64_t *state) /* uniform in (-1, 1), exact in float */
{
    double u = ((double)(splitmix64(state) >> 40) + 0.5) / (double)(1 << 24);
    return (float)(2.0 * u - 1.0);
}

static void trials_free(struct trials *tr)
{
    free(tr->d);
    free(tr->g);
    free(tr->y);
    free(tr->ysum);
    memset(tr, 0, sizeof *tr);
}

/* The first n trials of the stream of (seed, alpha): a prefix of any longer run. */
static enum wino_status trials_make(struct trials *tr, int alpha, long n, uint64_t seed)
{
    memset(tr, 0, sizeof *tr);
    const int m = alpha - FILTER + 1;
    const size_t blocks = (size_t)((n + TB - 1) / TB);
    tr->alpha = alpha;
    tr->m = m;
    tr->n = n;
    tr->d = calloc(blocks * (size_t)(alpha * alpha * TB), sizeof(float));
    tr->g = calloc(blocks * (size_t)(FILTER * FILTER * TB), sizeof(float));
    tr->y = calloc(blocks * (size_t)(m * m * TB), sizeof(double));
    tr->ysum = calloc(blocks * TB, sizeof(double));
    if (!tr->d || !tr->g || !tr->y || !tr->ysum) {
        trials_free(tr);
        return wino_fail(WINO_OUT_OF_MEMORY, "point search: out of memory for %ld trials", n);
    }
    uint64_t state = seed * 0x2545f4914f6cdd1dULL + (uint64_t)alpha;
    for (long t = 0; t < n; t++) {
        const size_t b = (size_t)(t / TB), lane = (size_t)(t % TB);
        float *d = tr->d + b * (size_t)(alpha * alpha * TB) + lane;
        float *g = tr->g + b * (size_t)(FILTER * FILTER * TB) + lane;
        double *y = tr->y + b * (size_t)(m * m * TB) + lane;
        for (int k = 0; k < FILTER * FILTER; k++)
            g[k * TB] = uniform_pm1(&state);
        for (int k = 0; k < alpha * alpha; k++)
            d[k * TB] = uniform_pm1(&state);
        double sum = 0.0;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                double acc = 0.0;
                for (int u = 0; u < FILTER; u++)
                    for (int v = 0; v < FILTER; v++)
                        acc += (double)d[((i + u) * alpha + j + v) * TB] *
                               (double)g[(u * FILTER + v) * TB];
                y[(i * m + j) * TB] = acc;
                sum += fabs(acc);
            }
        tr->ysum[b * TB + lane] = sum;
    }
    return WINO_SUCCESS;
}

/* ---------------------------------------------------------------------------------------------
 * Measuring one point set: FP32 Winograd on every trial, median relative L1 error
 * ------------------------------------------------------------------------------------------- */

struct mats { /* the transforms rounded to the nearest floats */
    float at[MAX_POINTS * (MAX_POINTS + 1)];
    float g[(MAX_POINTS + 1) * FILTER];
    float bt[(MAX_POINTS + 1) * (MAX_POINTS + 1)];
};

struct scratch { /* per thread */
    float *gg, *u, *bd, *v, *am, *y;
    double *err;
};

static enum wino_status load_mats(int alpha, const char *points, struct mats *mt)
{
    wino_tile *tile = NULL;
    enum wino_status st = wino_tile_create(alpha - FILTER + 1, FILTER, points, WINO_TILE_DEFAULT,
                                           &tile);
    if (st)
        return st; /* wino_last_error() already says why */
    if (!(st = wino_tile_matrix_f32(tile, WINO_MATRIX_AT, mt->at)) &&
        !(st = wino_tile_matrix_f32(tile, WINO_MATRIX_G, mt->g)))
        st = wino_tile_matrix_f32(tile, WINO_MATRIX_BT, mt->bt);
    wino_tile_destroy(tile);
    return st;
}

/* out[r][c][:] = sum_k a[r][k] x[k][c][:]; a is rows x inner. Zeros are skipped, which changes
 * no rounding: it is what the generated transforms do. */
static void mul_left(const float *a, int rows, int inner, const float *x, int cols, float *out)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            float acc[TB] = {0};
            for (int k = 0; k < inner; k++) {
                const float w = a[r * inner + k];
                if (w == 0.0f)
                    continue;
                const float *xk = x + (size_t)(k * cols + c) * TB;
                for (int t = 0; t < TB; t++)
                    acc[t] += w * xk[t];
            }
            memcpy(out + (size_t)(r * cols + c) * TB, acc, sizeof acc);
        }
}

/* out[r][c][:] = sum_k x[r][k][:] a[c][k] (x times a transposed); a is cols x inner. */
static void mul_right_t(const float *x, int rows, int inner, const float *a, int cols, float *out)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            float acc[TB] = {0};
            for (int k = 0; k < inner; k++) {
                const float w = a[c * inner + k];
                if (w == 0.0f)
                    continue;
                const float *xk = x + (size_t)(r * inner + k) * TB;
                for (int t = 0; t < TB; t++)
                    acc[t] += w * xk[t];
            }
            memcpy(out + (size_t)(r * cols + c) * TB, acc, sizeof acc);
        }
}

/* In-place selection: the k-th smallest of a[0..n-1] (Hoare partition, median-of-three). */
static double select_kth(double *a, long n, long k)
{
    long lo = 0, hi = n - 1;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        double x = a[lo], y = a[mid], z = a[hi];
        double pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        long i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                double t = a[i];
                a[i++] = a[j];
                a[j--] = t;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return a[k];
    }
    return a[k];
}

static double median(double *a, long n)
{
    double upper = select_kth(a, n, n / 2);
    if (n % 2)
        return upper;
    double lower = a[0]; /* after selection a[0..n/2-1] are all <= upper: take their maximum */
    for (long i = 1; i < n / 2; i++)
        if (a[i] > lower)
            lower = a[i];
    return 0.5 * (lower + upper);
}

/* Median relative L1 error over the first n trials of tr. */
static double measure(const struct trials *tr, long n, const struct mats *mt, struct scratch *s)
{
    const int alpha = tr->alpha, m = tr->m;
    for (long b = 0; b * TB < n; b++) {
        const float *d = tr->d + (size_t)b * (size_t)(alpha * alpha * TB);
        const float *g = tr->g + (size_t)b * (FILTER * FILTER * TB);
        const double *yref = tr->y + (size_t)b * (size_t)(m * m * TB);
        mul_left(mt->g, alpha, FILTER, g, FILTER, s->gg);      /* G g */
        mul_right_t(s->gg, alpha, FILTER, mt->g, alpha, s->u); /* (G g) G^T */
        mul_left(mt->bt, alpha, alpha, d, alpha, s->bd);       /* B^T d */
        mul_right_t(s->bd, alpha, alpha, mt->bt, alpha, s->v); /* (B^T d) B */
        for (int i = 0; i < alpha * alpha * TB; i++)
            s->v[i] *= s->u[i];
        mul_left(mt->at, m, alpha, s->v, alpha, s->am);        /* A^T M */
        mul_right_t(s->am, m, alpha, mt->at, m, s->y);         /* (A^T M) A */
        double num[TB] = {0};
        for (int e = 0; e < m * m; e++)
            for (int t = 0; t < TB; t++)
                num[t] += fabs((double)s->y[e * TB + t] - yref[e * TB + t]);
        const long lanes = n - b * TB < TB ? n - b * TB : TB;
        for (long t = 0; t < lanes; t++)
            s->err[b * TB + t] = num[t] / tr->ysum[b * TB + t];
    }
    return median(s->err, n);
}

static void scratch_free(struct scratch *s)
{
    free(s->gg);
    free(s->u);
    free(s->bd);
    free(s->v);
    free(s->am);
    free(s->y);
    free(s->err);
    memset(s, 0, sizeof *s);
}

static enum wino_status scratch_make(struct scratch *s, int alpha, long n)
{
    const size_t tile = (size_t)(alpha * alpha * TB);
    s->gg = malloc((size_t)(alpha * FILTER * TB) * sizeof(float));
    s->u = malloc(tile * sizeof(float));
    s->bd = malloc(tile * sizeof(float));
    s->v = malloc(tile * sizeof(float));
    s->am = malloc(tile * sizeof(float));
    s->y = malloc(tile * sizeof(float));
    s->err = malloc((size_t)n * sizeof(double));
    if (!s->gg || !s->u || !s->bd || !s->v || !s->am || !s->y || !s->err) {
        scratch_free(s);
        return wino_fail(WINO_OUT_OF_MEMORY, "point search: out of memory");
    }
    return WINO_SUCCESS;
}

/* ---------------------------------------------------------------------------------------------
 * The search state and batches of point sets measured by a few threads
 * ------------------------------------------------------------------------------------------- */

struct ranked { /* a set in canonical order and its median */
    int idx[MAX_POINTS];
    double med;
};

struct worker {
    struct search *s;
    struct scratch *scr;
};

struct search {
    int alpha, npts; /* target tile size and its number of finite points */
    long trials, screen;
    const struct wino_point_search_options *opts;
    struct candidates cand;
    struct trials tr[WINO_MAX_ALPHA + 1]; /* by tile size, made on first use */
    struct scratch *scr;                  /* one per thread */
    struct worker *workers;               /* one per thread; workers[0] is the caller */
    pthread_t *tids;
    long evaluations;
    struct ranked *beam[MAX_POINTS + 1]; /* beam[k]: the best sets of k points, sorted */
    int nbeam[MAX_POINTS + 1];
    struct ranked *top; /* the best sets met at the target alpha, sorted, for the rerank */
    int ntop;

    /* the batch: nsets distinct sets of bnpts candidate indices, measured on bn trials of btr */
    int *sets;
    double *bmed;
    long max_sets;
    long exhaustive_sets; /* C(candidates - 3, npts - 3), capped above opts->exhaustive_max */
    const struct trials *btr;
    long bn, nsets, next, done;
    int bnpts;
    const char *stage;
    int round, start;
    int have_lock;
    pthread_mutex_t lock;
    enum wino_status bstatus;
    char berr[256];
};

static void report(struct search *s)
{
    if (!s->opts->progress)
        return;
    struct wino_point_search_progress p = {s->alpha, s->stage, s->round, s->start, s->done,
                                           s->nsets, s->ntop ? s->top[0].med : 0.0};
    s->opts->progress(s->opts->progress_user, &p);
}

/* Takes sets off the batch until none is left. */
static void *batch_worker(void *arg)
{
    const struct worker *w = arg;
    struct search *s = w->s;
    char text[WINO_POINT_TEXT_CAP];
    struct mats mt;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        long j = s->bstatus ? s->nsets : s->next++;
        pthread_mutex_unlock(&s->lock);
        if (j >= s->nsets)
            return NULL;
        format_points(&s->cand, s->sets + (size_t)j * (size_t)s->bnpts, s->bnpts, text);
        enum wino_status st = load_mats(s->bnpts + 1, text, &mt);
        double med = st ? 0.0 : measure(s->btr, s->bn, &mt, w->scr);
        pthread_mutex_lock(&s->lock);
        if (st && !s->bstatus) {
            s->bstatus = st;
            snprintf(s->berr, sizeof s->berr, "point search: %s", wino_last_error());
        }
        s->bmed[j] = med;
        s->done++;
        report(s);
        pthread_mutex_unlock(&s->lock);
    }
}

/* Inserts a set into a sorted list of at most cap distinct sets of npts points, if it ranks. */
static void rank_insert(struct ranked *list, int *n, int cap, int npts, const int *idx,
                        double med)
{
    const size_t bytes = (size_t)npts * sizeof(int);
    if (*n == cap && med >= list[cap - 1].med)
        return;
    for (int t = 0; t < *n; t++)
        if (!memcmp(list[t].idx, idx, bytes))
            return; /* sets are canonical: same array, same set, same trials, same median */
    int at = *n < cap ? (*n)++ : cap - 1;
    while (at > 0 && list[at - 1].med > med) {
        list[at] = list[at - 1];
        at--;
    }
    memcpy(list[at].idx, idx, bytes);
    list[at].med = med;
}

static enum wino_status trials_for(struct search *s, int alpha, const struct trials **tr)
{
    if (!s->tr[alpha].n) {
        enum wino_status st = trials_make(&s->tr[alpha], alpha,
                                          alpha == s->alpha ? s->trials : s->screen, s->opts->seed);
        if (st)
            return st;
    }
    *tr = &s->tr[alpha];
    return WINO_SUCCESS;
}

/* Measures the nsets sets of npts points in s->sets on n trials; *best gets the index of the
 * lowest median (the first one on ties), -1 for an empty batch. Sets measured at the target
 * alpha on the screening trials are offered to the rerank list. */
static enum wino_status run_batch(struct search *s, int npts, long nsets, long n, int *best)
{
    const struct trials *tr;
    enum wino_status st = trials_for(s, npts + 1, &tr);
    if (st)
        return st;
    s->btr = tr;
    s->bn = n;
    s->bnpts = npts;
    s->nsets = nsets;
    s->next = s->done = 0;
    s->bstatus = WINO_SUCCESS;
    int started = 0;
    for (int i = 1; i < s->opts->threads; i++) {
        if (pthread_create(&s->tids[i], NULL, batch_worker, &s->workers[i]))
            break; /* fewer threads still finish the batch */
        started++;
    }
    batch_worker(&s->workers[0]);
    for (int i = 1; i <= started; i++)
        pthread_join(s->tids[i], NULL);
    s->evaluations += nsets;
    if (s->bstatus)
        return wino_fail(s->bstatus, "%s", s->berr);
    *best = -1;
    for (long j = 0; j < nsets; j++) {
        if (npts == s->npts && n == s->screen)
            rank_insert(s->top, &s->ntop, s->opts->rerank, npts,
                        s->sets + (size_t)j * (size_t)npts, s->bmed[j]);
        if (*best < 0 || s->bmed[j] < s->bmed[*best])
            *best = (int)j;
    }
    return WINO_SUCCESS;
}

static int in_set(const int *set, int n, int c)
{
    for (int i = 0; i < n; i++)
        if (set[i] == c)
            return 1;
    return 0;
}

/* Appends to the batch a set of npts points, unless the batch has it already: the nbase points
 * of base, then position pos set to c and, when pos2 >= 0, position pos2 set to c2 (positions
 * at or past nbase grow the set). The set is stored in canonical order, ascending candidate
 * index (see point_search.h). */
static void push_set(struct search *s, long *nsets, const int *base, int nbase, int npts, int pos,
                     int c, int pos2, int c2)
{
    int *set = s->sets + (size_t)*nsets * (size_t)npts;
    memcpy(set, base, (size_t)nbase * sizeof(int));
    set[pos] = c;
    if (pos2 >= 0)
        set[pos2] = c2;
    for (int i = 1; i < npts; i++)
        for (int j = i; j > 0 && set[j - 1] > set[j]; j--) {
            int t = set[j];
            set[j] = set[j - 1];
            set[j - 1] = t;
        }
    for (long j = 0; j < *nsets; j++)
        if (!memcmp(s->sets + (size_t)j * (size_t)npts, set, (size_t)npts * sizeof(int)))
            return;
    ++*nsets;
}

/* Appends the sets base + a symmetric pair {c, -c} or {c, -1/c} at positions pos and pos2, for
 * every such pair of candidates outside avoid. */
static void push_pairs(struct search *s, long *nsets, const int *base, int nbase, int npts,
                       int pos, int pos2, const int *avoid, int navoid)
{
    for (int c = BASE_POINTS; c < s->cand.count; c++) {
        const int partners[2] = {s->cand.neg[c], s->cand.negrec[c]};
        for (int p = 0; p < 2; p++) {
            const int q = partners[p];
            if (q <= c || in_set(avoid, navoid, c) || in_set(avoid, navoid, q))
                continue; /* q <= c: the pair is met once, from its smaller index */
            push_set(s, nsets, base, nbase, npts, pos, c, pos2, q);
        }
    }
}

/* Step 1 of the search: the beam of sets of k points, from the beams of k - 1 points (plus one
 * unused candidate) and of k - 2 points (plus a symmetric pair), all measured as tiles of k
 * points. */
static enum wino_status grow(struct search *s, int k)
{
    long nsets = 0;
    s->stage = "beam";
    s->round = k;
    for (int b = 0; b < s->nbeam[k - 1]; b++) {
        const int *base = s->beam[k - 1][b].idx;
        for (int c = BASE_POINTS; c < s->cand.count; c++)
            if (!in_set(base, k - 1, c))
                push_set(s, &nsets, base, k - 1, k, k - 1, c, -1, 0);
    }
    if (k - 2 >= BASE_POINTS)
        for (int b = 0; b < s->nbeam[k - 2]; b++) {
            const int *base = s->beam[k - 2][b].idx;
            push_pairs(s, &nsets, base, k - 2, k, k - 2, k - 1, base, k - 2);
        }
    int best;
    enum wino_status st = run_batch(s, k, nsets, s->screen, &best);
    if (st)
        return st;
    for (long j = 0; j < nsets; j++)
        rank_insert(s->beam[k], &s->nbeam[k], s->opts->beam, k,
                    s->sets + (size_t)j * (size_t)k, s->bmed[j]);
    return WINO_SUCCESS;
}

/* Applies the best set of the batch to cur when it beats *cur_med; returns 1 if it did. */
static int take_if_better(struct search *s, int best, int *cur, double *cur_med)
{
    if (best < 0 || !(s->bmed[best] < *cur_med))
        return 0;
    memcpy(cur, s->sets + (size_t)best * (size_t)s->npts, (size_t)s->npts * sizeof(int));
    *cur_med = s->bmed[best];
    return 1;
}

/* Step 2: replaces single points, then symmetric pairs, while that lowers the median. */
static enum wino_status refine(struct search *s, int *cur, double *cur_med)
{
    const int n = s->npts;
    int best;
    enum wino_status st;
    s->stage = "refine";
    for (int pass = 1; pass <= MAX_PASSES; pass++) {
        int changed = 0;
        s->round = pass;
        for (int pos = BASE_POINTS; pos < n; pos++) {
            long nsets = 0;
            for (int c = BASE_POINTS; c < s->cand.count; c++)
                if (!in_set(cur, n, c))
                    push_set(s, &nsets, cur, n, n, pos, c, -1, 0);
            if ((st = run_batch(s, n, nsets, s->screen, &best)))
                return st;
            changed |= take_if_better(s, best, cur, cur_med);
        }
        for (int i = BASE_POINTS; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                if (cur[j] != s->cand.neg[cur[i]] && cur[j] != s->cand.negrec[cur[i]])
                    continue;
                /* every other pair that fits in positions i, j: avoid the rest of cur */
                int avoid[MAX_POINTS];
                memcpy(avoid, cur, (size_t)n * sizeof(int));
                avoid[i] = avoid[j] = -1;
                long nsets = 0;
                push_pairs(s, &nsets, cur, n, n, i, j, avoid, n);
                if ((st = run_batch(s, n, nsets, s->screen, &best)))
                    return st;
                changed |= take_if_better(s, best, cur, cur_med);
            }
        if (!changed)
            break;
    }
    return WINO_SUCCESS;
}

/* Operations (an fma counted as one) of the three 2D transforms of F(m x m, 3 x 3) made from a
 * set, or -1 when they cannot be counted. */
static long transform_ops(const struct search *s, const int *idx)
{
    char text[WINO_POINT_TEXT_CAP];
    format_points(&s->cand, idx, s->npts, text);
    wino_tile *tile = NULL;
    long ops = 0;
    if (wino_tile_create(s->alpha - 2, 3, text, 0, &tile))
        return -1;
    for (int k = 0; k < 3 && ops >= 0; k++) {
        struct wino_op_counts c;
        if (wino_tile_op_counts(tile, (enum wino_transform)k, NULL, &c))
            ops = -1;
        else
            ops += c.add + c.mul + c.fma;
    }
    wino_tile_destroy(tile);
    return ops;
}

/* Steps 3 and 4: after screening, the best few sets measured on all trials; among those within
 * the tie margin of the lowest median, the cheapest transforms win. */
static enum wino_status rerank(struct search *s, int *cur, double *cur_med)
{
    int best;
    s->stage = "rerank";
    s->round = s->start = 0;
    for (int t = 0; t < s->ntop; t++)
        memcpy(s->sets + (size_t)t * (size_t)s->npts, s->top[t].idx,
               (size_t)s->npts * sizeof(int));
    enum wino_status st = run_batch(s, s->npts, s->ntop, s->trials, &best);
    if (st)
        return st;
    const double limit = s->bmed[best] * (1.0 + s->opts->tie);
    long best_ops = transform_ops(s, s->sets + (size_t)best * (size_t)s->npts);
    for (int t = 0; t < s->ntop && best_ops >= 0; t++) {
        if (t == best || s->bmed[t] > limit)
            continue;
        long ops = transform_ops(s, s->sets + (size_t)t * (size_t)s->npts);
        if (ops >= 0 && (ops < best_ops || (ops == best_ops && s->bmed[t] < s->bmed[best]))) {
            best = t;
            best_ops = ops;
        }
    }
    memcpy(cur, s->sets + (size_t)best * (size_t)s->npts, (size_t)s->npts * sizeof(int));
    *cur_med = s->bmed[best];
    return WINO_SUCCESS;
}

/* C(n, k), or any value above limit once it exceeds limit. */
static long subsets(int n, int k, long limit)
{
    long c = 1;
    for (int i = 0; i < k && c <= limit; i++)
        c = c * (n - i) / (i + 1); /* C(n, i + 1), exact at every step */
    return c;
}

/* Instead of steps 1 and 2 when there are few enough sets: every set, in one batch. */
static enum wino_status exhaustive(struct search *s, int *cur, double *med)
{
    const int n = s->npts, free_points = n - BASE_POINTS, last = s->cand.count;
    int pick[MAX_POINTS], best;
    for (int i = 0; i < free_points; i++)
        pick[i] = BASE_POINTS + i;
    long nsets = 0;
    for (;;) { /* the combinations in lexicographic order: canonical and distinct */
        int *set = s->sets + (size_t)nsets++ * (size_t)n;
        for (int i = 0; i < BASE_POINTS; i++)
            set[i] = i;
        memcpy(set + BASE_POINTS, pick, (size_t)free_points * sizeof(int));
        int i = free_points - 1;
        while (i >= 0 && pick[i] == last - free_points + i)
            i--;
        if (i < 0)
            break;
        pick[i]++;
        for (int j = i + 1; j < free_points; j++)
            pick[j] = pick[j - 1] + 1;
    }
    s->stage = "exhaustive";
    s->round = n;
    enum wino_status st = run_batch(s, n, nsets, s->screen, &best);
    if (st)
        return st;
    memcpy(cur, s->sets + (size_t)best * (size_t)n, (size_t)n * sizeof(int));
    *med = s->bmed[best];
    return WINO_SUCCESS;
}

/* Beam growth and refinement of each final set; cur and *med receive the best. */
static enum wino_status beam_and_refine(struct search *s, int *cur, double *med)
{
    int best;
    for (int i = 0; i < BASE_POINTS; i++)
        s->sets[i] = i;
    s->stage = "beam";
    s->round = BASE_POINTS;
    enum wino_status st = run_batch(s, BASE_POINTS, 1, s->screen, &best);
    if (st)
        return st;
    rank_insert(s->beam[BASE_POINTS], &s->nbeam[BASE_POINTS], 1, BASE_POINTS, s->sets,
                s->bmed[0]);
    for (int k = BASE_POINTS + 1; k <= s->npts; k++)
        if ((st = grow(s, k)))
            return st;
    *med = HUGE_VAL;
    for (int b = 0; b < s->nbeam[s->npts]; b++) {
        int set[MAX_POINTS];
        double set_med = s->beam[s->npts][b].med;
        memcpy(set, s->beam[s->npts][b].idx, sizeof set);
        s->start = b + 1;
        if ((st = refine(s, set, &set_med)))
            return st;
        if (set_med < *med) {
            memcpy(cur, set, sizeof set);
            *med = set_med;
        }
    }
    return WINO_SUCCESS;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static enum wino_status check_common(int alpha, long trials)
{
    if (alpha < WINO_POINT_SEARCH_MIN_ALPHA || alpha > WINO_MAX_ALPHA)
        return wino_fail(WINO_INVALID_ARGUMENT, "alpha %d outside [%d, %d]", alpha,
                         WINO_POINT_SEARCH_MIN_ALPHA, WINO_MAX_ALPHA);
    if (trials < 1 || trials > WINO_POINT_SEARCH_MAX_TRIALS)
        return wino_fail(WINO_INVALID_ARGUMENT, "trials %ld outside [1, %ld]", trials,
                         WINO_POINT_SEARCH_MAX_TRIALS);
    return WINO_SUCCESS;
}

struct wino_point_search_options wino_point_search_defaults(void)
{
    struct wino_point_search_options o = {10000, 2000, 250000, 4, 16, 0.02, 2, 1, NULL, NULL};
    return o;
}

static void search_free(struct search *s)
{
    for (int a = 0; a <= WINO_MAX_ALPHA; a++)
        trials_free(&s->tr[a]);
    if (s->scr)
        for (int i = 0; i < s->opts->threads; i++)
            scratch_free(&s->scr[i]);
    for (int k = 0; k <= MAX_POINTS; k++)
        free(s->beam[k]);
    free(s->scr);
    free(s->workers);
    free(s->tids);
    free(s->top);
    free(s->sets);
    free(s->bmed);
    if (s->have_lock)
        pthread_mutex_destroy(&s->lock);
}

/* Allocates what the search needs up front (the trials come on first use). */
static enum wino_status search_init(struct search *s, int alpha,
                                    const struct wino_point_search_options *o)
{
    memset(s, 0, sizeof *s);
    s->alpha = alpha;
    s->npts = alpha - 1;
    s->opts = o;
    s->trials = o->trials;
    s->screen = o->screen_trials && o->screen_trials < o->trials ? o->screen_trials : o->trials;
    build_candidates(&s->cand);
    if (pthread_mutex_init(&s->lock, NULL))
        return wino_fail(WINO_INTERNAL_ERROR, "point search: cannot create a mutex");
    s->have_lock = 1;
    /* a batch holds every set (exhaustive) or at most one set per candidate and per pair for
     * each set of the beam */
    s->exhaustive_sets = subsets(s->cand.count - BASE_POINTS, s->npts - BASE_POINTS,
                                 o->exhaustive_max);
    s->max_sets = 2L * MAX_CANDIDATES * o->beam;
    if (s->exhaustive_sets <= o->exhaustive_max && s->exhaustive_sets > s->max_sets)
        s->max_sets = s->exhaustive_sets;
    s->sets = malloc((size_t)s->max_sets * MAX_POINTS * sizeof(int));
    s->bmed = malloc((size_t)s->max_sets * sizeof(double));
    s->top = malloc((size_t)o->rerank * sizeof *s->top);
    s->scr = calloc((size_t)o->threads, sizeof *s->scr);
    s->workers = malloc((size_t)o->threads * sizeof *s->workers);
    s->tids = malloc((size_t)o->threads * sizeof *s->tids);
    int ok = s->sets && s->bmed && s->top && s->scr && s->workers && s->tids;
    for (int k = BASE_POINTS; k <= s->npts && ok; k++)
        ok = (s->beam[k] = malloc((size_t)o->beam * sizeof *s->beam[k])) != NULL;
    if (!ok)
        return wino_fail(WINO_OUT_OF_MEMORY, "point search: out of memory");
    for (int i = 0; i < o->threads; i++) {
        enum wino_status st = scratch_make(&s->scr[i], alpha, s->trials);
        if (st)
            return st;
        s->workers[i].s = s;
        s->workers[i].scr = &s->scr[i];
    }
    return WINO_SUCCESS;
}

enum wino_status wino_point_search(int alpha, const struct wino_point_search_options *opts,
                                   struct wino_point_search_result *result)
{
    wino_ok();
    if (!opts || !result)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_point_search: opts or result is NULL");
    enum wino_status st = check_common(alpha, opts->trials);
    if (st)
        return st;
    if (opts->screen_trials < 0)
        return wino_fail(WINO_INVALID_ARGUMENT, "screen trials %ld is negative",
                         opts->screen_trials);
    if (opts->exhaustive_max < 0 || opts->exhaustive_max > WINO_POINT_SEARCH_MAX_EXHAUSTIVE)
        return wino_fail(WINO_INVALID_ARGUMENT, "exhaustive_max %ld outside [0, %ld]",
                         opts->exhaustive_max, WINO_POINT_SEARCH_MAX_EXHAUSTIVE);
    if (opts->beam < 1 || opts->beam > WINO_POINT_SEARCH_MAX_BEAM)
        return wino_fail(WINO_INVALID_ARGUMENT, "beam %d outside [1, %d]", opts->beam,
                         WINO_POINT_SEARCH_MAX_BEAM);
    if (opts->rerank < 1 || opts->rerank > 2 * MAX_CANDIDATES)
        return wino_fail(WINO_INVALID_ARGUMENT, "rerank %d outside [1, %d]", opts->rerank,
                         2 * MAX_CANDIDATES);
    if (!(opts->tie >= 0.0 && opts->tie <= 1.0))
        return wino_fail(WINO_INVALID_ARGUMENT, "tie margin %g outside [0, 1]", opts->tie);
    if (opts->threads < 1 || opts->threads > WINO_POINT_SEARCH_MAX_THREADS)
        return wino_fail(WINO_INVALID_ARGUMENT, "threads %d outside [1, %d]", opts->threads,
                         WINO_POINT_SEARCH_MAX_THREADS);

    const double start = now_seconds();
    struct search s;
    int cur[MAX_POINTS];
    double med = 0.0;
    st = search_init(&s, alpha, opts);
    const int all_sets = s.exhaustive_sets <= opts->exhaustive_max;
    if (!st)
        st = all_sets ? exhaustive(&s, cur, &med) : beam_and_refine(&s, cur, &med);
    if (!st && s.screen < s.trials)
        st = rerank(&s, cur, &med);
    if (!st) {
        result->alpha = alpha;
        format_points(&s.cand, cur, s.npts, result->points);
        result->median_rel_l1 = med;
        result->trials = s.trials;
        result->screen_trials = s.screen;
        result->exhaustive = all_sets;
        result->evaluations = s.evaluations;
        result->seconds = now_seconds() - start;
    }
    search_free(&s);
    return st;
}

enum wino_status wino_point_eval(int alpha, const char *points, long trials, uint64_t seed,
                                 double *median_rel_l1)
{
    wino_ok();
    if (!points || !median_rel_l1)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_point_eval: points or result is NULL");
    enum wino_status st = check_common(alpha, trials);
    if (st)
        return st;
    struct mats mt;
    if ((st = load_mats(alpha, points, &mt)))
        return st;
    struct trials tr;
    struct scratch scr = {0};
    if (!(st = trials_make(&tr, alpha, trials, seed)) &&
        !(st = scratch_make(&scr, alpha, trials)))
        *median_rel_l1 = measure(&tr, trials, &mt, &scr);
    if (!st && !isfinite(*median_rel_l1))
        st = wino_fail(WINO_UNSUPPORTED,
                       "the FP32 Winograd result of these points is not finite (an intermediate "
                       "value overflows FP32): median relative error %g", *median_rel_l1);
    trials_free(&tr);
    scratch_free(&scr);
    return st;
}
