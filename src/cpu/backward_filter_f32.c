#include "cpu/backward_filter_f32.h"

#include <stdlib.h>
#include <string.h>

#include "base/conv_desc.h"
#include "base/error.h"
#include "cpu/backward_layout.h"
#include "cpu/backward_parallel.h"
#include "cpu/layout_f32.h"

/* dW columns per work item (a multiple of both GEMM kernels' panel widths) and dy pixels per
 * GEMM (its k: one cache-sized block of the GEMM). */
#define COL_BLOCK 256
#define PIX_BLOCK 256

/* One column of dW: the tap (i, j) and the offset of its x element from the element of the
 * pixel's window origin (c * stride_c + i * dilation_h * stride_h + j * dilation_w * stride_w). */
struct wino_dw_column {
    ptrdiff_t off;
    int i, j;
};

static size_t round64(size_t bytes)
{
    return (bytes + 63) / 64 * 64;
}

int wino_backward_filter_segments(long items_per_segment, int threads, long max_segments,
                                  size_t dw_elems, size_t data_elems)
{
    long z = (4L * threads + items_per_segment - 1) / items_per_segment;
    const size_t by_workspace = 1 + data_elems / 4 / (dw_elems ? dw_elems : 1);
    if ((size_t)z > by_workspace)
        z = (long)by_workspace;
    if (z > max_segments)
        z = max_segments;
    return z < 1 ? 1 : (int)z;
}

/* Kahan's compensated sum, for a block of elements at a time so that it runs in vectors. */
#define REDUCE_BLOCK 256

struct reduce {
    float *dw;
    const float *buckets;
    size_t bucket_stride, count;
    int extra;
};

/* Blocks [begin, end) of REDUCE_BLOCK elements. */
static void reduce_blocks(void *arg, long begin, long end, int worker)
{
    const struct reduce *r = arg;
    (void)worker;
    for (long b = begin; b < end; b++) {
        const size_t e0 = (size_t)b * REDUCE_BLOCK;
        const int n = r->count - e0 < REDUCE_BLOCK ? (int)(r->count - e0) : REDUCE_BLOCK;
        float sum[REDUCE_BLOCK], comp[REDUCE_BLOCK];
        for (int e = 0; e < n; e++) {
            sum[e] = r->dw[e0 + e];
            comp[e] = 0.0f;
        }
        for (int z = 0; z < r->extra; z++) {
            const float *bucket = r->buckets + (size_t)z * r->bucket_stride + e0;
            for (int e = 0; e < n; e++) {
                const float y = bucket[e] - comp[e];
                const float t = sum[e] + y;
                comp[e] = (t - sum[e]) - y;
                sum[e] = t;
            }
        }
        for (int e = 0; e < n; e++)
            r->dw[e0 + e] = sum[e];
    }
}

void wino_f32_buckets_reduce(float *dw, const float *buckets, size_t bucket_stride, int extra,
                             size_t count, int threads)
{
    struct reduce r = {dw, buckets, bucket_stride, count, extra};
    if (extra > 0)
        wino_backward_parallel(threads, (long)((count + REDUCE_BLOCK - 1) / REDUCE_BLOCK),
                               reduce_blocks, &r);
}

