/* Backward-filter convolution (dw from x and dy) against the FP64 reference:
 *  - every WinRS kernel wino offers, and wider ones, through src/cpu/winrs_f32.h with the kernel
 *    forced, on every ISA of this CPU: MARE and relative L1 on inputs in [0, 1) (the WinRS
 *    paper's Table 4 setting), bounded by docs/training.md's table;
 *  - long accumulations (N P Q >= 2^18) and segment counts 1 and many; CUDA's ragged plans;
 *  - the public API on random shapes (stride, dilation, padding larger than the filter, 1x1
 *    maps, one channel, both layouts, 1 and 2 threads), AUTO, DIRECT and WINOGRAD, beta 0 and 1,
 *    dw and workspace poisoned with NaN;
 *  - bad input: a status, never a crash. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign in test_util.h */

#include <limits.h>
#include <string.h>

#include "backward_check.h"
#include "cpu/bwd_filter_2d_f32.h"
#include "cpu/winrs_f32.h"

/* Bounds by the largest alpha of a plan (1: the direct path), from docs/training.md's tables:
 * MARE on inputs in [0, 1), relative L1 on inputs in (-1, 1). */
static int alpha_class(int alpha)
{
    return alpha <= 1 ? 0 : alpha <= 4 ? 1 : alpha <= 8 ? 2 : 3;
}

static double mare_bound(int alpha)
{
    static const double bound[4] = {1e-6, 1e-6, 1e-6, 2e-5};
    return bound[alpha_class(alpha)];
}

static double rel_l1_bound(int alpha)
{
    static const double bound[4] = {2e-6, 2e-6, 1e-5, 2e-4};
    return bound[alpha_class(alpha)];
}

/* The largest relative L1 error of the API tests per alpha class, printed at the end. */
static double worst_l1[4];

/* One problem: inputs, and the reference dW (+ init when accumulating). */
struct problem {
    struct wino_conv2d_desc d;
    size_t xe, ye, we;
    float *x, *dy, *init;
    double *ref;
};

static void problem_make(struct problem *pr, const struct wino_conv2d_desc *d,
                         struct test_rng *rng, int unit, int accumulate)
{
    int p = 0, q = 0;
    wino_conv2d_output_size(d, &p, &q);
    pr->d = *d;
    pr->xe = (size_t)d->n * d->c * d->h * d->w;
    pr->ye = (size_t)d->n * d->k * p * q;
    pr->we = (size_t)d->k * d->c * d->r * d->s;
    pr->x = malloc(4 * pr->xe);
    pr->dy = malloc(4 * pr->ye);
    pr->init = NULL;
    pr->ref = malloc(8 * pr->we);
    bwd_fill(pr->x, pr->xe, rng, unit);
    bwd_fill(pr->dy, pr->ye, rng, unit);
    wino_ref_conv2d_bwd_filter(d, pr->x, pr->dy, pr->ref);
    if (accumulate) {
        pr->init = malloc(4 * pr->we);
        bwd_fill(pr->init, pr->we, rng, unit);
        for (size_t i = 0; i < pr->we; i++)
            pr->ref[i] += pr->init[i];
    }
}

static void problem_free(struct problem *pr)
{
    free(pr->x), free(pr->dy), free(pr->init), free(pr->ref);
}

/* dw of the problem (malloc'ed), NaN-poisoned unless accumulating. */
static float *dw_start(const struct problem *pr)
{
    float *dw = malloc(4 * pr->we);
    for (size_t i = 0; i < pr->we; i++)
        dw[i] = pr->init ? pr->init[i] : NAN;
    return dw;
}

/* WinRS through the internal interface with the kernels forced by req and the given ISA;
 * *plan receives what ran. Returns dw, or NULL when prepare fails. */
static float *run_winrs(const struct problem *pr, const struct wino_winrs_request *req,
                        enum wino_isa isa, int threads, struct wino_f32_winrs *w)
{
    if (wino_f32_winrs_prepare(w, &pr->d, threads, pr->init != NULL, req)) {
        printf("  prepare failed: %s\n", wino_last_error());
        return NULL;
    }
    w->isa = isa;
    int p = 0, q = 0;
    wino_conv2d_output_size(&pr->d, &p, &q);
    void *ws = bwd_poisoned(wino_f32_winrs_workspace_bytes(w));
    float *dw = dw_start(pr);
    wino_f32_winrs_run(w, &pr->d, p, q, pr->x, pr->dy, dw, ws);
    free(ws);
    return dw;
}

