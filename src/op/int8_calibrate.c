/* wino_int8_calibrate: the clipping factors and scales of an INT8 Winograd layer from sample
 * inputs (Mori et al. section 3.3: the 99.9th percentile of the transformed values; or the
 * clip with the least squared quantization error). */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/conv_desc.h"
#include "base/error.h"
#include "op/int8_layer.h"
#include "base/tile_matrices.h"

/* Magnitudes collected for one clipping factor. */
struct magnitudes {
    float *v;
    size_t n;
};

static int by_value(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Squared error of quantizing the magnitudes with clip a and `levels` steps on [0, a]. */
static double clip_error(const struct magnitudes *m, double a, int levels)
{
    const double step = a / levels;
    double e = 0.0;
    for (size_t i = 0; i < m->n; i++) {
        const double v = m->v[i], q = rint((v < a ? v : a) / step) * step;
        e += (v - q) * (v - q);
    }
    return e;
}

/* The clipping factor of a set of magnitudes (sorted in place); 0 when all are zero. */
static double choose_clip(struct magnitudes *m, enum wino_calibration method, double percentile,
                          int levels)
{
    qsort(m->v, m->n, sizeof *m->v, by_value);
    const double vmax = m->n ? m->v[m->n - 1] : 0.0;
    if (vmax <= 0.0)
        return 0.0;
    if (method == WINO_CALIBRATE_PERCENTILE) {
        size_t rank = (size_t)ceil(percentile / 100.0 * (double)m->n);
        rank = rank < 1 ? 1 : rank > m->n ? m->n : rank;
        return m->v[rank - 1] > 0.0f ? m->v[rank - 1] : vmax;
    }
    double best = vmax, best_err = clip_error(m, vmax, levels);
    for (int i = 1; i < 200; i++) { /* a grid of 0.5% steps of the largest value */
        const double a = vmax * i / 200.0, e = clip_error(m, a, levels);
        if (e < best_err)
            best = a, best_err = e;
    }
    return best;
}

static enum wino_status check_args(const struct wino_conv2d_desc *d, int tile_m,
                                   const float *samples, const float *weights, const float *bias,
                                   float x_scale, enum wino_calibration method,
                                   double percentile, const struct wino_int8_params *params)
{
    struct wino_conv_sizes sz;
    if (!d || !samples || !weights || !params)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "wino_int8_calibrate: desc, samples, weights and params must not be NULL");
    enum wino_status st = wino_conv_desc_check(d, &sz);
    if (st)
        return st;
    if (d->dtype != WINO_DTYPE_F32 || d->layout != WINO_LAYOUT_NHWC)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "wino_int8_calibrate: samples are float NHWC (desc->dtype F32, NHWC)");
    if (d->r != 3 || d->s != 3 || d->stride_h != 1 || d->stride_w != 1 || d->dilation_h != 1 ||
        d->dilation_w != 1)
        return wino_fail(WINO_UNSUPPORTED,
                         "INT8 Winograd needs a 3x3 filter, stride 1 and dilation 1");
    if (!wino_int8_exact_tile(tile_m))
        return wino_fail(WINO_UNSUPPORTED, "INT8 Winograd runs F(2,3), F(4,3), F(6,3), not m = %d",
                         tile_m);
    if (!isfinite(x_scale) || x_scale < 0.0f)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "wino_int8_calibrate: x_scale must be 0 (derive it) or positive");
    if (method != WINO_CALIBRATE_PERCENTILE && method != WINO_CALIBRATE_MSE)
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_int8_calibrate: unknown method %d",
                         (int)method);
    if (method == WINO_CALIBRATE_PERCENTILE && !(percentile > 0.0 && percentile <= 100.0))
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "wino_int8_calibrate: percentile %g outside (0, 100]", percentile);
    st = wino_int8_check_finite("wino_int8_calibrate: samples", samples, sz.x_elems);
    if (!st)
        st = wino_int8_check_finite("wino_int8_calibrate: weights", weights, sz.w_elems);
    if (!st && bias)
        st = wino_int8_check_finite("wino_int8_calibrate: bias", bias, (size_t)d->k);
    return st;
}

/* |s_x B'^T xq B'| of every tile, position and channel of the quantized samples. */
static void transformed_inputs(const struct wino_conv2d_desc *d, const struct wino_int8_tile *t,
                               const float *samples, float s_x, int nonneg, struct magnitudes *out)
{
    const int a = t->alpha, m = t->m, P = d->h + 2 * d->pad_h - 2, Q = d->w + 2 * d->pad_w - 2;
    const float lo = nonneg ? 0.0f : -128.0f, hi = nonneg ? 255.0f : 127.0f;
    out->n = 0;
    for (int n = 0; n < d->n; n++)
        for (int p0 = 0; p0 < P; p0 += m)
            for (int q0 = 0; q0 < Q; q0 += m)
                for (int c = 0; c < d->c; c++) {
                    long long win[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA],
                        v[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA];
                    for (int i = 0; i < a; i++)
                        for (int j = 0; j < a; j++) {
                            const int h = p0 - d->pad_h + i, w = q0 - d->pad_w + j;
                            float q = 0.0f;
                            if (h >= 0 && h < d->h && w >= 0 && w < d->w) {
                                q = rintf(samples[(((size_t)n * d->h + h) * d->w + w) * d->c + c] /
                                          s_x);
                                q = q < lo ? lo : q > hi ? hi : q;
                            }
                            win[i][j] = (long long)q;
                        }
                    wino_int8_input_transform(t, win, v);
                    for (int i = 0; i < a; i++)
                        for (int j = 0; j < a; j++)
                            out->v[out->n++] = (float)fabs(s_x * (double)v[i][j]);
                }
}

