#include "ref/int8_direct_ref.h"

#include "base/conv_desc.h"

void wino_ref_int8_direct(const struct wino_conv2d_desc *d, const struct wino_int8_layer *L,
                          const void *x, void *y)
{
    struct wino_conv_sizes sz;
    wino_conv_desc_check(d, &sz);
    const int8_t *xs = x;
    const uint8_t *xu = x;
    for (int n = 0; n < d->n; n++)
        for (int p = 0; p < sz.p; p++)
            for (int q = 0; q < sz.q; q++)
                for (int k = 0; k < d->k; k++) {
                    long long sum = 0;
                    for (int i = 0; i < d->r; i++)
                        for (int j = 0; j < d->s; j++) {
                            const int h = p * d->stride_h - d->pad_h + i * d->dilation_h;
                            const int w = q * d->stride_w - d->pad_w + j * d->dilation_w;
                            if (h < 0 || h >= d->h || w < 0 || w >= d->w)
                                continue;
                            for (int c = 0; c < d->c; c++) {
                                const size_t at = (((size_t)n * d->h + h) * d->w + w) * d->c + c;
                                const size_t t = ((size_t)i * d->s + j) * d->c + c;
                                sum += (long long)(L->x_signed ? xs[at] : xu[at]) *
                                       L->uq[t * d->k + k];
                            }
                        }
                    const size_t out = (((size_t)n * sz.p + p) * sz.q + q) * d->k + k;
                    const int v = wino_int8_requantize((int32_t)sum, L->scale[k], L->bias[k],
                                                       L->lo, L->hi);
                    if (L->y_signed)
                        ((int8_t *)y)[out] = (int8_t)v;
                    else
                        ((uint8_t *)y)[out] = (uint8_t)v;
                }
}
