#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include "cpu/winograd_f32.h"

#include <stdlib.h>
#include <string.h>

#include "base/conv_desc.h"
#include "base/error.h"
#include "cpu/layout_f32.h"
#include "cpu/prefetch_write.h"
#include "cpu/thread_pool.h"

/* Tiles are numbered t = (n * tiles_h + ty) * tiles_w + tx; a tile's input window starts at
 * (ty * m - pad_h, tx * m - pad_w) and its outputs at (ty * m, tx * m). */
struct geometry {
    int tiles_h, tiles_w;
    long tiles;
};

static struct geometry geometry_of(const struct wino_f32_engine *e, int p, int q, int n)
{
    struct geometry g;
    g.tiles_h = (p - 1) / e->m + 1; /* p, q >= 1; no overflow near INT_MAX */
    g.tiles_w = (q - 1) / e->m + 1;
    g.tiles = (long)n * g.tiles_h * g.tiles_w;
    return g;
}

static size_t round64(size_t bytes)
{
    return (bytes + 63) / 64 * 64;
}

int wino_f32_engine_has_tile(int m, int r)
{
    return wino_f32_transforms_for(m, r).input != NULL;
}

/* Tiles per block are GEMM rows: a multiple of the kernel's rows (wino_f32_gemm_kernel_rows)
 * makes every micro-panel a full one, the fewest passes over the filters. */

/* Tiles per fused block: V and M of a block in 384 KiB, so that they stay in a 1 MiB L2 beside
 * one packed filter matrix (256 KiB at C = K = 256) and the blocks are many enough to share out
 * evenly (ResNet-18 conv2_x at batch 1: 14 blocks of 14 tiles, 0.31 ms, against 4 blocks of 56
 * tiles with 1 MiB, 0.39 ms; AMD EPYC, Zen 4 cache sizes). Where all alpha^2 packed filter
 * matrices take more than BIG_FILTER_BYTES (a Xeon's 2 MiB L2), every block reads them from
 * beyond L2, so the blocks take 1.5 MiB and read them a quarter as often: on that Xeon, VGG-16
 * conv3_1 (4.7 MB of filters) 1.45x faster at batch 1 and 1.22x at batch 8, conv2_2 1.15x at
 * batch 1, ResNet-18 conv3_x (2.4 MB) 1.03x at batch 8 (4 alternating runs). */
#define BIG_FILTER_BYTES (2L << 20)

/* Bytes of all alpha^2 filter matrices as packed for the GEMMs of isa. */
static double filter_bytes(enum wino_isa isa, int alpha, int c, int k)
{
    return (double)alpha * alpha * wino_f32_gemm_packed_b_estimate(isa, c, k);
}

static int fused_block(enum wino_isa isa, int alpha, int c, int k)
{
    const int rows = wino_f32_gemm_kernel_rows(isa);
    const long budget =
        filter_bytes(isa, alpha, c, k) > (double)BIG_FILTER_BYTES ? 1536L << 10 : 384L << 10;
    long tb = budget / (4L * alpha * alpha * ((long)c + k));
    tb = tb / rows * rows;
    return (int)(tb < rows ? rows : tb > 504 ? 504 : tb);
}

/* Tiles per GEMM of the non-fused variant: as many as keep the A rows (tiles x C) in about
 * 512 KiB of L2, so that each packed filter matrix, loaded once from the last-level cache, serves
 * many 14-row micro-panels. */
static int non_fused_chunk(enum wino_isa isa, int c)
{
    const int rows = wino_f32_gemm_kernel_rows(isa);
    long tb = (512L << 10) / (4L * c) / rows * rows;
    return (int)(tb < 4 * rows ? 4 * rows : tb > 4096 ? 4096 : tb);
}

