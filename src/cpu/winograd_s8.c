#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include "cpu/winograd_s8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cpu/gemm_f32.h"
#include "cpu/requantize_s8.h"
#include "cpu/thread_pool.h"
#include "cpu/winograd_s8_transforms.h"

static size_t round64(size_t bytes)
{
    return (bytes + 63) / 64 * 64;
}

struct tile_geometry {
    int tiles_h, tiles_w;
    long tiles;
};

static struct tile_geometry geometry(int m, int p, int q, int n)
{
    struct tile_geometry g;
    g.tiles_h = (p - 1) / m + 1; /* p, q >= 1; no overflow near INT_MAX */
    g.tiles_w = (q - 1) / m + 1;
    g.tiles = (long)n * g.tiles_h * g.tiles_w;
    return g;
}

/* Channel counts padded to whole vector blocks. */
static size_t padded_c(int c)
{
    return ((size_t)c + WINO_S8_LANE_BLOCK - 1) / WINO_S8_LANE_BLOCK * WINO_S8_LANE_BLOCK;
}
static size_t padded_k(int k)
{
    return ((size_t)k + 15) / 16 * 16;
}

/* Channels of K a chunk (see struct wino_s8_engine). ResNet-18 conv4_x at batch 8 (256
 * channels, 128 tiles, F(4x4, 3x3)): with M of all K in L2 a block had 16 tiles, and each
 * block read all 2.3 MB of the filters from L3; in chunks of 64 a block has 64 tiles, 1.26x
 * faster on 2 cores of a Xeon with AMX (medians of 6 runs; chunks of 128: 1.19x). */
#define K_CHUNK 64

/* Of k channels (or lanes), those in chunk c: e->chunk, fewer in the last. */
static int chunk_width(const struct wino_s8_engine *e, int k, int c)
{
    const int k0 = c * e->chunk;
    return k - k0 < e->chunk ? k - k0 : e->chunk;
}

/* Per-thread buffers (bytes): the int16 window, the int32 output tile, the block's A and M. */
struct buffers {
    size_t win, tmp, a, mm, scratch, per_thread;
};

static int plan_buffers(const struct wino_s8_engine *e, const struct wino_conv2d_desc *d,
                        struct buffers *b)
{
    const size_t a2 = (size_t)e->layer.tile.alpha * (size_t)e->layer.tile.alpha;
    const size_t m2 = (size_t)e->layer.tile.m * (size_t)e->layer.tile.m;
    const size_t cp = padded_c(d->c), cw = (size_t)e->chunk, tb = (size_t)e->tile_block;
    size_t a, mm;
    if (wino_mul_size(a2 * tb, e->lda, &a) || wino_mul_size(a2 * tb * 4, cw, &mm) ||
        wino_mul_size(a2 * 2, cp, &b->win) || wino_mul_size(m2 * 4, cw, &b->tmp))
        return -1;
    b->win = round64(b->win);
    b->tmp = round64(b->tmp);
    b->a = round64(a);
    b->mm = round64(mm);
    b->scratch = round64(wino_s8_gemm_scratch_bytes(e->isa, e->tile_block, e->chunk, d->c));
    b->per_thread = b->win + b->tmp + b->a + b->mm + b->scratch;
    return 0;
}

/* Tiles per block: A (alpha^2 x tb x lda) and M of a chunk (alpha^2 x tb x cw x 4) in about 1
 * MiB of L2, first a multiple of 16 (the AMX tile's rows), then balanced over the threads. */
static int block_tiles(int alpha, size_t lda, int cw, long tiles, int threads)
{
    long tb = (1L << 20) / ((long)alpha * alpha * ((long)lda + 4L * cw));
    tb = tb / 16 * 16;
    tb = tb < 16 ? 16 : tb > 512 ? 512 : tb;
    return (int)wino_balanced_block(tiles, tb, threads);
}

