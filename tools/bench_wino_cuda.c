/* `wino bench --backend cuda` runners for wino itself, through the public API only: create
 * (the weight transform) happens at prepare, outside the timing; run() only enqueues on the
 * bench's stream. FP32 / FP16 read the problem's device x and w (forward), dy and w
 * (backward-data) or x and dy (backward-filter). INT8 runs uint8 x and int8 y
 * with the CPU bench's calibration, and its output is compared byte for byte with the same call
 * on the CPU backend before it may be timed. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_cuda.h"

#ifdef WINO_HAVE_CUDA

#include "int8_data.h"

struct wino_cuda_state {
    wino_conv2d *op;
    int filter;             /* backward-filter: x and dy in, y is dw */
    const void *x;          /* device input: the problem's x (dy for backward-data), or x_own */
    const void *dy;         /* backward-filter's second input */
    void *x_own, *y, *workspace;
    size_t workspace_bytes, y_elems;
    enum wino_dtype y_type; /* F32, F16 or S8 */
    float y_scale;          /* S8: real value of one output step */
    void *stream;
};

static int wino_cuda_run(void *p)
{
    const struct wino_cuda_state *st = p;
    const enum wino_status s =
        st->filter ? wino_conv2d_backward_filter_run(st->op, st->x, st->dy, st->y, st->workspace,
                                                     st->workspace_bytes)
                   : wino_conv2d_run(st->op, st->x, st->y, st->workspace, st->workspace_bytes);
    return s && bench_cuda_record(st->filter ? "wino_conv2d_backward_filter_run"
                                             : "wino_conv2d_run",
                                  __FILE__, __LINE__, wino_last_error());
}

static int wino_cuda_output(void *p, float *y)
{
    const struct wino_cuda_state *st = p;
    return bench_cuda_download_floats(st->stream, st->y, st->y_elems, st->y_type, st->y_scale,
                                      y);
}

static void wino_cuda_destroy(void *p)
{
    struct wino_cuda_state *st = p;
    if (!st)
        return;
    wino_conv2d_destroy(st->op);
    bench_cuda_free(st->x_own);
    bench_cuda_free(st->y);
    bench_cuda_free(st->workspace);
    free(st);
}

static const char *variant_name(enum wino_variant v)
{
    return v == WINO_VARIANT_FUSED            ? "fused"
           : v == WINO_VARIANT_NON_FUSED      ? "non-fused"
           : v == WINO_VARIANT_FUSED_OUTPUT ? "fused-output"
           : v == WINO_VARIANT_ROWS         ? "rows"
                                              : "auto";
}

/* "F3_6+F3_2": the WinRS kernels F(n, r) of a backward-filter operator ("" when it runs none). */
static void winrs_tile_name(const wino_conv2d *op, char *buf, size_t cap)
{
    struct wino_winrs_info info;
    buf[0] = '\0';
    if (wino_conv2d_backward_filter_info(op, &info))
        return;
    for (int k = 0; k < info.kernels; k++) {
        const size_t used = strlen(buf);
        snprintf(buf + used, cap - used, "%sF%d_%d", k ? "+" : "", info.n[k], info.r[k]);
    }
}

/* A state for the problem with its output allocated and poisoned; NULL with the error recorded. */
static struct wino_cuda_state *new_state(const struct cuda_problem *pb, enum wino_dtype y_type)
{
    struct wino_cuda_state *st = calloc(1, sizeof *st);
    if (!st) {
        bench_cuda_record("calloc", __FILE__, __LINE__, "out of memory");
        return NULL;
    }
    const struct wino_conv2d_desc *d = &pb->desc;
    st->filter = pb->op == BENCH_BWD_FILTER;
    st->x = pb->op == BENCH_BWD_DATA ? pb->d_dy : pb->d_x;
    st->dy = pb->d_dy;
    st->stream = pb->stream;
    st->y_type = y_type;
    st->y_scale = pb->y_scale;
    st->y_elems = pb->op == BENCH_BWD_DATA     ? (size_t)d->n * d->h * d->w * d->c
                  : pb->op == BENCH_BWD_FILTER ? (size_t)d->k * d->r * d->s * d->c
                                               : (size_t)d->n * pb->p * pb->q * d->k;
    if (bench_cuda_alloc(st->y_elems * bench_dtype_size(y_type), 1, &st->y)) {
        free(st);
        return NULL;
    }
    return st;
}

