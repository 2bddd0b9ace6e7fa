#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include "cpu/direct_f32.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/conv_desc.h"
#include "base/error.h"
#include "cpu/layout_f32.h"
#include "cpu/thread_pool.h"

/* Output pixels per block: GEMM rows, at most this many and a multiple of the kernel's rows
 * (wino_f32_gemm_kernel_rows). */
#define BLOCK_ROWS (14 * 8)

static size_t round64(size_t bytes)
{
    return (bytes + 63) / 64 * 64;
}

enum wino_status wino_f32_direct_shape(struct wino_f32_direct *dc,
                                       const struct wino_conv2d_desc *d)
{
    const size_t crs = (size_t)d->c * (size_t)d->r * (size_t)d->s;
    struct wino_conv_sizes sz;
    size_t col;
    if (crs > (size_t)0x7fffffff || wino_conv_desc_check(d, &sz) ||
        wino_mul_size(crs, 4 * (size_t)BLOCK_ROWS, &col))
        return WINO_INVALID_ARGUMENT;
    struct wino_f32_direct s = *dc;
    /* at least two blocks per thread where the output allows it */
    const long pixels = (long)d->n * sz.p * sz.q,
               share = (pixels + 2L * s.threads - 1) / (2L * s.threads);
    const int rows = wino_f32_gemm_kernel_rows(s.isa);
    const long block = (share + rows - 1) / rows * rows, most = BLOCK_ROWS / rows * rows;
    s.block = (int)(block < rows ? rows : block > most ? most : block);
    s.col_bytes = round64(col);
    s.gemm_bytes = round64(wino_f32_gemm_packed_scratch_bytes(s.isa, s.block, d->k, (int)crs));
    s.x_bytes = s.y_bytes = 0;
    if (d->layout == WINO_LAYOUT_NCHW) {
        s.x_bytes = round64(4 * sz.x_elems);
        s.y_bytes = round64(4 * sz.y_elems);
    }
    size_t all;
    if (s.gemm_bytes > SIZE_MAX - s.col_bytes ||
        wino_mul_size(s.col_bytes + s.gemm_bytes, (size_t)s.threads, &all) ||
        s.x_bytes > SIZE_MAX - all || s.y_bytes > SIZE_MAX - all - s.x_bytes)
        return WINO_INVALID_ARGUMENT;
    s.workspace_bytes = all + s.x_bytes + s.y_bytes;
    *dc = s;
    return WINO_SUCCESS;
}

enum wino_status wino_f32_direct_prepare(struct wino_f32_direct *dc,
                                         const struct wino_conv2d_desc *d, const float *weights,
                                         int threads)
{
    memset(dc, 0, sizeof *dc);
    const size_t K = (size_t)d->k, C = (size_t)d->c, rs = (size_t)d->r * (size_t)d->s;
    const size_t crs = C * rs;
    dc->threads = threads;
    dc->isa = wino_f32_packed_gemm_isa_for((int)crs, d->k);
    enum wino_status st = wino_f32_direct_shape(dc, d);
    if (st)
        return st;
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
    return dc->workspace_bytes;
}

/* Rows of taps of output pixels o0 .. o0 + nb - 1 of image n (NHWC x): col[l][(i S + j) C + c],
 * zero where a tap falls outside the image. A filter row's taps inside the image are one run of
 * x where they are adjacent (one copy: a stem of 3 channels has 21 floats a row, not 7 copies of
 * 3). */
