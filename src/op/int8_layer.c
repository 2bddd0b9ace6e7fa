#include "op/int8_layer.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/conv_desc.h"
#include "base/error.h"
#include "base/tile_matrices.h"

static int positive_finite(double v)
{
    return isfinite(v) && v > 0.0;
}

/* The arguments, shape and types every INT8 layer takes (what names the algorithm in
 * messages). */
static enum wino_status check_types(const struct wino_conv2d_desc *d, const void *weights,
                                    int relu, const struct wino_int8_params *q, const char *what)
{
    if (!d || !q || !weights)
        return wino_fail(WINO_INVALID_ARGUMENT, "%s: desc, params and weights must not be NULL",
                         what);
    struct wino_conv_sizes sz;
    enum wino_status st = wino_conv_desc_check(d, &sz);
    if (st)
        return st;
    if (d->dtype != WINO_DTYPE_S8 && d->dtype != WINO_DTYPE_U8)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "%s: desc->dtype must be WINO_DTYPE_S8 or WINO_DTYPE_U8", what);
    if (q->y_dtype != WINO_DTYPE_S8 && q->y_dtype != WINO_DTYPE_U8)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "%s: params->y_dtype must be WINO_DTYPE_S8 or WINO_DTYPE_U8", what);
    if (q->y_dtype == WINO_DTYPE_U8 && !relu)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "%s: a uint8 output needs relu (negative values have no code)", what);
    if (d->layout != WINO_LAYOUT_NHWC)
        return wino_fail(WINO_UNSUPPORTED, "%s runs NHWC tensors only", what);
    return WINO_SUCCESS;
}

int wino_int8_winograd_shape(const struct wino_conv2d_desc *d)
{
    return d->r == 3 && d->s == 3 && d->stride_h == 1 && d->stride_w == 1 && d->dilation_h == 1 &&
           d->dilation_w == 1;
}

/* The layer's shape and types. */
static enum wino_status check_desc(const struct wino_conv2d_desc *d, const void *weights,
                                   int tile_m, int relu, const struct wino_int8_params *q)
{
    enum wino_status st = check_types(d, weights, relu, q, "INT8 Winograd");
    if (st)
        return st;
    if (!wino_int8_winograd_shape(d))
        return wino_fail(WINO_UNSUPPORTED,
                         "INT8 Winograd needs a 3x3 filter, stride 1 and dilation 1 (got %dx%d, "
                         "stride %dx%d, dilation %dx%d)",
                         d->r, d->s, d->stride_h, d->stride_w, d->dilation_h, d->dilation_w);
    if (!wino_int8_exact_tile(tile_m))
        return wino_fail(WINO_UNSUPPORTED, "INT8 Winograd runs F(2,3), F(4,3), F(6,3), not m = %d",
                         tile_m);
    if ((double)d->c * 127.0 * 127.0 > (double)INT32_MAX)
        return wino_fail(WINO_UNSUPPORTED,
                         "INT8 Winograd: C = %d could overflow the int32 GEMM sums (C <= 133143)",
                         d->c);
    return WINO_SUCCESS;
}

/* Scales and clips: positive, finite, and not below the step they quantize with (alpha_ta:
 * Winograd only). */
static enum wino_status check_params(const struct wino_conv2d_desc *d,
                                     const struct wino_int8_params *q, int winograd)
{
    const char *what = winograd ? "INT8 Winograd" : "INT8 direct";
    if (!positive_finite(q->x_scale) || !positive_finite(q->y_scale))
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "%s: x_scale and y_scale must be positive and finite (got %g, %g)",
                         what, (double)q->x_scale, (double)q->y_scale);
    if (!isfinite(q->w_scale) || q->w_scale < 0.0f)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "%s: w_scale must be 0 (float weights) or positive and finite", what);
    if (!isfinite(q->clip_c) || q->clip_c < 0.0f)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "%s: clip_c must be 0 (none) or positive and finite", what);
    for (int k = 0; k < (q->alpha_tw_k ? d->k : 1); k++) {
        const float a = q->alpha_tw_k ? q->alpha_tw_k[k] : q->alpha_tw;
        if (!positive_finite(a) || a / 127.0 < FLT_MIN)
            return wino_fail(WINO_INVALID_ARGUMENT,
                             "%s: alpha_tw%s = %g must be positive, finite and at least 127 * "
                             "FLT_MIN",
                             what, q->alpha_tw_k ? "_k[k]" : "", (double)a);
    }
    if (!winograd)
        return WINO_SUCCESS;
    if (!positive_finite(q->alpha_ta))
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "INT8 Winograd: alpha_ta must be positive and finite (got %g)",
                         (double)q->alpha_ta);
    if (q->alpha_ta < q->x_scale)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "INT8 Winograd: alpha_ta = %g is below the input step x_scale = %g",
                         (double)q->alpha_ta, (double)q->x_scale);
    return WINO_SUCCESS;
}

enum wino_status wino_int8_check_finite(const char *what, const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return wino_fail(WINO_INVALID_ARGUMENT, "%s[%zu] = %g is not finite", what, i,
                             (double)v[i]);
    return WINO_SUCCESS;
}

