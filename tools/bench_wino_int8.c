/* `wino bench --dtype int8` runner for wino's INT8 Winograd and INT8 direct convolution, and
 * for the library's AUTO choice between them (what wino_int8_auto_choice answers, with the
 * problem's tuning cache): Winograd's alpha_ta and alpha_tw calibrated at the 99.9th percentile
 * on the layer's own input (NHWC, quantized with the problem's x_scale), direct's weights
 * clipped at their largest magnitude; create and a byte-for-byte check against the integer
 * specification happen at prepare, outside the timing. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "int8_data.h"
#include "op/int8_layer.h"
#include "cpu/gemm_s8.h"
#include "cpu/layout_f32.h"
#include "ref/int8_direct_ref.h"
#include "ref/int8_winograd_ref.h"

struct int8_state {
    wino_conv2d *op;
    unsigned char *x; /* NHWC */
    signed char *y;   /* NHWC */
    float y_scale;
    int n, k, pq;
    void *workspace;
    size_t workspace_bytes;
};

static int int8_run(void *p)
{
    struct int8_state *st = p;
    return wino_conv2d_run(st->op, st->x, st->y, st->workspace, st->workspace_bytes) !=
           WINO_SUCCESS;
}

/* Dequantized, NHWC -> NCHW. */
static int int8_output(void *p, float *y)
{
    struct int8_state *st = p;
    for (int n = 0; n < st->n; n++)
        for (int i = 0; i < st->pq; i++)
            for (int k = 0; k < st->k; k++)
                y[((size_t)n * st->k + k) * st->pq + i] =
                    st->y_scale * st->y[((size_t)n * st->pq + i) * st->k + k];
    return 0;
}

static void int8_destroy(void *p)
{
    struct int8_state *st = p;
    if (!st)
        return;
    wino_conv2d_destroy(st->op);
    free(st->workspace);
    free(st->x);
    free(st->y);
    free(st);
}

/* Runs the operator once and compares with the reference of the same layer (tile_m 0: direct):
 * 0 when equal. */
static int matches_spec(const struct int8_state *st, const struct wino_conv2d_desc *d,
                        int tile_m, const float *w, const struct wino_int8_params *q,
                        size_t y_elems)
{
    struct wino_int8_layer L;
    signed char *want = malloc(y_elems);
    int rc = !want || (tile_m ? wino_int8_layer_prepare(d, tile_m, w, q, NULL, 0, &L)
                              : wino_int8_direct_prepare(d, w, q, NULL, 0, &L)) != WINO_SUCCESS;
    if (!rc) {
        memset(st->y, 0x5a, y_elems);
        memset(want, 0xa5, y_elems);
        if (tile_m)
            wino_ref_int8_winograd(d, &L, st->x, want);
        else
            wino_ref_int8_direct(d, &L, st->x, want);
        rc = int8_run((void *)st) || memcmp(st->y, want, y_elems) != 0;
        wino_int8_layer_release(&L);
    }
    free(want);
    return rc;
}

