/* Random Winograd-able layers for the backends' convolution tests (CUDA, OpenCL): the awkward
 * shapes of a tile F(m x m, r x r) drawn from a seeded generator. C and C++. */
#ifndef WINO_TESTS_WINOGRAD_SHAPES_H
#define WINO_TESTS_WINOGRAD_SHAPES_H

#include <string.h>

#include "test_util.h"
#include "wino.h"

static const int channel_picks[4] = {1, 3, 17, 61};

static inline int random_channels(struct test_rng *rng)
{
    const int i = (int)(test_rng_next(rng) % 6);
    return i < 4 ? channel_picks[i] : 1 + (int)(test_rng_next(rng) % 24);
}

/* A random Winograd-able descriptor for F(m x m, r x r). kind 0: a 1x1 image with padding r - 1;
 * 1: one input channel; 2: P and Q one more than a multiple of m; else a free draw. */
static inline struct wino_conv2d_desc random_desc(struct test_rng *rng, int m, int r, int kind,
                                                  enum wino_dtype dtype,
                                                  enum wino_layout layout)
{
    struct wino_conv2d_desc d;
    memset(&d, 0, sizeof d);
    d.c = kind == 1 ? 1 : random_channels(rng);
    d.k = random_channels(rng);
    d.n = d.c * d.k > 600 ? 1 : 1 + (int)(test_rng_next(rng) % 3);
    d.r = d.s = r;
    d.pad_h = (int)(test_rng_next(rng) % (unsigned)r);
    d.pad_w = (int)(test_rng_next(rng) % (unsigned)r);
    const int lo_h = r - 2 * d.pad_h > 1 ? r - 2 * d.pad_h : 1;
    const int lo_w = r - 2 * d.pad_w > 1 ? r - 2 * d.pad_w : 1;
    d.h = lo_h + (int)(test_rng_next(rng) % (unsigned)(2 * m + 8));
    d.w = lo_w + (int)(test_rng_next(rng) % (unsigned)(2 * m + 8));
    if (kind == 0) {
        d.h = d.w = 1;
        d.pad_h = d.pad_w = r - 1;
    } else if (kind == 2) {
        const int p = m * (1 + (int)(test_rng_next(rng) % 3)) + 1;
        const int q = m * (1 + (int)(test_rng_next(rng) % 3)) + 1;
        if (p + r - 1 - 2 * d.pad_h < 1)
            d.pad_h = 0;
        if (q + r - 1 - 2 * d.pad_w < 1)
            d.pad_w = 0;
        d.h = p + r - 1 - 2 * d.pad_h;
        d.w = q + r - 1 - 2 * d.pad_w;
    }
    d.stride_h = d.stride_w = d.dilation_h = d.dilation_w = 1;
    d.layout = layout;
    d.dtype = dtype;
    return d;
}

#endif
