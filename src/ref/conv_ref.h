/*
 * Reference 2D convolutions: the double-precision yardstick every optimized kernel is checked
 * against. Plain loops, no allocation, no validation.
 *
 * All functions assume desc was validated (all sizes >= 1, pads >= 0, output size >= 1). Tensors
 * are laid out as desc->layout says:
 *   NCHW: x N*C*H*W, w K*C*R*S, y N*K*P*Q;   NHWC: x N*H*W*C, w K*R*S*C, y N*P*Q*K.
 * desc->dtype is ignored: inputs are float, accumulation and outputs are double. Padding, stride
 * and dilation are as documented in wino.h.
 */
#ifndef WINO_REF_CONV_REF_H
#define WINO_REF_CONV_REF_H

#include "wino.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y = conv(x, w): cross-correlation with zero padding. */
void wino_ref_conv2d_fwd(const struct wino_conv2d_desc *desc, const float *x, const float *w,
                         double *y);

/* dx = d(sum y*dy)/dx, the adjoint of fwd with respect to x. Every element of dx is written
 * (zero where no output depends on it, e.g. input pixels skipped by the stride). */
void wino_ref_conv2d_bwd_data(const struct wino_conv2d_desc *desc, const float *dy,
                              const float *w, double *dx);

/* dw = d(sum y*dy)/dw, the adjoint of fwd with respect to w. Every element of dw is written. */
void wino_ref_conv2d_bwd_filter(const struct wino_conv2d_desc *desc, const float *x,
                                const float *dy, double *dw);

#ifdef __cplusplus
}
#endif

#endif /* WINO_REF_CONV_REF_H */