/* After create returned `created`: SKIP when wino refused the layer or runs another tile or
 * variant than asked (tile_m 0, WINO_VARIANT_AUTO: any), else the workspace and the runner.
 * Takes st. */
static enum bench_prep finish(struct wino_cuda_state *st, enum wino_status created, int tile_m,
                              enum wino_variant asked, int any_algo,
                              const struct cuda_problem *pb, struct bench_runner *out)
{
    enum wino_algo algo = WINO_ALGO_AUTO;
    enum wino_variant v = WINO_VARIANT_AUTO;
    int m = 0;
    if (created == WINO_UNSUPPORTED) {
        snprintf(out->info, sizeof out->info, "%s", wino_last_error());
        wino_cuda_destroy(st);
        return BENCH_SKIP;
    }
    if (created || wino_conv2d_algo(st->op, &algo, &m) || wino_conv2d_variant(st->op, &v) ||
        wino_conv2d_workspace_size(st->op, &st->workspace_bytes)) {
        bench_cuda_record("wino_conv2d_create", __FILE__, __LINE__, wino_last_error());
        snprintf(out->info, sizeof out->info, "%s", bench_cuda_last_error());
        wino_cuda_destroy(st);
        return BENCH_FAIL;
    }
    if (!any_algo && (algo != WINO_ALGO_WINOGRAD || (tile_m && m != tile_m) ||
                      (asked && v != asked))) {
        snprintf(out->info, sizeof out->info, "asked for m=%d %s, the operator runs m=%d %s",
                 tile_m, variant_name(asked), m, variant_name(v));
        wino_cuda_destroy(st);
        return BENCH_SKIP;
    }
    if (bench_cuda_alloc(st->workspace_bytes, 0, &st->workspace)) {
        snprintf(out->info, sizeof out->info, "%s", bench_cuda_last_error());
        wino_cuda_destroy(st);
        return BENCH_FAIL;
    }
    if (algo != WINO_ALGO_WINOGRAD)
        snprintf(out->tile, sizeof out->tile, "%s", algo == WINO_ALGO_VENDOR ? "vendor" : "direct");
    else if (pb->op == BENCH_BWD_FILTER) /* WinRS: its filter-gradient tile n and unit width r */
        winrs_tile_name(st->op, out->tile, sizeof out->tile);
    else if (v == WINO_VARIANT_ROWS) /* one-dimensional F(m, s) along the rows */
        snprintf(out->tile, sizeof out->tile, "F%d_%d", m, pb->desc.s);
    else
        bench_tile_name(out->tile, sizeof out->tile, m, pb->desc.r, pb->desc.s);
    snprintf(out->variant, sizeof out->variant, "%s", variant_name(v));
    snprintf(out->info, sizeof out->info, "%s",
             any_algo ? wino_conv2d_reason(st->op) : variant_name(v));
    out->workspace_bytes = st->workspace_bytes;
    out->state = st;
    out->run = wino_cuda_run;
    out->output = wino_cuda_output;
    out->destroy = wino_cuda_destroy;
    return BENCH_READY;
}