/* Every fused block reads all alpha^2 C x K transformed filters, as packed for the GEMM; beyond
 * this size they no longer stay in the last-level cache between blocks and the non-fused
 * variant, which reads them once, wins (measured on ResNet-18 / VGG-16 layers: on a Xeon with
 * AVX-512, fused 1.4-1.9x slower at C = K = 512, on par at C = 256, K = 512; on an AMD EPYC with
 * a 32 MiB L3 shared with other machines, 1.1-1.3x slower at C = 256, K = 512 (18.9 MB), faster
 * at C = K = 256 (9.4 MB); with the AMX GEMM's filters, 1.5 times the bytes, non-fused 1.6x
 * faster at C = K = 256 (14.2 MB); docs/cpu-winograd.md). */
#define FUSED_MAX_FILTER_BYTES (12L << 20)

int wino_f32_engine_prefers_fused(int m, int r, const struct wino_conv2d_desc *d, long tiles,
                                  int threads)
{
    const int a = m + r - 1;
    const enum wino_isa isa = wino_f32_packed_gemm_isa_for(d->c, d->k);
    const long block = fused_block(isa, a, d->c, d->k);
    return (tiles + block - 1) / block >= 4L * threads &&
           filter_bytes(isa, a, d->c, d->k) <= FUSED_MAX_FILTER_BYTES;
}

enum wino_status wino_f32_engine_prepare(struct wino_f32_engine *e,
                                         const struct wino_conv2d_desc *d, const float *weights,
                                         int m, int fused, int threads)
{
    memset(e, 0, sizeof *e);
    const int r = d->r, a = m + r - 1, C = d->c, K = d->k;
    e->m = m;
    e->r = r;
    e->alpha = a;
    e->fused = fused;
    e->threads = threads;
    e->isa = wino_f32_packed_gemm_isa_for(C, K);
    e->tf = wino_f32_transforms_for(m, r);
    e->tile_block = fused ? fused_block(e->isa, a, C, K) : non_fused_chunk(e->isa, C);
    e->packed_bytes = round64(wino_f32_gemm_packed_b_bytes(e->isa, C, K));
    const size_t kc = (size_t)K * (size_t)C, aa = (size_t)(a * a);
    float *g = malloc(sizeof(float) * kc * (size_t)(r * r));
    float *u = malloc(sizeof(float) * kc * aa);
    if (posix_memalign(&e->U, 64, e->packed_bytes * aa))
        e->U = NULL;
    if (!e->U || !g || !u) {
        free(g);
        free(u);
        wino_f32_engine_release(e);
        return WINO_OUT_OF_MEMORY;
    }
    /* g[(i * r + j) * C * K + c * K + k]: one lane per output channel k */
    for (int k = 0; k < K; k++)
        for (int c = 0; c < C; c++)
            for (int i = 0; i < r; i++)
                for (int j = 0; j < r; j++)
                    g[(size_t)(i * r + j) * kc + (size_t)c * K + k] =
                        d->layout == WINO_LAYOUT_NCHW
                            ? weights[(((size_t)k * C + c) * r + i) * r + j]
                            : weights[(((size_t)k * r + i) * r + j) * C + c];
    for (int c = 0; c < C; c++) /* u[(pos * C + c) * K + k]: the GEMM's C x K operand */
        e->tf.filter(g + (size_t)c * K, (ptrdiff_t)(r * kc), (ptrdiff_t)kc, u + (size_t)c * K,
                     (ptrdiff_t)(a * kc), (ptrdiff_t)kc, K);
    for (size_t pos = 0; pos < aa; pos++)
        wino_f32_gemm_pack_b(e->isa, C, K, u + pos * kc, K, (char *)e->U + pos * e->packed_bytes);
    free(g);
    free(u);
    return WINO_SUCCESS;
}

void wino_f32_engine_release(struct wino_f32_engine *e)
{
    free(e->U);
    memset(e, 0, sizeof *e);
}

/* Per-thread buffers and, for the non-fused variant, the shared V and M. */
struct layout {
    size_t gather, vblock, mblock, yblock, scratch; /* per-thread, bytes */
    size_t per_thread, shared_v, shared_m;
    size_t shared_x, shared_y; /* NCHW: x and y in NHWC, so tiles gather whole channel vectors */
    size_t total;
};

