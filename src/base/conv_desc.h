/* Validation of convolution descriptors and the sizes derived from them. */
#ifndef WINO_BASE_CONV_DESC_H
#define WINO_BASE_CONV_DESC_H

#include <stddef.h>

#include "wino.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wino_conv_sizes {
    int p, q;                    /* output height, width */
    size_t x_elems, w_elems, y_elems;
};

/* Checks every field and every size product (in elements and in bytes of the largest element
 * type); fills sizes. Returns WINO_SUCCESS or WINO_INVALID_ARGUMENT with the reason recorded. */
enum wino_status wino_conv_desc_check(const struct wino_conv2d_desc *desc,
                                      struct wino_conv_sizes *sizes);

/* Output size along one axis: (in + 2*pad - dilation*(filter-1) - 1) / stride + 1, or 0 when the
 * dilated filter does not fit in the padded input. No other validation. */
int wino_conv_out_dim(int in, int pad, int dilation, int filter, int stride);

/* The taps [*j0, *j1) of a filter row of `taps` taps, `dilation` columns apart from column w0 on,
 * that fall inside columns [0, w): the run a gather copies, zeros on either side of it. *j1 <= *j0
 * when none does. */
static inline void wino_taps_inside(int w0, int taps, int dilation, int w, int *j0, int *j1)
{
    const long first = w0 < 0 ? (-(long)w0 + dilation - 1) / dilation : 0;
    const long last = (long)w - 1 - w0 < 0 ? -1 : ((long)w - 1 - w0) / dilation;
    *j0 = (int)(first < taps ? first : taps);
    *j1 = (int)(last + 1 < taps ? last + 1 : taps);
}

/* Element size in bytes of a dtype (0 for unknown values). */
size_t wino_dtype_size(enum wino_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif
