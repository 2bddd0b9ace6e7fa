/* Reference 2D convolutions (forward, backward-data, backward-filter) with double accumulation.
 * Each output element is computed by gathering its contributions, so every element is written
 * exactly once and no zeroing pass is needed. */
#include "conv_ref.h"

#include "base/conv_desc.h"

#include <stddef.h>

/* Offsets of one element in each tensor, for either layout; size_t so large tensors are safe. */
static size_t x_offset(const struct wino_conv2d_desc *d, int n, int c, int h, int w)
{
    if (d->layout == WINO_LAYOUT_NHWC)
        return (((size_t)n * (size_t)d->h + (size_t)h) * (size_t)d->w + (size_t)w) * (size_t)d->c
               + (size_t)c;
    return (((size_t)n * (size_t)d->c + (size_t)c) * (size_t)d->h + (size_t)h) * (size_t)d->w
           + (size_t)w;
}

static size_t w_offset(const struct wino_conv2d_desc *d, int k, int c, int i, int j)
{
    if (d->layout == WINO_LAYOUT_NHWC)
        return (((size_t)k * (size_t)d->r + (size_t)i) * (size_t)d->s + (size_t)j) * (size_t)d->c
               + (size_t)c;
    return (((size_t)k * (size_t)d->c + (size_t)c) * (size_t)d->r + (size_t)i) * (size_t)d->s
           + (size_t)j;
}

static size_t y_offset(const struct wino_conv2d_desc *d, int out_h, int out_w, int n, int k, int p,
                       int q)
{
    if (d->layout == WINO_LAYOUT_NHWC)
        return (((size_t)n * (size_t)out_h + (size_t)p) * (size_t)out_w + (size_t)q) * (size_t)d->k
               + (size_t)k;
    return (((size_t)n * (size_t)d->k + (size_t)k) * (size_t)out_h + (size_t)p) * (size_t)out_w
           + (size_t)q;
}

/* Input coordinate read by output position `out` through filter tap `tap`; may lie in the
 * padding (outside [0, in)). */
static ptrdiff_t input_coord(int out, int tap, int stride, int pad, int dilation)
{
    return (ptrdiff_t)out * stride - pad + (ptrdiff_t)tap * dilation;
}

/* The output position that reads input coordinate `in` through filter tap `tap`, or -1 if there
 * is none (the tap lands between strided positions or outside the output). */
static ptrdiff_t output_coord(int in, int tap, int stride, int pad, int dilation, int out_size)
{
    ptrdiff_t t = (ptrdiff_t)in + pad - (ptrdiff_t)tap * dilation;
    if (t < 0 || t % stride != 0 || t / stride >= out_size)
        return -1;
    return t / stride;
}

void wino_ref_conv2d_fwd(const struct wino_conv2d_desc *desc, const float *x, const float *w,
                         double *y)
{
    const struct wino_conv2d_desc *d = desc;
    int out_h = wino_conv_out_dim(d->h, d->pad_h, d->dilation_h, d->r, d->stride_h);
    int out_w = wino_conv_out_dim(d->w, d->pad_w, d->dilation_w, d->s, d->stride_w);

    for (int n = 0; n < d->n; n++)
        for (int k = 0; k < d->k; k++)
            for (int p = 0; p < out_h; p++)
                for (int q = 0; q < out_w; q++) {
                    double sum = 0.0;
                    for (int c = 0; c < d->c; c++)
                        for (int i = 0; i < d->r; i++) {
                            ptrdiff_t ih = input_coord(p, i, d->stride_h, d->pad_h, d->dilation_h);
                            if (ih < 0 || ih >= d->h)
                                continue; /* zero padding */
                            for (int j = 0; j < d->s; j++) {
                                ptrdiff_t iw =
                                    input_coord(q, j, d->stride_w, d->pad_w, d->dilation_w);
                                if (iw < 0 || iw >= d->w)
                                    continue;
                                sum += (double)x[x_offset(d, n, c, (int)ih, (int)iw)]
                                       * (double)w[w_offset(d, k, c, i, j)];
                            }
                        }
                    y[y_offset(d, out_h, out_w, n, k, p, q)] = sum;
                }
}

void wino_ref_conv2d_bwd_data(const struct wino_conv2d_desc *desc, const float *dy,
                              const float *w, double *dx)
{
    const struct wino_conv2d_desc *d = desc;
    int out_h = wino_conv_out_dim(d->h, d->pad_h, d->dilation_h, d->r, d->stride_h);
    int out_w = wino_conv_out_dim(d->w, d->pad_w, d->dilation_w, d->s, d->stride_w);

    for (int n = 0; n < d->n; n++)
        for (int c = 0; c < d->c; c++)
            for (int ih = 0; ih < d->h; ih++)
                for (int iw = 0; iw < d->w; iw++) {
                    double sum = 0.0;
                    for (int i = 0; i < d->r; i++) {
                        ptrdiff_t p =
                            output_coord(ih, i, d->stride_h, d->pad_h, d->dilation_h, out_h);
                        if (p < 0)
                            continue;
                        for (int j = 0; j < d->s; j++) {
                            ptrdiff_t q =
                                output_coord(iw, j, d->stride_w, d->pad_w, d->dilation_w, out_w);
                            if (q < 0)
                                continue;
                            for (int k = 0; k < d->k; k++)
                                sum += (double)dy[y_offset(d, out_h, out_w, n, k, (int)p, (int)q)]
                                       * (double)w[w_offset(d, k, c, i, j)];
                        }
                    }
                    dx[x_offset(d, n, c, ih, iw)] = sum;
                }
}

void wino_ref_conv2d_bwd_filter(const struct wino_conv2d_desc *desc, const float *x,
                                const float *dy, double *dw)
{
    const struct wino_conv2d_desc *d = desc;
    int out_h = wino_conv_out_dim(d->h, d->pad_h, d->dilation_h, d->r, d->stride_h);
    int out_w = wino_conv_out_dim(d->w, d->pad_w, d->dilation_w, d->s, d->stride_w);

    for (int k = 0; k < d->k; k++)
        for (int c = 0; c < d->c; c++)
            for (int i = 0; i < d->r; i++)
                for (int j = 0; j < d->s; j++) {
                    double sum = 0.0;
                    for (int n = 0; n < d->n; n++)
                        for (int p = 0; p < out_h; p++) {
                            ptrdiff_t ih = input_coord(p, i, d->stride_h, d->pad_h, d->dilation_h);
                            if (ih < 0 || ih >= d->h)
                                continue; /* tap reads padding: contributes zero */
                            for (int q = 0; q < out_w; q++) {
                                ptrdiff_t iw =
                                    input_coord(q, j, d->stride_w, d->pad_w, d->dilation_w);
                                if (iw < 0 || iw >= d->w)
                                    continue;
                                sum += (double)x[x_offset(d, n, c, (int)ih, (int)iw)]
                                       * (double)dy[y_offset(d, out_h, out_w, n, k, p, q)];
                            }
                        }
                    dw[w_offset(d, k, c, i, j)] = sum;
                }
}
