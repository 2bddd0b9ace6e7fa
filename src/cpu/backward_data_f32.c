#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include "cpu/backward_data_f32.h"

#include <stdlib.h>
#include <string.h>

#include "base/conv_desc.h"
#include "base/error.h"
#include "cpu/backward_layout.h"
#include "cpu/backward_parallel.h"

/* Input pixels per GEMM block at most: rows, a multiple of the AVX-512 kernel's 14. */
#define BLOCK_ROWS (14 * 8)

static size_t round64(size_t bytes)
{
    return (bytes + 63) / 64 * 64;
}

/* The taps of one phase along one axis: the taps t with (t * dilation - a - pad) divisible by
 * stride, where a is the phase (input index mod stride). Returns how many; with list, writes
 * list[0] = a, list[1] = the count, list[2..] = the taps. */
static int phase_taps(int a, int taps, int stride, int pad, int dilation, int *list)
{
    int count = 0;
    for (int t = 0; t < taps; t++) {
        const long long shift = (long long)t * dilation - a - pad;
        if (shift % stride == 0 && list)
            list[2 + count] = t;
        count += shift % stride == 0;
    }
    if (list) {
        list[0] = a;
        list[1] = count;
    }
    return count;
}

/* The phases along one axis that receive taps (at most min(taps, stride)): fills rows[]
 * (entries of taps + 2 ints) and returns how many. Phases past the image (a >= size) hold no
 * pixel and are left out. */
static int axis_phases(int size, int taps, int stride, int pad, int dilation, int *rows)
{
    int n = 0;
    for (int a = 0; a < stride && a < size; a++)
        if (phase_taps(a, taps, stride, pad, dilation, NULL))
            phase_taps(a, taps, stride, pad, dilation, rows + (size_t)n++ * (taps + 2));
    return n;
}

static int min3(int a, int b, int c)
{
    const int ab = a < b ? a : b;
    return ab < c ? ab : c;
}

/* The tap lists of phase f (row-major over phase rows and columns). */
static const int *phase_h(const struct wino_f32_backward_data *bd,
                          const struct wino_conv2d_desc *d, int f)
{
    return bd->taps_h + (size_t)(f / bd->phase_cols) * (d->r + 2);
}

static const int *phase_w(const struct wino_f32_backward_data *bd,
                          const struct wino_conv2d_desc *d, int f)
{
    return bd->taps_w + (size_t)(f % bd->phase_cols) * (d->s + 2);
}

/* GEMM blocks of `pixels` rows of depth max_inner and width n: two a thread or more where the
 * pixels allow, in whole micro-panels of the GEMM (a 7 x 7 map at batch 1 was one block: one
 * thread worked); the per-thread buffers they take. */
static void plan_blocks(struct wino_f32_backward_data *bd, long pixels, int n)
{
    const long share = (pixels + 2L * bd->threads - 1) / (2L * bd->threads);
    const int rows = wino_f32_gemm_kernel_rows(bd->isa);
    const long block = (share + rows - 1) / rows * rows;
    bd->block = (int)(block > BLOCK_ROWS ? BLOCK_ROWS : block);
    bd->a_bytes = round64(sizeof(float) * (size_t)bd->block * (size_t)bd->max_inner);
    bd->c_bytes = round64(sizeof(float) * (size_t)bd->block * (size_t)n);
    bd->gemm_bytes = round64(wino_f32_gemm_packed_scratch_bytes(bd->isa, bd->block, n,
                                                                bd->max_inner));
}

/* The scatter form: one K x (R S C) B, b[k][(i S + j) C + c] = w[k][c][i][j]; bands of input
 * rows, about one a thread. */