static void im2row(const struct wino_conv2d_desc *d, int q, const float *x, int n, long o0, int nb,
                   float *col)
{
    const size_t C = (size_t)d->c, S = (size_t)d->s, taps = (size_t)d->r * S;
    for (int l = 0; l < nb; l++) {
        const int p = (int)((o0 + l) / q), qq = (int)((o0 + l) % q);
        const int h0 = p * d->stride_h - d->pad_h, w0 = qq * d->stride_w - d->pad_w;
        int j0, j1;
        wino_taps_inside(w0, d->s, d->dilation_w, d->w, &j0, &j1);
        float *row = col + (size_t)l * taps * C;
        for (int i = 0; i < d->r; i++) {
            const int h = h0 + i * d->dilation_h;
            float *dst = row + (size_t)i * S * C;
            if (h < 0 || h >= d->h || j1 <= j0) {
                memset(dst, 0, sizeof(float) * S * C);
                continue;
            }
            if (j0 > 0) /* calls of no bytes cost as much as a stem's copies */
                memset(dst, 0, sizeof(float) * (size_t)j0 * C);
            if ((size_t)j1 < S)
                memset(dst + (size_t)j1 * C, 0, sizeof(float) * (S - (size_t)j1) * C);
            /* tap j0's pixel, the first inside the image */
            const float *src =
                x + (((size_t)n * d->h + h) * d->w + (size_t)(w0 + j0 * d->dilation_w)) * C;
            if (d->dilation_w == 1)
                memcpy(dst + (size_t)j0 * C, src, sizeof(float) * (size_t)(j1 - j0) * C);
            else
                for (int j = j0; j < j1; j++)
                    memcpy(dst + (size_t)j * C, src + (size_t)(j - j0) * d->dilation_w * C,
                           sizeof(float) * C);
        }
    }
}

/* What every block of a run needs. */
struct direct_run {
    const struct wino_f32_direct *dc;
    const struct wino_conv2d_desc *d;
    int q, crs;
    long pq, blocks; /* output pixels and blocks per image */
    const float *x;  /* NHWC */
    const struct wino_epilogue *ep;
    float *y; /* NHWC */
    char *ws;
};

/* Blocks [begin, end) of all images: rows of taps, GEMM, epilogue. */
static void direct_blocks(void *arg, long begin, long end, int worker)
{
    const struct direct_run *r = arg;
    const struct wino_f32_direct *dc = r->dc;
    const int K = r->d->k;
    char *mine = r->ws + (dc->col_bytes + dc->gemm_bytes) * (size_t)worker;
    float *col = (float *)mine;
    void *scratch = mine + dc->col_bytes;
    for (long b = begin; b < end; b++) {
        const int n = (int)(b / r->blocks);
        const long o0 = b % r->blocks * dc->block;
        const int nb = (int)(r->pq - o0 < dc->block ? r->pq - o0 : dc->block);
        float *out = r->y + ((size_t)n * (size_t)r->pq + (size_t)o0) * K;
        im2row(r->d, r->q, r->x, n, o0, nb, col);
        wino_f32_gemm_packed(dc->isa, nb, K, r->crs, col, r->crs, dc->w, out, K, 0, scratch);
        if (r->ep->bias || r->ep->relu)
            for (int l = 0; l < nb; l++)
                wino_epilogue_pixel(r->ep, out + (size_t)l * K, out + (size_t)l * K, K);
    }
}

void wino_f32_direct_run(const struct wino_f32_direct *dc, const struct wino_conv2d_desc *d,
                         int p, int q, const float *x, const struct wino_epilogue *ep, float *y,
                         void *ws)
{
    const long pq = (long)p * q;
    struct direct_run r = {dc, d, q, d->c * d->r * d->s, pq, (pq + dc->block - 1) / dc->block,
                           x, ep, y, ws};
    char *shared = (char *)ws + (dc->col_bytes + dc->gemm_bytes) * (size_t)dc->threads;
    if (d->layout == WINO_LAYOUT_NCHW) { /* compute in NHWC copies */
        float *xt = (float *)shared;
        r.y = (float *)(shared + dc->x_bytes);
        wino_f32_transpose_batched(x, xt, d->n, (size_t)d->c, (size_t)d->h * d->w, dc->threads,
                                   0);
        r.x = xt;
    }
    wino_parallel_for(dc->threads, (long)d->n * r.blocks, 1, direct_blocks, &r);
    if (d->layout == WINO_LAYOUT_NCHW)
        wino_f32_transpose_batched(r.y, y, d->n, (size_t)pq, (size_t)d->k, dc->threads,
                                   sizeof(float) * (size_t)d->n * pq * d->k >=
                                       WINO_F32_STREAM_BYTES);
}