enum wino_status wino_s8_engine_prepare(struct wino_s8_engine *e,
                                        const struct wino_conv2d_desc *d,
                                        struct wino_int8_layer *layer, int threads,
                                        enum wino_s8_isa gemm_isa, enum wino_isa vector_isa)
{
    memset(e, 0, sizeof *e);
    e->layer = *layer;
    memset(layer, 0, sizeof *layer);
    e->isa = gemm_isa;
    e->vector_isa = vector_isa;
    e->threads = threads;
    e->lda = wino_s8_gemm_lda(d->c);
    e->input = wino_s8_input_transform(e->layer.tile.m, vector_isa);
    e->output = wino_s8_output_transform(e->layer.tile.m, vector_isa);
    e->widen = wino_s8_widen(vector_isa);
    const int a = e->layer.tile.alpha, kp = (int)padded_k(d->k);
    int p, q;
    wino_conv2d_output_size(d, &p, &q); /* d was checked by the layer preparation */
    const long tiles = geometry(e->layer.tile.m, p, q, d->n).tiles;
    /* Chunks of K where every thread takes whole blocks; where the threads share the blocks
     * (few tiles), K whole, so that a block's stages are shared once */
    e->chunk = kp < K_CHUNK ? kp : K_CHUNK;
    e->tile_block = block_tiles(a, e->lda, e->chunk, tiles, threads);
    if ((tiles + e->tile_block - 1) / e->tile_block < threads) {
        e->chunk = kp;
        e->tile_block = block_tiles(a, e->lda, kp, tiles, threads);
    }
    const int chunks = (kp + e->chunk - 1) / e->chunk;
    e->packed_bytes = round64(wino_s8_gemm_packed_b_bytes(e->isa, d->c, e->chunk));
    if (posix_memalign(&e->packed_u, 64, e->packed_bytes * (size_t)(a * a) * (size_t)chunks)) {
        e->packed_u = NULL;
        wino_s8_engine_release(e);
        return wino_fail(WINO_OUT_OF_MEMORY, "INT8 Winograd: out of memory");
    }
    const size_t ck = (size_t)d->c * (size_t)d->k;
    for (int c = 0; c < chunks; c++)
        for (int pos = 0; pos < a * a; pos++) {
            wino_s8_gemm_pack_b(e->isa, d->c, chunk_width(e, d->k, c),
                                e->layer.uq + (size_t)pos * ck + (size_t)c * e->chunk, d->k,
                                (char *)e->packed_u +
                                    ((size_t)c * a * a + (size_t)pos) * e->packed_bytes);
        }
    return WINO_SUCCESS;
}

void wino_s8_engine_release(struct wino_s8_engine *e)
{
    free(e->packed_u);
    wino_int8_layer_release(&e->layer);
    memset(e, 0, sizeof *e);
}

size_t wino_s8_engine_workspace_bytes(const struct wino_s8_engine *e,
                                      const struct wino_conv2d_desc *d, int *overflow)
{
    struct buffers b;
    size_t all = 0;
    *overflow = plan_buffers(e, d, &b) || wino_mul_size(b.per_thread, (size_t)e->threads, &all);
    return *overflow ? 0 : all;
}

/* Steps 1-2 of one tile into row `slot` of the block's A matrices (pos stride tb * lda): the
 * window as int16 lanes (zero outside the image and in the padding lanes), then the generated
 * transform. */
static void input_tile(const struct wino_s8_engine *e, const struct wino_conv2d_desc *d,
                       const void *x, int n, int h0, int w0, int16_t *win, uint8_t *a_rows,
                       size_t pos_stride)
{
    const int a = e->layer.tile.alpha, C = d->c;
    const size_t cp = padded_c(C);
    /* the window's columns inside the image, [j0, j1) */
    const int j0 = w0 < 0 ? -w0 : 0, j1 = d->w - w0 < a ? d->w - w0 : a;
    for (int i = 0; i < a; i++) {
        int16_t *row = win + (size_t)i * a * cp;
        const int h = h0 + i;
        if (h < 0 || h >= d->h || j0 >= j1) {
            memset(row, 0, sizeof(int16_t) * cp * (size_t)a);
            continue;
        }
        memset(row, 0, sizeof(int16_t) * cp * (size_t)j0);
        memset(row + (size_t)j1 * cp, 0, sizeof(int16_t) * cp * (size_t)(a - j1));
        const char *src =
            (const char *)x + (((size_t)n * d->h + h) * d->w + w0 + j0) * (size_t)C;
        if (cp == (size_t)C) { /* the columns' channels, one run in x and in win */
            e->widen(src, row + (size_t)j0 * cp, (size_t)(j1 - j0) * cp, e->layer.x_signed);
            continue;
        }
        for (int j = j0; j < j1; j++, src += C) {
            e->widen(src, row + (size_t)j * cp, (size_t)C, e->layer.x_signed);
            memset(row + (size_t)j * cp + C, 0, sizeof(int16_t) * (cp - (size_t)C));
        }
    }
    e->input(win, (int)cp, e->layer.f_a, a_rows, pos_stride);
}

