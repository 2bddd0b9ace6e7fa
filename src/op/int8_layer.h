/* A prepared INT8 layer (docs/int8-winograd.md), Winograd or direct: checked parameters, the
 * quantized (transformed) weights and the requantization constants. Shared by the reference and
 * the kernels, which differ only in how they run the pipeline. */
#ifndef WINO_OP_INT8_LAYER_H
#define WINO_OP_INT8_LAYER_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "base/int8_tile.h"
#include "wino.h"

/* The spec's per-element steps run unchanged in CUDA kernels (same IEEE operations). */
#ifdef __CUDACC__
#define WINO_HOST_DEVICE __host__ __device__
#else
#define WINO_HOST_DEVICE
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct wino_int8_layer {
    struct wino_int8_tile tile; /* direct: zeroed (tile.m == 0) */
    int c, k;
    int x_signed, y_signed; /* 1: int8, 0: uint8 */
    int8_t *uq;             /* Winograd: Uq[(pos * C + c) * K + k], pos = i * alpha + j;
                             * direct: Wq[((i * S + j) * C + c) * K + k] */
    float f_a;              /* 127 s_x / alpha_ta: V -> Vq (Winograd) */
    float *scale, *bias;    /* K each: r = fmaf((float)Y, scale[k], bias[k]) */
    float lo, hi;           /* output clamp before rounding */
};

/* 1 when INT8 Winograd serves desc's filter: 3 x 3, stride 1, dilation 1. */
int wino_int8_winograd_shape(const struct wino_conv2d_desc *desc);

/* Checks params and options for desc (see wino_conv2d_create_int8) and prepares the layer:
 * WINO_SUCCESS, WINO_INVALID_ARGUMENT, WINO_UNSUPPORTED (incl. the int32 overflow bounds) or
 * WINO_OUT_OF_MEMORY, with the reason recorded. */
enum wino_status wino_int8_layer_prepare(const struct wino_conv2d_desc *desc, int tile_m,
                                         const void *weights,
                                         const struct wino_int8_params *params,
                                         const float *bias, int relu,
                                         struct wino_int8_layer *layer);
void wino_int8_layer_release(struct wino_int8_layer *layer); /* safe on a zeroed struct */

/* The same for INT8 direct convolution of any valid NHWC desc (docs/int8-winograd.md,
 * "Direct"): weights (K x R x S x C) quantized with alpha_tw (alpha_tw_k) as the clip of the
 * weights themselves, alpha_ta unused; WINO_UNSUPPORTED when R S C could overflow int32. */
enum wino_status wino_int8_direct_prepare(const struct wino_conv2d_desc *desc,
                                          const void *weights,
                                          const struct wino_int8_params *params,
                                          const float *bias, int relu,
                                          struct wino_int8_layer *layer);

/* WINO_SUCCESS when v[0 .. n-1] are all finite, else WINO_INVALID_ARGUMENT naming the first
 * other one as "what[index]". */
enum wino_status wino_int8_check_finite(const char *what, const float *v, size_t n);

/* Step 2 of the pipeline: a transformed activation to int8. */
WINO_HOST_DEVICE static inline int8_t wino_int8_quantize_v(int32_t v, float f_a)
{
    const float t = rintf((float)v * f_a);
    return (int8_t)(t > 127.0f ? 127 : t < -127.0f ? -127 : (int)t);
}

/* Step 6: an output of the output transform to the 8-bit output value. */
WINO_HOST_DEVICE static inline int wino_int8_requantize(int32_t y, float scale, float bias, float lo, float hi)
{
    float r = fmaf((float)y, scale, bias);
    r = r < lo ? lo : r > hi ? hi : r;
    return (int)rintf(r);
}

#ifdef __cplusplus
}
#endif

#endif
