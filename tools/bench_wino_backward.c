/* `wino bench --op bwd-data|bwd-filter` runner for wino's training operators, through the public
 * API only: create outside the timing, run() timed. As in the forward runner (bench_wino.c),
 * wino runs in NHWC: its inputs are converted at prepare and its output back to NCHW / KCRS for
 * the check, outside the timing. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cpu/layout_f32.h"

struct backward_state {
    wino_conv2d *op;
    int filter;          /* 1: backward-filter (in0 = x, in1 = dy), 0: backward-data (in0 = dy) */
    float *in0, *in1;    /* NHWC */
    float *out;          /* dx NHWC or dw KRSC */
    int batch;           /* out's conversion back: batch x rows x cols */
    size_t rows, cols, out_elems;
    void *workspace;
    size_t workspace_bytes;
};

static int backward_run(void *p)
{
    struct backward_state *st = p;
    const enum wino_status s =
        st->filter ? wino_conv2d_backward_filter_run(st->op, st->in0, st->in1, st->out,
                                                     st->workspace, st->workspace_bytes)
                   : wino_conv2d_run(st->op, st->in0, st->out, st->workspace,
                                     st->workspace_bytes);
    return s != WINO_SUCCESS;
}

static int backward_output(void *p, float *out)
{
    struct backward_state *st = p;
    wino_f32_transpose_batched(st->out, out, st->batch, st->rows, st->cols, 1, 0);
    return 0;
}

static void backward_destroy(void *p)
{
    struct backward_state *st = p;
    if (!st)
        return;
    wino_conv2d_destroy(st->op);
    free(st->workspace);
    free(st->in0);
    free(st->in1);
    free(st->out);
    free(st);
}

/* An NCHW tensor of batch x channels x pixels as a new NHWC copy (NULL when out of memory). */
static float *to_nhwc(const float *v, int batch, size_t channels, size_t pixels)
{
    float *t = malloc((size_t)batch * channels * pixels * sizeof *t);
    if (t)
        wino_f32_transpose_batched(v, t, batch, channels, pixels, 1, 0);
    return t;
}

/* Tile and info of a backward-filter operator: WinRS's kernels ("F3_6+F3_2": F(n, r) of each
 * kind) and segments, or direct. */
static void describe_filter(const wino_conv2d *op, struct bench_runner *out)
{
    struct wino_winrs_info info;
    if (wino_conv2d_backward_filter_info(op, &info) != WINO_SUCCESS || !info.kernels) {
        snprintf(out->info, sizeof out->info, "direct, NHWC");
        return;
    }
    snprintf(out->tile, sizeof out->tile, "F%d_%d", info.n[0], info.r[0]);
    if (info.kernels == 2)
        snprintf(out->tile + strlen(out->tile), sizeof out->tile - strlen(out->tile), "+F%d_%d",
                 info.n[1], info.r[1]);
    snprintf(out->info, sizeof out->info, "winrs %s (%d + %d units a row), %d segment%s, NHWC",
             out->tile, info.units[0], info.units[1], info.segments,
             info.segments == 1 ? "" : "s");
}

enum bench_prep bench_wino_backward_prepare(const struct bench_problem *pb, enum wino_algo algo,
                                            int tile_m, struct bench_runner *out)
{
    const int filter = pb->op == BENCH_BWD_FILTER;
    const struct wino_context ctx = {
        .threads = pb->threads, .tuning_cache = algo == WINO_ALGO_AUTO ? pb->tuning_cache : NULL};
    struct wino_conv2d_options opts; /* all-zero = defaults, whatever fields get added */
    memset(&opts, 0, sizeof opts);
    opts.algo = algo;
    opts.tile_m = tile_m;
    memset(out, 0, sizeof *out);
    struct wino_conv2d_desc desc = pb->desc;
    desc.layout = WINO_LAYOUT_NHWC;
    enum wino_status s = filter ? wino_conv2d_backward_filter_can_implement(&desc, &opts, NULL)
                                : wino_conv2d_backward_data_can_implement(&desc, &opts, NULL);
    if (s == WINO_UNSUPPORTED) {
        snprintf(out->info, sizeof out->info, "%s", wino_last_error());
        return BENCH_SKIP;
    }
    struct backward_state *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(out->info, sizeof out->info, "out of memory");
        return BENCH_FAIL;
    }
    const size_t hw = (size_t)desc.h * desc.w, pq = (size_t)pb->p * pb->q,
                 rs = (size_t)desc.r * desc.s;
    st->filter = filter;
    float *w = NULL; /* backward-data's filters as KRSC: create keeps its own copy */
    if (filter) {
        st->in0 = to_nhwc(pb->x, desc.n, (size_t)desc.c, hw);
        st->in1 = to_nhwc(pb->dy, desc.n, (size_t)desc.k, pq);
        st->batch = desc.k, st->rows = rs, st->cols = (size_t)desc.c; /* KRSC -> KCRS */
    } else {
        st->in0 = to_nhwc(pb->dy, desc.n, (size_t)desc.k, pq);
        w = to_nhwc(pb->w, desc.k, (size_t)desc.c, rs);
        st->batch = desc.n, st->rows = hw, st->cols = (size_t)desc.c; /* NHWC -> NCHW */
    }
    st->out_elems = (size_t)st->batch * st->rows * st->cols;
    st->out = malloc(st->out_elems * sizeof *st->out);
    s = WINO_OUT_OF_MEMORY;
    if (st->in0 && (filter ? st->in1 != NULL : w != NULL) && st->out) {
        s = filter ? wino_conv2d_backward_filter_create(&desc, &ctx, &opts, &st->op)
                   : wino_conv2d_backward_data_create(&desc, w, &ctx, &opts, &st->op);
        if (s == WINO_SUCCESS)
            s = wino_conv2d_workspace_size(st->op, &st->workspace_bytes);
        if (s == WINO_SUCCESS && st->workspace_bytes &&
            posix_memalign(&st->workspace, 64, st->workspace_bytes) != 0)
            s = WINO_OUT_OF_MEMORY;
    }
    free(w);
    if (s != WINO_SUCCESS) {
        snprintf(out->info, sizeof out->info, "%s",
                 s == WINO_OUT_OF_MEMORY ? "out of memory" : wino_last_error());
        backward_destroy(st);
        return BENCH_FAIL;
    }
    for (size_t i = 0; i < st->out_elems; i++) /* poisoned: an unwritten output fails the check */
        st->out[i] = NAN;
    if (filter)
        describe_filter(st->op, out);
    else
        bench_wino_describe(st->op, pb->desc.r, pb->desc.s, out);
    out->state = st;
    out->run = backward_run;
    out->output = backward_output;
    out->destroy = backward_destroy;
    out->workspace_bytes = st->workspace_bytes;
    return BENCH_READY;
}