/* Uq = clamp(rint(G' g G'^T * 127 / alpha_tw[k]), +-127), g the real weights. */
static void quantize_weights(const struct wino_conv2d_desc *d, const void *weights,
                             const struct wino_int8_params *q, struct wino_int8_layer *L)
{
    const int a = L->tile.alpha, C = d->c, K = d->k;
    for (int k = 0; k < K; k++) {
        const double fw = 127.0 / (q->alpha_tw_k ? q->alpha_tw_k[k] : q->alpha_tw);
        for (int c = 0; c < C; c++) {
            double g[3][3], u[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                    const size_t at = (((size_t)k * 3 + i) * 3 + j) * (size_t)C + (size_t)c;
                    g[i][j] = q->w_scale > 0.0f
                                  ? (double)q->w_scale * ((const int8_t *)weights)[at]
                                  : (double)((const float *)weights)[at];
                }
            wino_int8_filter_transform(&L->tile, g, u);
            for (int p = 0; p < a; p++)
                for (int r = 0; r < a; r++) {
                    double v = rint(u[p][r] * fw);
                    v = v > 127.0 ? 127.0 : v < -127.0 ? -127.0 : v;
                    L->uq[((size_t)(p * a + r) * C + c) * K + k] = (int8_t)v;
                }
        }
    }
}

/* The largest |Y| any input can produce with these weights (docs/int8-winograd.md). */
static long long output_bound(const struct wino_int8_layer *L)
{
    const int a = L->tile.alpha, m = L->tile.m, C = L->c, K = L->k;
    long long worst = 0;
    long long s[WINO_INT8_MAX_ALPHA * WINO_INT8_MAX_ALPHA];
    for (int k = 0; k < K; k++) {
        for (int pos = 0; pos < a * a; pos++) {
            s[pos] = 0;
            for (int c = 0; c < C; c++) {
                const int u = L->uq[((size_t)pos * C + c) * K + k];
                s[pos] += u < 0 ? -u : u;
            }
        }
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                long long b = 0;
                for (int p = 0; p < a; p++)
                    for (int r = 0; r < a; r++)
                        b += (long long)abs(L->tile.at[i][p]) * abs(L->tile.at[j][r]) *
                             s[p * a + r];
                worst = 127 * b > worst ? 127 * b : worst;
            }
    }
    return worst;
}

/* scale[k], bias[k], lo, hi of step 6: scale[k] = x_step alpha_tw[k] / (den y_scale), the
 * product's steps (Winograd: x_step alpha_ta and den 127^2, alpha_ta / 127 and alpha_tw / 127;
 * direct: x_scale and den 127, x_scale and alpha_tw / 127). */
static enum wino_status requantization(const struct wino_conv2d_desc *d,
                                       const struct wino_int8_params *q, const float *bias,
                                       int relu, double x_step, double den,
                                       struct wino_int8_layer *L)
{
    const double qmax = L->y_signed ? 127.0 : 255.0;
    const double c = q->clip_c > 0.0f ? (double)q->clip_c / q->y_scale : qmax;
    L->hi = (float)(c < qmax ? c : qmax);
    L->lo = relu ? 0.0f : (float)(-c > -127.0 ? -c : -127.0);
    for (int k = 0; k < d->k; k++) {
        const double tw = q->alpha_tw_k ? q->alpha_tw_k[k] : q->alpha_tw;
        L->scale[k] = (float)(x_step * tw / (den * q->y_scale));
        L->bias[k] = bias ? (float)((double)bias[k] / q->y_scale) : 0.0f;
        if (!positive_finite(L->scale[k]) || !isfinite(L->bias[k]))
            return wino_fail(WINO_INVALID_ARGUMENT,
                             "INT8: the requantization of channel %d is not a finite positive "
                             "scale and finite bias (scales out of float range?)",
                             k);
    }
    return WINO_SUCCESS;
}

/* The weights (K x taps x C, float unless w_scale says int8) and bias are finite. */
static enum wino_status check_values(const struct wino_conv2d_desc *d, const void *weights,
                                     const struct wino_int8_params *q, const float *bias,
                                     size_t taps, const char *what)
{
    char name[32];
    enum wino_status st = WINO_SUCCESS;
    snprintf(name, sizeof name, "%s: weights", what);
    if (q->w_scale == 0.0f) /* int8 weights are finite by type */
        st = wino_int8_check_finite(name, weights, (size_t)d->k * taps * (size_t)d->c);
    snprintf(name, sizeof name, "%s: bias", what);
    if (!st && bias)
        st = wino_int8_check_finite(name, bias, (size_t)d->k);
    return st;
}

/* The parts every layer has: channels, types, uq_bytes of quantized weights and the
 * requantization for the product's steps (see requantization); L released on failure. */
