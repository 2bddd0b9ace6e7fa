#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include "cpu/bwd_filter_2d_f32.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cpu/backward_layout.h"
#include "cpu/layout_f32.h"
#include "cpu/thread_pool.h"

#define ALPHA 6
#define POS (ALPHA * ALPHA)
#define OUT 3   /* filter taps a side */
#define TILE 4  /* dy pixels a tile side */
#define BLOCK 64 /* rows of M a GEMM work item, and columns (one chunk) */
#define CHUNK_BYTES ((size_t)2 << 20)
/* U and V of every tile up to this many bytes are made at once, and then M in blocks of BLOCK x
 * BLOCK that stay in cache from the products to A^T . A (all of M is 37.7 MB for 512 x 512
 * channels: written, read and cleared, it took longer than the products on 2 cores). */
#define ONE_CHUNK_BYTES ((size_t)16 << 20)

static size_t round64(size_t n)
{
    return (n + 63) / 64 * 64;
}

static int round16(int n)
{
    return (n + 15) / 16 * 16;
}

int wino_f32_bwd_filter_2d_takes(const struct wino_conv2d_desc *d)
{
    return d->r == OUT && d->s == OUT && d->stride_h == 1 && d->stride_w == 1 &&
           d->dilation_h == 1 && d->dilation_w == 1 &&
           wino_f32_transforms_for(OUT, TILE).input != NULL;
}

enum wino_status wino_f32_bwd_filter_2d_prepare(struct wino_f32_bwd_filter_2d *e,
                                                const struct wino_conv2d_desc *d, int p, int q,
                                                int threads, int accumulate)
{
    memset(e, 0, sizeof *e);
    e->threads = threads;
    e->isa = wino_cpu_isa();
    e->accumulate = accumulate;
    e->tf = wino_f32_transforms_for(OUT, TILE);
    e->kp = round16(d->k), e->cp = round16(d->c);
    e->tiles_h = (p + TILE - 1) / TILE, e->tiles_w = (q + TILE - 1) / TILE;
    e->tiles = (long)d->n * e->tiles_h * e->tiles_w;
    const size_t per_tile = (size_t)POS * (e->kp + e->cp) * sizeof(float);
    e->one_chunk = (size_t)e->tiles * per_tile <= ONE_CHUNK_BYTES;
    long chunk = e->one_chunk ? e->tiles : (long)(CHUNK_BYTES / per_tile);
    chunk = chunk < 16 ? 16 : chunk;
    e->chunk = (int)(chunk < e->tiles ? chunk : e->tiles);
    const size_t nhwc = d->layout == WINO_LAYOUT_NCHW
                            ? round64(sizeof(float) * ((size_t)d->n * d->c * d->h * d->w)) +
                                  round64(sizeof(float) * ((size_t)d->n * d->k * p * q))
                            : 0;
    const size_t stage = round64(sizeof(float) * ((size_t)ALPHA * ALPHA * e->cp +
                                                  (size_t)TILE * TILE * e->kp +
                                                  (size_t)OUT * OUT * e->cp +
                                                  (e->one_chunk ? (size_t)POS * BLOCK * BLOCK : 0)));
    e->off_v = 0;
    e->off_u = round64(sizeof(float) * (size_t)POS * e->chunk * e->cp);
    e->off_m = e->off_u + round64(sizeof(float) * (size_t)POS * e->chunk * e->kp);
    e->off_stage = e->off_m + (e->one_chunk ? 0 : round64(sizeof(float) * (size_t)POS * e->kp *
                                                          e->cp));
    e->off_nhwc = e->off_stage + stage * (size_t)threads;
    e->stage_bytes = stage;
    e->bytes = e->off_nhwc + nhwc;
    return WINO_SUCCESS;
}

size_t wino_f32_bwd_filter_2d_workspace_bytes(const struct wino_f32_bwd_filter_2d *e)
{
    return e->bytes;
}