static int make_layout(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d,
                       long tiles, struct layout *l)
{
    const size_t aa = (size_t)e->alpha * (size_t)e->alpha;
    const size_t C = (size_t)d->c, K = (size_t)d->k, T = (size_t)tiles;
    const size_t rows = e->fused ? (size_t)e->tile_block : T; /* tile slots in V and M */
    size_t v, mm;
    memset(l, 0, sizeof *l);
    if (wino_mul_size(4 * aa * C, rows, &v) || wino_mul_size(4 * aa * K, rows, &mm))
        return -1;
    l->gather = round64(4 * aa * C);
    l->yblock = round64(4 * (size_t)e->m * (size_t)e->m * K);
    l->scratch = round64(wino_f32_gemm_packed_scratch_bytes(e->isa, e->tile_block, d->k, d->c));
    if (e->fused) {
        l->vblock = round64(v);
        l->mblock = round64(mm);
    } else {
        l->shared_v = round64(v);
        l->shared_m = round64(mm);
    }
    if (d->layout == WINO_LAYOUT_NCHW) {
        struct wino_conv_sizes sz;
        if (wino_conv_desc_check(d, &sz))
            return -1;
        l->shared_x = round64(4 * sz.x_elems);
        l->shared_y = round64(4 * sz.y_elems);
    }
    l->per_thread = l->gather + l->vblock + l->mblock + l->yblock + l->scratch;
    size_t all;
    const size_t shared = l->shared_v + l->shared_m + l->shared_x + l->shared_y;
    if (wino_mul_size(l->per_thread, (size_t)e->threads, &all) || all > SIZE_MAX - shared)
        return -1;
    l->total = all + shared;
    return 0;
}

size_t wino_f32_engine_workspace_bytes(const struct wino_f32_engine *e,
                                       const struct wino_conv2d_desc *d, int p, int q,
                                       int *overflow)
{
    struct layout l;
    *overflow = make_layout(e, d, geometry_of(e, p, q, d->n).tiles, &l) != 0;
    return *overflow ? 0 : l.total;
}

/* Image n and top-left input (h0, w0) / output (p0, q0) corner of tile t. */
struct tile_pos {
    int n, h0, w0, p0, q0;
};

static struct tile_pos tile_pos(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d,
                                const struct geometry *gm, long t)
{
    const long per_image = (long)gm->tiles_h * gm->tiles_w;
    const int rem = (int)(t % per_image);
    struct tile_pos tp;
    tp.n = (int)(t / per_image);
    tp.p0 = rem / gm->tiles_w * e->m;
    tp.q0 = rem % gm->tiles_w * e->m;
    tp.h0 = tp.p0 - d->pad_h;
    tp.w0 = tp.q0 - d->pad_w;
    return tp;
}

/* The input window of tile t, all channels (NHWC x), into g[(i * alpha + j) * C + c], zero
 * outside the image. */
static void gather_tile(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d,
                        const struct tile_pos *tp, const float *x, float *g)
{
    const int a = e->alpha, H = d->h, W = d->w, C = d->c;
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++) {
            const int h = tp->h0 + i, w = tp->w0 + j;
            float *dst = g + (size_t)(i * a + j) * C;
            if (h >= 0 && h < H && w >= 0 && w < W)
                memcpy(dst, x + (((size_t)tp->n * H + h) * W + w) * C, sizeof(float) * C);
            else
                memset(dst, 0, sizeof(float) * C);
        }
}

/* The m x m outputs yb[(i * m + j) * K + k] of tile t into NHWC y, cropped at the edges, through
 * the epilogue. */
static void scatter_tile(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d, int p,
                         int q, const struct tile_pos *tp, const float *yb,
                         const struct wino_epilogue *ep, float *y)
{
    const int m = e->m, K = d->k;
    for (int i = 0; i < m && tp->p0 + i < p; i++)
        for (int j = 0; j < m && tp->q0 + j < q; j++)
            wino_epilogue_pixel(ep, yb + (size_t)(i * m + j) * K,
                                y + (((size_t)tp->n * p + tp->p0 + i) * q + tp->q0 + j) * K, K);
}

