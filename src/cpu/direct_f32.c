#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include "cpu/direct_f32.h"

#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "core/conv_desc.h"
#include "core/error.h"
#include "cpu/layout_f32.h"

/* Output pixels per block: GEMM rows, a multiple of the AVX-512 kernel's 14. */
#define BLOCK_ROWS (14 * 8)

static size_t round64(size_t bytes)
{
    return (bytes + 63) / 64 * 64;
}

enum wino_status wino_f32_direct_prepare(struct wino_f32_direct *dc,
                                         const struct wino_conv2d_desc *d, const float *weights,
                                         int threads)
{
    memset(dc, 0, sizeof *dc);
    const size_t K = (size_t)d->k, C = (size_t)d->c, rs = (size_t)d->r * (size_t)d->s;
    const size_t crs = C * rs;
    struct wino_conv_sizes sz;
    size_t col;
    if (crs > (size_t)0x7fffffff || wino_conv_desc_check(d, &sz) ||
        wino_mul_size(crs, 4 * (size_t)BLOCK_ROWS, &col))
        return WINO_INVALID_ARGUMENT;
    dc->threads = threads;
    /* at least two blocks per thread where the output allows it */
    const long pixels = (long)d->n * sz.p * sz.q, share = (pixels + 2L * threads - 1) / (2L * threads);
    const long block = (share + 13) / 14 * 14;
    dc->block = (int)(block < 14 ? 14 : block > BLOCK_ROWS ? BLOCK_ROWS : block);
    dc->isa = wino_cpu_isa();
    dc->col_bytes = round64(col);
    dc->gemm_bytes = round64(wino_f32_gemm_packed_scratch_bytes(dc->isa, dc->block, d->k,
                                                                (int)crs));
    if (d->layout == WINO_LAYOUT_NCHW) {
        dc->x_bytes = round64(4 * sz.x_elems);
        dc->y_bytes = round64(4 * sz.y_elems);
    }
    float *wt = malloc(sizeof(float) * K * crs);
    if (!wt || posix_memalign(&dc->w, 64, wino_f32_gemm_packed_b_bytes(dc->isa, (int)crs, d->k))) {
        dc->w = NULL;
        free(wt);
        return WINO_OUT_OF_MEMORY;
    }
    /* wt[((i * S + j) * C + c) * K + k]: the taps of one output pixel in NHWC order */
    for (size_t k = 0; k < K; k++)
        for (size_t c = 0; c < C; c++)
            for (size_t t = 0; t < rs; t++)
                wt[(t * C + c) * K + k] = d->layout == WINO_LAYOUT_NCHW
                                              ? weights[(k * C + c) * rs + t]
                                              : weights[(k * rs + t) * C + c];
    wino_f32_gemm_pack_b(dc->isa, (int)crs, d->k, wt, (ptrdiff_t)K, dc->w);
    free(wt);
    return WINO_SUCCESS;
}

void wino_f32_direct_release(struct wino_f32_direct *dc)
{
    free(dc->w);
    memset(dc, 0, sizeof *dc);
}

size_t wino_f32_direct_workspace_bytes(const struct wino_f32_direct *dc)
{
    return (dc->col_bytes + dc->gemm_bytes) * (size_t)dc->threads + dc->x_bytes + dc->y_bytes;
}

/* Rows of taps of output pixels o0 .. o0 + nb - 1 of image n (NHWC x): col[l][(i S + j) C + c],
 * zero where a tap falls outside the image. */
static void im2row(const struct wino_conv2d_desc *d, int q, const float *x, int n, long o0, int nb,
                   float *col)
{
    const size_t C = (size_t)d->c, taps = (size_t)d->r * d->s;
    for (int l = 0; l < nb; l++) {
        const int p = (int)((o0 + l) / q), qq = (int)((o0 + l) % q);
        const int h0 = p * d->stride_h - d->pad_h, w0 = qq * d->stride_w - d->pad_w;
        float *row = col + (size_t)l * taps * C;
        for (int i = 0; i < d->r; i++)
            for (int j = 0; j < d->s; j++) {
                const int h = h0 + i * d->dilation_h, w = w0 + j * d->dilation_w;
                float *dst = row + ((size_t)i * d->s + j) * C;
                if (h >= 0 && h < d->h && w >= 0 && w < d->w)
                    memcpy(dst, x + (((size_t)n * d->h + h) * d->w + w) * C, sizeof(float) * C);
                else
                    memset(dst, 0, sizeof(float) * C);
            }
    }
}

void wino_f32_direct_run(const struct wino_f32_direct *dc, const struct wino_conv2d_desc *d,
                         int p, int q, const float *x, const struct wino_epilogue *ep, float *y,
                         void *ws)
{
    const long pq = (long)p * q, blocks = (pq + dc->block - 1) / dc->block;
    const int crs = d->c * d->r * d->s, K = d->k;
    char *shared = (char *)ws + (dc->col_bytes + dc->gemm_bytes) * (size_t)dc->threads;
    float *yt = y;
    if (d->layout == WINO_LAYOUT_NCHW) { /* compute in NHWC copies */
        float *xt = (float *)shared;
        yt = (float *)(shared + dc->x_bytes);
        wino_f32_transpose_batched(x, xt, d->n, (size_t)d->c, (size_t)d->h * d->w, dc->threads);
        x = xt;
    }
#pragma omp parallel for num_threads(dc->threads) schedule(dynamic)
    for (long b = 0; b < (long)d->n * blocks; b++) {
        char *mine = (char *)ws + (dc->col_bytes + dc->gemm_bytes) * (size_t)omp_get_thread_num();
        float *col = (float *)mine;
        void *scratch = mine + dc->col_bytes;
        const int n = (int)(b / blocks);
        const long o0 = b % blocks * dc->block;
        const int nb = (int)(pq - o0 < dc->block ? pq - o0 : dc->block);
        float *out = yt + ((size_t)n * (size_t)pq + (size_t)o0) * K;
        im2row(d, q, x, n, o0, nb, col);
        wino_f32_gemm_packed(dc->isa, nb, K, crs, col, crs, dc->w, out, K, 0, scratch);
        if (ep->bias || ep->relu)
            for (int l = 0; l < nb; l++)
                wino_epilogue_pixel(ep, out + (size_t)l * K, out + (size_t)l * K, K);
    }
    if (d->layout == WINO_LAYOUT_NCHW)
        wino_f32_transpose_batched(yt, y, d->n, (size_t)pq, (size_t)K, dc->threads);
}
