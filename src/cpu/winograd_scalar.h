/* Portable scalar FP32 Winograd convolution F(m x m, r x r) from a tile's matrices: the
 * always-available path (no ISA assumptions), one output tile at a time. */
#ifndef WINO_CPU_WINOGRAD_SCALAR_H
#define WINO_CPU_WINOGRAD_SCALAR_H

#include <stddef.h>

#include "cpu/epilogue.h"
#include "wino.h"

struct wino_f32_winograd {
    int m, r, alpha;
    float *AT, *BT, *G; /* m x alpha, alpha x alpha, alpha x r, rounded from the exact values */
    float *U;           /* K x C x alpha x alpha transformed filters */
};

/* Prepares the transformed filters of desc (stride 1, dilation 1, R == S == tile's r, checked
 * by the caller) from weights laid out as desc->layout says. Returns WINO_SUCCESS or
 * WINO_OUT_OF_MEMORY. */
enum wino_status wino_f32_winograd_prepare(struct wino_f32_winograd *plan,
                                           const struct wino_tile_matrices *tile,
                                           const struct wino_conv2d_desc *desc,
                                           const float *weights);
void wino_f32_winograd_release(struct wino_f32_winograd *plan);

/* Workspace floats needed by run. */
size_t wino_f32_winograd_workspace_floats(const struct wino_f32_winograd *plan,
                                          const struct wino_conv2d_desc *desc);

void wino_f32_winograd_run(const struct wino_f32_winograd *plan,
                           const struct wino_conv2d_desc *desc, int p, int q, const float *x,
                           const struct wino_epilogue *ep, float *y, float *workspace);

#endif
