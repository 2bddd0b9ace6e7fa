/* The operator lifecycle for frameworks (wino.h, wino_conv2d_reshape): one operator of every kind
 * and path, created once (with sizes, or with n = h = w = 0), serves three input sizes in turn,
 * each checked against the FP64 reference (INT8: against a fresh operator of that size, which
 * test_int8_winograd holds to the bit-exact specification); the workspace reshape reports is
 * workspace_size's; bad sizes are refused and leave the operator as it was; run() before the
 * first reshape of an operator created without sizes is refused.
 * Usage: test_reshape (WINO_TEST_SEED=N to replay the random inputs). */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <limits.h>
#include <math.h>
#include <string.h>

#include "ref/conv_ref.h"
#include "ref/error_metrics.h"
#include "test_util.h"
#include "wino.h"

static struct test_rng rng;
static struct test_counts counts;

struct shape {
    int n, h, w;
};

/* The three sizes every operator is reshaped to, in this order. */
static const struct shape shapes[3] = {{2, 9, 11}, {1, 16, 16}, {3, 6, 7}};

static float *random_floats(size_t n)
{
    float *v = test_alloc64(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++)
        v[i] = (float)test_rng_sym(&rng);
    return v;
}

static float *nan_floats(size_t n)
{
    float *v = test_alloc64(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++)
        v[i] = NAN;
    return v;
}

/* Element counts of x, w and y for d. */
static void counts_of(const struct wino_conv2d_desc *d, size_t *x, size_t *w, size_t *y)
{
    int p = 0, q = 0;
    wino_conv2d_output_size(d, &p, &q);
    *x = (size_t)d->n * d->c * d->h * d->w;
    *w = (size_t)d->k * d->c * d->r * d->s;
    *y = (size_t)d->n * d->k * p * q;
}

/* Reshapes op to s and checks the reported workspace against workspace_size; the workspace
 * (64-byte aligned) in *ws, its size in *bytes. */
static int reshape(wino_conv2d *op, struct shape s, void **ws, size_t *bytes)
{
    size_t asked = 0;
    *ws = NULL;
    if (wino_conv2d_reshape(op, s.n, s.h, s.w, bytes) ||
        wino_conv2d_workspace_size(op, &asked) || asked != *bytes) {
        printf("  reshape to %d x %d x %d: %s\n", s.n, s.h, s.w, wino_last_error());
        return 0;
    }
    *ws = test_alloc64(*bytes ? *bytes : 64);
    return 1;
}

enum kind { FORWARD, BACKWARD_DATA, BACKWARD_FILTER };

/* One run of op (of kind) at shape s of base, against the reference: the relative L1 error, or
 * NaN when a call failed. */
static double check_run(wino_conv2d *op, enum kind kind, const struct wino_conv2d_desc *base,
                        const float *w, struct shape s)
{
    struct wino_conv2d_desc d = *base;
    d.n = s.n, d.h = s.h, d.w = s.w;
    size_t xe, we, ye, bytes;
    counts_of(&d, &xe, &we, &ye);
    void *ws;
    if (!reshape(op, s, &ws, &bytes))
        return NAN;
    double err = NAN;
    if (kind == FORWARD) {
        float *x = random_floats(xe), *y = nan_floats(ye);
        double *ref = test_alloc64(sizeof(double) * ye);
        wino_ref_conv2d_fwd(&d, x, w, ref);
        if (!wino_conv2d_run(op, x, y, ws, bytes))
            err = wino_rel_l1_f32(y, ref, ye);
        free(x), free(y), free(ref);
    } else if (kind == BACKWARD_DATA) {
        float *dy = random_floats(ye), *dx = nan_floats(xe);
        double *ref = test_alloc64(sizeof(double) * xe);
        wino_ref_conv2d_bwd_data(&d, dy, w, ref);
        if (!wino_conv2d_run(op, dy, dx, ws, bytes))
            err = wino_rel_l1_f32(dx, ref, xe);
        free(dy), free(dx), free(ref);
    } else {
        float *x = random_floats(xe), *dy = random_floats(ye), *dw = nan_floats(we);
        double *ref = test_alloc64(sizeof(double) * we);
        wino_ref_conv2d_bwd_filter(&d, x, dy, ref);
        if (!wino_conv2d_backward_filter_run(op, x, dy, dw, ws, bytes))
            err = wino_rel_l1_f32(dw, ref, we);
        free(x), free(dy), free(dw), free(ref);
    }
    free(ws);
    return err;
}