static enum wino_status prepare_scatter(struct wino_f32_backward_data *bd,
                                        const struct wino_conv2d_desc *d, const float *weights)
{
    const int taps = d->r * d->s * d->c;
    bd->scatter = 1;
    bd->max_inner = d->k;
    bd->isa = wino_f32_packed_gemm_isa_for(d->k, taps);
    const long bands = ((long)bd->threads + d->n - 1) / d->n;
    bd->bands = (int)(bands < d->h ? bands : d->h);
    float *b = malloc(sizeof(float) * (size_t)d->k * (size_t)taps);
    bd->w = calloc(1, sizeof *bd->w);
    if (!b || !bd->w ||
        posix_memalign(&bd->w[0], 64, wino_f32_gemm_packed_b_bytes(bd->isa, d->k, taps))) {
        if (bd->w)
            bd->w[0] = NULL;
        free(b);
        return WINO_OUT_OF_MEMORY;
    }
    const struct wino_strides4 ws = wino_w_strides(d);
    float *row = b;
    for (int k = 0; k < d->k; k++)
        for (int i = 0; i < d->r; i++)
            for (int j = 0; j < d->s; j++)
                for (int c = 0; c < d->c; c++)
                    *row++ = weights[k * ws.a + c * ws.b + i * ws.c + j * ws.d];
    wino_f32_gemm_pack_b(bd->isa, d->k, taps, b, taps, bd->w[0]);
    free(b);
    /* the pixels of dy that a band reads: its share of the image's and the taps' overlap */
    int p = 0, q = 0;
    wino_conv2d_output_size(d, &p, &q);
    plan_blocks(bd, (long)d->n * bd->bands * ((p + bd->bands - 1) / bd->bands + d->r) * q, taps);
    return WINO_SUCCESS;
}

enum wino_status wino_f32_backward_data_prepare(struct wino_f32_backward_data *bd,
                                                const struct wino_conv2d_desc *d,
                                                const float *weights, int threads)
{
    memset(bd, 0, sizeof *bd);
    struct wino_conv_sizes sz;
    if (wino_conv_desc_check(d, &sz) || (size_t)d->r * d->s * d->k > 0x7fffffff)
        return WINO_INVALID_ARGUMENT;
    bd->threads = threads;
    if (d->c < WINO_BWD_DATA_SCATTER_BELOW_C && (size_t)d->r * d->s * d->c <= 0x7fffffff)
        return prepare_scatter(bd, d, weights);
    bd->taps_h = malloc(sizeof(int) * (size_t)min3(d->r, d->stride_h, d->h) * (size_t)(d->r + 2));
    bd->taps_w = malloc(sizeof(int) * (size_t)min3(d->s, d->stride_w, d->w) * (size_t)(d->s + 2));
    if (!bd->taps_h || !bd->taps_w)
        return WINO_OUT_OF_MEMORY;
    bd->phase_rows = axis_phases(d->h, d->r, d->stride_h, d->pad_h, d->dilation_h, bd->taps_h);
    bd->phase_cols = axis_phases(d->w, d->s, d->stride_w, d->pad_w, d->dilation_w, bd->taps_w);
    const int phases = bd->phase_rows * bd->phase_cols;
    if (phases && !(bd->w = calloc((size_t)phases, sizeof *bd->w)))
        return WINO_OUT_OF_MEMORY;
    const struct wino_strides4 ws = wino_w_strides(d);
    for (int f = 0; f < phases; f++) {
        const int inner = phase_h(bd, d, f)[1] * phase_w(bd, d, f)[1] * d->k;
        bd->max_inner = inner > bd->max_inner ? inner : bd->max_inner;
    }
    bd->isa = wino_f32_packed_gemm_isa_for(bd->max_inner, d->c);
    for (int f = 0; f < phases; f++) {
        const int *th = phase_h(bd, d, f), *tw = phase_w(bd, d, f);
        const int inner = th[1] * tw[1] * d->k;
        /* b[((ti * taps_w + tj) * K + k) * C + c] = w[k][c][i][j] */
        float *b = malloc(sizeof(float) * (size_t)inner * (size_t)d->c);
        if (!b || posix_memalign(&bd->w[f], 64,
                                 wino_f32_gemm_packed_b_bytes(bd->isa, inner, d->c))) {
            bd->w[f] = NULL;
            free(b);
            return WINO_OUT_OF_MEMORY;
        }
        float *row = b;
        for (int ti = 0; ti < th[1]; ti++)
            for (int tj = 0; tj < tw[1]; tj++)
                for (int k = 0; k < d->k; k++)
                    for (int c = 0; c < d->c; c++)
                        *row++ = weights[k * ws.a + c * ws.b + th[2 + ti] * ws.c +
                                         tw[2 + tj] * ws.d];
        wino_f32_gemm_pack_b(bd->isa, inner, d->c, b, d->c, bd->w[f]);
        free(b);
    }
    plan_blocks(bd, (long)d->n * d->h * d->w, d->c);
    return WINO_SUCCESS;
}