enum wino_status wino_f32_backward_filter_direct_prepare(struct wino_f32_backward_filter_direct *bf,
                                                         const struct wino_conv2d_desc *d,
                                                         int threads, int accumulate)
{
    memset(bf, 0, sizeof *bf);
    struct wino_conv_sizes sz;
    const size_t crs = (size_t)d->c * d->r * d->s;
    if (wino_conv_desc_check(d, &sz) || crs > 0x7fffffff)
        return WINO_INVALID_ARGUMENT;
    bf->threads = threads;
    bf->isa = wino_cpu_isa();
    bf->accumulate = accumulate;
    /* Column blocks of COL_BLOCK, halved down to 64 only while the segments the buckets' room
     * allows leave threads fewer than four items: each block's items transpose their pixels of
     * dy again (the stem of ResNet-18, 147 columns in blocks of 64: a third of the GEMMs' time). */
    const long rows = (long)d->n * sz.p, pixels = rows * sz.q;
    const size_t data_elems = sz.x_elems + sz.y_elems + sz.w_elems;
    const long room = wino_backward_filter_segments(1, threads, rows, sz.w_elems, data_elems);
    bf->col_block = COL_BLOCK;
    while (bf->col_block > 64 &&
           (long)((crs + bf->col_block - 1) / bf->col_block) * room < 4L * threads)
        bf->col_block /= 2;
    if ((size_t)bf->col_block > crs)
        bf->col_block = (int)crs;
    bf->pix_block = pixels < PIX_BLOCK ? (int)pixels : PIX_BLOCK;
    const long col_blocks = (long)((crs + bf->col_block - 1) / bf->col_block);
    bf->segments = wino_backward_filter_segments(col_blocks, threads, rows, sz.w_elems, data_elems);
    bf->bucket_floats = round64(sizeof(float) * sz.w_elems) / sizeof(float);
    bf->a_bytes = round64(sizeof(float) * (size_t)d->k * (size_t)bf->pix_block);
    bf->b_bytes = round64(sizeof(float) * (size_t)bf->pix_block * (size_t)bf->col_block);
    bf->gemm_bytes = round64(
        wino_f32_gemm_scratch_bytes(bf->isa, d->k, bf->col_block, bf->pix_block));
    if (!(bf->cols = malloc(sizeof *bf->cols * crs)))
        return WINO_OUT_OF_MEMORY;
    /* column e of a dW row, in dw's layout: NCHW (c, i, j), NHWC (i, j, c) */
    const struct wino_strides4 xs = wino_x_strides(d);
    for (size_t e = 0; e < crs; e++) {
        int c, i, j;
        if (d->layout == WINO_LAYOUT_NHWC) {
            c = (int)(e % (size_t)d->c);
            j = (int)(e / (size_t)d->c % (size_t)d->s);
            i = (int)(e / (size_t)d->c / (size_t)d->s);
        } else {
            j = (int)(e % (size_t)d->s);
            i = (int)(e / (size_t)d->s % (size_t)d->r);
            c = (int)(e / (size_t)d->s / (size_t)d->r);
        }
        bf->cols[e].i = i;
        bf->cols[e].j = j;
        bf->cols[e].off = c * xs.b + (ptrdiff_t)i * d->dilation_h * xs.c +
                          (ptrdiff_t)j * d->dilation_w * xs.d;
    }
    return WINO_SUCCESS;
}

void wino_f32_backward_filter_direct_release(struct wino_f32_backward_filter_direct *bf)
{
    free(bf->cols);
    memset(bf, 0, sizeof *bf);
}

size_t wino_f32_backward_filter_direct_workspace_bytes(
    const struct wino_f32_backward_filter_direct *bf)
{
    return (bf->a_bytes + bf->b_bytes + bf->gemm_bytes) * (size_t)bf->threads +
           sizeof(float) * bf->bucket_floats * (size_t)(bf->segments - 1);
}

/* Pixel l0 + l (flattened over image, output row, column) as (n, p, q). */
struct pixel {
    int n, p, q;
};

static struct pixel pixel_at(long flat, int p, int q)
{
    const struct pixel px = {(int)(flat / q / p), (int)(flat / q % p), (int)(flat % q)};
    return px;
}

