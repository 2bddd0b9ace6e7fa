/* The generated FP32 transforms of the default tiles (src/cpu/generated/, made by
 * wino_gen_write_defaults from the recorded default points), looked up by (m, r). */
#ifndef WINO_CPU_TRANSFORM_TABLE_H
#define WINO_CPU_TRANSFORM_TABLE_H

#include <stddef.h>

/* One 2D transform of F(m x m, r x r) for `lanes` tiles side by side: element (i, j) of the tile
 * of lane l is read at in[i * in_row + j * in_col + l] and written at
 * out[i * out_row + j * out_col + l]. in and out must not overlap. */
typedef void wino_f32_transform_fn(const float *restrict in, ptrdiff_t in_row, ptrdiff_t in_col,
                                   float *restrict out, ptrdiff_t out_row, ptrdiff_t out_col,
                                   int lanes);

struct wino_f32_transforms {
    wino_f32_transform_fn *input;  /* V = B^T d B: alpha x alpha -> alpha x alpha */
    wino_f32_transform_fn *filter; /* U = G g G^T: r x r -> alpha x alpha */
    wino_f32_transform_fn *output; /* Y = A^T M A: alpha x alpha -> m x m */
};

/* The transforms of F(m x m, r x r), all three NULL when (m, r) is not a default tile. */
struct wino_f32_transforms wino_f32_transforms_for(int m, int r);

#endif
