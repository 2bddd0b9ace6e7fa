/* The INT8 Winograd specification (docs/int8-winograd.md) as plain loops: the yardstick the
 * optimized INT8 kernels must match bit for bit. Exact integer arithmetic in 64 bits (the layer's
 * prepared bounds keep every value within int32), the spec's float steps for quantization. */
#ifndef WINO_REF_INT8_WINOGRAD_REF_H
#define WINO_REF_INT8_WINOGRAD_REF_H

#include "op/int8_layer.h"

/* y (NHWC, int8 or uint8 as the layer says) from x (NHWC, int8 or uint8) for a desc the layer
 * was prepared for. */
void wino_ref_int8_winograd(const struct wino_conv2d_desc *desc,
                            const struct wino_int8_layer *layer, const void *x, void *y);

#endif
