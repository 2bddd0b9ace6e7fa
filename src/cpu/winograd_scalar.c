#include "cpu/winograd_scalar.h"

#include <stdlib.h>
#include <string.h>

/* out (rows x rows) = L X L^T with L rows x cols and X cols x cols; tmp holds rows x cols. */
static void f32_sandwich(const float *L, int rows, int cols, const float *X, float *tmp,
                         float *out)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            float acc = 0.0f;
            for (int k = 0; k < cols; k++)
                acc += L[i * cols + k] * X[k * cols + j];
            tmp[i * cols + j] = acc;
        }
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < rows; j++) {
            float acc = 0.0f;
            for (int k = 0; k < cols; k++)
                acc += tmp[i * cols + k] * L[j * cols + k];
            out[i * rows + j] = acc;
        }
}

/* The n doubles of v rounded to float (malloc'ed), or NULL. */
static float *to_f32(const double *v, int n)
{
    float *f = malloc(sizeof(float) * (size_t)n);
    for (int i = 0; f && i < n; i++)
        f[i] = (float)v[i];
    return f;
}

enum wino_status wino_f32_winograd_prepare(struct wino_f32_winograd *plan,
                                           const struct wino_tile_matrices *tile,
                                           const struct wino_conv2d_desc *desc,
                                           const float *weights)
{
    memset(plan, 0, sizeof *plan);
    const int m = tile->m, r = tile->r, a = m + r - 1, C = desc->c, K = desc->k;
    plan->m = m;
    plan->r = r;
    plan->alpha = a;
    plan->AT = to_f32(tile->at, m * a);
    plan->BT = to_f32(tile->bt, a * a);
    plan->G = to_f32(tile->g, a * r);
    plan->U = malloc(sizeof(float) * (size_t)K * (size_t)C * (size_t)(a * a));
    float *g = malloc(sizeof(float) * (size_t)(r * r + a * r));
    if (!plan->AT || !plan->BT || !plan->G || !plan->U || !g) {
        free(g);
        wino_f32_winograd_release(plan);
        return WINO_OUT_OF_MEMORY;
    }
    for (int k = 0; k < K; k++)
        for (int c = 0; c < C; c++) {
            for (int i = 0; i < r; i++)
                for (int j = 0; j < r; j++)
                    g[i * r + j] = desc->layout == WINO_LAYOUT_NCHW
                                       ? weights[(((size_t)k * C + c) * r + i) * r + j]
                                       : weights[(((size_t)k * r + i) * r + j) * C + c];
            f32_sandwich(plan->G, a, r, g, g + r * r,
                         plan->U + ((size_t)k * C + c) * (size_t)(a * a));
        }
    free(g);
    return WINO_SUCCESS;
}

void wino_f32_winograd_release(struct wino_f32_winograd *plan)
{
    free(plan->AT);
    free(plan->BT);
    free(plan->G);
    free(plan->U);
    memset(plan, 0, sizeof *plan);
}

size_t wino_f32_winograd_workspace_floats(const struct wino_f32_winograd *plan,
                                          const struct wino_conv2d_desc *desc)
{
    const size_t aa = (size_t)plan->alpha * (size_t)plan->alpha;
    return (size_t)desc->c * aa + 3 * aa; /* V for all channels, d / M, tmp, Y */
}

void wino_f32_winograd_run(const struct wino_f32_winograd *plan,
                           const struct wino_conv2d_desc *desc, int p, int q, const float *x,
                           const struct wino_epilogue *ep, float *y, float *ws)
{
    const int m = plan->m, a = plan->alpha, C = desc->c, K = desc->k, H = desc->h, W = desc->w;
    const size_t aa = (size_t)(a * a);
    const int nhwc = desc->layout == WINO_LAYOUT_NHWC;
    float *V = ws, *dm = ws + (size_t)C * aa, *tmp = dm + aa, *Y = tmp + aa;
    for (int n = 0; n < desc->n; n++)
        for (int ty = 0; ty < p; ty += m)
            for (int tx = 0; tx < q; tx += m) {
                for (int c = 0; c < C; c++) {
                    for (int i = 0; i < a; i++)
                        for (int j = 0; j < a; j++) {
                            const int hi = ty - desc->pad_h + i, wi = tx - desc->pad_w + j;
                            float v = 0.0f;
                            if (hi >= 0 && hi < H && wi >= 0 && wi < W)
                                v = nhwc ? x[(((size_t)n * H + hi) * W + wi) * C + c]
                                         : x[(((size_t)n * C + c) * H + hi) * W + wi];
                            dm[i * a + j] = v;
                        }
                    f32_sandwich(plan->BT, a, a, dm, tmp, V + (size_t)c * aa);
                }
                for (int k = 0; k < K; k++) {
                    memset(dm, 0, sizeof(float) * aa);
                    const float *U = plan->U + (size_t)k * C * aa;
                    for (int c = 0; c < C; c++)
                        for (size_t e = 0; e < aa; e++)
                            dm[e] += U[(size_t)c * aa + e] * V[(size_t)c * aa + e];
                    f32_sandwich(plan->AT, m, a, dm, tmp, Y);
                    for (int i = 0; i < m && ty + i < p; i++)
                        for (int j = 0; j < m && tx + j < q; j++) {
                            const size_t o = nhwc ? (((size_t)n * p + ty + i) * q + tx + j) * K + k
                                                  : (((size_t)n * K + k) * p + ty + i) * q + tx + j;
                            y[o] = wino_epilogue_one(ep, k, Y[i * m + j]);
                        }
                }
            }
}
