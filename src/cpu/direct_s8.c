#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include "cpu/direct_s8.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cpu/requantize_s8.h"
#include "cpu/thread_pool.h"

/* Output pixels per block: the rows of one GEMM (a multiple of the AMX tile's 16 rows). 256
 * against 64, with all of K in one group (below), ResNet-18 at batch 8 on 2 cores of a Xeon
 * with AMX: conv2_x 1.11-1.28 -> 0.65-0.70 ms, conv3_x 0.52-0.63 -> 0.38-0.42 ms. */
#define ROWS 256
/* Output channels of a group: a multiple of the VNNI kernel's two 16-column panels. */
#define GROUP_ALIGN 32

static size_t round64(size_t n)
{
    return (n + 63) / 64 * 64;
}

/* Output channels of group g. */
static int group_width(const struct wino_s8_direct *e, int k, int g)
{
    return k - g * e->group_k < e->group_k ? k - g * e->group_k : e->group_k;
}

int wino_s8_direct_implicit_takes(const struct wino_conv2d_desc *d)
{
    return d->stride_h == 1 && d->stride_w == 1 && d->c % WINO_S8_KPAD == 0;
}

enum wino_status wino_s8_direct_prepare(struct wino_s8_direct *e,
                                        const struct wino_conv2d_desc *d,
                                        struct wino_int8_layer *layer, int threads,
                                        enum wino_s8_isa isa, enum wino_isa vector_isa)
{
    memset(e, 0, sizeof *e);
    e->layer = *layer;
    memset(layer, 0, sizeof *layer);
    e->isa = isa;
    e->vector_isa = vector_isa;
    e->threads = threads;
    e->depth = d->r * d->s * d->c;
    e->lda = wino_s8_gemm_lda(e->depth);
    /* AMX only: with VNNI the GEMM outweighs the gather, and the virtual pixels' dropped
     * columns cost more than it saves (Zen 4, ResNet-18: 0.9-1.3x the gathering path) */
    e->implicit = isa == WINO_S8_AMX && wino_s8_direct_implicit_takes(d);
    const int K = d->k;
    int p, q;
    wino_conv2d_output_size(d, &p, &q); /* d was checked by the layer preparation */
    /* All of K in one group where the blocks of output pixels give every thread two or more:
     * a block's GEMM then takes all its columns at once; else a group a thread. Groups are
     * multiples of the VNNI kernel's 32 columns. */
    const long blocks = ((long)d->n * p * q + ROWS - 1) / ROWS;
    const int group = blocks >= 2L * threads ? K : (K + threads - 1) / threads;
    e->group_k = (group + GROUP_ALIGN - 1) / GROUP_ALIGN * GROUP_ALIGN;
    e->groups = (K + e->group_k - 1) / e->group_k;
    e->group_bytes = round64(wino_s8_gemm_packed_b_bytes(isa, e->depth, e->group_k));
    if (posix_memalign(&e->packed_w, 64, e->group_bytes * (size_t)e->groups) ||
        !(e->offset = calloc((size_t)K, sizeof *e->offset))) {
        wino_s8_direct_release(e);
        return wino_fail(WINO_OUT_OF_MEMORY, "INT8 direct: out of memory");
    }
    for (int g = 0; g < e->groups; g++)
        wino_s8_gemm_pack_b(isa, e->depth, group_width(e, K, g), e->layer.uq + g * e->group_k, K,
                            (char *)e->packed_w + e->group_bytes * (size_t)g);
    if (!e->layer.x_signed) /* A holds x itself: the GEMM's (x - 128) Wq needs 128 Wq back */
        for (size_t t = 0; t < (size_t)e->depth; t++)
            for (int k = 0; k < K; k++)
                e->offset[k] += 128 * e->layer.uq[t * K + k];
    return WINO_SUCCESS;
}

void wino_s8_direct_release(struct wino_s8_direct *e)
{
    wino_int8_layer_release(&e->layer);
    free(e->packed_w);
    free(e->offset);
    memset(e, 0, sizeof *e);
}

/* Whether desc runs the implicit path: the engine's layer (above) at sizes whose taps'
 * offsets in the padded copy fit an int32. */
