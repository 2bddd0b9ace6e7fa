/* `wino bench` runner for wino itself, through the public wino_conv2d_* API only: create (filter
 * preparation) is outside the timing, run() is what gets timed. wino runs in its native NHWC
 * layout: x and w are converted at prepare and y back to NCHW for the check, outside the timing,
 * as oneDNN's reorders to its preferred blocked layouts are. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cpu/layout_f32.h"

struct wino_state {
    wino_conv2d *op;
    float *x, *w;    /* NHWC input, KRSC filters */
    float *y;        /* NHWC output */
    int n, k, pq;    /* to convert y back to NCHW */
    size_t y_elems;
    void *workspace;
    size_t workspace_bytes;
};

void bench_tile_name(char *buf, size_t cap, int m, int r, int s)
{
    snprintf(buf, cap, "F%dx%d_%dx%d", m, m, r, s);
}

void bench_wino_describe(const wino_conv2d *op, int r, int s, struct bench_runner *out)
{
    enum wino_algo chosen;
    enum wino_variant variant;
    int m = 0;
    wino_conv2d_algo(op, &chosen, &m);
    wino_conv2d_variant(op, &variant);
    if (chosen == WINO_ALGO_WINOGRAD) {
        bench_tile_name(out->tile, sizeof out->tile, m, r, s);
        snprintf(out->variant, sizeof out->variant, "%s",
                 variant == WINO_VARIANT_FUSED       ? "fused"
                 : variant == WINO_VARIANT_NON_FUSED ? "non-fused"
                                                     : "scalar");
    }
    snprintf(out->info, sizeof out->info, "%s%s, NHWC",
             chosen == WINO_ALGO_WINOGRAD ? "winograd " : "direct", out->variant);
}

static int wino_run(void *p)
{
    struct wino_state *st = p;
    return wino_conv2d_run(st->op, st->x, st->y, st->workspace, st->workspace_bytes) !=
           WINO_SUCCESS;
}

static int wino_output(void *p, float *y)
{
    struct wino_state *st = p;
    wino_f32_transpose_batched(st->y, y, st->n, (size_t)st->pq, (size_t)st->k, 1, 0);
    return 0;
}

static void wino_destroy(void *p)
{
    struct wino_state *st = p;
    if (!st)
        return;
    wino_conv2d_destroy(st->op);
    free(st->workspace);
    free(st->x);
    free(st->w);
    free(st->y);
    free(st);
}

enum bench_prep bench_wino_prepare(const struct bench_problem *pb, enum wino_algo algo, int tile_m,
                                   struct bench_runner *out)
{
    const struct wino_context ctx = {
        .threads = pb->threads, .tuning_cache = algo == WINO_ALGO_AUTO ? pb->tuning_cache : NULL};
    struct wino_conv2d_options opts; /* all-zero = defaults, whatever fields get added */
    memset(&opts, 0, sizeof opts);
    opts.algo = algo;
    opts.tile_m = tile_m;
    memset(out, 0, sizeof *out);
    struct wino_conv2d_desc desc = pb->desc;
    desc.layout = WINO_LAYOUT_NHWC;
    enum wino_status s = wino_conv2d_can_implement(&desc, &opts);
    if (s == WINO_UNSUPPORTED) {
        snprintf(out->info, sizeof out->info, "%s", wino_last_error());
        return BENCH_SKIP;
    }
    struct wino_state *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(out->info, sizeof out->info, "out of memory");
        return BENCH_FAIL;
    }
    const size_t hw = (size_t)desc.h * desc.w, rs = (size_t)desc.r * desc.s;
    st->n = desc.n;
    st->k = desc.k;
    st->pq = pb->p * pb->q;
    st->y_elems = (size_t)desc.n * desc.k * st->pq;
    st->y = malloc(st->y_elems * sizeof *st->y);
    st->x = malloc((size_t)desc.n * desc.c * hw * sizeof *st->x);
    st->w = malloc((size_t)desc.k * desc.c * rs * sizeof *st->w);
    if (st->x && st->w) {
        /* NCHW -> NHWC and KCRS -> KRSC */
        wino_f32_transpose_batched(pb->x, st->x, desc.n, (size_t)desc.c, hw, 1, 0);
        wino_f32_transpose_batched(pb->w, st->w, desc.k, (size_t)desc.c, rs, 1, 0);
    }
    if (!st->y || !st->x || !st->w ||
        (s = wino_conv2d_create(&desc, st->w, &ctx, &opts, &st->op)) != WINO_SUCCESS ||
        (s = wino_conv2d_workspace_size(st->op, &st->workspace_bytes)) != WINO_SUCCESS ||
        (st->workspace_bytes &&
         posix_memalign(&st->workspace, 64, st->workspace_bytes) != 0)) {
        snprintf(out->info, sizeof out->info, "%s",
                 s != WINO_SUCCESS ? wino_last_error() : "out of memory");
        wino_destroy(st);
        return BENCH_FAIL;
    }
    for (size_t i = 0; i < st->y_elems; i++) /* poisoned: an unwritten output fails the check */
        st->y[i] = NAN;
    bench_wino_describe(st->op, pb->desc.r, pb->desc.s, out);
    out->state = st;
    out->run = wino_run;
    out->output = wino_output;
    out->destroy = wino_destroy;
    out->workspace_bytes = st->workspace_bytes;
    return BENCH_READY;
}
