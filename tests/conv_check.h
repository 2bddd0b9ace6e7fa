/* One convolution through the public API checked against the FP64 reference, shared by the
 * convolution tests: random inputs and weights in (-1, 1), output poisoned with NaN first. */
#ifndef WINO_TESTS_CONV_CHECK_H
#define WINO_TESTS_CONV_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ref/conv_ref.h"
#include "ref/error_metrics.h"
#include "test_util.h"
#include "wino.h"

/* Relative L1 error of wino's output for desc (valid, with output) against the reference, or
 * NaN when a call failed. With epilogue set, a random bias and a random ReLU choice are added to
 * the options (and to the reference). *variant (optional) receives the variant used. */
static inline double conv_check(const struct wino_conv2d_desc *d,
                                const struct wino_conv2d_options *options,
                                const struct wino_context *ctx, struct test_rng *rng,
                                int epilogue, enum wino_variant *variant)
{
    struct wino_conv2d_options o = *options;
    float *bias = malloc(sizeof(float) * (size_t)d->k);
    for (int k = 0; k < d->k; k++)
        bias[k] = (float)test_rng_sym(rng);
    if (epilogue) {
        o.bias = bias;
        o.relu = (int)(test_rng_next(rng) & 1);
    }
    int p = 0, q = 0;
    wino_conv2d_output_size(d, &p, &q);
    const size_t xe = (size_t)d->n * d->c * d->h * d->w, we = (size_t)d->k * d->c * d->r * d->s,
                 ye = (size_t)d->n * d->k * p * q;
    float *x = malloc(xe * 4), *w = malloc(we * 4), *y = malloc(ye * 4);
    double *ref = malloc(ye * 8);
    for (size_t i = 0; i < xe; i++)
        x[i] = (float)test_rng_sym(rng);
    for (size_t i = 0; i < we; i++)
        w[i] = (float)test_rng_sym(rng);
    for (size_t i = 0; i < ye; i++)
        y[i] = NAN;
    wino_ref_conv2d_fwd(d, x, w, ref);
    for (size_t i = 0; i < ye && (o.bias || o.relu); i++) {
        const size_t k = d->layout == WINO_LAYOUT_NHWC ? i % (size_t)d->k
                                                       : i / ((size_t)p * q) % (size_t)d->k;
        ref[i] += o.bias ? o.bias[k] : 0.0;
        if (o.relu && ref[i] < 0.0)
            ref[i] = 0.0;
    }
    wino_conv2d *op = NULL;
    size_t bytes = 0;
    void *ws = NULL;
    int ok = !wino_conv2d_create(d, w, ctx, &o, &op) && !wino_conv2d_workspace_size(op, &bytes) &&
             !posix_memalign(&ws, 64, bytes ? bytes : 64) && !wino_conv2d_run(op, x, y, ws, bytes);
    if (ok && variant)
        ok = !wino_conv2d_variant(op, variant);
    const double err = ok ? wino_rel_l1_f32(y, ref, ye) : NAN;
    free(ws);
    wino_conv2d_destroy(op);
    free(x), free(w), free(y), free(ref), free(bias);
    return err;
}

/* Prints a failing case: its descriptor, error and wino's last error text. */
static inline void conv_check_report(int case_id, const char *what,
                                     const struct wino_conv2d_desc *d, double err)
{
    printf("  case %d %s: %dx%dx%dx%d k%d %dx%d pad %d,%d stride %d,%d dil %d,%d %s: err %.3e "
           "(%s)\n", case_id, what, d->n, d->c, d->h, d->w, d->k, d->r, d->s, d->pad_h, d->pad_w,
           d->stride_h, d->stride_w, d->dilation_h, d->dilation_w,
           d->layout == WINO_LAYOUT_NHWC ? "NHWC" : "NCHW", err, wino_last_error());
}

#endif
