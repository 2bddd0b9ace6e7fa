/* Backward-data convolution (dx from dy and w) through the public API against the FP64
 * reference: random shapes (stride, dilation, padding larger than the filter, 1x1 maps, one
 * channel, batch 1, both layouts, 1 and 2 threads) with AUTO, DIRECT and WINOGRAD, dx and the
 * workspace poisoned with NaN; bad input returning a status. Bounds: docs/training.md (direct)
 * and docs/cpu-winograd.md (the forward Winograd engine that serves WINOGRAD). */
#define _POSIX_C_SOURCE 200112L /* posix_memalign in test_util.h */

#include <string.h>

#include "backward_check.h"

/* Relative L1 bound on inputs in (-1, 1): the direct path (alpha 0), or Winograd by alpha
 * (docs/cpu-winograd.md's table; alpha 2, F(2x2, 1x1) of a forced 1x1 filter, takes alpha 3's
 * bound, docs/training.md). */
static double bound(int alpha)
{
    static const double by_alpha[11] = {2e-6, 0,    1e-6, 1e-6, 2e-6, 5e-6,
                                        1e-5, 2e-5, 5e-5, 1e-4, 2e-4};
    return alpha >= 0 && alpha <= 10 ? by_alpha[alpha] : 0.0;
}

static double worst_direct, worst_winograd;

/* One convolution; returns 1 when it passes (or is refused as documented). */
static int check(const struct wino_conv2d_desc *d, enum wino_algo algo, int threads,
                 struct test_rng *rng, double *err)
{
    int p = 0, q = 0;
    wino_conv2d_output_size(d, &p, &q);
    const size_t xe = (size_t)d->n * d->c * d->h * d->w, we = (size_t)d->k * d->c * d->r * d->s,
                 ye = (size_t)d->n * d->k * p * q;
    float *w = malloc(4 * we), *dy = malloc(4 * ye), *dx = bwd_poisoned(4 * xe);
    double *ref = malloc(8 * xe);
    bwd_fill(w, we, rng, 0);
    bwd_fill(dy, ye, rng, 0);
    wino_ref_conv2d_bwd_data(d, dy, w, ref);
    struct wino_conv2d_options o = {0};
    o.algo = algo;
    struct wino_context ctx = {0};
    ctx.threads = threads;
    enum wino_algo predicted = WINO_ALGO_AUTO, used = WINO_ALGO_AUTO;
    const enum wino_status can = wino_conv2d_backward_data_can_implement(d, &o, &predicted);
    wino_conv2d *op = NULL;
    const enum wino_status st = wino_conv2d_backward_data_create(d, w, &ctx, &o, &op);
    int ok = st == can;
    const int winograd_shape = d->stride_h == 1 && d->stride_w == 1 && d->dilation_h == 1 &&
                               d->dilation_w == 1 && d->r == d->s && d->pad_h < d->r &&
                               d->pad_w < d->s;
    if (st == WINO_UNSUPPORTED)
        ok = ok && algo == WINO_ALGO_WINOGRAD && !winograd_shape;
    *err = 0.0;
    if (!st) {
        size_t bytes = 0;
        int tile = 0;
        wino_conv2d_workspace_size(op, &bytes);
        wino_conv2d_algo(op, &used, &tile);
        void *ws = bwd_poisoned(bytes);
        memset(w, 0, 4 * we); /* create copied the weights */
        ok = ok && !wino_conv2d_run(op, dy, dx, ws, bytes);
        *err = wino_rel_l1_f32(dx, ref, xe);
        const int alpha = used == WINO_ALGO_WINOGRAD ? tile + d->r - 1 : 0;
        double *worst = used == WINO_ALGO_WINOGRAD ? &worst_winograd : &worst_direct;
        *worst = *err > *worst ? *err : *worst;
        ok = ok && used == predicted && *err <= bound(alpha) &&
             (algo == WINO_ALGO_AUTO || used == algo) &&
             (used == WINO_ALGO_WINOGRAD ? winograd_shape
                                         : algo == WINO_ALGO_DIRECT || !winograd_shape ||
                                               d->r == 1 || d->c <= 4); /* wino.h's AUTO */
        free(ws);
    }
    wino_conv2d_destroy(op);
    free(w), free(dy), free(dx), free(ref);
    return ok;
}