/* The largest alpha of a plan's tiles. */
static int plan_alpha(const struct wino_f32_winrs *w)
{
    int a = 1;
    for (int k = 0; k < w->plan.kinds; k++)
        if (w->kind[k].kernel[0].alpha > a)
            a = w->kind[k].kernel[0].alpha;
    return a;
}

/* Kernels forced: {n0, r0, n1, r1, S}; Q = 4 r0 (+ r1 with a second kind). */
static const int kernels[][5] = {
    {1, 1, 0, 0, 3},   {2, 3, 0, 0, 2},   {3, 2, 0, 0, 3},   {3, 6, 0, 0, 3},
    {6, 3, 0, 0, 6},   {4, 5, 0, 0, 4},   {5, 4, 0, 0, 5},   {7, 2, 0, 0, 7},
    {5, 12, 0, 0, 5},  {6, 11, 0, 0, 6},  {7, 10, 0, 0, 7},  {8, 9, 0, 0, 8},
    {9, 8, 0, 0, 9},   {10, 7, 0, 0, 10}, {11, 6, 0, 0, 11}, {12, 5, 0, 0, 12},
    {13, 4, 0, 0, 13}, {3, 6, 3, 2, 3},   {5, 12, 5, 4, 5},  {7, 10, 7, 2, 7},
    {9, 8, 1, 1, 9},   {3, 6, 0, 0, 6},   {9, 8, 0, 0, 18},  {8, 9, 0, 0, 31},
    {4, 5, 2, 3, 11}};

static void test_kernels(struct test_counts *tc, struct test_rng *rng)
{
    printf("kernel             S  alpha  isa      MARE       rel L1\n");
    for (size_t t = 0; t < sizeof kernels / sizeof kernels[0]; t++) {
        const int *k = kernels[t];
        const int q = 4 * k[1] + k[3], s = k[4];
        struct wino_conv2d_desc d = wino_conv2d_desc_make(2, 7, 5, 1, 5, 3, s, 1, s > 1);
        d.w = q + s - 1 - 2 * d.pad_w;
        d.layout = t % 2 ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
        const struct wino_winrs_request req = {.n = {k[0], k[2]}, .r = {k[1], k[3]}};
        struct problem pr;
        problem_make(&pr, &d, rng, 1, 0);
        for (int isa = (int)wino_cpu_isa(); isa >= 0; isa--) {
            struct wino_f32_winrs w;
            float *dw = run_winrs(&pr, &req, (enum wino_isa)isa, 2, &w);
            const double mare = dw ? wino_mare_f32(dw, pr.ref, pr.we) : NAN;
            const double l1 = dw ? wino_rel_l1_f32(dw, pr.ref, pr.we) : NAN;
            const int alpha = dw ? plan_alpha(&w) : 0;
            const int ok = dw && w.plan.n[0] == k[0] && w.plan.r[0] == k[1] &&
                           w.plan.r[1] == k[3] && mare <= mare_bound(alpha);
            char what[96];
            snprintf(what, sizeof what, "F(%d,%d)%s%.0d%s%.0d%s S=%d %s", k[0], k[1],
                     k[3] ? "+F(" : "", k[2], k[3] ? "," : "", k[3], k[3] ? ")" : "", s,
                     wino_isa_name((enum wino_isa)isa));
            printf("%-22s alpha %2d  MARE %.3e  rel L1 %.3e\n", what, alpha, mare, l1);
            test_check(tc, ok, what);
            free(dw);
            wino_f32_winrs_release(&w);
        }
        problem_free(&pr);
    }
}

/* N P Q >= 2^18 (the paper's long accumulations), default plans. */
static void test_long(struct test_counts *tc, struct test_rng *rng)
{
    const int sizes[] = {3, 5, 9};
    for (int t = 0; t < 3; t++) {
        const int s = sizes[t];
        struct wino_conv2d_desc d = wino_conv2d_desc_make(4, 2, 256, 256, 2, s, s, s / 2, s / 2);
        d.layout = WINO_LAYOUT_NHWC;
        struct problem pr;
        problem_make(&pr, &d, rng, 1, 0);
        struct wino_f32_winrs w;
        float *dw = run_winrs(&pr, NULL, wino_cpu_isa(), 2, &w);
        const double mare = dw ? wino_mare_f32(dw, pr.ref, pr.we) : NAN;
        char what[96];
        snprintf(what, sizeof what, "long accumulation %dx%d: F(%d,%d), %d segments", s, s,
                 w.plan.n[0], w.plan.r[0], w.segments);
        printf("%s: MARE %.3e rel L1 %.3e\n", what, mare,
               dw ? wino_rel_l1_f32(dw, pr.ref, pr.we) : NAN);
        test_check(tc, dw && mare <= mare_bound(plan_alpha(&w)), what);
        free(dw);
        wino_f32_winrs_release(&w);
        problem_free(&pr);
    }
}