void wino_f32_backward_data_release(struct wino_f32_backward_data *bd)
{
    const int packed = bd->scatter ? 1 : bd->phase_rows * bd->phase_cols;
    for (int f = 0; bd->w && f < packed; f++)
        free(bd->w[f]);
    free(bd->w);
    free(bd->taps_h);
    free(bd->taps_w);
    memset(bd, 0, sizeof *bd);
}

size_t wino_f32_backward_data_workspace_bytes(const struct wino_f32_backward_data *bd)
{
    return (bd->a_bytes + bd->c_bytes + bd->gemm_bytes) * (size_t)bd->threads;
}

/* Pixels of the phase starting at a along an axis of size pixels. */
static int phase_pixels(int size, int a, int stride)
{
    return a < size ? (size - a - 1) / stride + 1 : 0; /* rounded up without overflow */
}

/* Whether a phase of the list (taps[a * pitch] its first pixel, a < phases) starts at residue. */
static int residue_covered(const int *taps, int phases, int pitch, int residue)
{
    for (int a = 0; a < phases; a++)
        if (taps[(size_t)a * pitch] == residue)
            return 1;
    return 0;
}

/* Sets dx to zero on the pixels of image n no phase covers (stride > 1, rows or columns whose
 * residue receives no tap): whole rows at once in NHWC, else pixel by pixel. */
static void zero_uncovered(const struct wino_f32_backward_data *bd,
                           const struct wino_conv2d_desc *d, int n, float *dx)
{
    const struct wino_strides4 xs = wino_x_strides(d);
    const size_t C = (size_t)d->c;
    const int nhwc = d->layout == WINO_LAYOUT_NHWC;
    for (int h = 0; h < d->h; h++) {
        const int row_covered =
            residue_covered(bd->taps_h, bd->phase_rows, d->r + 2, h % d->stride_h);
        float *row = dx + n * xs.a + h * xs.c;
        if (!row_covered && nhwc) {
            memset(row, 0, sizeof(float) * (size_t)d->w * C);
            continue;
        }
        for (int v = 0; v < d->w; v++) {
            if (row_covered &&
                residue_covered(bd->taps_w, bd->phase_cols, d->s + 2, v % d->stride_w))
                continue;
            float *px = row + v * xs.d;
            if (nhwc)
                memset(px, 0, sizeof(float) * C);
            else
                for (size_t c = 0; c < C; c++)
                    px[(ptrdiff_t)c * xs.b] = 0.0f;
        }
    }
}

/* The dy values of the taps of phase (th, tw) for pixels t0 .. t0 + nb - 1 of the phase grid
 * (nv pixels per row) of image n: a[l][(ti * tw[1] + tj) * K + k], zero where the tap reads no
 * output. */
static void gather_dy(const struct wino_conv2d_desc *d, int p, int q, const float *dy, int n,
                      const int *th, const int *tw, int nv, long t0, int nb, float *a)
{
    const struct wino_strides4 ys = wino_y_strides(d, p, q);
    const int K = d->k;
    for (int l = 0; l < nb; l++) {
        const long t = t0 + l;
        const int h = th[0] + (int)(t / nv) * d->stride_h;
        const int v = tw[0] + (int)(t % nv) * d->stride_w;
        for (int ti = 0; ti < th[1]; ti++) {
            /* exact by the choice of the phase's taps */
            const long long pp = ((long long)h + d->pad_h - (long long)th[2 + ti] * d->dilation_h) /
                                 d->stride_h;
            for (int tj = 0; tj < tw[1]; tj++) {
                const long long qq =
                    ((long long)v + d->pad_w - (long long)tw[2 + tj] * d->dilation_w) /
                    d->stride_w;
                float *dst = a + ((size_t)l * th[1] * tw[1] + (size_t)ti * tw[1] + tj) * K;
                if (pp < 0 || pp >= p || qq < 0 || qq >= q) {
                    memset(dst, 0, sizeof(float) * (size_t)K);
                    continue;
                }
                const float *src = dy + n * ys.a + (ptrdiff_t)pp * ys.c + (ptrdiff_t)qq * ys.d;
                if (ys.b == 1)
                    memcpy(dst, src, sizeof(float) * (size_t)K);
                else
                    for (int k = 0; k < K; k++)
                        dst[k] = src[k * ys.b];
            }
        }
    }
}