/* Creates pb's operator of its kind with o into a new state; BENCH_FAIL when no state. */
static enum bench_prep prepare_with(const struct cuda_problem *pb,
                                    const struct wino_conv2d_options *o, int any_algo,
                                    struct bench_runner *out)
{
    const struct wino_context ctx = {
        .backend = WINO_BACKEND_CUDA, .device = pb->device, .stream = pb->stream};
    memset(out, 0, sizeof *out);
    struct wino_cuda_state *st = new_state(pb, pb->desc.dtype);
    if (!st) {
        snprintf(out->info, sizeof out->info, "%s", bench_cuda_last_error());
        return BENCH_FAIL;
    }
    enum wino_status s;
    if (pb->op == BENCH_BWD_FILTER)
        s = wino_conv2d_backward_filter_create(&pb->desc, &ctx, o, &st->op);
    else if (pb->op == BENCH_BWD_DATA)
        s = wino_conv2d_backward_data_create(&pb->desc, pb->d_w, &ctx, o, &st->op);
    else
        s = wino_conv2d_create(&pb->desc, pb->d_w, &ctx, o, &st->op);
    return finish(st, s, o->tile_m, o->variant, any_algo, pb, out);
}

enum bench_prep bench_wino_cuda_prepare(const struct cuda_problem *pb, int tile_m,
                                        enum wino_variant variant, struct bench_runner *out)
{
    const struct wino_conv2d_options o = {
        .algo = WINO_ALGO_WINOGRAD, .tile_m = tile_m, .variant = variant};
    return prepare_with(pb, &o, 0, out);
}

enum bench_prep bench_wino_cuda_prepare_choice(const struct cuda_problem *pb,
                                               enum wino_algo algo, struct bench_runner *out)
{
    const struct wino_conv2d_options o = {.algo = algo};
    return prepare_with(pb, &o, 1, out);
}

/* The layer's INT8 parameters as the CPU bench sets them (tools/bench_wino_int8.c): clips at the
 * 99.9th percentile of a window of its own input, the problem's scales, int8 output, no clip. */
static enum wino_status calibrate(const struct cuda_problem *pb, int tile_m,
                                  struct wino_int8_params *q)
{
    const enum wino_status s =
        bench_int8_calibrate(&pb->desc, tile_m, pb->x, pb->w, pb->x_scale, q);
    q->y_scale = pb->y_scale;
    q->y_dtype = WINO_DTYPE_S8;
    q->clip_c = 0.0f;
    return s;
}

/* Runs the same INT8 call on the CPU backend and once on the GPU: the number of output bytes
 * that differ, or -1 with the error recorded. */
static long cpu_mismatches(const struct cuda_problem *pb, const struct wino_int8_params *q,
                           const struct wino_conv2d_options *o, const unsigned char *xq,
                           struct wino_cuda_state *st)
{
    const struct wino_context cpu = {.backend = WINO_BACKEND_CPU};
    wino_conv2d *op = NULL;
    void *ws = NULL;
    size_t ws_bytes = 0;
    signed char *want = malloc(st->y_elems), *got = malloc(st->y_elems);
    long diff = -1;
    if (!want || !got)
        bench_cuda_record("malloc", __FILE__, __LINE__, "out of memory");
    else if (wino_conv2d_create_int8(&pb->desc, pb->w, q, &cpu, o, &op) ||
             wino_conv2d_workspace_size(op, &ws_bytes))
        bench_cuda_record("wino_conv2d_create_int8 (CPU)", __FILE__, __LINE__,
                          wino_last_error());
    else if (ws_bytes && posix_memalign(&ws, 64, ws_bytes))
        bench_cuda_record("posix_memalign", __FILE__, __LINE__, "out of memory");
    else if (wino_conv2d_run(op, xq, want, ws, ws_bytes))
        bench_cuda_record("wino_conv2d_run (CPU)", __FILE__, __LINE__, wino_last_error());
    else if (!wino_cuda_run(st) &&
             !bench_cuda_download(st->stream, st->y, st->y_elems, got)) {
        diff = 0;
        for (size_t i = 0; i < st->y_elems; i++)
            diff += want[i] != got[i];
    }
    wino_conv2d_destroy(op);
    free(ws);
    free(want);
    free(got);
    return diff;
}