/* Z^ = 1 and many, beta 0 and 1. */
static void test_segments(struct test_counts *tc, struct test_rng *rng)
{
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(2, 3, 20, 24, 4, 3, 3, 1, 1);
    const int counts[] = {1, 7, 40};
    for (int t = 0; t < 3; t++)
        for (int acc = 0; acc < 2; acc++) {
            struct problem pr;
            problem_make(&pr, &d, rng, 0, acc);
            const struct wino_winrs_request req = {.segments = counts[t]};
            struct wino_f32_winrs w;
            float *dw = run_winrs(&pr, &req, wino_cpu_isa(), 2, &w);
            const double err = dw ? wino_rel_l1_f32(dw, pr.ref, pr.we) : NAN;
            char what[96];
            snprintf(what, sizeof what, "Z^ = %d gives %d segments, beta %d: rel L1 %.2e",
                     counts[t], w.segments, acc, err);
            test_check(tc, dw && (counts[t] == 1 ? w.segments == 1 : w.segments > 3) &&
                               err <= rel_l1_bound(plan_alpha(&w)),
                       what);
            free(dw);
            wino_f32_winrs_release(&w);
            problem_free(&pr);
        }
}

/* The ragged plans of CUDA's tensor-core kernel: one kernel over ceil(q / r) units, the fewest
 * units x tiles within alpha 8; the CPU engine refuses them. */
static void test_ragged_plans(struct test_counts *tc)
{
    static const struct {
        int s, q, n, r, units;
    } want[] = {
        {3, 56, 3, 6, 10}, /* ResNet-18 conv2_x: 9 full units and one of 2 columns */
        {3, 28, 3, 6, 5},  {3, 7, 3, 6, 2}, {3, 6, 3, 6, 1},
        {3, 1, 3, 2, 1}, /* one unit either way: the smaller alpha */
        {2, 112, 2, 3, 38}, /* where the exact pair is F(2, 3) + F(1, 1) */
        {5, 56, 5, 4, 14},  /* one tile of 5 taps beats two of 4 and 1 */
        {7, 56, 4, 5, 12},  /* two tiles of 5-column units beat one of 2-column units */
        {1, 9, 1, 1, 9},
    };
    for (size_t t = 0; t < sizeof want / sizeof want[0]; t++) {
        struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 1, 4, want[t].q, 1, 1, want[t].s, 0, 0);
        const struct wino_winrs_request req = {.max_alpha = 8, .ragged = 1};
        struct wino_winrs_plan plan;
        const enum wino_status st = wino_winrs_plan_kernels(&d, want[t].q, &req, &plan);
        char what[128];
        snprintf(what, sizeof what, "ragged plan S %d, Q %d: F(%d, %d) x %d units (want F(%d, %d) "
                 "x %d)", want[t].s, want[t].q, plan.n[0], plan.r[0], plan.units[0], want[t].n,
                 want[t].r, want[t].units);
        test_check(tc, !st && plan.kinds == 1 && plan.n[0] == want[t].n &&
                           plan.r[0] == want[t].r && plan.units[0] == want[t].units,
                   what);
    }
    const struct wino_conv2d_desc d = wino_conv2d_desc_make(1, 2, 8, 8, 2, 3, 3, 1, 1);
    const struct wino_winrs_request req = {.n = {3, 0}, .r = {6, 0}, .ragged = 1};
    struct wino_winrs_plan plan;
    test_check(tc, !wino_winrs_plan_kernels(&d, 8, &req, &plan) && plan.n[0] == 3 &&
                       plan.r[0] == 6 && plan.units[0] == 2,
               "a ragged plan keeps the requested kernel");
    struct wino_f32_winrs w;
    test_check(tc, wino_f32_winrs_prepare(&w, &d, 1, 0, &req) == WINO_INVALID_ARGUMENT,
               "the CPU engine refuses a ragged plan");
}