static void test_random(struct test_counts *tc, struct test_rng *rng)
{
    int failed = 0;
    for (int t = 0; t < 200; t++) {
        const int strided = t % 3 == 0;
        /* every fourth shape up to 40 channels: the direct path's phase form (16 or more input
         * channels) beside its scatter form (fewer) */
        const struct wino_conv2d_desc d =
            bwd_random_desc(rng, t % 4 == 1 ? 40 : 9, 14, 5, strided ? 3 : 1);
        const enum wino_algo algo = (enum wino_algo)(t % 3);
        double err = 0.0;
        if (!check(&d, algo, 1 + t % 2, rng, &err) && failed++ < 5) {
            printf("  algo %d err %.3e (%s)\n", algo, err, wino_last_error());
            bwd_print_desc("failed", &d);
        }
    }
    printf("random shapes: worst rel L1 direct %.3e, Winograd %.3e\n", worst_direct,
           worst_winograd);
    test_check(tc, !failed, "200 random shapes through the API");
}

static void test_awkward(struct test_counts *tc, struct test_rng *rng)
{
    struct wino_conv2d_desc cases[9];
    cases[0] = wino_conv2d_desc_make(1, 1, 1, 1, 1, 1, 1, 0, 0);  /* 1x1 map, 1x1 filter */
    cases[1] = wino_conv2d_desc_make(2, 3, 1, 1, 2, 3, 3, 1, 1);  /* 1x1 map, 3x3 filter */
    cases[2] = wino_conv2d_desc_make(1, 2, 5, 7, 3, 2, 2, 3, 3);  /* padding > filter */
    cases[3] = wino_conv2d_desc_make(1, 1, 9, 13, 1, 3, 3, 2, 2); /* one channel, pad = R-1 */
    cases[4] = wino_conv2d_desc_make(1, 2, 5, 5, 3, 1, 1, 0, 0);  /* stride > image */
    cases[4].stride_h = 7, cases[4].stride_w = 6;
    cases[5] = wino_conv2d_desc_make(2, 3, 11, 10, 4, 3, 3, 1, 1); /* stride 2, 3 */
    cases[5].stride_h = 2, cases[5].stride_w = 3;
    cases[6] = wino_conv2d_desc_make(1, 3, 12, 12, 2, 3, 3, 2, 2); /* dilated, stride 2 */
    cases[6].dilation_h = 2, cases[6].dilation_w = 3, cases[6].stride_h = 2;
    cases[7] = wino_conv2d_desc_make(1, 5, 9, 9, 6, 5, 3, 2, 1); /* 5x3: direct */
    /* stride 2 with 4 x 4 taps of 70 channels a phase: GEMMs 280 deep, on AMX-BF16 tiles where
     * the machine has them */
    cases[8] = wino_conv2d_desc_make(1, 33, 10, 9, 70, 4, 4, 1, 1);
    cases[8].stride_h = cases[8].stride_w = 2;
    for (int c = 0; c < 9; c++)
        for (int a = 0; a < 3; a++) {
            cases[c].layout = a % 2 ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
            double err = 0.0;
            char what[64];
            snprintf(what, sizeof what, "awkward shape %d, algo %d", c, a);
            const int ok = check(&cases[c], (enum wino_algo)a, 2, rng, &err);
            if (!ok)
                bwd_print_desc("failed", &cases[c]);
            test_check(tc, ok, what);
        }
}

