#include "cpu/direct_f32.h"

#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "core/error.h"

static size_t round64(size_t bytes)
{
    return (bytes + 63) / 64 * 64;
}

enum wino_status wino_f32_direct_prepare(struct wino_f32_direct *dc,
                                         const struct wino_conv2d_desc *d, const float *weights,
                                         int threads)
{
    memset(dc, 0, sizeof *dc);
    const size_t K = (size_t)d->k, crs = (size_t)d->c * (size_t)d->r * (size_t)d->s;
    dc->threads = threads;
    dc->block = 256;
    dc->isa = wino_cpu_isa();
    size_t col;
    if (crs > (size_t)0x7fffffff || wino_mul_size(crs, 4 * (size_t)dc->block, &col))
        return WINO_INVALID_ARGUMENT;
    dc->col_bytes = round64(col);
    dc->gemm_bytes = round64(d->layout == WINO_LAYOUT_NCHW
                                 ? wino_f32_gemm_scratch_bytes(dc->isa, d->k, dc->block, (int)crs)
                                 : wino_f32_gemm_scratch_bytes(dc->isa, dc->block, d->k, (int)crs));
    dc->w = malloc(sizeof(float) * K * crs);
    if (!dc->w)
        return WINO_OUT_OF_MEMORY;
    if (d->layout == WINO_LAYOUT_NCHW) /* K x CRS is the caller's own layout */
        memcpy(dc->w, weights, sizeof(float) * K * crs);
    else /* K x RSC -> RSC x K */
        for (size_t k = 0; k < K; k++)
            for (size_t i = 0; i < crs; i++)
                dc->w[i * K + k] = weights[k * crs + i];
    return WINO_SUCCESS;
}

void wino_f32_direct_release(struct wino_f32_direct *dc)
{
    free(dc->w);
    memset(dc, 0, sizeof *dc);
}

size_t wino_f32_direct_workspace_bytes(const struct wino_f32_direct *dc)
{
    return (dc->col_bytes + dc->gemm_bytes) * (size_t)dc->threads;
}

/* Input value of image n, channel c at (h, w), zero outside the image. */
static float at(const struct wino_conv2d_desc *d, const float *x, int n, int c, int h, int w)
{
    if (h < 0 || h >= d->h || w < 0 || w >= d->w)
        return 0.0f;
    return d->layout == WINO_LAYOUT_NCHW ? x[(((size_t)n * d->c + c) * d->h + h) * d->w + w]
                                         : x[(((size_t)n * d->h + h) * d->w + w) * d->c + c];
}

/* Columns of output pixels o0 .. o0 + nb - 1 of image n. NCHW: col[(c R S) x nb], the row
 * (c, i, j) holding x at each pixel's tap; NHWC: col[nb x (R S C)]. */
static void im2col(const struct wino_conv2d_desc *d, int q, const float *x, int n, long o0, int nb,
                   float *col)
{
    const int nchw = d->layout == WINO_LAYOUT_NCHW;
    for (int l = 0; l < nb; l++) {
        const int p = (int)((o0 + l) / q), qq = (int)((o0 + l) % q);
        const int h0 = p * d->stride_h - d->pad_h, w0 = qq * d->stride_w - d->pad_w;
        for (int c = 0; c < d->c; c++)
            for (int i = 0; i < d->r; i++)
                for (int j = 0; j < d->s; j++) {
                    const float v = at(d, x, n, c, h0 + i * d->dilation_h, w0 + j * d->dilation_w);
                    if (nchw)
                        col[((size_t)(c * d->r + i) * d->s + j) * nb + l] = v;
                    else
                        col[(size_t)l * d->r * d->s * d->c + ((size_t)i * d->s + j) * d->c + c] = v;
                }
    }
}

void wino_f32_direct_run(const struct wino_f32_direct *dc, const struct wino_conv2d_desc *d,
                         int p, int q, const float *x, const struct wino_epilogue *ep, float *y,
                         void *ws)
{
    const long pq = (long)p * q, blocks = (pq + dc->block - 1) / dc->block;
    const int crs = d->c * d->r * d->s, K = d->k;
#pragma omp parallel for num_threads(dc->threads) schedule(dynamic)
    for (long b = 0; b < (long)d->n * blocks; b++) {
        char *mine = (char *)ws + (dc->col_bytes + dc->gemm_bytes) * (size_t)omp_get_thread_num();
        float *col = (float *)mine;
        void *scratch = mine + dc->col_bytes;
        const int n = (int)(b / blocks);
        const long o0 = b % blocks * dc->block;
        const int nb = (int)(pq - o0 < dc->block ? pq - o0 : dc->block);
        im2col(d, q, x, n, o0, nb, col);
        if (d->layout == WINO_LAYOUT_NCHW) { /* y[n][k][o0..] = W (K x CRS) col (CRS x nb) */
            float *out = y + (size_t)n * K * (size_t)pq + (size_t)o0;
            wino_f32_gemm(dc->isa, K, nb, crs, dc->w, crs, col, nb, out, (ptrdiff_t)pq, 0, scratch);
            if (ep->bias || ep->relu)
                for (int k = 0; k < K; k++)
                    for (int l = 0; l < nb; l++)
                        out[(size_t)k * pq + l] = wino_epilogue_one(ep, k, out[(size_t)k * pq + l]);
        } else { /* y[n][o0..][k] = col (nb x RSC) W^T (RSC x K) */
            float *out = y + ((size_t)n * (size_t)pq + (size_t)o0) * K;
            wino_f32_gemm(dc->isa, nb, K, crs, col, crs, dc->w, K, out, K, 0, scratch);
            if (ep->bias || ep->relu)
                for (int l = 0; l < nb; l++)
                    wino_epilogue_pixel(ep, out + (size_t)l * K, out + (size_t)l * K, K);
        }
    }
}
