/* Helpers shared by the backward-convolution tests: random tensors, random valid descriptors and
 * poisoned buffers (the error measures, MARE and relative L1, are in src/ref/error_metrics.h).
 * Tests that use it define _POSIX_C_SOURCE 200112L first. */
#ifndef WINO_TESTS_BACKWARD_CHECK_H
#define WINO_TESTS_BACKWARD_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ref/conv_ref.h"
#include "ref/error_metrics.h"
#include "test_util.h"
#include "wino.h"

/* Uniform in [0, 1) (unit) or in (-1, 1). */
static inline void bwd_fill(float *v, size_t n, struct test_rng *rng, int unit)
{
    for (size_t i = 0; i < n; i++) {
        const double s = test_rng_sym(rng);
        v[i] = (float)(unit ? 0.5 * (s + 1.0) : s);
    }
}

/* A 64-byte aligned buffer of bytes (at least 64) filled with NaN. */
static inline void *bwd_poisoned(size_t bytes)
{
    if (bytes < 64)
        bytes = 64;
    float *p = test_alloc64(bytes);
    for (size_t i = 0; i < bytes / sizeof(float); i++)
        p[i] = NAN;
    return p;
}

static inline int bwd_pick(struct test_rng *rng, int lo, int hi)
{
    return lo + (int)(test_rng_next(rng) % (uint64_t)(hi - lo + 1));
}

/* A random valid descriptor: sizes up to the given bounds, padding up to the filter size (so
 * sometimes larger than the filter), stride and dilation up to max_step (1: both 1). */
static inline struct wino_conv2d_desc bwd_random_desc(struct test_rng *rng, int max_nck,
                                                      int max_hw, int max_rs, int max_step)
{
    for (;;) {
        struct wino_conv2d_desc d = wino_conv2d_desc_make(
            bwd_pick(rng, 1, 3), bwd_pick(rng, 1, max_nck), bwd_pick(rng, 1, max_hw),
            bwd_pick(rng, 1, max_hw), bwd_pick(rng, 1, max_nck), bwd_pick(rng, 1, max_rs),
            bwd_pick(rng, 1, max_rs), 0, 0);
        d.pad_h = bwd_pick(rng, 0, d.r);
        d.pad_w = bwd_pick(rng, 0, d.s);
        d.stride_h = bwd_pick(rng, 1, max_step);
        d.stride_w = bwd_pick(rng, 1, max_step);
        d.dilation_h = bwd_pick(rng, 1, max_step);
        d.dilation_w = bwd_pick(rng, 1, max_step);
        d.layout = (test_rng_next(rng) & 1) ? WINO_LAYOUT_NHWC : WINO_LAYOUT_NCHW;
        if (!wino_conv2d_output_size(&d, NULL, NULL))
            return d;
    }
}

/* Checks a status against the expected one, printing both and wino's reason. */
static inline void bwd_expect(struct test_counts *tc, enum wino_status got, enum wino_status want,
                              const char *what)
{
    char line[160];
    snprintf(line, sizeof line, "%s -> %s (%s)", what, wino_status_string(got),
             wino_last_error());
    test_check(tc, got == want, line);
}

/* Prints one descriptor on a line of its own after a label. */
static inline void bwd_print_desc(const char *label, const struct wino_conv2d_desc *d)
{
    printf("  %s: n%d c%d %dx%d k%d %dx%d pad %d,%d stride %d,%d dil %d,%d %s\n", label, d->n,
           d->c, d->h, d->w, d->k, d->r, d->s, d->pad_h, d->pad_w, d->stride_h, d->stride_w,
           d->dilation_h, d->dilation_w, d->layout == WINO_LAYOUT_NHWC ? "NHWC" : "NCHW");
}

#endif