/* One convolution through the public API; returns 1 when it passes. */
static int api_check(const struct wino_conv2d_desc *d, enum wino_algo algo, int accumulate,
                     int threads, struct test_rng *rng, double *err_out)
{
    struct problem pr;
    problem_make(&pr, d, rng, 0, accumulate);
    struct wino_conv2d_options o = {0};
    o.algo = algo;
    o.accumulate = accumulate;
    struct wino_context ctx = {0};
    ctx.threads = threads;
    enum wino_algo predicted = WINO_ALGO_AUTO, used = WINO_ALGO_AUTO;
    const enum wino_status can = wino_conv2d_backward_filter_can_implement(d, &o, &predicted);
    wino_conv2d *op = NULL;
    const enum wino_status st = wino_conv2d_backward_filter_create(d, &ctx, &o, &op);
    int ok = st == can;
    if (st == WINO_UNSUPPORTED) /* WINOGRAD on a strided or dilated convolution */
        ok = ok && algo == WINO_ALGO_WINOGRAD &&
             (d->stride_h > 1 || d->stride_w > 1 || d->dilation_h > 1 || d->dilation_w > 1);
    if (!st) {
        size_t bytes = 0;
        int tile = 0;
        struct wino_winrs_info info;
        wino_conv2d_workspace_size(op, &bytes);
        wino_conv2d_algo(op, &used, &tile);
        wino_conv2d_backward_filter_info(op, &info);
        void *ws = bwd_poisoned(bytes);
        float *dw = dw_start(&pr);
        ok = ok && !wino_conv2d_backward_filter_run(op, pr.x, pr.dy, dw, ws, bytes);
        const int alpha = info.kernels ? (info.alpha[0] > info.alpha[1] ? info.alpha[0]
                                                                        : info.alpha[1])
                                       : 1;
        *err_out = wino_rel_l1_f32(dw, pr.ref, pr.we);
        if (*err_out > worst_l1[alpha_class(alpha)])
            worst_l1[alpha_class(alpha)] = *err_out;
        ok = ok && used == predicted && *err_out <= rel_l1_bound(alpha) &&
             (algo == WINO_ALGO_AUTO || used == algo) &&
             (used == WINO_ALGO_WINOGRAD) == (info.kernels > 0);
        free(ws);
        free(dw);
    }
    wino_conv2d_destroy(op);
    problem_free(&pr);
    return ok;
}

static void test_api_random(struct test_counts *tc, struct test_rng *rng)
{
    int failed = 0, winrs = 0;
    double worst = 0.0;
    for (int t = 0; t < 160; t++) {
        const int strided = t % 3 == 0;
        const struct wino_conv2d_desc d =
            bwd_random_desc(rng, 9, 14, t % 8 ? 5 : 11, strided ? 3 : 1);
        const enum wino_algo algo = (enum wino_algo)(t % 3);
        const int accumulate = (t / 3) % 2, threads = 1 + t % 2;
        double err = 0.0;
        if (!api_check(&d, algo, accumulate, threads, rng, &err)) {
            if (failed++ < 5) {
                printf("  algo %d accumulate %d err %.3e (%s)\n", algo, accumulate, err,
                       wino_last_error());
                bwd_print_desc("failed", &d);
            }
        }
        winrs += algo != WINO_ALGO_DIRECT && !strided;
        worst = err > worst ? err : worst;
    }
    printf("random shapes: worst rel L1 %.3e\n", worst);
    printf("API tests, worst rel L1 by alpha: direct %.2e, <= 4: %.2e, <= 8: %.2e, <= 16: "
           "%.2e\n", worst_l1[0], worst_l1[1], worst_l1[2], worst_l1[3]);
    test_check(tc, !failed && winrs > 50, "160 random shapes through the API");
}