static enum wino_status layer_alloc(const struct wino_conv2d_desc *d,
                                    const struct wino_int8_params *q, const float *bias,
                                    int relu, size_t uq_bytes, double x_step, double den,
                                    const char *what, struct wino_int8_layer *L)
{
    L->c = d->c;
    L->k = d->k;
    L->x_signed = d->dtype == WINO_DTYPE_S8;
    L->y_signed = q->y_dtype == WINO_DTYPE_S8;
    L->uq = malloc(uq_bytes);
    L->scale = malloc(sizeof(float) * (size_t)d->k);
    L->bias = malloc(sizeof(float) * (size_t)d->k);
    enum wino_status st = WINO_SUCCESS;
    if (!L->uq || !L->scale || !L->bias)
        st = wino_fail(WINO_OUT_OF_MEMORY, "%s: out of memory", what);
    else
        st = requantization(d, q, bias, relu, x_step, den, L);
    if (st)
        wino_int8_layer_release(L);
    return st;
}

enum wino_status wino_int8_layer_prepare(const struct wino_conv2d_desc *d, int tile_m,
                                         const void *weights,
                                         const struct wino_int8_params *q, const float *bias,
                                         int relu, struct wino_int8_layer *L)
{
    memset(L, 0, sizeof *L);
    enum wino_status st = check_desc(d, weights, tile_m, relu, q);
    if (!st)
        st = check_params(d, q, 1);
    if (!st)
        st = check_values(d, weights, q, bias, 9, "INT8 Winograd");
    if (st)
        return st;
    L->f_a = (float)(127.0 * q->x_scale / q->alpha_ta);
    if (!positive_finite(L->f_a))
        return wino_fail(WINO_INVALID_ARGUMENT, "INT8 Winograd: 127 x_scale / alpha_ta = %g",
                         (double)L->f_a);
    st = wino_int8_tile_make(tile_m, &L->tile);
    if (st)
        return st;
    const size_t aa = (size_t)L->tile.alpha * (size_t)L->tile.alpha;
    size_t n;
    if (wino_mul_size(aa * (size_t)d->c, (size_t)d->k, &n))
        return wino_fail(WINO_INVALID_ARGUMENT, "INT8 Winograd: C * K too large");
    if ((st = layer_alloc(d, q, bias, relu, n, q->alpha_ta, 127.0 * 127.0, "INT8 Winograd", L)))
        return st;
    quantize_weights(d, weights, q, L);
    const long long bound = output_bound(L);
    if (bound > INT32_MAX) {
        wino_int8_layer_release(L);
        return wino_fail(WINO_UNSUPPORTED,
                         "INT8 Winograd F(%d,3): with these weights the output transform could "
                         "reach %lld, beyond int32 (use a smaller tile or direct convolution)",
                         tile_m, bound);
    }
    return WINO_SUCCESS;
}

/* The largest r s c of a direct layer: the int8 GEMM's depth limit (src/cpu/gemm_s8.h), which
 * also keeps 255 * 127 * r s c, the largest |Y|, within int32. */
#define DIRECT_MAX_DEPTH 65793

enum wino_status wino_int8_direct_prepare(const struct wino_conv2d_desc *d, const void *weights,
                                          const struct wino_int8_params *q, const float *bias,
                                          int relu, struct wino_int8_layer *L)
{
    memset(L, 0, sizeof *L);
    enum wino_status st = check_types(d, weights, relu, q, "INT8 direct");
    if (!st)
        st = check_params(d, q, 0);
    const size_t taps = (size_t)d->r * (size_t)d->s, depth = taps * (size_t)d->c;
    if (!st && depth > DIRECT_MAX_DEPTH)
        st = wino_fail(WINO_UNSUPPORTED,
                       "INT8 direct: R S C = %zu could overflow the int32 sums (at most %d)",
                       depth, DIRECT_MAX_DEPTH);
    if (!st)
        st = check_values(d, weights, q, bias, taps, "INT8 direct");
    /* depth * K is the size of the checked weights: no overflow */
    if (st || (st = layer_alloc(d, q, bias, relu, depth * (size_t)d->k, q->x_scale, 127.0,
                                "INT8 direct", L)))
        return st;
    /* Wq = clamp(rint(w * 127 / alpha_tw[k]), +-127), w the real weights (K x R x S x C) */
    for (int k = 0; k < d->k; k++) {
        const double fw = 127.0 / (q->alpha_tw_k ? q->alpha_tw_k[k] : q->alpha_tw);
        for (size_t t = 0; t < depth; t++) {
            const size_t at = (size_t)k * depth + t;
            const double w = q->w_scale > 0.0f ? (double)q->w_scale * ((const int8_t *)weights)[at]
                                                : (double)((const float *)weights)[at];
            double v = rint(w * fw);
            v = v > 127.0 ? 127.0 : v < -127.0 ? -127.0 : v;
            L->uq[t * (size_t)d->k + (size_t)k] = (int8_t)v;
        }
    }
    return WINO_SUCCESS;
}

void wino_int8_layer_release(struct wino_int8_layer *L)
{
    free(L->uq);
    free(L->scale);
    free(L->bias);
    memset(L, 0, sizeof *L);
}