/* a[k][l] = dy[n, k, p, q] of pixels l0 .. l0 + nb - 1. */
static void gather_dy(const struct wino_conv2d_desc *d, int p, int q, const float *dy, long l0,
                      int nb, float *a)
{
    if (d->layout == WINO_LAYOUT_NHWC) { /* the pixels' rows of dy: one nb x K matrix */
        wino_f32_transpose_batched(dy + (size_t)l0 * (size_t)d->k, a, 1, (size_t)nb,
                                   (size_t)d->k, 1, 0);
        return;
    }
    const struct wino_strides4 ys = wino_y_strides(d, p, q);
    for (int l = 0; l < nb; l++) {
        const struct pixel px = pixel_at(l0 + l, p, q);
        const float *src = dy + px.n * ys.a + px.p * ys.c + px.q * ys.d;
        for (int k = 0; k < d->k; k++)
            a[(size_t)k * nb + l] = src[k * ys.b];
    }
}

/* gather_x where x is NHWC and a filter row's taps are adjacent: the row's columns (i, j, c),
 * i S C .. (i + 1) S C - 1, are one run of x, inside the image from tap j0 to j1 (one copy a
 * row: a stem of 3 channels has 21 floats a row, not 7 copies of 3). */
static void gather_x_rows(const struct wino_conv2d_desc *d, int p, int q, const float *x, long l0,
                          int nb, int e0, int ne, float *b)
{
    const struct wino_strides4 xs = wino_x_strides(d);
    const int run = d->s * d->c;
    for (int l = 0; l < nb; l++) {
        const struct pixel px = pixel_at(l0 + l, p, q);
        const int h0 = px.p * d->stride_h - d->pad_h, v0 = px.q * d->stride_w - d->pad_w;
        int j0, j1;
        wino_taps_inside(v0, d->s, 1, d->w, &j0, &j1);
        const int in0 = j0 * d->c, in1 = j1 > j0 ? j1 * d->c : in0; /* a row's inside columns */
        float *row = b + (size_t)l * ne - e0;
        for (int e = e0; e < e0 + ne;) {
            const int start = e / run * run, end = start + run < e0 + ne ? start + run : e0 + ne;
            const int h = h0 + e / run * d->dilation_h;
            /* the piece [e, end) of the row: zeros, then x's run [lo, hi), then zeros */
            const int lo = e - start > in0 ? e - start : in0,
                      hi = end - start < in1 ? end - start : in1;
            if (h < 0 || h >= d->h || lo >= hi) {
                memset(row + e, 0, sizeof(float) * (size_t)(end - e));
                e = end;
                continue;
            }
            if (start + lo > e)
                memset(row + e, 0, sizeof(float) * (size_t)(start + lo - e));
            memcpy(row + start + lo, x + px.n * xs.a + h * xs.c + ((ptrdiff_t)v0 * d->c + lo),
                   sizeof(float) * (size_t)(hi - lo));
            if (end > start + hi)
                memset(row + start + hi, 0, sizeof(float) * (size_t)(end - start - hi));
            e = end;
        }
    }
}

/* b[l][e - e0] = the x element of column e of pixel l0 + l, 0 in the padding. Columns go in
 * runs of dw's innermost index (NHWC: the channels of one tap, contiguous in x and all inside
 * or all outside; NCHW: the taps j of one row of one channel). */
static void gather_x(const struct wino_f32_backward_filter_direct *bf,
                     const struct wino_conv2d_desc *d, int p, int q, const float *x, long l0,
                     int nb, int e0, int ne, float *b)
{
    const int nhwc = d->layout == WINO_LAYOUT_NHWC, run = nhwc ? d->c : d->s;
    if (nhwc && d->dilation_w == 1) {
        gather_x_rows(d, p, q, x, l0, nb, e0, ne, b);
        return;
    }
    const struct wino_strides4 xs = wino_x_strides(d);
    for (int l = 0; l < nb; l++) {
        const struct pixel px = pixel_at(l0 + l, p, q);
        const int h0 = px.p * d->stride_h - d->pad_h, v0 = px.q * d->stride_w - d->pad_w;
        const ptrdiff_t origin = px.n * xs.a + h0 * xs.c + v0 * xs.d; /* may lie outside x */
        float *row = b + (size_t)l * ne - e0;
        for (int e = e0; e < e0 + ne;) {
            const int end = e / run * run + run < e0 + ne ? e / run * run + run : e0 + ne;
            const struct wino_dw_column *col = &bf->cols[e];
            const int h = h0 + col->i * d->dilation_h, v = v0 + col->j * d->dilation_w;
            if (h < 0 || h >= d->h || (nhwc && (v < 0 || v >= d->w)))
                memset(row + e, 0, sizeof(float) * (size_t)(end - e));
            else if (nhwc)
                memcpy(row + e, x + origin + col->off, sizeof(float) * (size_t)(end - e));
            else
                for (int f = e; f < end; f++) {
                    const int vf = v0 + bf->cols[f].j * d->dilation_w;
                    row[f] = vf >= 0 && vf < d->w ? x[origin + bf->cols[f].off] : 0.0f;
                }
            e = end;
        }
    }
}

