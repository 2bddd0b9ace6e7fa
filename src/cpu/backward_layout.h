/* Element strides of the three tensors of a convolution in either layout, so the backward paths
 * address NCHW and NHWC through one code path: element (a, b, c, d) of a tensor named in NCHW
 * order (x: n c h w, y and dy: n k p q, w and dw: k c i j) is at a*s.a + b*s.b + c*s.c + d*s.d. */
#ifndef WINO_CPU_BACKWARD_LAYOUT_H
#define WINO_CPU_BACKWARD_LAYOUT_H

#include <stddef.h>

#include "wino.h"

struct wino_strides4 {
    ptrdiff_t a, b, c, d;
};

/* A tensor of dims d0 x d1 x d2 x d3 (NCHW order names) stored as the layout says: NCHW is
 * d0 d1 d2 d3, NHWC is d0 d2 d3 d1 (the channel d1 innermost). */
static inline struct wino_strides4 wino_strides4_of(enum wino_layout layout, int d0, int d1,
                                                    int d2, int d3)
{
    struct wino_strides4 s;
    (void)d0;
    if (layout == WINO_LAYOUT_NHWC) {
        s.b = 1;
        s.d = d1;
        s.c = (ptrdiff_t)d3 * d1;
        s.a = s.c * d2;
    } else {
        s.d = 1;
        s.c = d3;
        s.b = (ptrdiff_t)d2 * d3;
        s.a = s.b * d1;
    }
    return s;
}

static inline struct wino_strides4 wino_x_strides(const struct wino_conv2d_desc *d)
{
    return wino_strides4_of(d->layout, d->n, d->c, d->h, d->w);
}

static inline struct wino_strides4 wino_y_strides(const struct wino_conv2d_desc *d, int p, int q)
{
    return wino_strides4_of(d->layout, d->n, d->k, p, q);
}

static inline struct wino_strides4 wino_w_strides(const struct wino_conv2d_desc *d)
{
    return wino_strides4_of(d->layout, d->k, d->c, d->r, d->s);
}

#endif