/* |G' g G'^T| of every (k, c) and position. */
static void transformed_weights(const struct wino_conv2d_desc *d, const struct wino_int8_tile *t,
                                const float *w, struct magnitudes *out)
{
    const int a = t->alpha, C = d->c;
    out->n = 0;
    for (int k = 0; k < d->k; k++)
        for (int c = 0; c < C; c++) {
            double g[3][3], u[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    g[i][j] = w[(((size_t)k * 3 + i) * 3 + j) * C + c];
            wino_int8_filter_transform(t, g, u);
            for (int p = 0; p < a; p++)
                for (int r = 0; r < a; r++)
                    out->v[out->n++] = (float)fabs(u[p][r]);
        }
}

/* The layer's FP32 output with its bias and ReLU, by wino's own direct convolution. */
static enum wino_status float_output(const struct wino_conv2d_desc *d, const float *samples,
                                     const float *weights, const float *bias, int relu, float *y)
{
    struct wino_conv2d_desc fd = *d;
    fd.dtype = WINO_DTYPE_F32;
    const struct wino_conv2d_options o = {.algo = WINO_ALGO_DIRECT, .bias = bias, .relu = relu};
    wino_conv2d *op = NULL;
    size_t bytes = 0;
    void *workspace = NULL;
    enum wino_status st = wino_conv2d_create(&fd, weights, NULL, &o, &op);
    if (!st)
        st = wino_conv2d_workspace_size(op, &bytes);
    if (!st && bytes && posix_memalign(&workspace, 64, bytes))
        st = wino_fail(WINO_OUT_OF_MEMORY, "wino_int8_calibrate: out of memory");
    if (!st)
        st = wino_conv2d_run(op, samples, y, workspace, bytes);
    free(workspace);
    wino_conv2d_destroy(op);
    return st;
}

enum wino_status wino_int8_calibrate(const struct wino_conv2d_desc *d, int tile_m,
                                     const float *samples, const float *weights,
                                     const float *bias, int relu, float x_scale,
                                     enum wino_calibration method, double percentile,
                                     struct wino_int8_params *params)
{
    wino_ok();
    tile_m = tile_m ? tile_m : 4;
    enum wino_status st =
        check_args(d, tile_m, samples, weights, bias, x_scale, method, percentile, params);
    if (st)
        return st;
    struct wino_int8_tile t;
    if ((st = wino_int8_tile_make(tile_m, &t)))
        return st;
    struct wino_conv_sizes sz;
    wino_conv_desc_check(d, &sz);
    float xmax = 0.0f;
    int nonneg = 1;
    for (size_t i = 0; i < sz.x_elems; i++) {
        xmax = fabsf(samples[i]) > xmax ? fabsf(samples[i]) : xmax;
        nonneg &= samples[i] >= 0.0f;
    }
    if (!(xmax > 0.0f))
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_int8_calibrate: the samples are all zero");
    const float s_x = x_scale > 0.0f ? x_scale : xmax / (nonneg ? 255.0f : 127.0f);
    const size_t tiles = (size_t)d->n * ((sz.p - 1) / tile_m + 1) *
                         ((sz.q - 1) / tile_m + 1),
                 aa = (size_t)t.alpha * t.alpha;
    size_t nv, nw, most;
    if (wino_mul_size(tiles * aa, (size_t)d->c, &nv) ||
        wino_mul_size(aa * (size_t)d->c, (size_t)d->k, &nw))
        return wino_fail(WINO_INVALID_ARGUMENT, "wino_int8_calibrate: layer too large");
    most = nv > nw ? nv : nw;
    most = most > sz.y_elems ? most : sz.y_elems;
    struct magnitudes mag = {malloc(sizeof(float) * most), 0};
    float *y = malloc(sizeof(float) * sz.y_elems);
    if (!mag.v || !y) {
        free(mag.v);
        free(y);
        return wino_fail(WINO_OUT_OF_MEMORY, "wino_int8_calibrate: out of memory");
    }
    transformed_inputs(d, &t, samples, s_x, nonneg, &mag);
    const double alpha_ta = choose_clip(&mag, method, percentile, 127);
    transformed_weights(d, &t, weights, &mag);
    const double alpha_tw = choose_clip(&mag, method, percentile, 127);
    st = float_output(d, samples, weights, bias, relu, y);
    if (st) {
        free(mag.v);
        free(y);
        return st;
    }
    mag.n = 0;
    for (size_t i = 0; i < sz.y_elems; i++)
        mag.v[mag.n++] = fabsf(y[i]);
    const double c = choose_clip(&mag, method, percentile, relu ? 255 : 127);
    free(mag.v);
    free(y);
    if (!(alpha_ta > 0.0) || !(alpha_tw > 0.0) || !(c > 0.0))
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "wino_int8_calibrate: a clipping factor came out zero (all-zero "
                         "weights or outputs?)");
    struct wino_int8_params p = {0};
    p.x_scale = s_x;
    p.alpha_ta = (float)(alpha_ta > s_x ? alpha_ta : s_x);
    p.alpha_tw = (float)alpha_tw;
    p.clip_c = (float)c;
    p.y_scale = (float)(c / (relu ? 255.0 : 127.0));
    p.y_dtype = relu ? WINO_DTYPE_U8 : WINO_DTYPE_S8;
    if (!isfinite(p.alpha_ta) || !isfinite(p.alpha_tw) || !isfinite(p.clip_c) ||
        !(p.y_scale > 0.0f))
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "wino_int8_calibrate: a clipping factor or scale falls outside the "
                         "float range (alpha_ta %g, alpha_tw %g, c %g): samples or weights too "
                         "large or too small",
                         alpha_ta, alpha_tw, c);
    *params = p;
    return WINO_SUCCESS;
}