/* What every work item of a direct run needs. */
struct direct_run {
    const struct wino_f32_backward_filter_direct *bf;
    const struct wino_conv2d_desc *d;
    int p, q;
    const float *x, *dy;
    float *dw, *buckets;
    char *ws;
};

/* Work items [begin, end): a segment of dy rows and a block of dW's columns each. */
static void direct_items(void *arg, long begin, long end, int worker)
{
    const struct direct_run *r = arg;
    const struct wino_f32_backward_filter_direct *bf = r->bf;
    const int crs = r->d->c * r->d->r * r->d->s, q = r->q;
    const long col_blocks = (crs + bf->col_block - 1) / bf->col_block;
    const long rows = (long)r->d->n * r->p;
    char *mine = r->ws + (bf->a_bytes + bf->b_bytes + bf->gemm_bytes) * (size_t)worker;
    float *a = (float *)mine, *b = (float *)(mine + bf->a_bytes);
    void *scratch = mine + bf->a_bytes + bf->b_bytes;
    for (long it = begin; it < end; it++) {
        const int z = (int)(it / col_blocks);
        const int e0 = (int)(it % col_blocks) * bf->col_block;
        const int ne = crs - e0 < bf->col_block ? crs - e0 : bf->col_block;
        const long l_begin = rows * z / bf->segments * q, l_end = rows * (z + 1) / bf->segments * q;
        float *out = (z ? r->buckets + (size_t)(z - 1) * bf->bucket_floats : r->dw) + e0;
        int acc = z ? 0 : bf->accumulate;
        for (long l0 = l_begin; l0 < l_end || (l0 == l_begin && !acc); l0 += bf->pix_block) {
            const int nb = (int)(l_end - l0 < bf->pix_block ? l_end - l0 : bf->pix_block);
            gather_dy(r->d, r->p, q, r->dy, l0, nb, a);
            gather_x(bf, r->d, r->p, q, r->x, l0, nb, e0, ne, b);
            wino_f32_gemm(bf->isa, r->d->k, ne, nb, a, nb, b, ne, out, crs, acc, scratch);
            acc = 1;
        }
    }
}

void wino_f32_backward_filter_direct_run(const struct wino_f32_backward_filter_direct *bf,
                                         const struct wino_conv2d_desc *d, int p, int q,
                                         const float *x, const float *dy, float *dw, void *ws)
{
    const int crs = d->c * d->r * d->s;
    const size_t per_thread = bf->a_bytes + bf->b_bytes + bf->gemm_bytes;
    float *buckets = (float *)((char *)ws + per_thread * (size_t)bf->threads);
    struct direct_run r = {bf, d, p, q, x, dy, dw, buckets, ws};
    wino_backward_parallel(bf->threads,
                           bf->segments * (long)((crs + bf->col_block - 1) / bf->col_block),
                           direct_items, &r);
    wino_f32_buckets_reduce(dw, buckets, bf->bucket_floats, bf->segments - 1,
                            (size_t)d->k * (size_t)crs, bf->threads);
}