/* V[(pos * rows + slot) * C + c] = input transform of tile t (channels as lanes). A window
 * inside the image is read where it lies; one that crosses an edge is gathered with zeros. */
static void input_stage(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d,
                        const struct geometry *gm, const float *x, long t, float *g, float *v,
                        size_t rows, size_t slot)
{
    const size_t C = (size_t)d->c;
    const int a = e->alpha;
    const struct tile_pos tp = tile_pos(e, d, gm, t);
    const float *src = g;
    ptrdiff_t row = (ptrdiff_t)(a * C);
    if (tp.h0 >= 0 && tp.w0 >= 0 && tp.h0 + a <= d->h && tp.w0 + a <= d->w) {
        src = x + (((size_t)tp.n * d->h + tp.h0) * d->w + tp.w0) * C;
        row = (ptrdiff_t)((size_t)d->w * C);
    } else {
        gather_tile(e, d, &tp, x, g);
    }
    e->tf.input(src, row, (ptrdiff_t)C, v + slot * C, (ptrdiff_t)(a * rows * C),
                (ptrdiff_t)(rows * C), d->c);
}

/* Output transform of tile t from M[(pos * rows + slot) * K + k], then through the epilogue into
 * y: in place when the whole m x m tile lies inside y, else through yb and cropped. With
 * `stream`, whole tiles go through yb too and on into y by non-temporal stores. */
static void output_stage(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d,
                         const struct geometry *gm, int p, int q, const float *mm, size_t rows,
                         size_t slot, long t, float *yb, const struct wino_epilogue *ep, float *y,
                         int stream)
{
    const size_t K = (size_t)d->k;
    const int m = e->m;
    const struct tile_pos tp = tile_pos(e, d, gm, t);
    const ptrdiff_t m_pos = (ptrdiff_t)(e->alpha * rows * K), m_col = (ptrdiff_t)(rows * K);
    if (tp.p0 + m > p || tp.q0 + m > q) {
        e->tf.output(mm + slot * K, m_pos, m_col, yb, (ptrdiff_t)(m * K), (ptrdiff_t)K, d->k);
        scatter_tile(e, d, p, q, &tp, yb, ep, y);
        return;
    }
    float *dst = y + (((size_t)tp.n * p + tp.p0) * q + tp.q0) * K;
    float *out = stream ? yb : dst;
    const size_t out_row = stream ? (size_t)m * K : (size_t)q * K;
    e->tf.output(mm + slot * K, m_pos, m_col, out, (ptrdiff_t)out_row, (ptrdiff_t)K, d->k);
    if (ep->bias || ep->relu)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                float *px = out + i * out_row + j * K;
                wino_epilogue_pixel(ep, px, px, d->k);
            }
    for (int i = 0; stream && i < m; i++) /* a tile's row: m pixels, contiguous in y */
        wino_f32_stream_copy(dst + (size_t)i * q * K, yb + (size_t)i * m * K, (size_t)m * K);
}

/* M[pos] rows slot .. slot + nt - 1 (tiles x K) = V[pos] rows (tiles x C) * U[pos] (C x K). */
static void gemm_stage(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d, int pos,
                       const float *v, float *mm, size_t rows, size_t slot, int nt, void *scratch)
{
    const size_t C = (size_t)d->c, K = (size_t)d->k;
    wino_f32_gemm_packed(e->isa, nt, d->k, d->c, v + ((size_t)pos * rows + slot) * C,
                         (ptrdiff_t)C, (const char *)e->U + (size_t)pos * e->packed_bytes,
                         mm + ((size_t)pos * rows + slot) * K, (ptrdiff_t)K, 0, scratch);
}

