/* The INT8 direct convolution's specification (docs/int8-winograd.md, "Direct") as plain loops:
 * the yardstick of the optimized INT8 direct engine. Exact sums in 64 bits, then the layer's
 * requantization. */
#ifndef WINO_REF_INT8_DIRECT_REF_H
#define WINO_REF_INT8_DIRECT_REF_H

#include "op/int8_layer.h"

/* y (NHWC, int8 or uint8 as the layer says) from x (NHWC, int8 or uint8) for a desc the layer
 * was prepared for (wino_int8_direct_prepare). */
void wino_ref_int8_direct(const struct wino_conv2d_desc *desc, const struct wino_int8_layer *layer,
                          const void *x, void *y);

#endif