static int implicit_for(const struct wino_s8_direct *e, const struct wino_conv2d_desc *d)
{
    const double reach = ((double)(d->r - 1) * d->dilation_h * (d->w + 2 * d->pad_w) +
                          (double)(d->s - 1) * d->dilation_w + 1.0) *
                         d->c;
    return e->implicit && reach < 2147483647.0;
}

/* One thread's buffers: the gathered rows (none on the implicit path), the GEMM's int32
 * result, the GEMM's scratch. */
static size_t per_thread(const struct wino_s8_direct *e, int k, int implicit, size_t *a,
                         size_t *c)
{
    *a = implicit ? 0 : round64(ROWS * e->lda);
    *c = round64(sizeof(int32_t) * ROWS * (size_t)k);
    return *a + *c + round64(wino_s8_gemm_scratch_bytes(e->isa, ROWS, k, e->depth));
}

/* The implicit path's padded copy of x: N images of (H + 2 pad_h) x (W + 2 pad_w) pixels, and
 * after them the pixels that the last image's last row tile reads past it (16 rows, and the
 * taps' reach past a row: S - 1 dilated columns). */
static size_t padded_bytes(const struct wino_conv2d_desc *d, int *overflow)
{
    size_t pixels = 0, bytes = 0;
    const size_t image = (size_t)(d->h + 2 * d->pad_h) * (size_t)(d->w + 2 * d->pad_w);
    *overflow = wino_mul_size(image, (size_t)d->n, &pixels) ||
                wino_mul_size(pixels + 16 + (size_t)(d->s - 1) * d->dilation_w, (size_t)d->c,
                              &bytes);
    return round64(bytes);
}

/* The implicit path's chunk table: depth / 64 int32 offsets. */
static size_t chunk_bytes(const struct wino_s8_direct *e)
{
    return round64(sizeof(int32_t) * (size_t)(e->depth / WINO_S8_KPAD));
}

/* Worker `worker`'s buffers in ws: gathered rows (none on the implicit path), C, GEMM scratch. */
struct worker_buffers {
    uint8_t *a;
    int32_t *c;
    void *scratch;
};
static struct worker_buffers buffers_of(const struct wino_s8_direct *e, int k, int implicit,
                                        char *ws, int worker)
{
    size_t a_bytes, c_bytes;
    char *mine = ws + (size_t)worker * per_thread(e, k, implicit, &a_bytes, &c_bytes);
    const struct worker_buffers b = {(uint8_t *)mine, (int32_t *)(mine + a_bytes),
                                     mine + a_bytes + c_bytes};
    return b;
}

size_t wino_s8_direct_workspace_bytes(const struct wino_s8_direct *e,
                                      const struct wino_conv2d_desc *d, int *overflow)
{
    const int implicit = implicit_for(e, d);
    size_t a, c, all = 0, shared = 0;
    *overflow = wino_mul_size(per_thread(e, d->k, implicit, &a, &c), (size_t)e->threads, &all);
    if (implicit && !*overflow) {
        shared = padded_bytes(d, overflow) + chunk_bytes(e);
        *overflow = *overflow || all + shared < all;
    }
    return *overflow ? 0 : all + shared;
}

struct run {
    const struct wino_s8_direct *e;
    const struct wino_conv2d_desc *d;
    int p, q;
    const void *x;
    void *y;
    char *ws;
    long block; /* output pixels a block, at most ROWS */
};

/* n bytes of x as the GEMM's A operand: x + 128 for int8 (its storage of an int8 operand), x
 * for uint8. */
static void store_a(uint8_t *to, const uint8_t *from, size_t n, int x_signed)
{
    if (!x_signed) {
        memcpy(to, from, n);
        return;
    }
    for (size_t t = 0; t < n; t++)
        to[t] = (uint8_t)(from[t] ^ 0x80); /* (int8)v + 128 */
}

/* Row `row` of A: output pixel m's window, channel-fastest as Wq's rows, each byte x + 128 for
 * int8 (the GEMM's storage of an int8 operand) and x for uint8; the padding reads as x = 0. */
