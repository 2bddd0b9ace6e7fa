#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include "cpu/direct_s8.h"

#include <stdlib.h>
#include <string.h>

#include "base/conv_desc.h"
#include "base/error.h"
#include "cpu/requantize_s8.h"
#include "cpu/thread_pool.h"

/* Output pixels per block: the rows of one GEMM (a multiple of the AMX tile's 16 rows). 256
 * against 64, with all of K in one group (below), ResNet-18 at batch 8 on 2 cores of a Xeon
 * with AMX: conv2_x 1.11-1.28 -> 0.65-0.70 ms, conv3_x 0.52-0.63 -> 0.38-0.42 ms. */
#define ROWS 256
/* Output channels of a group: a multiple of the VNNI kernel's two 16-column panels. */
#define GROUP_ALIGN 32
/* The largest window of x a thread copies for the implicit path (where one row allows):
 * within the L2 of a core. */
#define WINDOW_BYTES (512 * 1024)

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
    if (posix_memalign(&e->packed_w, 64, e->group_bytes * (size_t)e->groups)) {
        wino_s8_direct_release(e);
        return wino_fail(WINO_OUT_OF_MEMORY, "INT8 direct: out of memory");
    }
    for (int g = 0; g < e->groups; g++) {
        void *packed = (char *)e->packed_w + e->group_bytes * (size_t)g;
        wino_s8_gemm_pack_b(isa, e->depth, group_width(e, K, g), e->layer.uq + g * e->group_k, K,
                            packed);
        if (!e->layer.x_signed) /* A holds a uint8 x itself */
            wino_s8_gemm_unsigned_a(packed, group_width(e, K, g));
    }
    return WINO_SUCCESS;
}

void wino_s8_direct_release(struct wino_s8_direct *e)
{
    wino_int8_layer_release(&e->layer);
    free(e->packed_w);
    memset(e, 0, sizeof *e);
}

/* Whether desc runs the implicit path: the engine's layer (above) at sizes whose taps'
 * offsets in a window fit an int32. */
static int implicit_for(const struct wino_s8_direct *e, const struct wino_conv2d_desc *d)
{
    const double reach = ((double)(d->r - 1) * d->dilation_h * (d->w + 2 * d->pad_w) +
                          (double)(d->s - 1) * d->dilation_w + 1.0) *
                         d->c;
    return e->implicit && reach < 2147483647.0;
}

/* The implicit path's items: output rows h0 .. h0 + rows - 1 of one image (rows < p), or
 * `images` whole images (rows = p). About 4 items a thread, so that the pool balances them;
 * at least ROWS virtual pixels where the batch has them (a GEMM reads all of the packed
 * weights: ResNet-18 conv5_x, 7 x 7 x 512, read them from L3 once an image); a window of at
 * most WINDOW_BYTES where one row allows. */
struct item_shape {
    int rows, images;
};
static struct item_shape item_shape(const struct wino_s8_direct *e,
                                    const struct wino_conv2d_desc *d, int p)
{
    const long wp = d->w + 2 * d->pad_w, reach = (long)(d->r - 1) * d->dilation_h;
    const long share = ((long)d->n * p + 4L * e->threads - 1) / (4L * e->threads);
    const long fill = (ROWS + wp - 1) / wp, most = WINDOW_BYTES / (wp * d->c) - reach;
    long rows = share > fill ? share : fill;
    rows = rows < most ? rows : most;
    rows = rows > 1 ? rows : 1;
    /* the image's rows in equal items (28 rows of 9: 7, 7, 7, 7 rather than 9, 9, 9, 1) */
    const long items = (p + rows - 1) / rows;
    struct item_shape shape = {(int)((p + items - 1) / items), 1};
    if (rows >= p) {
        shape.rows = p;
        shape.images = (int)(rows / p < d->n ? rows / p : d->n);
    }
    return shape;
}

/* The bytes of a window of x for an item: for each image, the padded rows that its output
 * rows read ((rows - 1) + (R - 1) dilation_h + 1 of W + 2 pad_w pixels), and after them the
 * pixels that the last row tile reads past them (16 virtual pixels, and the taps' reach past a
 * row: S - 1 dilated columns). */