/* What every work item of a run needs. */
struct data_run {
    const struct wino_f32_backward_data *bd;
    const struct wino_conv2d_desc *d;
    int p, q;
    long items; /* per image: the blocks of every phase */
    const float *dy;
    float *dx;
    char *ws;
};

/* Images [begin, end): the pixels no phase covers, set to zero. */
static void zero_images(void *arg, long begin, long end, int worker)
{
    const struct data_run *r = arg;
    (void)worker;
    for (long n = begin; n < end; n++)
        zero_uncovered(r->bd, r->d, (int)n, r->dx);
}

/* Work items [begin, end): a block of one phase's pixels of one image each. */
static void data_items(void *arg, long begin, long end, int worker)
{
    const struct data_run *r = arg;
    const struct wino_f32_backward_data *bd = r->bd;
    const struct wino_conv2d_desc *d = r->d;
    const struct wino_strides4 xs = wino_x_strides(d);
    const int direct_out = d->layout == WINO_LAYOUT_NHWC && d->stride_h == 1 && d->stride_w == 1;
    char *mine = r->ws + (bd->a_bytes + bd->c_bytes + bd->gemm_bytes) * (size_t)worker;
    float *a = (float *)mine, *c = (float *)(mine + bd->a_bytes);
    void *scratch = mine + bd->a_bytes + bd->c_bytes;
    for (long it = begin; it < end; it++) {
        const int n = (int)(it / r->items);
        long b = it % r->items;
        int f = 0;
        const int *th = NULL, *tw = NULL;
        int nv = 0;
        long pix = 0;
        for (;; f++) { /* find the phase of block b */
            th = phase_h(bd, d, f);
            tw = phase_w(bd, d, f);
            nv = phase_pixels(d->w, tw[0], d->stride_w);
            pix = (long)phase_pixels(d->h, th[0], d->stride_h) * nv;
            const long blocks = (pix + bd->block - 1) / bd->block;
            if (b < blocks)
                break;
            b -= blocks;
        }
        const long t0 = b * bd->block;
        const int nb = (int)(pix - t0 < bd->block ? pix - t0 : bd->block);
        const int inner = th[1] * tw[1] * d->k;
        gather_dy(d, r->p, r->q, r->dy, n, th, tw, nv, t0, nb, a);
        float *out = direct_out ? r->dx + n * xs.a + t0 * d->c : c;
        wino_f32_gemm_packed(bd->isa, nb, d->c, inner, a, inner, bd->w[f], out, d->c, 0,
                             scratch);
        for (int l = 0; l < nb && !direct_out; l++) {
            const int h = th[0] + (int)((t0 + l) / nv) * d->stride_h;
            const int v = tw[0] + (int)((t0 + l) % nv) * d->stride_w;
            float *px = r->dx + n * xs.a + h * xs.c + v * xs.d;
            if (xs.b == 1)
                memcpy(px, c + (size_t)l * d->c, sizeof(float) * (size_t)d->c);
            else
                for (int ch = 0; ch < d->c; ch++)
                    px[ch * xs.b] = c[(size_t)l * d->c + ch];
        }
    }
}

/* Work items [begin, end) of the scatter form: a band of input rows of one image each, set to
 * zero, then for each block of the dy pixels whose taps reach the band, the GEMM dy (pixels x K)
 * times B (K x R S C) and the sums of its rows' taps into the band's pixels. Bands are disjoint,
 * so no two items write the same dx; the dy rows next to a band's edges are multiplied by both
 * its items. */