static void gather(const struct run *r, long m, uint8_t *row)
{
    const struct wino_conv2d_desc *d = r->d;
    const int n = (int)(m / ((long)r->p * r->q)), pq = (int)(m % ((long)r->p * r->q));
    const int h0 = pq / r->q * d->stride_h - d->pad_h, w0 = pq % r->q * d->stride_w - d->pad_w;
    const uint8_t zero = r->e->layer.x_signed ? 128 : 0;
    const size_t C = (size_t)d->c;
    for (int i = 0; i < d->r; i++) {
        const int h = h0 + i * d->dilation_h;
        for (int j = 0; j < d->s; j++, row += C) {
            const int w = w0 + j * d->dilation_w;
            if (h < 0 || h >= d->h || w < 0 || w >= d->w) {
                memset(row, zero, C);
                continue;
            }
            const uint8_t *src = (const uint8_t *)r->x + (((size_t)n * d->h + h) * d->w + w) * C;
            store_a(row, src, C, r->e->layer.x_signed);
        }
    }
}

/* Items [begin, end), item b groups + g: block b of output pixels and output channel group
 * g, in the worker's own buffers; a block is gathered once for consecutive items. */
static void blocks(void *arg, long begin, long end, int worker)
{
    const struct run *r = arg;
    const struct wino_s8_direct *e = r->e;
    const int K = r->d->k;
    const struct worker_buffers buf = buffers_of(e, K, 0, r->ws, worker);
    uint8_t *a = buf.a;
    int32_t *c = buf.c;
    const long pixels = (long)r->d->n * r->p * r->q;
    long gathered = -1;
    for (long item = begin; item < end; item++) {
        const long b = item / e->groups, m0 = b * r->block;
        const int g = (int)(item % e->groups), k0 = g * e->group_k;
        const int rows = (int)(pixels - m0 < r->block ? pixels - m0 : r->block);
        if (b != gathered)
            for (int i = 0; i < rows; i++)
                gather(r, m0 + i, a + (size_t)i * e->lda);
        gathered = b;
        const int width = group_width(e, K, g);
        wino_s8_gemm(e->isa, rows, width, e->depth, a, (ptrdiff_t)e->lda,
                     (const char *)e->packed_w + e->group_bytes * (size_t)g, c + k0, K,
                     buf.scratch);
        for (int i = 0; i < rows; i++)
            wino_s8_requantize_row(e->vector_isa, &e->layer, c + (size_t)i * K, e->offset, k0,
                                   k0 + width, (uint8_t *)r->y + (size_t)(m0 + i) * K);
    }
}

/* ---- the implicit path ---- */

struct implicit_run {
    const struct wino_s8_direct *e;
    const struct wino_conv2d_desc *d;
    int p, q, hp, wp; /* output and padded sizes */
    const void *x;
    void *y;
    uint8_t *xp;          /* the padded copy */
    const int32_t *chunk; /* the taps' offsets in xp, per 64 channels */
    char *ws;             /* the workers' buffers */
    long block, blocks;   /* virtual pixels a block, blocks an image */
};

/* Rows [begin, end) of the padded copy, row i: image i / hp, padded row i % hp (x + 128 for
 * int8, x for uint8; the padding 0 of either). */
static void pad_rows(void *arg, long begin, long end, int worker)
{
    (void)worker;
    const struct implicit_run *r = arg;
    const struct wino_conv2d_desc *d = r->d;
    const size_t C = (size_t)d->c, row = (size_t)r->wp * C;
    const int x_signed = r->e->layer.x_signed;
    const uint8_t zero = x_signed ? 128 : 0;
    for (long i = begin; i < end; i++) {
        uint8_t *to = r->xp + (size_t)i * row;
        const int n = (int)(i / r->hp), h = (int)(i % r->hp) - d->pad_h;
        if (h < 0 || h >= d->h) {
            memset(to, zero, row);
            continue;
        }
        const uint8_t *from = (const uint8_t *)r->x + (((size_t)n * d->h + h) * d->w) * C;
        const size_t left = (size_t)d->pad_w * C, inside = (size_t)d->w * C;
        memset(to, zero, left);
        store_a(to + left, from, inside, x_signed);
        memset(to + left + inside, zero, row - left - inside);
    }
}

/* Items [begin, end), item (n blocks + b) groups + g: block b of image n's virtual pixels v =
 * h wp + w (h < p, w < wp) and output channel group g; the pixels with w < q are kept. */