/* What every stage of a run needs. */
struct engine_run {
    const struct wino_f32_engine *e;
    const struct wino_conv2d_desc *d; /* NHWC */
    int p, q;
    const struct geometry *gm;
    const struct layout *l;
    const float *x;
    const struct wino_epilogue *ep;
    float *y;
    int stream; /* y written by non-temporal stores (output_stage) */
    char *ws;
    float *v, *mm; /* non-fused: the shared V and M */
};

/* Tile t's rows of y (m x m x K, cropped to y) asked for with intent to write, while the tile
 * before is written: y beyond L2 and below WINO_F32_STREAM_BYTES (streamed outputs go through
 * yb) is stored to in place, and each line's first store had waited for the line from the
 * last-level cache (on a Xeon ResNet-18 conv2_x at batch 8 1.09x, conv3_x and VGG-16 conv2_2 at
 * batch 1 1.05x faster). AVX-512 only (PREFETCHW: cpu/prefetch_write.h). */
static void prefetch_tile_rows(const struct engine_run *r, long t)
{
    if (r->stream || r->e->isa < WINO_ISA_AVX512 || t >= r->gm->tiles)
        return;
    const struct tile_pos tp = tile_pos(r->e, r->d, r->gm, t);
    const int m = r->e->m, K = r->d->k;
    const int rows = r->p - tp.p0 < m ? r->p - tp.p0 : m;
    const int cols = r->q - tp.q0 < m ? r->q - tp.q0 : m;
    wino_prefetch_for_write(r->y + (((size_t)tp.n * r->p + tp.p0) * r->q + tp.q0) * K, rows,
                            (ptrdiff_t)r->q * K, 1, 0, cols * K);
}

/* Fused blocks [begin, end): each block of tiles through all three stages. */
static void fused_blocks(void *arg, long begin, long end, int worker)
{
    const struct engine_run *r = arg;
    const struct layout *l = r->l;
    const int tb = r->e->tile_block, aa = r->e->alpha * r->e->alpha;
    char *mine = r->ws + (size_t)worker * l->per_thread;
    float *g = (float *)mine, *v = (float *)(mine + l->gather);
    float *mm = (float *)(mine + l->gather + l->vblock);
    float *yb = (float *)(mine + l->gather + l->vblock + l->mblock);
    void *scratch = mine + l->gather + l->vblock + l->mblock + l->yblock;
    for (long b = begin; b < end; b++) {
        const long t0 = b * tb;
        const int nt = (int)(r->gm->tiles - t0 < tb ? r->gm->tiles - t0 : tb);
        for (int s = 0; s < nt; s++)
            input_stage(r->e, r->d, r->gm, r->x, t0 + s, g, v, (size_t)tb, (size_t)s);
        for (int pos = 0; pos < aa; pos++)
            gemm_stage(r->e, r->d, pos, v, mm, (size_t)tb, 0, nt, scratch);
        for (int s = 0; s < nt; s++) {
            if (s + 1 < nt)
                prefetch_tile_rows(r, t0 + s + 1);
            output_stage(r->e, r->d, r->gm, r->p, r->q, mm, (size_t)tb, (size_t)s, t0 + s, yb,
                         r->ep, r->y, r->stream);
        }
    }
    if (r->stream)
        wino_f32_stream_fence();
}

/* Non-fused, stage 1: tiles [begin, end) into the shared V. */
static void input_tiles(void *arg, long begin, long end, int worker)
{
    const struct engine_run *r = arg;
    float *g = (float *)(r->ws + (size_t)worker * r->l->per_thread);
    for (long t = begin; t < end; t++)
        input_stage(r->e, r->d, r->gm, r->x, t, g, r->v, (size_t)r->gm->tiles, (size_t)t);
}