static size_t window_bytes(const struct wino_conv2d_desc *d, struct item_shape shape,
                           int *overflow)
{
    size_t pixels = 0, bytes = 0;
    const size_t padded = (size_t)shape.rows + (size_t)(d->r - 1) * d->dilation_h;
    *overflow = wino_mul_size(padded * (size_t)shape.images, (size_t)(d->w + 2 * d->pad_w),
                              &pixels) ||
                wino_mul_size(pixels + 16 + (size_t)(d->s - 1) * d->dilation_w, (size_t)d->c,
                              &bytes);
    return round64(bytes);
}

/* One thread's buffers: the gathered rows or (implicit path) its window of x, the GEMM's
 * int32 result, the GEMM's scratch. */
static size_t per_thread(const struct wino_s8_direct *e, const struct wino_conv2d_desc *d,
                         int implicit, size_t *a, size_t *c, int *overflow)
{
    int p, q;
    wino_conv2d_output_size(d, &p, &q);
    *overflow = 0;
    *a = implicit ? window_bytes(d, item_shape(e, d, p), overflow) : round64(ROWS * e->lda);
    *c = round64(sizeof(int32_t) * ROWS * (size_t)d->k);
    const size_t all = *a + *c + round64(wino_s8_gemm_scratch_bytes(e->isa, ROWS, d->k, e->depth));
    *overflow = *overflow || all < *a;
    return all;
}

/* The implicit path's chunk table: depth / 64 int32 offsets. */
static size_t chunk_bytes(const struct wino_s8_direct *e)
{
    return round64(sizeof(int32_t) * (size_t)(e->depth / WINO_S8_KPAD));
}

/* Worker `worker`'s buffers in ws: gathered rows or window, C, GEMM scratch. */
struct worker_buffers {
    uint8_t *a;
    int32_t *c;
    void *scratch;
};
static struct worker_buffers buffers_of(const struct wino_s8_direct *e,
                                        const struct wino_conv2d_desc *d, int implicit,
                                        char *ws, int worker)
{
    size_t a_bytes, c_bytes;
    int overflow; /* checked by the workspace query */
    char *mine = ws + (size_t)worker * per_thread(e, d, implicit, &a_bytes, &c_bytes, &overflow);
    const struct worker_buffers b = {(uint8_t *)mine, (int32_t *)(mine + a_bytes),
                                     mine + a_bytes + c_bytes};
    return b;
}

