#include "base/conv_desc.h"

#include <limits.h>
#include <stdint.h>

#include "base/error.h"

size_t wino_dtype_size(enum wino_dtype dtype)
{
    switch (dtype) {
    case WINO_DTYPE_F32:
        return 4;
    case WINO_DTYPE_F16:
    case WINO_DTYPE_BF16:
        return 2;
    case WINO_DTYPE_S8:
    case WINO_DTYPE_U8:
        return 1;
    }
    return 0;
}

/* *out = a * b * c * d in size_t, also leaving room for 8-byte elements; -1 on overflow. */
static int product4(size_t a, size_t b, size_t c, size_t d, size_t *out)
{
    size_t t;
    if (wino_mul_size(a, b, &t) || wino_mul_size(t, c, &t) || wino_mul_size(t, d, &t) ||
        t > (size_t)PTRDIFF_MAX / 8)
        return -1;
    *out = t;
    return 0;
}

struct field {
    const char *name;
    int value, min;
};

int wino_conv_out_dim(int in, int pad, int dilation, int filter, int stride)
{
    /* long long: 2*pad and dilation*(filter-1) may overflow int on unvalidated input. */
    long long span = (long long)in + 2LL * pad - (long long)dilation * ((long long)filter - 1) - 1;
    if (span < 0)
        return 0;
    return (int)(span / stride + 1);
}

enum wino_status wino_conv_desc_check(const struct wino_conv2d_desc *d,
                                      struct wino_conv_sizes *s)
{
    if (!d)
        return wino_fail(WINO_INVALID_ARGUMENT, "convolution descriptor is NULL");
    const struct field fields[] = {
        {"n", d->n, 1},          {"c", d->c, 1},          {"h", d->h, 1},
        {"w", d->w, 1},          {"k", d->k, 1},          {"r", d->r, 1},
        {"s", d->s, 1},          {"pad_h", d->pad_h, 0},  {"pad_w", d->pad_w, 0},
        {"stride_h", d->stride_h, 1}, {"stride_w", d->stride_w, 1},
        {"dilation_h", d->dilation_h, 1}, {"dilation_w", d->dilation_w, 1}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i].value < fields[i].min)
            return wino_fail(WINO_INVALID_ARGUMENT, "descriptor field %s = %d must be >= %d",
                             fields[i].name, fields[i].value, fields[i].min);
    if (d->layout != WINO_LAYOUT_NCHW && d->layout != WINO_LAYOUT_NHWC)
        return wino_fail(WINO_INVALID_ARGUMENT, "unknown layout %d", (int)d->layout);
    if (!wino_dtype_size(d->dtype))
        return wino_fail(WINO_INVALID_ARGUMENT, "unknown dtype %d", (int)d->dtype);
    /* The padded extent and the dilated filter extent must fit in int. */
    if ((long long)d->h + 2LL * d->pad_h > INT_MAX || (long long)d->w + 2LL * d->pad_w > INT_MAX ||
        (long long)d->dilation_h * (d->r - 1) >= INT_MAX ||
        (long long)d->dilation_w * (d->s - 1) >= INT_MAX)
        return wino_fail(WINO_INVALID_ARGUMENT, "padded image or dilated filter exceeds INT_MAX");
    int p = wino_conv_out_dim(d->h, d->pad_h, d->dilation_h, d->r, d->stride_h);
    int q = wino_conv_out_dim(d->w, d->pad_w, d->dilation_w, d->s, d->stride_w);
    if (p < 1 || q < 1)
        return wino_fail(WINO_INVALID_ARGUMENT,
                         "the dilated %dx%d filter does not fit the padded %dx%d image: no output",
                         d->r, d->s, d->h + 2 * d->pad_h, d->w + 2 * d->pad_w);
    struct wino_conv_sizes t = {p, q, 0, 0, 0};
    if (product4((size_t)d->n, (size_t)d->c, (size_t)d->h, (size_t)d->w, &t.x_elems) ||
        product4((size_t)d->k, (size_t)d->c, (size_t)d->r, (size_t)d->s, &t.w_elems) ||
        product4((size_t)d->n, (size_t)d->k, (size_t)p, (size_t)q, &t.y_elems))
        return wino_fail(WINO_INVALID_ARGUMENT, "tensor sizes overflow the address space");
    if (s)
        *s = t;
    return WINO_SUCCESS;
}

struct wino_conv2d_desc wino_conv2d_desc_make(int n, int c, int h, int w, int k, int r, int s,
                                              int pad_h, int pad_w)
{
    struct wino_conv2d_desc d = {n, c, h, w, k, r, s, pad_h, pad_w, 1, 1, 1, 1,
                                 WINO_LAYOUT_NCHW, WINO_DTYPE_F32};
    return d;
}

enum wino_status wino_conv2d_output_size(const struct wino_conv2d_desc *desc, int *p, int *q)
{
    wino_ok();
    struct wino_conv_sizes s;
    enum wino_status st = wino_conv_desc_check(desc, &s);
    if (st)
        return st;
    if (p)
        *p = s.p;
    if (q)
        *q = s.q;
    return WINO_SUCCESS;
}