static void implicit_blocks(void *arg, long begin, long end, int worker)
{
    const struct implicit_run *r = arg;
    const struct wino_s8_direct *e = r->e;
    const int K = r->d->k;
    const struct worker_buffers buf = buffers_of(e, K, 1, r->ws, worker);
    int32_t *c = buf.c;
    const long virtual = (long)r->p * r->wp;
    const size_t C = (size_t)r->d->c;
    for (long item = begin; item < end; item++) {
        const long nb = item / e->groups, m0 = nb % r->blocks * r->block;
        const int n = (int)(nb / r->blocks), g = (int)(item % e->groups), k0 = g * e->group_k;
        const int rows = (int)(virtual - m0 < r->block ? virtual - m0 : r->block);
        const int width = group_width(e, K, g);
        const uint8_t *a = r->xp + ((size_t)n * r->hp * r->wp + (size_t)m0) * C;
        wino_s8_gemm_chunked(e->isa, rows, width, e->depth, a, (ptrdiff_t)C, r->chunk,
                             (const char *)e->packed_w + e->group_bytes * (size_t)g, c + k0, K,
                             buf.scratch);
        for (int i = 0; i < rows; i++) {
            const long v = m0 + i;
            const int h = (int)(v / r->wp), w = (int)(v % r->wp);
            if (w >= r->q)
                continue;
            uint8_t *y = (uint8_t *)r->y + (((size_t)n * r->p + h) * r->q + w) * K;
            wino_s8_requantize_row(e->vector_isa, &e->layer, c + (size_t)i * K, e->offset, k0,
                                   k0 + width, y);
        }
    }
}

static void run_implicit(const struct wino_s8_direct *e, const struct wino_conv2d_desc *d, int p,
                         int q, const void *x, void *y, char *ws)
{
    int overflow = 0;
    size_t a, cb;
    uint8_t *xp = (uint8_t *)ws + per_thread(e, d->k, 1, &a, &cb) * (size_t)e->threads;
    const size_t padded = padded_bytes(d, &overflow); /* checked by the workspace query */
    int32_t *chunk = (int32_t *)(xp + padded);
    struct implicit_run r = {e, d, p, q, d->h + 2 * d->pad_h, d->w + 2 * d->pad_w,
                             x, y, xp, chunk, ws, 0, 0};
    const int per_tap = d->c / WINO_S8_KPAD;
    for (int t = 0; t < e->depth / WINO_S8_KPAD; t++) { /* depth in (filter row, column, c) */
        const int tap = t / per_tap, i = tap / d->s, j = tap % d->s;
        chunk[t] = (int32_t)(((size_t)i * d->dilation_h * r.wp + (size_t)j * d->dilation_w) *
                                 (size_t)d->c +
                             (size_t)(t % per_tap) * WINO_S8_KPAD);
    }
    const size_t images = (size_t)d->n * r.hp * r.wp * (size_t)d->c;
    memset(xp + images, 0, padded - images); /* read past the last image, never kept */
    wino_parallel_for(e->threads, (long)d->n * r.hp, 1, pad_rows, &r);
    const long virtual = (long)p * r.wp;
    r.block = wino_balanced_block(virtual * d->n, ROWS, e->threads);
    r.blocks = (virtual + r.block - 1) / r.block;
    const long n = r.blocks * d->n;
    wino_parallel_for(e->threads, n * e->groups, n >= e->threads ? e->groups : 1,
                      implicit_blocks, &r);
}

void wino_s8_direct_run(const struct wino_s8_direct *e, const struct wino_conv2d_desc *d, int p,
                        int q, const void *x, void *y, void *ws)
{
    if (implicit_for(e, d)) {
        run_implicit(e, d, p, q, x, y, (char *)ws);
        return;
    }
    const long pixels = (long)d->n * p * q;
    const struct run r = {e, d, p, q, x, y, ws, wino_balanced_block(pixels, ROWS, e->threads)};
    const long n = (pixels + r.block - 1) / r.block;
    /* whole blocks a chunk while there are enough of them for the threads: one gather each */
    const long grain = n >= e->threads ? e->groups : 1;
    wino_parallel_for(e->threads, n * e->groups, grain, blocks, (void *)&r);
}