static enum wino_status create(enum kind kind, const struct wino_conv2d_desc *d, const float *w,
                               const struct wino_conv2d_options *o, wino_conv2d **op)
{
    if (kind == FORWARD)
        return wino_conv2d_create(d, w, NULL, o, op);
    if (kind == BACKWARD_DATA)
        return wino_conv2d_backward_data_create(d, w, NULL, o, op);
    return wino_conv2d_backward_filter_create(d, NULL, o, op);
}

/* Creates one operator for base (sized, or with n = h = w = 0 when unsized) and runs it at the
 * three shapes; each error must stay within limit. */
static void check_case(const char *name, enum kind kind, struct wino_conv2d_desc base,
                       const struct wino_conv2d_options *o, double limit, int unsized)
{
    size_t xe, we, ye;
    counts_of(&base, &xe, &we, &ye);
    float *w = random_floats(we);
    struct wino_conv2d_desc d = base;
    if (unsized)
        d.n = d.h = d.w = 0;
    wino_conv2d *op = NULL;
    int ok = !create(kind, &d, w, o, &op);
    if (!ok)
        printf("  create: %s\n", wino_last_error());
    if (ok && unsized) { /* nothing runs before the first reshape */
        float *x = random_floats(xe), *y = nan_floats(xe > ye ? xe : ye), *dw = nan_floats(we);
        const enum wino_status st = kind == BACKWARD_FILTER
                                        ? wino_conv2d_backward_filter_run(op, x, y, dw, NULL, 0)
                                        : wino_conv2d_run(op, x, y, NULL, 0);
        ok = st == WINO_INVALID_ARGUMENT && isnan(y[0]) && isnan(dw[0]);
        if (!ok)
            printf("  a run before the first reshape gave status %d\n", (int)st);
        free(x), free(y), free(dw);
    }
    char what[200];
    double worst = 0.0;
    for (int i = 0; i < 3 && ok; i++) {
        const double err = check_run(op, kind, &base, w, shapes[i]);
        ok = err <= limit;
        worst = err > worst || isnan(err) ? err : worst;
    }
    /* sizes the layer cannot serve are refused, and the operator keeps its last shape */
    size_t kept = 0, bytes = 7, after = 0;
    ok = ok && !wino_conv2d_workspace_size(op, &kept) &&
         wino_conv2d_reshape(op, 0, 8, 8, &bytes) == WINO_INVALID_ARGUMENT &&
         wino_conv2d_reshape(op, 1, -1, 8, &bytes) == WINO_INVALID_ARGUMENT &&
         wino_conv2d_reshape(op, INT_MAX, INT_MAX / 2, INT_MAX / 2, &bytes) ==
             WINO_INVALID_ARGUMENT &&
         bytes == 7 && !wino_conv2d_workspace_size(op, &after) && after == kept;
    snprintf(what, sizeof what, "%s%s: one operator serves %dx%dx%d, %dx%dx%d, %dx%dx%d "
             "(worst relative L1 %.2e <= %.0e); bad sizes refused, shape kept", name,
             unsized ? " (created without sizes)" : "", shapes[0].n, shapes[0].h, shapes[0].w,
             shapes[1].n, shapes[1].h, shapes[1].w, shapes[2].n, shapes[2].h, shapes[2].w, worst,
             limit);
    test_check(&counts, ok, what);
    wino_conv2d_destroy(op);
    free(w);
}