struct run {
    const struct wino_f32_bwd_filter_2d *e;
    const struct wino_conv2d_desc *d;
    int p, q;
    const float *x, *dy; /* NHWC */
    float *dw;
    char *ws;
    long t0; /* the chunk's first tile */
    int tn;  /* its tiles */
    /* V at v[pos * v_pos + tile * v_tile + c], U likewise: plane by plane with one chunk (the
     * products read every plane once for each block of M), else tile by tile (the transforms'
     * stores go to one place a tile instead of 36 streams; the products read it once) */
    ptrdiff_t v_pos, v_tile, u_pos, u_tile;
};

/* The staging of worker (worker < threads): a 6 x 6 window of x, a 4 x 4 tile of dy, 3 x 3 taps,
 * and with one chunk a block of M. */
static float *stage_of(const struct run *r, int worker)
{
    return (float *)(r->ws + r->e->off_stage + r->e->stage_bytes * (size_t)worker);
}

/* size x size pixels of an NHWC map of `channels` from (h0, w0), zero outside the map (height
 * h, width w) and past `channels` up to `pitch`: out[i][j][0 .. pitch). */
static void gather(const float *map, int h, int w, int channels, int h0, int w0, int size,
                   int pitch, float *out)
{
    for (int i = 0; i < size; i++)
        for (int j = 0; j < size; j++) {
            float *o = out + ((size_t)i * size + j) * pitch;
            const int hh = h0 + i, ww = w0 + j;
            if (hh < 0 || hh >= h || ww < 0 || ww >= w) {
                memset(o, 0, sizeof(float) * (size_t)pitch);
                continue;
            }
            memcpy(o, map + ((size_t)hh * w + ww) * channels, sizeof(float) * (size_t)channels);
            memset(o + channels, 0, sizeof(float) * (size_t)(pitch - channels));
        }
}

/* fn over the size x size square of an NHWC map (h x w x channels) from (h0, w0) into out
 * (rows out_row, columns out_col apart): read in place when it lies inside the map, else
 * gathered with its zeros into stage (pitch lanes). Lanes past `channels` are left as they
 * are in place: they reach only the rows or columns of M that no tap is taken from. */
static void transform_square(wino_f32_transform_fn *fn, const float *map, int h, int w,
                             int channels, int h0, int w0, int size, int pitch, float *stage,
                             float *out, ptrdiff_t out_row, ptrdiff_t out_col)
{
    if (h0 >= 0 && w0 >= 0 && h0 + size <= h && w0 + size <= w) {
        fn(map + ((size_t)h0 * w + w0) * channels, (ptrdiff_t)w * channels, channels, out,
           out_row, out_col, channels);
        return;
    }
    gather(map, h, w, channels, h0, w0, size, pitch, stage);
    fn(stage, (ptrdiff_t)size * pitch, pitch, out, out_row, out_col, pitch);
}

/* Tiles [begin, end) of the chunk: V (B^T x B of the 6 x 6 window) and U (G dy G^T of the 4 x 4
 * tile), at v_pos, v_tile and u_pos, u_tile. */
static void transform_tiles(void *arg, long begin, long end, int worker)
{
    const struct run *r = arg;
    const struct wino_f32_bwd_filter_2d *e = r->e;
    const struct wino_conv2d_desc *d = r->d;
    float *stage = stage_of(r, worker);
    float *xs = stage, *ds = stage + (size_t)ALPHA * ALPHA * e->cp;
    float *v = (float *)(r->ws + e->off_v), *u = (float *)(r->ws + e->off_u);
    const int per_image = e->tiles_h * e->tiles_w;
    for (long tl = begin; tl < end; tl++) {
        const long t = r->t0 + tl;
        const int n = (int)(t / per_image), rest = (int)(t % per_image);
        const int h0 = rest / e->tiles_w * TILE, w0 = rest % e->tiles_w * TILE;
        transform_square(e->tf.input, r->x + (size_t)n * d->h * d->w * d->c, d->h, d->w, d->c,
                         h0 - d->pad_h, w0 - d->pad_w, ALPHA, e->cp, xs, v + tl * r->v_tile,
                         ALPHA * r->v_pos, r->v_pos);
        transform_square(e->tf.filter, r->dy + (size_t)n * r->p * r->q * d->k, r->p, r->q, d->k,
                         h0, w0, TILE, e->kp, ds, u + tl * r->u_tile, ALPHA * r->u_pos, r->u_pos);
    }
}

/* Work items [begin, end): (position, block of BLOCK rows of K), M[pos] += U[pos]^T V[pos]
 * over the chunk's tiles. */
static void multiply(void *arg, long begin, long end, int worker)
{
    const struct run *r = arg;
    const struct wino_f32_bwd_filter_2d *e = r->e;
    (void)worker;
    const int blocks = (e->kp + BLOCK - 1) / BLOCK;
    const float *v = (const float *)(r->ws + e->off_v), *u = (const float *)(r->ws + e->off_u);
    float *m = (float *)(r->ws + e->off_m);
    const struct wino_winrs_span span = {0, 0, r->tn};
    for (long item = begin; item < end; item++) {
        const int pos = (int)(item / blocks), k0 = (int)(item % blocks) * BLOCK;
        const int rows = e->kp - k0 < BLOCK ? e->kp - k0 : BLOCK;
        wino_f32_winrs_gemm(e->isa, rows, e->cp, 1, &span,
                            u + pos * r->u_pos + k0, r->u_tile, v + pos * r->v_pos,
                            r->v_tile,
                            m + ((size_t)pos * e->kp + k0) * e->cp, e->cp);
    }
}

/* dw[k][c0 .. c0 + cols) = A^T m A (written, or added to with accumulate) in dw's layout, from
 * m at element (position 0, k, c0), positions pos_stride apart; taps: OUT x OUT x cols floats.
 * KRSC (NHWC) written over takes the taps straight from the transform. */
static void put_taps(const struct run *r, int k, int c0, int cols, const float *m,
                     ptrdiff_t pos_stride, float *taps)
{
    const struct wino_strides4 s = wino_w_strides(r->d);
    const int end = r->d->c - c0 < cols ? r->d->c - c0 : cols;
    float *dw = r->dw + k * s.a + c0 * s.b;
    if (s.b == 1 && !r->e->accumulate) {
        r->e->tf.output(m, ALPHA * pos_stride, pos_stride, dw, s.c, s.d, end);
        return;
    }
    r->e->tf.output(m, ALPHA * pos_stride, pos_stride, taps, (ptrdiff_t)OUT * cols, cols, end);
    for (int i = 0; i < OUT; i++)
        for (int j = 0; j < OUT; j++) {
            const float *t = taps + (i * OUT + j) * cols;
            float *at = dw + i * s.c + j * s.d;
            if (r->e->accumulate)
                for (int cc = 0; cc < end; cc++)
                    at[cc * s.b] += t[cc];
            else
                for (int cc = 0; cc < end; cc++)
                    at[cc * s.b] = t[cc];
        }
}

/* Output channels [begin, end): dw[k] from all of M. */
static void output(void *arg, long begin, long end, int worker)
{
    const struct run *r = arg;
    const struct wino_f32_bwd_filter_2d *e = r->e;
    float *taps = stage_of(r, worker) + (size_t)ALPHA * ALPHA * e->cp + (size_t)TILE * TILE * e->kp;
    const float *m = (const float *)(r->ws + e->off_m);
    for (long k = begin; k < end; k++)
        put_taps(r, (int)k, 0, e->cp, m + k * e->cp, (ptrdiff_t)e->kp * e->cp, taps);
}

/* Blocks [begin, end) of BLOCK x BLOCK of K x C, with every tile in the one chunk: the 36
 * products of the block into the thread's M, then its taps. */
