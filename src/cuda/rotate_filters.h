/* backward-data's filters as a forward convolution's, made on the device: dx = conv(dy, w')
 * with w'[c][k][R-1-i][S-1-j] = w[k][c][i][j], K and C swapped, in the layout of w
 * (src/op/conv2d_backward.c runs the forward engine with them). The component's
 * rotated_filters_create and rotate_filters (the filters are freed with device_free) (cuda_component.h). */
#ifndef WINO_CUDA_ROTATE_FILTERS_H
#define WINO_CUDA_ROTATE_FILTERS_H

#include "base/conv_desc.h"
#include "wino.h"

/* New memory of ctx's device holding w' for desc (FP32 or FP16), written when this returns;
 * weights must be memory of that device. *rotated is NULL on failure. */
enum wino_status rotated_filters_create(const struct wino_conv2d_desc *desc, const void *weights,
                                        const struct wino_context *ctx, void **rotated);

/* Enqueues w' of weights (memory of device) into rotated (made by rotated_filters_create for
 * the same desc) on stream, a stream of device (NULL: its default stream); no wait. */
enum wino_status rotate_filters(const struct wino_conv2d_desc *desc, const void *weights,
                                void *rotated, int device, void *stream);

#endif