/* INT8: a reshaped operator computes the same bytes as one created for that size. */
static void check_int8(int unsized)
{
    struct wino_conv2d_desc base = wino_conv2d_desc_make(1, 8, 9, 11, 6, 3, 3, 1, 1);
    base.layout = WINO_LAYOUT_NHWC, base.dtype = WINO_DTYPE_S8;
    const struct wino_int8_params params = {.x_scale = 0.02f, .alpha_ta = 6.0f,
                                            .alpha_tw = 3.0f, .y_scale = 0.05f,
                                            .y_dtype = WINO_DTYPE_S8};
    size_t xe, we, ye;
    counts_of(&base, &xe, &we, &ye);
    float *w = random_floats(we);
    struct wino_conv2d_desc d = base;
    if (unsized)
        d.n = d.h = d.w = 0;
    wino_conv2d *op = NULL;
    int ok = !wino_conv2d_create_int8(&d, w, &params, NULL, NULL, &op);
    for (int i = 0; i < 3 && ok; i++) {
        struct wino_conv2d_desc e = base;
        e.n = shapes[i].n, e.h = shapes[i].h, e.w = shapes[i].w;
        size_t xs, ws_, ys, bytes, fresh_bytes = 0;
        counts_of(&e, &xs, &ws_, &ys);
        int8_t *x = test_alloc64(xs), *y = test_alloc64(ys), *want = test_alloc64(ys);
        for (size_t j = 0; j < xs; j++)
            x[j] = (int8_t)(test_rng_next(&rng) & 0xff);
        memset(y, 0x7f, ys);
        memset(want, 0x80, ys);
        void *ws = NULL, *fresh_ws = NULL;
        wino_conv2d *fresh = NULL;
        ok = reshape(op, shapes[i], &ws, &bytes) && !wino_conv2d_run(op, x, y, ws, bytes) &&
             !wino_conv2d_create_int8(&e, w, &params, NULL, NULL, &fresh) &&
             !wino_conv2d_workspace_size(fresh, &fresh_bytes) &&
             (fresh_ws = test_alloc64(fresh_bytes ? fresh_bytes : 64)) &&
             !wino_conv2d_run(fresh, x, want, fresh_ws, fresh_bytes) && !memcmp(y, want, ys);
        wino_conv2d_destroy(fresh);
        free(x), free(y), free(want), free(ws), free(fresh_ws);
    }
    char what[160];
    snprintf(what, sizeof what, "INT8 F(4x4, 3x3)%s: a reshaped operator gives the bytes of one "
             "created for each of the three sizes", unsized ? " (created without sizes)" : "");
    test_check(&counts, ok, what);
    wino_conv2d_destroy(op);
    free(w);
}

int main(void)
{
    rng.s = test_seed();
    const struct wino_conv2d_desc nchw = wino_conv2d_desc_make(2, 5, 9, 11, 7, 3, 3, 1, 1);
    struct wino_conv2d_desc nhwc = nchw;
    nhwc.layout = WINO_LAYOUT_NHWC;
    struct wino_conv2d_desc strided = nchw;
    strided.stride_h = 2, strided.dilation_w = 2, strided.pad_w = 2;
    const struct wino_conv2d_options direct = {.algo = WINO_ALGO_DIRECT},
                                     fused4 = {.algo = WINO_ALGO_WINOGRAD, .tile_m = 4,
                                               .variant = WINO_VARIANT_FUSED},
                                     plain2 = {.algo = WINO_ALGO_WINOGRAD, .tile_m = 2,
                                               .variant = WINO_VARIANT_NON_FUSED},
                                     scalar9 = {.algo = WINO_ALGO_WINOGRAD, .tile_m = 9},
                                     winograd = {.algo = WINO_ALGO_WINOGRAD};
    for (int unsized = 0; unsized <= 1; unsized++) {
        check_case("forward, direct, strided NCHW", FORWARD, strided, &direct, 1e-6, unsized);
        check_case("forward, Winograd F(4x4) fused, NHWC", FORWARD, nhwc, &fused4, 1e-5,
                   unsized);
        check_case("forward, Winograd F(2x2) non-fused, NCHW", FORWARD, nchw, &plain2, 1e-6,
                   unsized);
        check_case("forward, Winograd F(9x9) scalar path, NCHW", FORWARD, nchw, &scalar9, 1e-3,
                   unsized);
        check_case("backward-data, Winograd, NHWC", BACKWARD_DATA, nhwc, &winograd, 1e-5,
                   unsized);
        check_case("backward-data, direct, strided NCHW", BACKWARD_DATA, strided, &direct, 1e-6,
                   unsized);
        check_case("backward-filter, WinRS, NCHW", BACKWARD_FILTER, nchw, &winograd, 1e-5,
                   unsized);
        check_case("backward-filter, direct, strided NHWC", BACKWARD_FILTER, strided, &direct,
                   1e-6, unsized);
        check_int8(unsized);
    }
    test_check(&counts, wino_conv2d_reshape(NULL, 1, 8, 8, NULL) == WINO_INVALID_ARGUMENT,
               "reshape of a NULL operator is refused");
    return test_report(&counts);
}