static void multiply_and_output(void *arg, long begin, long end, int worker)
{
    const struct run *r = arg;
    const struct wino_f32_bwd_filter_2d *e = r->e;
    float *taps = stage_of(r, worker) + (size_t)ALPHA * ALPHA * e->cp + (size_t)TILE * TILE * e->kp;
    float *m = taps + (size_t)OUT * OUT * e->cp;
    const float *v = (const float *)(r->ws + e->off_v), *u = (const float *)(r->ws + e->off_u);
    const int col_blocks = (e->cp + BLOCK - 1) / BLOCK;
    const struct wino_winrs_span span = {0, 0, r->tn};
    for (long item = begin; item < end; item++) {
        const int k0 = (int)(item / col_blocks) * BLOCK, c0 = (int)(item % col_blocks) * BLOCK;
        const int rows = e->kp - k0 < BLOCK ? e->kp - k0 : BLOCK;
        const int cols = e->cp - c0 < BLOCK ? e->cp - c0 : BLOCK;
        memset(m, 0, sizeof(float) * (size_t)POS * BLOCK * BLOCK);
        for (int pos = 0; pos < POS; pos++)
            wino_f32_winrs_gemm(e->isa, rows, cols, 1, &span,
                                u + pos * r->u_pos + k0, r->u_tile,
                                v + pos * r->v_pos + c0, r->v_tile,
                                m + (size_t)pos * BLOCK * BLOCK, cols);
        for (int kk = 0; kk < rows && k0 + kk < r->d->k; kk++)
            put_taps(r, k0 + kk, c0, cols, m + (size_t)kk * cols, (ptrdiff_t)BLOCK * BLOCK, taps);
    }
}

void wino_f32_bwd_filter_2d_run(const struct wino_f32_bwd_filter_2d *e,
                                const struct wino_conv2d_desc *d, int p, int q, const float *x,
                                const float *dy, float *dw, void *ws)
{
    struct run r = {e, d, p, q, x, dy, dw, (char *)ws, 0, 0, 0, 0, 0, 0};
    if (d->layout == WINO_LAYOUT_NCHW) {
        float *xn = (float *)(r.ws + e->off_nhwc);
        float *dyn = xn + round64(sizeof(float) * ((size_t)d->n * d->c * d->h * d->w)) / 4;
        wino_f32_transpose_batched(x, xn, d->n, (size_t)d->c, (size_t)d->h * d->w, e->threads);
        wino_f32_transpose_batched(dy, dyn, d->n, (size_t)d->k, (size_t)p * q, e->threads);
        r.x = xn, r.dy = dyn;
    }
    if (e->one_chunk) {
        r.tn = (int)e->tiles;
        r.v_pos = (ptrdiff_t)r.tn * e->cp, r.v_tile = e->cp;
        r.u_pos = (ptrdiff_t)r.tn * e->kp, r.u_tile = e->kp;
        wino_parallel_for(e->threads, r.tn, 1, transform_tiles, &r);
        const long blocks = (long)((e->kp + BLOCK - 1) / BLOCK) * ((e->cp + BLOCK - 1) / BLOCK);
        wino_parallel_for(e->threads, blocks, 1, multiply_and_output, &r);
        return;
    }
    memset(r.ws + e->off_m, 0, sizeof(float) * (size_t)POS * e->kp * e->cp);
    const long items = (long)POS * ((e->kp + BLOCK - 1) / BLOCK);
    r.v_pos = e->cp, r.v_tile = (ptrdiff_t)POS * e->cp;
    r.u_pos = e->kp, r.u_tile = (ptrdiff_t)POS * e->kp;
    for (r.t0 = 0; r.t0 < e->tiles; r.t0 += e->chunk) {
        r.tn = (int)(e->tiles - r.t0 < e->chunk ? e->tiles - r.t0 : e->chunk);
        wino_parallel_for(e->threads, r.tn, 1, transform_tiles, &r);
        wino_parallel_for(e->threads, items, 1, multiply, &r);
    }
    wino_parallel_for(e->threads, d->k, 1, output, &r);
}
