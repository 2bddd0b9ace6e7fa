/* One convolution through the public API checked against the FP64 reference, shared by the
 * convolution tests: random inputs and weights in (-1, 1), output poisoned with NaN first. */
#ifndef WINO_TESTS_CONV_CHECK_H
#define WINO_TESTS_CONV_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/half.h"
#include "ref/conv_ref.h"
#include "ref/error_metrics.h"
#include "test_util.h"
#include "wino.h"

/* One case's data: random x and w in (-1, 1), y poisoned with NaN, the FP64 reference with the
 * epilogue applied, and the options with the case's bias and ReLU. */
struct conv_case_data {
    struct wino_conv2d_options o;
    float *x, *w, *y, *bias;
    double *ref;
    size_t xe, we, ye; /* elements of x, w, y */
};

/* Fills cd for desc (valid, with output). With epilogue set, a random bias and a random ReLU
 * choice are added to the options (and to the reference). FP16: x and w are rounded to FP16
 * values, the ones the device sees, before the reference. */
static inline void conv_case_make(const struct wino_conv2d_desc *d,
                                  const struct wino_conv2d_options *options,
                                  struct test_rng *rng, int epilogue, struct conv_case_data *cd)
{
    cd->o = *options;
    cd->bias = (float *)malloc(sizeof(float) * (size_t)d->k);
    for (int k = 0; k < d->k; k++)
        cd->bias[k] = (float)test_rng_sym(rng);
    if (epilogue) {
        cd->o.bias = cd->bias;
        cd->o.relu = (int)(test_rng_next(rng) & 1);
    }
    int p = 0, q = 0;
    wino_conv2d_output_size(d, &p, &q);
    cd->xe = (size_t)d->n * d->c * d->h * d->w;
    cd->we = (size_t)d->k * d->c * d->r * d->s;
    cd->ye = (size_t)d->n * d->k * p * q;
    cd->x = (float *)malloc(cd->xe * 4);
    cd->w = (float *)malloc(cd->we * 4);
    cd->y = (float *)malloc(cd->ye * 4);
    cd->ref = (double *)malloc(cd->ye * 8);
    for (size_t i = 0; i < cd->xe; i++)
        cd->x[i] = (float)test_rng_sym(rng);
    for (size_t i = 0; i < cd->we; i++)
        cd->w[i] = (float)test_rng_sym(rng);
    if (d->dtype == WINO_DTYPE_F16) {
        wino_round_to_half(cd->x, cd->xe);
        wino_round_to_half(cd->w, cd->we);
    }
    for (size_t i = 0; i < cd->ye; i++)
        cd->y[i] = NAN;
    wino_ref_conv2d_fwd(d, cd->x, cd->w, cd->ref);
    for (size_t i = 0; i < cd->ye && (cd->o.bias || cd->o.relu); i++) {
        const size_t k = d->layout == WINO_LAYOUT_NHWC ? i % (size_t)d->k
                                                       : i / ((size_t)p * q) % (size_t)d->k;
        cd->ref[i] += cd->o.bias ? cd->o.bias[k] : 0.0;
        if (cd->o.relu && cd->ref[i] < 0.0)
            cd->ref[i] = 0.0;
    }
}

static inline void conv_case_free(struct conv_case_data *cd)
{
    free(cd->x), free(cd->w), free(cd->y), free(cd->ref), free(cd->bias);
}

/* Relative L1 error of wino's output for desc (valid, with output) against the reference, or
 * NaN when a call failed. epilogue as conv_case_make's. *variant (optional) receives the
 * variant used. */
static inline double conv_check(const struct wino_conv2d_desc *d,
                                const struct wino_conv2d_options *options,
                                const struct wino_context *ctx, struct test_rng *rng,
                                int epilogue, enum wino_variant *variant)
{
    struct conv_case_data cd;
    conv_case_make(d, options, rng, epilogue, &cd);
    wino_conv2d *op = NULL;
    size_t bytes = 0;
    void *ws = NULL;
    int ok = !wino_conv2d_create(d, cd.w, ctx, &cd.o, &op) &&
             !wino_conv2d_workspace_size(op, &bytes) &&
             !posix_memalign(&ws, 64, bytes ? bytes : 64) &&
             !wino_conv2d_run(op, cd.x, cd.y, ws, bytes);
    if (ok && variant)
        ok = !wino_conv2d_variant(op, variant);
    const double err = ok ? wino_rel_l1_f32(cd.y, cd.ref, cd.ye) : NAN;
    free(ws);
    wino_conv2d_destroy(op);
    conv_case_free(&cd);
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