/* Fixed awkward shapes through the API, AUTO and DIRECT. */
static void test_awkward(struct test_counts *tc, struct test_rng *rng)
{
    struct wino_conv2d_desc cases[9];
    cases[0] = wino_conv2d_desc_make(1, 1, 1, 1, 1, 1, 1, 0, 0);    /* 1x1 map, 1x1 filter */
    cases[1] = wino_conv2d_desc_make(2, 3, 1, 1, 2, 3, 3, 1, 1);    /* 1x1 map, 3x3 filter */
    cases[2] = wino_conv2d_desc_make(1, 2, 5, 7, 3, 2, 2, 3, 3);    /* padding > filter */
    cases[3] = wino_conv2d_desc_make(1, 1, 9, 13, 1, 3, 3, 1, 1);   /* one channel, Q = 13 */
    cases[4] = wino_conv2d_desc_make(1, 4, 6, 7, 5, 3, 3, 1, 1);    /* Q = 7 */
    cases[5] = wino_conv2d_desc_make(3, 2, 11, 11, 2, 3, 3, 1, 1);  /* strided, below */
    cases[5].stride_h = 2, cases[5].stride_w = 3;
    cases[6] = wino_conv2d_desc_make(1, 3, 12, 12, 2, 3, 3, 2, 2);  /* dilated */
    cases[6].dilation_h = 2, cases[6].dilation_w = 2;
    cases[7] = wino_conv2d_desc_make(2, 17, 9, 9, 18, 7, 1, 3, 0);  /* 7x1 */
    cases[8] = wino_conv2d_desc_make(1, 2, 8, 40, 2, 1, 31, 0, 15); /* 1x31 */
    for (int c = 0; c < 9; c++)
        for (int a = 0; a < 2; a++) {
            cases[c].layout = a ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
            double err = 0.0;
            char what[64];
            snprintf(what, sizeof what, "awkward shape %d, %s", c, a ? "DIRECT" : "AUTO");
            const int ok = api_check(&cases[c], a ? WINO_ALGO_DIRECT : WINO_ALGO_AUTO, c % 2, 2,
                                     rng, &err);
            if (!ok)
                bwd_print_desc("failed", &cases[c]);
            test_check(tc, ok, what);
        }
}

/* AUTO on 3 x 3 filters of stride 1 takes the 2D tile F(3x3, 4x4), or F(3x3, 5x5) on maps it
 * covers with fewer products, where the layer has WINO_BWD_2D_MIN_TILES tiles or more, and the
 * direct path on fewer: random layers (1 x 1 maps, padding up to 3, one channel, both layouts,
 * accumulate, 1 and 2 threads; both tiles and both sides of the bound) and one of many tiles
 * (ResNet-18's conv2_x at batch 8). */
static void test_tiles_2d(struct test_counts *tc, struct test_rng *rng)
{
    int failed = 0, fives = 0, tiled = 0;
    double worst = 0.0;
    for (int t = 0; t < 25; t++) {
        const int big = t == 24;
        struct wino_conv2d_desc d = wino_conv2d_desc_make(
            big ? 8 : 1 + (int)(test_rng_next(rng) % 3), big ? 64 : 1 + (int)(test_rng_next(rng) % 40),
            big ? 56 : 1 + (int)(test_rng_next(rng) % 30), big ? 56 : 1 + (int)(test_rng_next(rng) % 30),
            big ? 64 : 1 + (int)(test_rng_next(rng) % 40), 3, 3, (int)(test_rng_next(rng) % 4),
            (int)(test_rng_next(rng) % 4));
        d.layout = t % 2 ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
        if (wino_conv2d_output_size(&d, NULL, NULL) != WINO_SUCCESS) {
            t--;
            continue;
        }
        struct wino_conv2d_options o = {0};
        struct wino_context ctx = {0};
        ctx.threads = 1 + t % 2;
        wino_conv2d *op = NULL;
        struct wino_winrs_info info = {0};
        int p = 0, q = 0;
        wino_conv2d_output_size(&d, &p, &q);
        const int enough = wino_f32_bwd_filter_2d_tiles(&d, p, q) >= WINO_BWD_2D_MIN_TILES;
        int ok = !wino_conv2d_backward_filter_create(&d, &ctx, &o, &op) &&
                 !wino_conv2d_backward_filter_info(op, &info) &&
                 (enough ? info.kernels == 1 && info.n[0] == 3 &&
                              (info.r[0] == 4 || info.r[0] == 5) && info.alpha[0] == info.r[0] + 2
                        : info.kernels == 0);
        fives += enough && info.r[0] == 5;
        tiled += enough;
        wino_conv2d_destroy(op);
        double err = 0.0;
        ok = ok && api_check(&d, WINO_ALGO_AUTO, (t / 2) % 2, ctx.threads, rng, &err) &&
             err <= 1e-5;
        worst = err > worst ? err : worst;
        if (!ok && failed++ < 5)
            bwd_print_desc("F(3x3, 4x4) failed", &d);
    }
    printf("F(3x3, 4x4 or 5x5) backward-filter: worst rel L1 %.3e, %d of 25 in tiles, %d of them "
           "of 5\n", worst, tiled, fives);
    test_check(tc, !failed && fives > 0 && fives < tiled && tiled < 25,
               "AUTO's F(3x3, 4x4), F(3x3, 5x5) or direct on 25 random 3 x 3 layers, within 1e-5");
}