static void test_bad_input(struct test_counts *tc)
{
    const struct wino_conv2d_desc good = wino_conv2d_desc_make(1, 2, 6, 6, 3, 3, 3, 1, 1);
    struct wino_conv2d_desc d = good;
    struct wino_conv2d_options o = {0};
    float w[54] = {0}, dy[108] = {0}, dx[72];
    wino_conv2d *op = NULL;
    bwd_expect(tc, wino_conv2d_backward_data_create(&d, w, NULL, NULL, NULL), WINO_INVALID_ARGUMENT,
               "op NULL");
    bwd_expect(tc, wino_conv2d_backward_data_create(&d, NULL, NULL, NULL, &op),
               WINO_INVALID_ARGUMENT, "weights NULL");
    bwd_expect(tc, wino_conv2d_backward_data_create(NULL, w, NULL, NULL, &op),
               WINO_INVALID_ARGUMENT, "desc NULL");
    d.s = 9;
    bwd_expect(tc, wino_conv2d_backward_data_create(&d, w, NULL, NULL, &op), WINO_INVALID_ARGUMENT,
               "filter larger than the padded image");
    d = good;
    d.dtype = WINO_DTYPE_F16;
    bwd_expect(tc, wino_conv2d_backward_data_create(&d, w, NULL, NULL, &op), WINO_UNSUPPORTED,
               "FP16 on the CPU");
    d.dtype = WINO_DTYPE_BF16;
    bwd_expect(tc, wino_conv2d_backward_data_create(&d, w, NULL, NULL, &op), WINO_UNSUPPORTED,
               "BF16 on the CPU");
    d = good;
    o.accumulate = 1;
    bwd_expect(tc, wino_conv2d_backward_data_create(&d, w, NULL, &o, &op), WINO_INVALID_ARGUMENT,
               "accumulate");
    o.accumulate = 0;
    o.bias = w;
    bwd_expect(tc, wino_conv2d_backward_data_create(&d, w, NULL, &o, &op), WINO_INVALID_ARGUMENT,
               "bias");
    o.bias = NULL;
    o.algo = WINO_ALGO_WINOGRAD;
    d.stride_h = 2;
    bwd_expect(tc, wino_conv2d_backward_data_can_implement(&d, &o, NULL), WINO_UNSUPPORTED,
               "Winograd with stride 2");
    d = good;
    d.pad_w = 3;
    bwd_expect(tc, wino_conv2d_backward_data_can_implement(&d, &o, NULL), WINO_UNSUPPORTED,
               "Winograd with pad > R-1");
    d = good;
    o.tile_m = 15;
    bwd_expect(tc, wino_conv2d_backward_data_can_implement(&d, &o, NULL), WINO_UNSUPPORTED,
               "Winograd tile beyond alpha 16");
    o.tile_m = 0;
    o.points = "0,1,-1,2,-2"; /* deprecated: the runtime has no generator */
    o.tile_m = 4;
    bwd_expect(tc, wino_conv2d_backward_data_can_implement(&d, &o, NULL), WINO_UNSUPPORTED,
               "points");
    o.points = NULL;
    o.tile_m = 0;
    o.algo = WINO_ALGO_DIRECT;
    o.variant = WINO_VARIANT_FUSED;
    bwd_expect(tc, wino_conv2d_backward_data_create(&d, w, NULL, &o, &op), WINO_INVALID_ARGUMENT,
               "variant with DIRECT");
    o.variant = WINO_VARIANT_AUTO;
    struct wino_context ctx = {0};
    ctx.backend = WINO_BACKEND_CUDA;
    bwd_expect(tc, wino_conv2d_backward_data_create(&d, w, &ctx, &o, &op), WINO_UNSUPPORTED,
               "DIRECT on the CUDA backend (Winograd only there)");
    test_check(tc, op == NULL, "no operator after failures");

    for (int a = 1; a <= 2; a++) { /* run-time checks on each path */
        o.algo = (enum wino_algo)a;
        test_check(tc, !wino_conv2d_backward_data_create(&good, w, NULL, &o, &op), "create");
        size_t bytes = 0;
        wino_conv2d_workspace_size(op, &bytes);
        char *ws = bwd_poisoned(bytes + 64);
        bwd_expect(tc, wino_conv2d_run(op, NULL, dx, ws, bytes), WINO_INVALID_ARGUMENT, "dy NULL");
        bwd_expect(tc, wino_conv2d_run(op, dy, NULL, ws, bytes), WINO_INVALID_ARGUMENT, "dx NULL");
        if (bytes) {
            bwd_expect(tc, wino_conv2d_run(op, dy, dx, ws, bytes - 1), WINO_INSUFFICIENT_WORKSPACE,
                       "workspace one byte short");
            bwd_expect(tc, wino_conv2d_run(op, dy, dx, ws + 32, bytes), WINO_INSUFFICIENT_WORKSPACE,
                       "workspace misaligned");
            bwd_expect(tc, wino_conv2d_run(op, dy, dx, NULL, bytes), WINO_INSUFFICIENT_WORKSPACE,
                       "workspace NULL");
        }
        bwd_expect(tc, wino_conv2d_backward_filter_run(op, dy, dy, w, ws, bytes),
                   WINO_INVALID_ARGUMENT, "backward_filter_run on a backward-data operator");
        enum wino_conv2d_kind kind = WINO_CONV2D_FORWARD;
        enum wino_variant variant = WINO_VARIANT_FUSED_OUTPUT;
        test_check(tc, !wino_conv2d_kind(op, &kind) && kind == WINO_CONV2D_BACKWARD_DATA &&
                           !wino_conv2d_variant(op, &variant) &&
                           (variant == WINO_VARIANT_AUTO) == (a == WINO_ALGO_DIRECT),
                   "kind and variant");
        wino_conv2d_destroy(op);
        free(ws);
    }
}

int main(void)
{
    struct test_rng rng = {test_seed()};
    struct test_counts tc = {0, 0};
    test_random(&tc, &rng);
    test_awkward(&tc, &rng);
    test_bad_input(&tc);
    return test_report(&tc);
}
