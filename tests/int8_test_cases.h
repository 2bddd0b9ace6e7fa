/* Random INT8 layers shared by the CPU and GPU INT8 tests. */
#ifndef WINO_TESTS_INT8_TEST_CASES_H
#define WINO_TESTS_INT8_TEST_CASES_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/int8_tile.h"
#include "test_util.h"
#include "wino.h"

/* An INT8 layer's descriptor: 3 x 3, NHWC, x of type x_type. */
static struct wino_conv2d_desc int8_desc(int n, int c, int h, int w, int k, int pad,
                                         enum wino_dtype x_type)
{
    struct wino_conv2d_desc d = wino_conv2d_desc_make(n, c, h, w, k, 3, 3, pad, pad);
    d.layout = WINO_LAYOUT_NHWC;
    d.dtype = x_type;
    return d;
}

/* Random layer parameters that clip some values and spread the outputs. */
static struct wino_int8_params random_params(struct test_rng *rng, const struct wino_int8_tile *t,
                                             int C, int x_signed, int relu, float *tw_k, int K)
{
    struct wino_int8_params q;
    memset(&q, 0, sizeof q);
    q.x_scale = 0.01f + 0.02f * (float)fabs(test_rng_sym(rng));
    const double vmax = (double)t->beta_b * t->beta_b * (x_signed ? 128 : 255) * q.x_scale;
    q.alpha_ta = (float)(vmax * (0.02 + 0.3 * fabs(test_rng_sym(rng))));
    q.alpha_tw = (float)(0.2 + 0.8 * fabs(test_rng_sym(rng)));
    if (test_rng_next(rng) % 3 == 0) {
        for (int k = 0; k < K; k++)
            tw_k[k] = (float)(0.2 + 0.8 * fabs(test_rng_sym(rng)));
        q.alpha_tw_k = tw_k;
    }
    /* |y| is typically sqrt(9 C) E|x| E|w| with E|x| ~ 64 s_x, E|w| ~ 0.15: about 40 steps */
    q.y_scale = (float)(sqrt(9.0 * C) * 64.0 * q.x_scale * 0.15 / 40.0);
    q.y_dtype = relu && test_rng_next(rng) % 2 ? WINO_DTYPE_U8 : WINO_DTYPE_S8;
    q.clip_c = test_rng_next(rng) % 3 == 0 ? q.y_scale * (float)(20 + test_rng_next(rng) % 100)
                                           : 0.0f;
    return q;
}

/* Random inputs (any byte), weights (float in (-0.3, 0.3), or int8 with q->w_scale set) and K
 * biases of a few dozen output steps. */
static void random_layer_data(struct test_rng *rng, uint8_t *x, size_t xn, void *w, size_t wn,
                              int int8_weights, struct wino_int8_params *q, float *bias, int K)
{
    for (size_t i = 0; i < xn; i++)
        x[i] = (uint8_t)test_rng_next(rng);
    for (size_t i = 0; i < wn; i++)
        if (int8_weights)
            ((int8_t *)w)[i] = (int8_t)((int)(test_rng_next(rng) % 255) - 127);
        else
            ((float *)w)[i] = (float)(0.3 * test_rng_sym(rng));
    if (int8_weights)
        q->w_scale = 0.3f / 127.0f;
    for (int k = 0; k < K; k++)
        bias[k] = (float)(q->y_scale * 30.0 * test_rng_sym(rng));
}

#endif