/* Each order of the 2D tile's products, named rather than chosen: random 3 x 3 layers (both
 * layouts, accumulate, 1 and 2 threads, a thread left with no tiles), one of 144 or more tiles
 * that takes two chunks a group (GROUPS) and two chunks (CHUNKS), one of 65-140 channels
 * (ONE_CHUNK on FMA: two or three strips, the last one partial) and one of 512-530 channels;
 * every vector ISA the machine has. Poisoned workspace and dw. */
static void test_tiles_2d_modes(struct test_counts *tc, struct test_rng *rng)
{
    static const enum wino_f32_bwd_2d_mode modes[] = {WINO_2D_GROUPS, WINO_2D_ONE_CHUNK,
                                                      WINO_2D_CHUNKS};
    static const char *names[] = {"groups", "one chunk", "chunks"};
    for (int m = 0; m < 3; m++) {
        int failed = 0, several = 0;
        double worst = 0.0;
        for (int t = 0; t < 10; t++) {
            const int big = t == 8, one_tile = t == 7; /* one_tile: 2 threads, 1 tile */
            /* wide: 512 channels or more, the products on AMX-BF16 tiles where the machine has
             * them (ONE_CHUNK and CHUNKS) */
            const int wide = t == 9, strips = t == 6;
            struct wino_conv2d_desc d = wino_conv2d_desc_make(
                big || wide ? 4 : one_tile ? 1 : bwd_pick(rng, 1, 3),
                big ? 40 : wide ? bwd_pick(rng, 512, 530) : strips ? bwd_pick(rng, 65, 140)
                                                                     : bwd_pick(rng, 1, 40),
                big ? 30 : wide ? 12 : one_tile ? 3 : bwd_pick(rng, 1, 30),
                big ? 30 : wide ? 12 : one_tile ? 3 : bwd_pick(rng, 1, 30),
                big ? 40 : wide ? bwd_pick(rng, 512, 530) : strips ? bwd_pick(rng, 65, 140)
                                                                    : bwd_pick(rng, 1, 40),
                3, 3,
                one_tile || wide ? 1 : bwd_pick(rng, 0, 3), one_tile || wide ? 1 : bwd_pick(rng, 0, 3));
            d.layout = t % 2 ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
            int p = 0, q = 0;
            if (wino_conv2d_output_size(&d, &p, &q) != WINO_SUCCESS) {
                t--;
                continue;
            }
            struct problem pr;
            problem_make(&pr, &d, rng, 0, (t / 2) % 2);
            struct wino_f32_bwd_filter_2d e;
            const int threads = 1 + t % 2;
            int ok = !wino_f32_bwd_filter_2d_prepare(&e, &d, p, q, threads, pr.init != NULL,
                                                     modes[m]) &&
                     e.mode == modes[m];
            /* the vector ISAs below the machine's in turn */
            e.isa = (enum wino_isa)((int)e.isa - t % 3 > 0 ? (int)e.isa - t % 3 : 0);
            several += e.chunk < (e.mode == WINO_2D_GROUPS ? e.tiles / threads : e.tiles);
            void *ws = bwd_poisoned(wino_f32_bwd_filter_2d_workspace_bytes(&e));
            float *dw = dw_start(&pr);
            if (ok)
                wino_f32_bwd_filter_2d_run(&e, &d, p, q, pr.x, pr.dy, dw, ws);
            const double err = wino_rel_l1_f32(dw, pr.ref, pr.we);
            ok = ok && err <= 1e-5;
            worst = err > worst ? err : worst;
            if (!ok && failed++ < 5)
                bwd_print_desc("2D tile failed", &d);
            free(ws);
            free(dw);
            problem_free(&pr);
        }
        printf("2D tile, %s: worst rel L1 %.3e, %d of 10 in several chunks\n", names[m], worst,
               several);
        char what[96];
        snprintf(what, sizeof what, "2D tile with %s on 10 random 3 x 3 layers, within 1e-5",
                 names[m]);
        test_check(tc, !failed && (several > 0) == (m != 1), what);
    }
}