/* Steps 5-7 of one tile (image n, output rows p0.., columns q0..) for chunk c of K, from the
 * tile's row of the block's M chunk (pos stride tb * e->chunk). */
static void output_tile(const struct wino_s8_engine *e, const struct wino_conv2d_desc *d, int p,
                        int q, int n, int p0, int q0, int c, const int32_t *mm,
                        size_t pos_stride, int32_t *tmp, void *y)
{
    const int m = e->layer.tile.m, K = d->k, k0 = c * e->chunk;
    const int lanes = chunk_width(e, (int)padded_k(K), c), k1 = k0 + chunk_width(e, K, c);
    e->output(mm, pos_stride, lanes, tmp);
    const int columns = q - q0 < m ? q - q0 : m;
    for (int i = 0; i < m && p0 + i < p; i++)
        wino_s8_requantize(e->vector_isa, &e->layer, columns, tmp + (size_t)i * m * lanes,
                           (size_t)lanes, k0, k1,
                           (uint8_t *)y + (((size_t)n * p + p0 + i) * q + q0) * K, (size_t)K);
}

/* One thread's buffers. */
struct thread_buffers {
    int16_t *win;
    int32_t *tmp;
    uint8_t *am;
    int32_t *mm;
    void *scratch;
};

static struct thread_buffers buffers_of(const struct buffers *b, void *ws, int thread)
{
    char *mine = (char *)ws + (size_t)thread * b->per_thread;
    struct thread_buffers t;
    t.win = (int16_t *)mine;
    t.tmp = (int32_t *)(mine + b->win);
    t.am = (uint8_t *)(mine + b->win + b->tmp);
    t.mm = (int32_t *)(mine + b->win + b->tmp + b->a);
    t.scratch = mine + b->win + b->tmp + b->a + b->mm;
    return t;
}

/* What every stage of a run needs to know. */
struct run {
    const struct wino_s8_engine *e;
    const struct wino_conv2d_desc *d;
    int p, q;
    struct tile_geometry g;
    int chunks;          /* of K */
    size_t a_pos, m_pos; /* position strides of A and M in a block */
};

/* Tile s of the block starting at tile t0: input transform into am. */
static void block_input(const struct run *r, const void *x, long t0, int s, int16_t *win,
                        uint8_t *am)
{
    const int m = r->e->layer.tile.m;
    const long t = t0 + s, per_image = (long)r->g.tiles_h * r->g.tiles_w, i = t % per_image;
    input_tile(r->e, r->d, x, (int)(t / per_image), (int)(i / r->g.tiles_w) * m - r->d->pad_h,
               (int)(i % r->g.tiles_w) * m - r->d->pad_w, win, am + (size_t)s * r->e->lda,
               r->a_pos);
}

/* Position pos of the block (nt tiles), chunk c: M[pos] = A[pos] Uq[pos] for its channels. */
static void block_gemm(const struct run *r, int c, int pos, int nt, const uint8_t *am,
                       int32_t *mm, void *scratch)
{
    const struct wino_s8_engine *e = r->e;
    const int a2 = e->layer.tile.alpha * e->layer.tile.alpha;
    wino_s8_gemm(e->isa, nt, chunk_width(e, r->d->k, c), r->d->c, am + (size_t)pos * r->a_pos,
                 (ptrdiff_t)e->lda,
                 (const char *)e->packed_u + ((size_t)c * a2 + (size_t)pos) * e->packed_bytes,
                 mm + (size_t)pos * r->m_pos, (ptrdiff_t)e->chunk, scratch);
}

/* Tile s of the block, chunk c: output transform and requantization into y. */
static void block_output(const struct run *r, int c, long t0, int s, const int32_t *mm,
                         int32_t *tmp, void *y)
{
    const int m = r->e->layer.tile.m;
    const long t = t0 + s, per_image = (long)r->g.tiles_h * r->g.tiles_w, i = t % per_image;
    output_tile(r->e, r->d, r->p, r->q, (int)(t / per_image), (int)(i / r->g.tiles_w) * m,
                (int)(i % r->g.tiles_w) * m, c, mm + (size_t)s * r->e->chunk, r->m_pos, tmp, y);
}