enum bench_prep bench_wino_int8_prepare(const struct bench_problem *pb, enum wino_algo algo,
                                        int tile_m, struct bench_runner *out)
{
    memset(out, 0, sizeof *out);
    struct wino_conv2d_desc d = pb->desc;
    d.layout = WINO_LAYOUT_NHWC;
    d.dtype = WINO_DTYPE_U8;
    const struct wino_context ctx = {
        .threads = pb->threads, .tuning_cache = algo == WINO_ALGO_AUTO ? pb->tuning_cache : NULL};
    enum wino_algo ran = algo;
    if (algo == WINO_ALGO_AUTO && wino_int8_auto_choice(&d, &ctx, &ran, &tile_m)) {
        snprintf(out->info, sizeof out->info, "%s", wino_last_error());
        return BENCH_FAIL;
    }
    if (tile_m && (d.r != 3 || d.s != 3 || d.stride_h != 1 || d.stride_w != 1)) {
        snprintf(out->info, sizeof out->info, "INT8 Winograd needs a 3x3 filter and stride 1");
        return BENCH_SKIP;
    }
    const size_t hw = (size_t)d.h * d.w, xn = (size_t)d.n * d.c * hw;
    const size_t yn = (size_t)d.n * d.k * pb->p * pb->q, taps = (size_t)d.r * d.s;
    const size_t wn = (size_t)d.k * d.c * taps;
    struct int8_state *st = calloc(1, sizeof *st);
    float *xf = malloc(sizeof(float) * xn), *w = malloc(sizeof(float) * wn);
    enum bench_prep result = BENCH_FAIL;
    snprintf(out->info, sizeof out->info, "out of memory");
    if (!st || !xf || !w || !(st->x = malloc(xn)) || !(st->y = malloc(yn)))
        goto done;
    st->n = d.n, st->k = d.k, st->pq = pb->p * pb->q, st->y_scale = pb->y_scale;
    wino_f32_transpose_batched(pb->x, xf, d.n, (size_t)d.c, hw, 1, 0);          /* NCHW -> NHWC */
    wino_f32_transpose_batched(pb->w, w, d.k, (size_t)d.c, taps, 1, 0);         /* KCRS -> KRSC */
    struct wino_int8_params q;
    memset(&q, 0, sizeof q);
    if (!tile_m) { /* direct: the input's step, the weights clipped at their largest |w| */
        q.x_scale = pb->x_scale;
        for (size_t i = 0; i < wn; i++)
            q.alpha_tw = fabsf(w[i]) > q.alpha_tw ? fabsf(w[i]) : q.alpha_tw;
    } else if (bench_int8_calibrate(&d, tile_m, xf, w, pb->x_scale, &q) != WINO_SUCCESS) {
        snprintf(out->info, sizeof out->info, "%s", wino_last_error());
        goto done;
    }
    q.y_scale = pb->y_scale; /* the problem's output scale, shared by every implementation */
    q.y_dtype = WINO_DTYPE_S8;
    q.clip_c = 0.0f;
    int8_data_quantize_u8(xf, xn, q.x_scale, st->x);
    /* AUTO asks for nothing: the operator is the library's own choice, calibrated for it */
    const struct wino_conv2d_options o = {.algo = algo,
                                          .tile_m = algo == WINO_ALGO_AUTO ? 0 : tile_m};
    const enum wino_status s = wino_conv2d_create_int8(&d, w, &q, &ctx, &o, &st->op);
    if (s == WINO_UNSUPPORTED) { /* e.g. the int32 bound of F(6,3) */
        snprintf(out->info, sizeof out->info, "%s", wino_last_error());
        result = BENCH_SKIP;
        goto done;
    }
    if (s || wino_conv2d_workspace_size(st->op, &st->workspace_bytes) ||
        (st->workspace_bytes && posix_memalign(&st->workspace, 64, st->workspace_bytes))) {
        snprintf(out->info, sizeof out->info, "%s", s ? wino_last_error() : "out of memory");
        goto done;
    }
    enum wino_algo created;
    int created_m;
    wino_conv2d_algo(st->op, &created, &created_m);
    if (created != ran || created_m != tile_m) {
        snprintf(out->info, sizeof out->info, "AUTO created tile %d, not the %d it answered",
                 created_m, tile_m);
        goto done;
    }
    if (matches_spec(st, &d, tile_m, w, &q, yn)) {
        snprintf(out->info, sizeof out->info, "differs from the integer specification");
        goto done;
    }
    if (tile_m)
        bench_tile_name(out->tile, sizeof out->tile, tile_m, 3, 3);
    snprintf(out->info, sizeof out->info, "int8 %s, %s GEMMs, NHWC, = spec%s%s",
             tile_m ? "winograd" : "direct", wino_s8_isa_name(wino_s8_isa()),
             algo == WINO_ALGO_AUTO ? "; " : "",
             algo == WINO_ALGO_AUTO ? wino_conv2d_reason(st->op) : "");
    out->state = st;
    out->run = int8_run;
    out->output = int8_output;
    out->destroy = int8_destroy;
    out->workspace_bytes = st->workspace_bytes;
    st = NULL;
    result = BENCH_READY;
done:
    int8_destroy(st);
    free(xf);
    free(w);
    return result;
}