static void scatter_items(void *arg, long begin, long end, int worker)
{
    const struct data_run *r = arg;
    const struct wino_f32_backward_data *bd = r->bd;
    const struct wino_conv2d_desc *d = r->d;
    const struct wino_strides4 xs = wino_x_strides(d), ys = wino_y_strides(d, r->p, r->q);
    const int C = d->c, K = d->k, taps = d->r * d->s * C;
    char *mine = r->ws + (bd->a_bytes + bd->c_bytes + bd->gemm_bytes) * (size_t)worker;
    float *a = (float *)mine, *cols = (float *)(mine + bd->a_bytes);
    void *scratch = mine + bd->a_bytes + bd->c_bytes;
    for (long it = begin; it < end; it++) {
        const int n = (int)(it / bd->bands), band = (int)(it % bd->bands);
        const int h0 = (int)((long)d->h * band / bd->bands);
        const int h1 = (int)((long)d->h * (band + 1) / bd->bands);
        for (int h = h0; h < h1; h++) {
            float *row = r->dx + n * xs.a + h * xs.c;
            if (xs.b == 1)
                memset(row, 0, sizeof(float) * (size_t)d->w * C);
            else
                for (int c = 0; c < C; c++)
                    memset(row + c * xs.b, 0, sizeof(float) * (size_t)d->w);
        }
        /* dy rows pp with pp stride - pad + i dilation in [h0, h1) for some tap i */
        const long lo = (long)h0 + d->pad_h - (long)(d->r - 1) * d->dilation_h;
        const int pp0 = lo <= 0 ? 0 : (int)((lo + d->stride_h - 1) / d->stride_h);
        int pp1 = (int)(((long)h1 - 1 + d->pad_h) / d->stride_h) + 1;
        pp1 = pp1 < r->p ? pp1 : r->p;
        for (long t0 = (long)pp0 * r->q; t0 < (long)pp1 * r->q; t0 += bd->block) {
            const int nb = (int)((long)pp1 * r->q - t0 < bd->block ? (long)pp1 * r->q - t0
                                                                    : bd->block);
            /* NHWC: the block's dy pixels lie K apart as they are; NCHW: gathered */
            const float *rows = ys.b == 1 ? r->dy + n * ys.a + t0 * ys.d : a;
            for (int l = 0; l < nb && ys.b != 1; l++) {
                const int pp = (int)((t0 + l) / r->q), qq = (int)((t0 + l) % r->q);
                const float *src = r->dy + n * ys.a + pp * ys.c + qq * ys.d;
                for (int k = 0; k < K; k++)
                    a[(size_t)l * K + k] = src[k * ys.b];
            }
            wino_f32_gemm_packed(bd->isa, nb, taps, K, rows, K, bd->w[0], cols, taps, 0,
                                 scratch);
            for (int l = 0; l < nb; l++) {
                const int pp = (int)((t0 + l) / r->q), qq = (int)((t0 + l) % r->q);
                const float *tap = cols + (size_t)l * taps;
                for (int i = 0; i < d->r; i++) {
                    const long h = (long)pp * d->stride_h - d->pad_h + (long)i * d->dilation_h;
                    if (h < h0 || h >= h1)
                        continue;
                    float *row = r->dx + n * xs.a + h * xs.c;
                    const long v0 = (long)qq * d->stride_w - d->pad_w;
                    if (xs.b == 1 && d->dilation_w == 1) { /* the row's taps: one run */
                        const long j0 = v0 < 0 ? -v0 : 0;
                        const long j1 = d->w - v0 < d->s ? d->w - v0 : d->s;
                        const float *from = tap + ((size_t)i * d->s + j0) * C;
                        float *px = row + (v0 + j0) * C;
                        for (long e = 0; e < (j1 - j0) * C; e++)
                            px[e] += from[e];
                        continue;
                    }
                    for (int j = 0; j < d->s; j++) {
                        const long v = v0 + (long)j * d->dilation_w;
                        if (v < 0 || v >= d->w)
                            continue;
                        const float *from = tap + ((size_t)i * d->s + j) * C;
                        float *px = row + v * xs.d;
                        for (int c = 0; c < C; c++)
                            px[c * xs.b] += from[c];
                    }
                }
            }
        }
    }
}

void wino_f32_backward_data_run(const struct wino_f32_backward_data *bd,
                                const struct wino_conv2d_desc *d, int p, int q, const float *dy,
                                float *dx, void *ws)
{
    struct data_run r = {bd, d, p, q, 0, dy, dx, ws};
    if (bd->scatter) {
        wino_backward_parallel(bd->threads, (long)d->n * bd->bands, scatter_items, &r);
        return;
    }
    for (int f = 0; f < bd->phase_rows * bd->phase_cols; f++) {
        const int *th = phase_h(bd, d, f), *tw = phase_w(bd, d, f);
        const long pix = (long)phase_pixels(d->h, th[0], d->stride_h) *
                         phase_pixels(d->w, tw[0], d->stride_w);
        r.items += (pix + bd->block - 1) / bd->block;
    }
    if (d->stride_h > 1 || d->stride_w > 1)
        wino_backward_parallel(bd->threads, d->n, zero_images, &r);
    wino_backward_parallel(bd->threads, r.items * d->n, data_items, &r);
}