/* Non-fused, stage 2: GEMMs [begin, end) of (chunk of tiles, position) pairs. */
static void gemm_chunks(void *arg, long begin, long end, int worker)
{
    const struct engine_run *r = arg;
    const long T = r->gm->tiles, tb = r->e->tile_block, aa = r->e->alpha * r->e->alpha;
    char *mine = r->ws + (size_t)worker * r->l->per_thread;
    void *scratch = mine + r->l->gather + r->l->yblock;
    for (long w = begin; w < end; w++) {
        const long t0 = w / aa * tb;
        gemm_stage(r->e, r->d, (int)(w % aa), r->v, r->mm, (size_t)T, (size_t)t0,
                   (int)(T - t0 < tb ? T - t0 : tb), scratch);
    }
}

/* Non-fused, stage 3: tiles [begin, end) from the shared M into y. */
static void output_tiles(void *arg, long begin, long end, int worker)
{
    const struct engine_run *r = arg;
    float *yb = (float *)(r->ws + (size_t)worker * r->l->per_thread + r->l->gather);
    for (long t = begin; t < end; t++) {
        if (t + 1 < end)
            prefetch_tile_rows(r, t + 1);
        output_stage(r->e, r->d, r->gm, r->p, r->q, r->mm, (size_t)r->gm->tiles, (size_t)t, t,
                     yb, r->ep, r->y, r->stream);
    }
    if (r->stream)
        wino_f32_stream_fence();
}

static void run_fused(struct engine_run *r)
{
    const int tb = r->e->tile_block;
    wino_parallel_for(r->e->threads, (r->gm->tiles + tb - 1) / tb, 1, fused_blocks, r);
}

static void run_non_fused(struct engine_run *r)
{
    const long T = r->gm->tiles, tb = r->e->tile_block, aa = r->e->alpha * r->e->alpha;
    r->v = (float *)(r->ws + r->l->per_thread * (size_t)r->e->threads);
    r->mm = (float *)((char *)r->v + r->l->shared_v);
    wino_parallel_for(r->e->threads, T, 8, input_tiles, r);
    wino_parallel_for(r->e->threads, (T + tb - 1) / tb * aa, 1, gemm_chunks, r);
    wino_parallel_for(r->e->threads, T, 8, output_tiles, r);
}

void wino_f32_engine_run(const struct wino_f32_engine *e, const struct wino_conv2d_desc *d, int p,
                         int q, const float *x, const struct wino_epilogue *ep, float *y, void *ws)
{
    const struct geometry gm = geometry_of(e, p, q, d->n);
    struct layout l;
    make_layout(e, d, gm.tiles, &l); /* cannot fail: workspace_bytes succeeded at create */
    struct wino_conv2d_desc nhwc = *d;
    char *base = ws;
    float *xt = NULL, *yt = y;
    if (d->layout == WINO_LAYOUT_NCHW) { /* C x HW -> HW x C, and back for y */
        const size_t shared = l.shared_v + l.shared_m;
        xt = (float *)(base + l.per_thread * (size_t)e->threads + shared);
        yt = (float *)((char *)xt + l.shared_x);
        const size_t x_elems = (size_t)d->n * d->c * d->h * d->w; /* read from memory anyway */
        wino_f32_transpose_batched(x, xt, d->n, (size_t)d->c, (size_t)d->h * d->w, e->threads,
                                   sizeof(float) * x_elems >= WINO_F32_STREAM_BYTES);
        x = xt;
        nhwc.layout = WINO_LAYOUT_NHWC;
    }
    /* y that would not stay in the caches skips them, as it is written and, NCHW, in its
     * transpose from the workspace (which reads it from memory either way) */
    const int large = sizeof(float) * (size_t)d->n * p * q * d->k >= WINO_F32_STREAM_BYTES;
    const int stream = large && wino_f32_stream_ok(yt, (size_t)d->k);
    struct engine_run r = {e, &nhwc, p, q, &gm, &l, x, ep, yt, stream, ws, NULL, NULL};
    if (e->fused)
        run_fused(&r);
    else
        run_non_fused(&r);
    if (d->layout == WINO_LAYOUT_NCHW)
        wino_f32_transpose_batched(yt, y, d->n, (size_t)p * q, (size_t)d->k, e->threads, large);
}
