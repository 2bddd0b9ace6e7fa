#include "ref/int8_winograd_ref.h"

#include <stdint.h>
#include <stdlib.h>

static int read_x(const struct wino_int8_layer *L, const void *x, size_t at)
{
    return L->x_signed ? ((const int8_t *)x)[at] : ((const uint8_t *)x)[at];
}

/* Steps 1-2 for one tile: vq[pos * C + c]. */
static void transformed_tile(const struct wino_conv2d_desc *d, const struct wino_int8_layer *L,
                             const void *x, int n, int h0, int w0, int8_t *vq)
{
    const struct wino_int8_tile *t = &L->tile;
    const int a = t->alpha, C = d->c;
    for (int c = 0; c < C; c++) {
        long long win[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA], v[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA];
        for (int i = 0; i < a; i++)
            for (int j = 0; j < a; j++) {
                const int h = h0 + i, w = w0 + j;
                win[i][j] = h < 0 || h >= d->h || w < 0 || w >= d->w
                                ? 0
                                : read_x(L, x, (((size_t)n * d->h + h) * d->w + w) * C + c);
            }
        wino_int8_input_transform(t, win, v);
        for (int i = 0; i < a; i++)
            for (int j = 0; j < a; j++)
                vq[(size_t)(i * a + j) * C + c] = wino_int8_quantize_v((int32_t)v[i][j], L->f_a);
    }
}

void wino_ref_int8_winograd(const struct wino_conv2d_desc *d, const struct wino_int8_layer *L,
                            const void *x, void *y)
{
    const struct wino_int8_tile *t = &L->tile;
    const int a = t->alpha, m = t->m, C = d->c, K = d->k;
    const int P = d->h + 2 * d->pad_h - 2, Q = d->w + 2 * d->pad_w - 2;
    int8_t *vq = malloc((size_t)a * a * C);
    if (!vq)
        return;
    for (int n = 0; n < d->n; n++)
        for (int p0 = 0; p0 < P; p0 += m)
            for (int q0 = 0; q0 < Q; q0 += m) {
                transformed_tile(d, L, x, n, p0 - d->pad_h, q0 - d->pad_w, vq);
                for (int k = 0; k < K; k++) {
                    long long mm[WINO_INT8_MAX_ALPHA][WINO_INT8_MAX_ALPHA]; /* step 4 */
                    for (int pos = 0; pos < a * a; pos++) {
                        long long s = 0;
                        for (int c = 0; c < C; c++)
                            s += (long long)vq[(size_t)pos * C + c] *
                                 L->uq[((size_t)pos * C + c) * K + k];
                        mm[pos / a][pos % a] = s;
                    }
                    for (int i = 0; i < m && p0 + i < P; i++) /* steps 5-7 */
                        for (int j = 0; j < m && q0 + j < Q; j++) {
                            long long v = 0;
                            for (int u = 0; u < a; u++)
                                for (int s = 0; s < a; s++)
                                    v += (long long)t->at[i][u] * mm[u][s] * t->at[j][s];
                            const int out = wino_int8_requantize((int32_t)v, L->scale[k],
                                                                 L->bias[k], L->lo, L->hi);
                            const size_t at = (((size_t)n * P + p0 + i) * Q + q0 + j) * K + k;
                            if (L->y_signed)
                                ((int8_t *)y)[at] = (int8_t)out;
                            else
                                ((uint8_t *)y)[at] = (uint8_t)out;
                        }
                }
            }
    free(vq);
}