static void test_bad_input(struct test_counts *tc)
{
    const struct wino_conv2d_desc good = wino_conv2d_desc_make(1, 2, 6, 6, 3, 3, 3, 1, 1);
    struct wino_conv2d_desc d = good;
    struct wino_conv2d_options o = {0};
    wino_conv2d *op = NULL;
    bwd_expect(tc, wino_conv2d_backward_filter_create(&d, NULL, NULL, NULL), WINO_INVALID_ARGUMENT,
               "op NULL");
    bwd_expect(tc, wino_conv2d_backward_filter_create(NULL, NULL, NULL, &op), WINO_INVALID_ARGUMENT,
               "desc NULL");
    d.r = 9; /* larger than the padded image: no output, dy and x do not match */
    bwd_expect(tc, wino_conv2d_backward_filter_create(&d, NULL, NULL, &op), WINO_INVALID_ARGUMENT,
               "filter larger than the padded image");
    d = good;
    d.dtype = WINO_DTYPE_F16;
    bwd_expect(tc, wino_conv2d_backward_filter_create(&d, NULL, NULL, &op), WINO_UNSUPPORTED,
               "FP16 on the CPU");
    d.dtype = WINO_DTYPE_BF16;
    bwd_expect(tc, wino_conv2d_backward_filter_create(&d, NULL, NULL, &op), WINO_UNSUPPORTED,
               "BF16 on the CPU");
    d.dtype = WINO_DTYPE_S8;
    bwd_expect(tc, wino_conv2d_backward_filter_can_implement(&d, NULL, NULL), WINO_UNSUPPORTED,
               "INT8");
    d = good;
    d.stride_w = 2;
    o.algo = WINO_ALGO_WINOGRAD;
    bwd_expect(tc, wino_conv2d_backward_filter_can_implement(&d, &o, NULL), WINO_UNSUPPORTED,
               "WinRS with stride 2");
    /* a filter row wider than WinRS takes: AUTO falls back to the direct path */
    struct wino_conv2d_desc wide = wino_conv2d_desc_make(1, 1, 1, 5003, 1, 1, 5000, 0, 0);
    enum wino_algo algo = WINO_ALGO_AUTO;
    bwd_expect(tc, wino_conv2d_backward_filter_can_implement(&wide, &o, NULL), WINO_UNSUPPORTED,
               "WinRS with 5000 taps a row");
    o.algo = WINO_ALGO_AUTO;
    test_check(tc, !wino_conv2d_backward_filter_can_implement(&wide, &o, &algo) &&
                       algo == WINO_ALGO_DIRECT,
               "AUTO with 5000 taps a row: direct");
    /* an unshaped descriptor (n = h = w = 0: planned on a nominal image) with the filter's
     * taps at INT_MIN: refused, its nominal extent worked out without an overflow (a finding
     * of fuzz_conv2d, tests/fuzz/corpus/conv2d/crash-nominal-extent-taps-int-min.bin) */
    d = good;
    d.n = d.h = d.w = 0;
    d.r = INT_MIN;
    d.dilation_h = 2;
    bwd_expect(tc, wino_conv2d_backward_filter_can_implement(&d, NULL, NULL),
               WINO_INVALID_ARGUMENT, "unshaped, filter taps INT_MIN");
    d = good;
    o.accumulate = 2;
    bwd_expect(tc, wino_conv2d_backward_filter_create(&d, NULL, &o, &op), WINO_INVALID_ARGUMENT,
               "accumulate 2");
    o.accumulate = 0;
    o.tile_m = 2;
    bwd_expect(tc, wino_conv2d_backward_filter_create(&d, NULL, &o, &op), WINO_INVALID_ARGUMENT,
               "tile_m");
    o.tile_m = 0;
    o.relu = 1;
    bwd_expect(tc, wino_conv2d_backward_filter_create(&d, NULL, &o, &op), WINO_INVALID_ARGUMENT,
               "relu");
    o.relu = 0;
    o.algo = (enum wino_algo)7;
    bwd_expect(tc, wino_conv2d_backward_filter_create(&d, NULL, &o, &op), WINO_INVALID_ARGUMENT,
               "unknown algo");
    o.algo = WINO_ALGO_AUTO;
    struct wino_context ctx = {0};
    ctx.backend = WINO_BACKEND_CUDA; /* refused without the CUDA component or a GPU */
    const enum wino_status on_cuda = wino_conv2d_backward_filter_create(&d, &ctx, &o, &op);
    test_check(tc, on_cuda == WINO_UNSUPPORTED ? op == NULL : on_cuda == WINO_SUCCESS && op,
               "CUDA backend: unsupported, or created where the component and a GPU are");
    wino_conv2d_destroy(op);
    op = NULL;
    ctx.backend = WINO_BACKEND_CPU;
    ctx.threads = -1;
    bwd_expect(tc, wino_conv2d_backward_filter_create(&d, &ctx, &o, &op), WINO_INVALID_ARGUMENT,
               "threads -1");
    test_check(tc, op == NULL, "no operator after failures");

    /* run-time checks on a good operator */
    test_check(tc, !wino_conv2d_backward_filter_create(&d, NULL, NULL, &op), "create");
    size_t bytes = 0;
    wino_conv2d_workspace_size(op, &bytes);
    float x[72] = {0}, dy[108] = {0}, dw[54];
    char *ws = bwd_poisoned(bytes + 64);
    bwd_expect(tc, wino_conv2d_backward_filter_run(op, NULL, dy, dw, ws, bytes),
               WINO_INVALID_ARGUMENT, "x NULL");
    bwd_expect(tc, wino_conv2d_backward_filter_run(op, x, NULL, dw, ws, bytes),
               WINO_INVALID_ARGUMENT, "dy NULL");
    bwd_expect(tc, wino_conv2d_backward_filter_run(op, x, dy, NULL, ws, bytes),
               WINO_INVALID_ARGUMENT, "dw NULL");
    bwd_expect(tc, wino_conv2d_backward_filter_run(NULL, x, dy, dw, ws, bytes),
               WINO_INVALID_ARGUMENT, "op NULL at run");
    if (bytes) {
        bwd_expect(tc, wino_conv2d_backward_filter_run(op, x, dy, dw, ws, bytes - 1),
                   WINO_INSUFFICIENT_WORKSPACE, "workspace one byte short");
        bwd_expect(tc, wino_conv2d_backward_filter_run(op, x, dy, dw, NULL, bytes),
                   WINO_INSUFFICIENT_WORKSPACE, "workspace NULL");
        bwd_expect(tc, wino_conv2d_backward_filter_run(op, x, dy, dw, ws + 4, bytes),
                   WINO_INSUFFICIENT_WORKSPACE, "workspace misaligned");
    }
    bwd_expect(tc, wino_conv2d_run(op, x, dw, ws, bytes), WINO_INVALID_ARGUMENT,
               "wino_conv2d_run on a backward-filter operator");
    bwd_expect(tc, wino_conv2d_backward_filter_info(op, NULL), WINO_INVALID_ARGUMENT, "info NULL");
    enum wino_conv2d_kind kind = WINO_CONV2D_FORWARD;
    test_check(tc, !wino_conv2d_kind(op, &kind) && kind == WINO_CONV2D_BACKWARD_FILTER, "kind");
    wino_conv2d_destroy(op);
    free(ws);

    /* a forward operator is not a backward-filter one; accumulate is refused there */
    float w[54] = {0};
    o = (struct wino_conv2d_options){0};
    test_check(tc, !wino_conv2d_create(&good, w, NULL, NULL, &op), "forward create");
    bwd_expect(tc, wino_conv2d_backward_filter_run(op, x, dy, dw, NULL, 0), WINO_INVALID_ARGUMENT,
               "backward_filter_run on a forward operator");
    struct wino_winrs_info info;
    bwd_expect(tc, wino_conv2d_backward_filter_info(op, &info), WINO_INVALID_ARGUMENT,
               "info of a forward operator");
    wino_conv2d_destroy(op);
    o.accumulate = 1;
    bwd_expect(tc, wino_conv2d_create(&good, w, NULL, &o, &op), WINO_INVALID_ARGUMENT,
               "accumulate on a forward operator");
}

int main(void)
{
    struct test_rng rng = {test_seed()};
    struct test_counts tc = {0, 0};
    test_kernels(&tc, &rng);
    test_long(&tc, &rng);
    test_segments(&tc, &rng);
    test_ragged_plans(&tc);
    test_api_random(&tc, &rng);
    test_awkward(&tc, &rng);
    test_tiles_2d(&tc, &rng);
    test_tiles_2d_modes(&tc, &rng);
    test_bad_input(&tc);
    return test_report(&tc);
}