/* A run, and in the shared mode the block being worked on. */
struct run_state {
    struct run r;
    const struct buffers *b;
    const void *x;
    void *y, *ws;
    long t0;                       /* shared mode: the block's first tile */
    int nt;                        /* and its tile count */
    struct thread_buffers shared;  /* and thread 0's A and M that hold it */
};

/* Whole blocks [begin, end), each through all stages in the worker's own buffers. */
static void whole_blocks(void *arg, long begin, long end, int worker)
{
    const struct run_state *s = arg;
    const struct thread_buffers t = buffers_of(s->b, s->ws, worker);
    const int a2 = s->r.e->layer.tile.alpha * s->r.e->layer.tile.alpha, tb = s->r.e->tile_block;
    for (long blk = begin; blk < end; blk++) {
        const long t0 = blk * tb;
        const int nt = (int)(s->r.g.tiles - t0 < tb ? s->r.g.tiles - t0 : tb);
        for (int i = 0; i < nt; i++)
            block_input(&s->r, s->x, t0, i, t.win, t.am);
        for (int c = 0; c < s->r.chunks; c++) {
            for (int pos = 0; pos < a2; pos++)
                block_gemm(&s->r, c, pos, nt, t.am, t.mm, t.scratch);
            for (int i = 0; i < nt; i++)
                block_output(&s->r, c, t0, i, t.mm, t.tmp, s->y);
        }
    }
}

/* Shared mode: tiles [begin, end) of the block into the shared A. */
static void shared_inputs(void *arg, long begin, long end, int worker)
{
    const struct run_state *s = arg;
    int16_t *win = buffers_of(s->b, s->ws, worker).win;
    for (long i = begin; i < end; i++)
        block_input(&s->r, s->x, s->t0, (int)i, win, s->shared.am);
}

/* Shared mode: positions [begin, end) of the block, shared A to shared M. */
static void shared_gemms(void *arg, long begin, long end, int worker)
{
    const struct run_state *s = arg;
    void *scratch = buffers_of(s->b, s->ws, worker).scratch;
    for (long pos = begin; pos < end; pos++)
        block_gemm(&s->r, 0, (int)pos, s->nt, s->shared.am, s->shared.mm, scratch);
}

/* Shared mode: tiles [begin, end) of the block from the shared M into y. */
static void shared_outputs(void *arg, long begin, long end, int worker)
{
    const struct run_state *s = arg;
    int32_t *tmp = buffers_of(s->b, s->ws, worker).tmp;
    for (long i = begin; i < end; i++)
        block_output(&s->r, 0, s->t0, (int)i, s->shared.mm, tmp, s->y);
}

void wino_s8_engine_run(const struct wino_s8_engine *e, const struct wino_conv2d_desc *d, int p,
                        int q, const void *x, void *y, void *ws)
{
    const int a2 = e->layer.tile.alpha * e->layer.tile.alpha, tb = e->tile_block;
    struct buffers b;
    plan_buffers(e, d, &b); /* cannot fail: workspace_bytes succeeded at create */
    struct run_state s = {{e, d, p, q, geometry(e->layer.tile.m, p, q, d->n),
                           ((int)padded_k(d->k) + e->chunk - 1) / e->chunk, 0, 0},
                          &b, x, y, ws, 0, 0, buffers_of(&b, ws, 0)};
    s.r.a_pos = (size_t)tb * e->lda;
    s.r.m_pos = (size_t)tb * (size_t)e->chunk;
    const long blocks = (s.r.g.tiles + tb - 1) / tb;
    if (blocks >= e->threads) { /* each thread takes whole blocks through all stages */
        wino_parallel_for(e->threads, blocks, 1, whole_blocks, &s);
        return;
    }
    /* Fewer blocks than threads (small images): the threads share each block, stage by stage,
     * in thread 0's A and M buffers (slower per tile: the other threads reach them in another
     * core's cache, so only where threads would otherwise idle); K is one chunk then
     * (wino_s8_engine_prepare). */
    for (long blk = 0; blk < blocks; blk++) {
        s.t0 = blk * tb;
        s.nt = (int)(s.r.g.tiles - s.t0 < tb ? s.r.g.tiles - s.t0 : tb);
        wino_parallel_for(e->threads, s.nt, (s.nt + e->threads - 1) / e->threads, shared_inputs,
                          &s);
        wino_parallel_for(e->threads, a2, 1, shared_gemms, &s);
        wino_parallel_for(e->threads, s.nt, (s.nt + e->threads - 1) / e->threads,
                          shared_outputs, &s);
    }
}
