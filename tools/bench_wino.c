/* `wino bench` runner for wino itself, through the public wino_conv2d_* API only: create (filter
 * preparation) is outside the timing, run() is what gets timed. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

struct wino_state {
    wino_conv2d *op;
    const float *x;
    float *y;
    size_t y_elems;
    void *workspace;
    size_t workspace_bytes;
};

void bench_tile_name(char *buf, size_t cap, int m, int r, int s)
{
    snprintf(buf, cap, "F%dx%d_%dx%d", m, m, r, s);
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
    memcpy(y, st->y, st->y_elems * sizeof *y);
    return 0;
}

static void wino_destroy(void *p)
{
    struct wino_state *st = p;
    if (!st)
        return;
    wino_conv2d_destroy(st->op);
    free(st->workspace);
    free(st->y);
    free(st);
}

enum bench_prep bench_wino_prepare(const struct bench_problem *pb, enum wino_algo algo, int tile_m,
                                   struct bench_runner *out)
{
    const struct wino_context ctx = {pb->threads};
    struct wino_conv2d_options opts; /* all-zero = defaults, whatever fields get added */
    memset(&opts, 0, sizeof opts);
    opts.algo = algo;
    opts.tile_m = tile_m;
    memset(out, 0, sizeof *out);
    enum wino_status s = wino_conv2d_can_implement(&pb->desc, &opts);
    if (s == WINO_UNSUPPORTED) {
        snprintf(out->info, sizeof out->info, "%s", wino_last_error());
        return BENCH_SKIP;
    }
    struct wino_state *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(out->info, sizeof out->info, "out of memory");
        return BENCH_FAIL;
    }
    st->x = pb->x;
    st->y_elems = (size_t)pb->desc.n * pb->desc.k * pb->p * pb->q;
    st->y = malloc(st->y_elems * sizeof *st->y);
    if (!st->y ||
        (s = wino_conv2d_create(&pb->desc, pb->w, &ctx, &opts, &st->op)) != WINO_SUCCESS ||
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
    enum wino_algo chosen;
    int m = 0;
    wino_conv2d_algo(st->op, &chosen, &m);
    if (chosen == WINO_ALGO_WINOGRAD)
        bench_tile_name(out->tile, sizeof out->tile, m, pb->desc.r, pb->desc.s);
    snprintf(out->info, sizeof out->info, "%s",
             chosen == WINO_ALGO_WINOGRAD ? "winograd" : "direct");
    out->state = st;
    out->run = wino_run;
    out->output = wino_output;
    out->destroy = wino_destroy;
    out->workspace_bytes = st->workspace_bytes;
    return BENCH_READY;
}