enum bench_prep bench_wino_cuda_int8_prepare(const struct cuda_problem *pb, int tile_m,
                                             enum wino_variant variant,
                                             struct bench_runner *out)
{
    const struct wino_context ctx = {
        .backend = WINO_BACKEND_CUDA, .device = pb->device, .stream = pb->stream};
    const struct wino_conv2d_options o = {.tile_m = tile_m, .variant = variant};
    const struct wino_conv2d_options cpu_o = {.tile_m = tile_m}; /* the CPU's variant is fixed */
    const struct wino_conv2d_desc *d = &pb->desc;
    const size_t xn = (size_t)d->n * d->h * d->w * d->c, wn = (size_t)d->k * d->r * d->s * d->c;
    struct wino_int8_params q;
    memset(out, 0, sizeof *out);
    enum wino_status s = calibrate(pb, tile_m, &q);
    if (s == WINO_UNSUPPORTED) { /* e.g. not 3x3, or stride 2 */
        snprintf(out->info, sizeof out->info, "%s", wino_last_error());
        return BENCH_SKIP;
    }
    unsigned char *xq = malloc(xn);
    struct wino_cuda_state *st = NULL, *ready;
    void *d_w = NULL;
    enum bench_prep result = BENCH_FAIL;
    long diff;
    if (s) {
        bench_cuda_record("wino_int8_calibrate", __FILE__, __LINE__, wino_last_error());
        goto done;
    }
    if (!xq) {
        bench_cuda_record("malloc", __FILE__, __LINE__, "out of memory");
        goto done;
    }
    if (!(st = new_state(pb, WINO_DTYPE_S8)))
        goto done;
    int8_data_quantize_u8(pb->x, xn, pb->x_scale, xq);
    if (bench_cuda_upload(xq, xn, &st->x_own) ||
        bench_cuda_upload_floats(pb->w, wn, WINO_DTYPE_F32, &d_w))
        goto done;
    st->x = st->x_own;
    s = wino_conv2d_create_int8(d, d_w, &q, &ctx, &o, &st->op);
    result = finish(st, s, tile_m, variant, 0, pb, out);
    st = NULL; /* finish took it */
    if (result != BENCH_READY)
        goto done;
    ready = out->state;
    diff = cpu_mismatches(pb, &q, &cpu_o, xq, ready);
    if (!diff && !bench_cuda_poison(pb->stream, ready->y, ready->y_elems)) { /* int8: 1 B each */
        snprintf(out->info, sizeof out->info, "%s, = CPU bytes", variant_name(variant));
        goto done;
    }
    if (diff > 0)
        snprintf(out->info, sizeof out->info,
                 "GPU output differs from the CPU backend's in %ld bytes", diff);
    else
        out->info[0] = '\0'; /* the recorded error, below */
    wino_cuda_destroy(ready);
    out->state = NULL;
    result = BENCH_FAIL;
done:
    if (result == BENCH_FAIL && !out->info[0])
        snprintf(out->info, sizeof out->info, "%s", bench_cuda_last_error());
    bench_cuda_free(d_w); /* create transformed the weights: no longer needed */
    wino_cuda_destroy(st);
    free(xq);
    return result;
}

#else /* no CUDA: `wino bench --backend cuda` refuses before any runner is asked for */

enum bench_prep bench_wino_cuda_prepare(const struct cuda_problem *pb, int tile_m,
                                        enum wino_variant variant, struct bench_runner *out)
{
    (void)pb;
    (void)tile_m;
    (void)variant;
    memset(out, 0, sizeof *out);
    snprintf(out->info, sizeof out->info, "this build has no CUDA");
    return BENCH_SKIP;
}

enum bench_prep bench_wino_cuda_int8_prepare(const struct cuda_problem *pb, int tile_m,
                                             enum wino_variant variant,
                                             struct bench_runner *out)
{
    return bench_wino_cuda_prepare(pb, tile_m, variant, out);
}

#endif