size_t wino_s8_direct_workspace_bytes(const struct wino_s8_direct *e,
                                      const struct wino_conv2d_desc *d, int *overflow)
{
    const int implicit = implicit_for(e, d);
    size_t a, c, all = 0;
    const size_t mine = per_thread(e, d, implicit, &a, &c, overflow);
    *overflow = *overflow || wino_mul_size(mine, (size_t)e->threads, &all);
    if (implicit && !*overflow) {
        const size_t shared = chunk_bytes(e);
        *overflow = all + shared < all;
        all += shared;
    }
    return *overflow ? 0 : all;
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
 * int8 (the GEMM's storage of an int8 operand) and x for uint8; the padding reads as x = 0. A
 * filter row's taps inside the image are one run of x where they are adjacent. */
static void gather(const struct run *r, long m, uint8_t *row)
{
    const struct wino_conv2d_desc *d = r->d;
    const int n = (int)(m / ((long)r->p * r->q)), pq = (int)(m % ((long)r->p * r->q));
    const int h0 = pq / r->q * d->stride_h - d->pad_h, w0 = pq % r->q * d->stride_w - d->pad_w;
    const uint8_t zero = r->e->layer.x_signed ? 128 : 0;
    const size_t C = (size_t)d->c, S = (size_t)d->s;
    int j0, j1;
    wino_taps_inside(w0, d->s, d->dilation_w, d->w, &j0, &j1);
    for (int i = 0; i < d->r; i++, row += S * C) {
        const int h = h0 + i * d->dilation_h;
        if (h < 0 || h >= d->h || j1 <= j0) {
            memset(row, zero, S * C);
            continue;
        }
        if (j0 > 0) /* calls of no bytes cost as much as a stem's copies */
            memset(row, zero, (size_t)j0 * C);
        if ((size_t)j1 < S)
            memset(row + (size_t)j1 * C, zero, (S - (size_t)j1) * C);
        /* tap j0's pixel, the first inside the image */
        const size_t pixel = ((size_t)n * d->h + h) * d->w + (size_t)(w0 + j0 * d->dilation_w);
        const uint8_t *src = (const uint8_t *)r->x + pixel * C;
        if (d->dilation_w == 1)
            store_a(row + (size_t)j0 * C, src, (size_t)(j1 - j0) * C, r->e->layer.x_signed);
        else
            for (int j = j0; j < j1; j++)
                store_a(row + (size_t)j * C, src + (size_t)(j - j0) * d->dilation_w * C, C,
                        r->e->layer.x_signed);
    }
}

/* Items [begin, end), item b groups + g: block b of output pixels and output channel group
 * g, in the worker's own buffers; a block is gathered once for consecutive items. */
static void blocks(void *arg, long begin, long end, int worker)
{
    const struct run *r = arg;
    const struct wino_s8_direct *e = r->e;
    const int K = r->d->k;
    const struct worker_buffers buf = buffers_of(e, r->d, 0, r->ws, worker);
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
        wino_s8_requantize(e->vector_isa, &e->layer, rows, c + k0, (size_t)K, k0, k0 + width,
                           (uint8_t *)r->y + (size_t)m0 * K, (size_t)K);
    }
}

/* ---- the implicit path ---- */

struct implicit_run {
    const struct wino_s8_direct *e;
    const struct wino_conv2d_desc *d;
    int p, q, wp;             /* output sizes, padded width */
    struct item_shape shape;
    int per_image;            /* items an image (shape.images 1) */
    const void *x;
    void *y;
    const int32_t *chunk;     /* the taps' offsets in a window, per 64 channels */
    char *ws;                 /* the workers' buffers */
};

/* Item b: images n .. n + images - 1, output rows h0 .. h0 + rows - 1 of each. Its window
 * holds each image's padded rows, span = rows + (R - 1) dilation_h of them, one after the
 * other; its virtual pixels v = H wp + w run over H < (images - 1) span + rows, and those of
 * the rows between two images (H % span >= rows) are computed and dropped. */
struct implicit_item {
    int n, h0, rows, images, span;
};
static struct implicit_item item_of(const struct implicit_run *r, long b)
{
    struct implicit_item it;
    if (r->shape.images == 1) {
        it.n = (int)(b / r->per_image);
        it.h0 = (int)(b % r->per_image) * r->shape.rows;
        it.rows = r->p - it.h0 < r->shape.rows ? r->p - it.h0 : r->shape.rows;
        it.images = 1;
    } else {
        it.n = (int)b * r->shape.images;
        it.h0 = 0;
        it.rows = r->p;
        it.images = r->d->n - it.n < r->shape.images ? r->d->n - it.n : r->shape.images;
    }
    it.span = it.rows + (r->d->r - 1) * r->d->dilation_h;
    return it;
}

/* The item's window (x + 128 for int8, x for uint8; the padding 0 of either), then the zeros
 * past it that the last row tile reads. The worker's own copy: the GEMM then reads it from
 * this core's caches (from one copy of the batch shared by the threads, the GEMM's reads of
 * rows that the other core had written took a third of ResNet-18 conv2_x on 2 cores of a
 * Xeon). */
static void fill_window(const struct implicit_run *r, const struct implicit_item *it,
                        uint8_t *window)
{
    const struct wino_conv2d_desc *d = r->d;
    const size_t C = (size_t)d->c, row = (size_t)r->wp * C;
    const size_t left = (size_t)d->pad_w * C, inside = (size_t)d->w * C;
    const int x_signed = r->e->layer.x_signed;
    const uint8_t zero = x_signed ? 128 : 0;
    uint8_t *to = window;
    for (int m = 0; m < it->images; m++)
        for (int i = 0; i < it->span; i++, to += row) {
            const int h = it->h0 + i - d->pad_h;
            if (h < 0 || h >= d->h) {
                memset(to, zero, row);
                continue;
            }
            memset(to, zero, left);
            store_a(to + left,
                    (const uint8_t *)r->x + (((size_t)(it->n + m) * d->h + h) * d->w) * C,
                    inside, x_signed);
            memset(to + left + inside, zero, row - left - inside);
        }
    /* read by dropped rows, never kept: the tail of window_bytes */
    memset(to, 0, (16 + (size_t)(d->s - 1) * d->dilation_w) * C);
}

/* One GEMM's output: the item's virtual pixels v0 .. and channels k0 .. k0 + width - 1,
 * their sums in c (row i: v0 + i). */
struct implicit_output {
    const struct implicit_run *r;
    const struct implicit_item *it;
    const int32_t *c;
    long v0;
    int k0, width;
};

/* Rows i0 .. i0 + rows - 1 of a GEMM's output requantized into y, the pixels w < q of the
 * virtual rows that are output rows (the GEMM's rows_done, while they are in L1). */
static void requantize_virtual(void *arg, int i0, int rows)
{
    const struct implicit_output *o = arg;
    const struct implicit_run *r = o->r;
    const struct implicit_item *it = o->it;
    const int K = r->d->k;
    for (long v = o->v0 + i0, end = v + rows; v < end;) {
        const int H = (int)(v / r->wp), w = (int)(v % r->wp), h = H % it->span;
        const long row_end = (long)(H + 1) * r->wp, next = row_end < end ? row_end : end;
        const int kept = w >= r->q || h >= it->rows
                             ? 0
                             : (int)((next - v) < r->q - w ? next - v : r->q - w);
        const size_t pixel = ((size_t)(it->n + H / it->span) * r->p + it->h0 + h) * r->q + w;
        wino_s8_requantize(r->e->vector_isa, &r->e->layer, kept,
                           o->c + (size_t)(v - o->v0) * K + o->k0, (size_t)K, o->k0,
                           o->k0 + o->width, (uint8_t *)r->y + pixel * K, (size_t)K);
        v = next;
    }
}

/* Items [begin, end), item b groups + g: item b's output pixels and output channel group g,
 * from the worker's window of x (filled once for consecutive items of the same pixels), in
 * GEMMs of at most ROWS virtual pixels. */
static void implicit_items(void *arg, long begin, long end, int worker)
{
    const struct implicit_run *r = arg;
    const struct wino_s8_direct *e = r->e;
    const int K = r->d->k;
    const struct worker_buffers buf = buffers_of(e, r->d, 1, r->ws, worker);
    long filled = -1;
    for (long item = begin; item < end; item++) {
        const long b = item / e->groups;
        const int g = (int)(item % e->groups);
        const struct implicit_item it = item_of(r, b);
        if (b != filled)
            fill_window(r, &it, buf.a);
        filled = b;
        struct implicit_output o = {r, &it, buf.c, 0, g * e->group_k, group_width(e, K, g)};
        const struct wino_s8_rows_done done = {requantize_virtual, &o};
        const long virtual = ((long)(it.images - 1) * it.span + it.rows) * r->wp;
        for (; o.v0 < virtual; o.v0 += ROWS) {
            const int m = (int)(virtual - o.v0 < ROWS ? virtual - o.v0 : ROWS);
            wino_s8_gemm_chunked(e->isa, m, o.width, e->depth, buf.a + (size_t)o.v0 * r->d->c,
                                 (ptrdiff_t)r->d->c, r->chunk,
                                 (const char *)e->packed_w + e->group_bytes * (size_t)g,
                                 buf.c + o.k0, K, buf.scratch, &done);
        }
    }
}

static void run_implicit(const struct wino_s8_direct *e, const struct wino_conv2d_desc *d, int p,
                         int q, const void *x, void *y, char *ws)
{
    size_t a, cb;
    int overflow; /* checked by the workspace query */
    int32_t *chunk =
        (int32_t *)(ws + per_thread(e, d, 1, &a, &cb, &overflow) * (size_t)e->threads);
    const struct item_shape shape = item_shape(e, d, p);
    const int per_image = (p + shape.rows - 1) / shape.rows;
    struct implicit_run r = {e, d, p, q, d->w + 2 * d->pad_w, shape, per_image, x, y, chunk, ws};
    const int per_tap = d->c / WINO_S8_KPAD;
    for (int t = 0; t < e->depth / WINO_S8_KPAD; t++) { /* depth in (filter row, column, c) */
        const int tap = t / per_tap, i = tap / d->s, j = tap % d->s;
        chunk[t] = (int32_t)(((size_t)i * d->dilation_h * r.wp + (size_t)j * d->dilation_w) *
                                 (size_t)d->c +
                             (size_t)(t % per_tap) * WINO_S8_KPAD);
    }
    const long n = shape.images == 1 ? (long)per_image * d->n
                                     : (d->n + shape.images - 1) / shape.images;
    wino_parallel_for(e->threads, n * e->groups, n >= e->threads ? e->groups : 1, implicit_items,
                      &r);
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
