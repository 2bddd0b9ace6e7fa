#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include "cpu/bwd_filter_2d_f32.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cpu/backward_layout.h"
#include "cpu/layout_f32.h"
#include "cpu/prefetch_write.h"
#include "cpu/thread_pool.h"

#define OUT 3 /* filter taps a side */
#define BLOCK 64 /* rows of M a GEMM work item, and columns (one chunk) */
#define CHUNK_BYTES ((size_t)2 << 20)
/* U and V of every tile up to this many bytes are made at once, and then M in blocks of BLOCK x
 * BLOCK that stay in cache from the products to A^T . A (all of M is 37.7 MB for 512 x 512
 * channels: written, read and cleared, it took longer than the products on 2 cores). */
#define ONE_CHUNK_BYTES ((size_t)16 << 20)
/* Where M is at most GROUP_M_BYTES (0.6 MB for 64 x 64 channels, 2.4 MB for 128 x 128), each
 * of `threads` groups of tiles sums into an M of its own, chunk after chunk of GROUP_CHUNK_BYTES
 * of U and V: no barrier between chunks, and a thread's chunk stays in its core's cache from the
 * transforms to the products. On ResNet-18's conv2_x and conv3_x at batch 8 (2 threads, Zen 4)
 * 1.1x and 1.2x the time of shared chunks; with M of 9.4 MB (256 x 256) its reads and writes
 * per chunk made it 1.6x slower. A group's chunk is GROUP_CHUNK_BYTES, or twice M's bytes where M
 * is larger: each chunk reads and writes all of M, from beyond L2 when M is larger than it
 * (conv3_x, 2.4 MB; on a Xeon with 2 MiB of L2, chunks of 4.7 MB took 1/1.1 of the time of 1
 * MB, and 2 MB chunks made conv2_x, whose M stays in L2, 1.3x slower). */
#define GROUP_M_BYTES ((size_t)4 << 20)
#define GROUP_CHUNK_BYTES ((size_t)1 << 20)
/* Channels from which the products run on AMX-BF16 tiles, and the bytes of a thread's staging
 * for their edge blocks. Each position's U and V are split into BF16 parts once per chunk; the
 * products then take 1/1.24 of the time on ResNet-18's conv5_x (512 channels, 32 tiles at batch
 * 8), but 1.1x on conv4_x (256 channels, 72 tiles padded to 96 in the products' depth). */
#define AMX_CHANNELS 512
#define EDGE_BYTES ((size_t)32 * 32 * sizeof(float))
/* ONE_CHUNK's U and V (7.2 MB on ResNet-18's conv4_x at batch 8) stream from the last-level
 * cache into every BLOCK x BLOCK block of M. Laid out position by position in strips of STRIP
 * channels, a block's operands at a position are two runs of contiguous rows, and the products
 * bring the next position's into L2 as they go (wino_f32_winrs_gemm_streaming); with rows of all
 * 256 channels, 1 KiB apart, the products ran at 47 G multiply-adds a second on a core, in
 * strips 55, in strips with the prefetches 63 (a microbenchmark of conv4_x's products). */
#define STRIP BLOCK
/* Channels a transform takes at once in the groups' order where their chunks are twice M, beyond
 * L2, so that the next piece's output lines can be asked for while it runs (transform_square). */
#define GROUP_PIECE 32
/* ONE_CHUNK's blocks of M on AMX-BF16 tiles: BLOCK x AMX_BLOCK_COLS. Each block reads its rows'
 * split U and its columns' packed V at every position from the last-level cache, and an AMX
 * product of 64 x 64 over ResNet-18 conv5_x's 32 tiles takes only about 400 cycles: blocks of
 * 64 x 128 read them a quarter less often (conv5_x 1.16x faster at batch 8; 64 x 256, whose M
 * no longer stays in L2 beside them, 1.13x). */
#define AMX_BLOCK_COLS (2 * BLOCK)
/* ONE_CHUNK's blocks of M on FMA take as many strips of C as leave two blocks a thread, up to
 * M_BLOCK_BYTES a block, so that a block's strip of U streams from the last-level cache once for
 * all of them (and is prefetched once a position): ResNet-18's conv4_x at batch 8 (256 channels,
 * 2 threads: blocks of 64 x 256, M's block 3.2 MB) 1.09x faster than blocks of 64 x 64, though
 * its block of M no longer stays in L2 (in a sweep: 64 x 128 1.04x, 128 x 128 with U and V each
 * read twice 1.02x, 256 x 64 0.97x). */
#define M_BLOCK_BYTES ((size_t)4 << 20)
static int fma_block_cols(int kp, int cp, int pos, int threads)
{
    const int row_blocks = (kp + BLOCK - 1) / BLOCK, strips = (cp + STRIP - 1) / STRIP;
    const size_t strip_bytes = sizeof(float) * (size_t)pos * BLOCK * STRIP;
    const int most = M_BLOCK_BYTES / strip_bytes > 1 ? (int)(M_BLOCK_BYTES / strip_bytes) : 1;
    int col_blocks = (2 * threads + row_blocks - 1) / row_blocks;
    col_blocks = col_blocks > (strips + most - 1) / most ? col_blocks : (strips + most - 1) / most;
    col_blocks = col_blocks < strips ? col_blocks : strips;
    return (strips + col_blocks - 1) / col_blocks * STRIP;
}

static size_t round64(size_t n)
{
    return (n + 63) / 64 * 64;
}

static int round16(int n)
{
    return (n + 15) / 16 * 16;
}

static int round_strip(int n)
{
    return (n + STRIP - 1) / STRIP * STRIP;
}

/* The floats from a tile's row of a position to the next tile's in a group's chunk, for n
 * channels (a multiple of 16): an odd number of 64-byte lines, so that the rows the products
 * read one after another fall in every set of the L1 (64 channels: 4 lines; 128: 8, rows in 8
 * of each 64 sets). ResNet-18 at batch 8 on a Xeon, this and the groups' larger chunks (above)
 * together: conv2_x 1.08x and conv3_x 1.04x faster (5 of 6 alternating pairs each). ONE_CHUNK
 * keeps n: there conv4_x ran 1.07x slower with it, though its products alone in a
 * microbenchmark ran 1.13x faster. */
static int row_pitch(int n)
{
    return n / 16 % 2 ? n : n + 16;
}

/* Products per (k, c) of tiles of tile x tile over an output of p x q: alpha^2 a tile. */
static long products_of(int tile, int p, int q)
{
    const long alpha = tile + OUT - 1;
    return (long)((p + tile - 1) / tile) * ((q + tile - 1) / tile) * alpha * alpha;
}

/* dy's tile side for output p x q: 5 where its tiles need fewer products than tiles of 4
 * (14 x 14 maps: 9 tiles of 49 against 16 of 36), else 4, the more accurate (relative L1 1.3e-6
 * against 2.1e-6 on ResNet-18's conv4_x). */
static int tile_for(int p, int q)
{
    return products_of(5, p, q) < products_of(4, p, q) ? 5 : 4;
}

long wino_f32_bwd_filter_2d_tiles(const struct wino_conv2d_desc *d, int p, int q)
{
    const int tile = tile_for(p, q);
    return (long)d->n * ((p + tile - 1) / tile) * ((q + tile - 1) / tile);
}

int wino_f32_bwd_filter_2d_takes(const struct wino_conv2d_desc *d)
{
    return d->r == OUT && d->s == OUT && d->stride_h == 1 && d->stride_w == 1 &&
           d->dilation_h == 1 && d->dilation_w == 1 &&
           wino_f32_transforms_for(OUT, 4).input != NULL &&
           wino_f32_transforms_for(OUT, 5).input != NULL;
}

enum wino_status wino_f32_bwd_filter_2d_prepare(struct wino_f32_bwd_filter_2d *e,
                                                const struct wino_conv2d_desc *d, int p, int q,
                                                int threads, int accumulate,
                                                enum wino_f32_bwd_2d_mode mode)
{
    memset(e, 0, sizeof *e);
    e->threads = threads;
    e->isa = wino_cpu_isa();
    e->accumulate = accumulate;
    e->tile = tile_for(p, q);
    e->alpha = e->tile + OUT - 1;
    e->pos = e->alpha * e->alpha;
    e->tf = wino_f32_transforms_for(OUT, e->tile);
    e->kp = round16(d->k), e->cp = round16(d->c);
    e->tiles_h = (p + e->tile - 1) / e->tile, e->tiles_w = (q + e->tile - 1) / e->tile;
    e->tiles = (long)d->n * e->tiles_h * e->tiles_w;
    const size_t per_tile = (size_t)e->pos * (e->kp + e->cp) * sizeof(float);
    const size_t m_bytes = round64(sizeof(float) * (size_t)e->pos * e->kp * e->cp);
    const size_t taps = (size_t)OUT * OUT * e->cp;
    size_t stage = round64(sizeof(float) * ((size_t)e->pos * e->cp +
                                            (size_t)e->tile * e->tile * e->kp + taps));
    const size_t group_chunk = m_bytes > GROUP_CHUNK_BYTES ? 2 * m_bytes : GROUP_CHUNK_BYTES;
    /* a group's taps, with several groups (group_products) */
    const size_t group_taps = threads > 1 ? round64(sizeof(float) * (size_t)d->k * taps) : 0;
    const size_t group_bytes = m_bytes + group_chunk + stage + group_taps;
    e->mode = mode != WINO_2D_CHOOSE ? mode
              : m_bytes <= GROUP_M_BYTES && group_bytes * (size_t)threads <= ONE_CHUNK_BYTES
                  ? WINO_2D_GROUPS
              : (size_t)e->tiles * per_tile <= ONE_CHUNK_BYTES ? WINO_2D_ONE_CHUNK
                                                                : WINO_2D_CHUNKS;
    const int pitched = e->mode == WINO_2D_GROUPS;
    e->amx = e->mode != WINO_2D_GROUPS && d->k >= AMX_CHANNELS && d->c >= AMX_CHANNELS &&
             wino_f32_packed_gemm_isa() == WINO_ISA_AMX_BF16;
    e->strips = e->mode == WINO_2D_ONE_CHUNK && !e->amx;
    e->block_cols = e->amx ? AMX_BLOCK_COLS : fma_block_cols(e->kp, e->cp, e->pos, threads);
    const int beyond_l2 = e->mode == WINO_2D_GROUPS && m_bytes > GROUP_CHUNK_BYTES;
    e->piece = e->strips                                   ? STRIP
               : beyond_l2 && e->isa == WINO_ISA_AVX512 ? GROUP_PIECE
               : e->cp > e->kp                             ? e->cp
                                                           : e->kp;
    e->v_pitch = pitched ? row_pitch(e->cp) : e->strips ? round_strip(e->cp) : e->cp;
    e->u_pitch = pitched ? row_pitch(e->kp) : e->strips ? round_strip(e->kp) : e->kp;
    const size_t pitched_tile = (size_t)e->pos * (e->v_pitch + e->u_pitch) * sizeof(float);
    const size_t chunk_bytes = e->mode == WINO_2D_GROUPS ? group_chunk : CHUNK_BYTES;
    long chunk = e->mode == WINO_2D_ONE_CHUNK ? e->tiles : (long)(chunk_bytes / pitched_tile);
    const long fewest = e->mode == WINO_2D_GROUPS ? 4 : 16; /* groups: near group_chunk */
    chunk = chunk < fewest ? fewest : chunk;
    e->chunk = (int)(chunk < e->tiles ? chunk : e->tiles);
    /* with strips, positions a line more than their floats apart: at 4 KiB multiples (72 tiles
     * x 256 channels), a tile's rows of every position fell in the same sets of the L1 as the
     * transforms wrote them (conv4_x 1.04x faster) */
    e->v_pos = (ptrdiff_t)e->chunk * e->v_pitch + (e->strips ? 16 : 0);
    e->u_pos = (ptrdiff_t)e->chunk * e->u_pitch + (e->strips ? 16 : 0);
    const size_t v_bytes = round64(sizeof(float) * (size_t)e->pos * (size_t)e->v_pos);
    size_t uv = v_bytes + round64(sizeof(float) * (size_t)e->pos * (size_t)e->u_pos);
    if (e->amx) {
        e->a_bytes = round64(wino_f32_amx_split_bytes(e->kp, e->chunk));
        e->b_bytes = round64(wino_f32_gemm_packed_b_bytes(WINO_ISA_AMX_BF16, e->chunk, e->cp));
        e->off_a = uv;
        e->off_b = uv + e->a_bytes * e->pos;
        uv += (e->a_bytes + e->b_bytes) * e->pos;
        stage += EDGE_BYTES;
    }
    const size_t nhwc = d->layout == WINO_LAYOUT_NCHW
                            ? round64(sizeof(float) * ((size_t)d->n * d->c * d->h * d->w)) +
                                  round64(sizeof(float) * ((size_t)d->n * d->k * p * q))
                            : 0;
    if (e->mode == WINO_2D_GROUPS) {
        /* a group: its M, V and U of a chunk, staging, and with several groups its taps */
        e->off_v = m_bytes;
        e->off_u = m_bytes + v_bytes;
        e->off_stage = m_bytes + uv;
        e->off_taps = m_bytes + uv + stage;
        e->off_m = 0;
        e->worker_bytes = m_bytes + uv + stage + group_taps;
        e->off_nhwc = e->worker_bytes * (size_t)threads;
    } else {
        e->off_v = 0;
        e->off_u = v_bytes;
        e->off_m = uv;
        e->off_stage = e->off_m + (e->mode == WINO_2D_CHUNKS ? m_bytes : 0);
        const size_t m_block = sizeof(float) * (size_t)e->pos * BLOCK * e->block_cols;
        e->worker_bytes = stage + (e->mode == WINO_2D_ONE_CHUNK ? round64(m_block) : 0);
        e->off_nhwc = e->off_stage + e->worker_bytes * (size_t)threads;
    }
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
    /* V at v[pos * v_pos + tile * v_tile + c], U likewise: plane by plane, so that the products
     * read each position's rows one after another. (Tile by tile, the transforms stored to one
     * place a tile instead of alpha^2 streams, but with 64 channels a tile's rows lay 9216 bytes
     * apart, in 4 of the 64 sets of the L1: the products ran at 50-56% of the FMA peak against 67%
     * plane by plane, and ResNet-18's conv2_x at batch 8 took 1.08x the time on a Xeon.) */
    ptrdiff_t v_pos, v_tile, u_pos, u_tile;
    /* floats from a strip of channels to the next (without strips: STRIP, they are one row) */
    ptrdiff_t v_strip, u_strip;
};

/* Where channel c of a tile's V or U row lies, from the row's start, strips `strip` apart. */
static ptrdiff_t channel_at(ptrdiff_t strip, int c)
{
    return c / STRIP * strip + c % STRIP;
}

/* The staging of worker (worker < threads; with groups, of group `worker`): an alpha x alpha
 * window of x, a tile of dy, 3 x 3 taps, and with one chunk a block of M. */
static float *stage_of(const struct run *r, int worker)
{
    return (float *)(r->ws + r->e->off_stage + r->e->worker_bytes * (size_t)worker);
}

/* Worker's edge blocks for the AMX GEMMs: the last EDGE_BYTES of its staging. */
static void *edge_of(const struct run *r, int worker)
{
    return (char *)stage_of(r, worker) + r->e->worker_bytes - EDGE_BYTES;
}

/* Position pos's split U and packed V (AMX). */
static void *split_u(const struct run *r, int pos)
{
    return r->ws + r->e->off_a + r->e->a_bytes * (size_t)pos;
}
static void *packed_v(const struct run *r, int pos)
{
    return r->ws + r->e->off_b + r->e->b_bytes * (size_t)pos;
}

/* Positions [begin, end) of the chunk: U^T split and V packed for the AMX GEMMs. */
static void split_positions(void *arg, long begin, long end, int worker)
{
    const struct run *r = arg;
    const struct wino_f32_bwd_filter_2d *e = r->e;
    (void)worker;
    const float *v = (const float *)(r->ws + e->off_v), *u = (const float *)(r->ws + e->off_u);
    for (long pos = begin; pos < end; pos++) {
        wino_f32_amx_split_at(e->kp, r->tn, u + pos * r->u_pos, r->u_tile, split_u(r, (int)pos));
        wino_f32_gemm_pack_b(WINO_ISA_AMX_BF16, r->tn, e->cp, v + pos * r->v_pos, r->v_tile,
                             packed_v(r, (int)pos));
    }
}

/* Group g's M, V or U (off_m, off_v, off_u). */
static float *group_part(const struct run *r, int g, size_t off)
{
    return (float *)(r->ws + off + r->e->worker_bytes * (size_t)g);
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

/* Where a transform writes: element (i, j) of channel c at out[i * row + j * col + c], its
 * pieces of channels `piece` floats apart. */
struct places {
    float *out;
    ptrdiff_t row, col, piece;
};

/* fn over the size x size square of an NHWC map (h x w x channels) from (h0, w0) into its
 * alpha x alpha places at `at`, `width` channels at a time: read in place when it lies inside
 * the map, else gathered with its zeros into stage (pitch lanes). Lanes past `channels` are left
 * as they are in place: they reach only the rows or columns of M that no tap is taken from.
 * With `ahead` (AVX-512) each piece's output lines are asked for with intent to write during the
 * piece before: where U and V lie beyond L2 (ONE_CHUNK's 7.2 MB on ResNet-18's conv4_x at batch
 * 8, the groups' chunks of twice an M of 2.4 MB on conv3_x) the stores had waited for their
 * lines (on a Xeon conv4_x 1.06x and conv3_x 1.03x faster; read intent alone: conv4_x 0.98x). */
static void transform_square(wino_f32_transform_fn *fn, const float *map, int h, int w,
                             int channels, int h0, int w0, int size, int pitch, float *stage,
                             const struct places *at, int alpha, int width, int ahead)
{
    const float *in = stage;
    ptrdiff_t in_row = (ptrdiff_t)size * pitch, in_col = pitch;
    int lanes = pitch;
    if (h0 >= 0 && w0 >= 0 && h0 + size <= h && w0 + size <= w) {
        in = map + ((size_t)h0 * w + w0) * channels;
        in_row = (ptrdiff_t)w * channels, in_col = channels, lanes = channels;
    } else {
        gather(map, h, w, channels, h0, w0, size, pitch, stage);
    }
    for (int c = 0, s = 0; c < lanes; c += width, s++) {
        if (ahead && lanes - c > width)
            wino_prefetch_for_write(at->out + (s + 1) * at->piece, alpha, at->row, alpha,
                                    at->col, lanes - c - width < width ? lanes - c - width : width);
        fn(in + c, in_row, in_col, at->out + s * at->piece, at->row, at->col,
           lanes - c < width ? lanes - c : width);
    }
}

/* Tile t: V (B^T x B of its alpha x alpha window) at v and U (G dy G^T of its tile) at u, their
 * positions v_pos and u_pos apart. */
static void transform_tile(const struct run *r, long t, float *v, float *u, float *stage)
{
    const struct wino_f32_bwd_filter_2d *e = r->e;
    const struct wino_conv2d_desc *d = r->d;
    float *xs = stage, *ds = stage + (size_t)e->pos * e->cp;
    const int per_image = e->tiles_h * e->tiles_w;
    const int n = (int)(t / per_image), rest = (int)(t % per_image);
    const int h0 = rest / e->tiles_w * e->tile, w0 = rest % e->tiles_w * e->tile;
    /* pieces of channels in strips, else side by side */
    const struct places vp = {v, e->alpha * r->v_pos, r->v_pos,
                              e->strips ? r->v_strip : e->piece};
    const struct places up = {u, e->alpha * r->u_pos, r->u_pos,
                              e->strips ? r->u_strip : e->piece};
    const int ahead = e->isa == WINO_ISA_AVX512;
    transform_square(e->tf.input, r->x + (size_t)n * d->h * d->w * d->c, d->h, d->w, d->c,
                     h0 - d->pad_h, w0 - d->pad_w, e->alpha, e->cp, xs, &vp, e->alpha, e->piece,
                     ahead);
    transform_square(e->tf.filter, r->dy + (size_t)n * r->p * r->q * d->k, r->p, r->q, d->k, h0,
                     w0, e->tile, e->kp, ds, &up, e->alpha, e->piece, ahead);
}

/* Tiles [begin, end) of the chunk, at v_tile and u_tile. */
static void transform_tiles(void *arg, long begin, long end, int worker)
{
    const struct run *r = arg;
    float *stage = stage_of(r, worker);
    float *v = (float *)(r->ws + r->e->off_v), *u = (float *)(r->ws + r->e->off_u);
    for (long tl = begin; tl < end; tl++)
        transform_tile(r, r->t0 + tl, v + tl * r->v_tile, u + tl * r->u_tile, stage);
}

/* Groups [begin, end): group g's share of the tiles, chunk by chunk, transformed and multiplied
 * into the group's own M. Which thread runs a group does not change its sums. */
static void group_products(void *arg, long begin, long end, int worker)
{
    const struct run *r = arg;
    const struct wino_f32_bwd_filter_2d *e = r->e;
    (void)worker;
    for (long g = begin; g < end; g++) {
        float *m = group_part(r, (int)g, e->off_m), *stage = stage_of(r, (int)g);
        float *v = group_part(r, (int)g, e->off_v), *u = group_part(r, (int)g, e->off_u);
        const long first = e->tiles * g / e->threads, last = e->tiles * (g + 1) / e->threads;
        if (first == last) /* else the first chunk's products set M */
            memset(m, 0, sizeof(float) * (size_t)e->pos * e->kp * e->cp);
        for (long t0 = first; t0 < last; t0 += e->chunk) {
            const int tn = (int)(last - t0 < e->chunk ? last - t0 : e->chunk);
            for (int tl = 0; tl < tn; tl++)
                transform_tile(r, t0 + tl, v + tl * r->v_tile, u + tl * r->u_tile, stage);
            const struct wino_winrs_span span = {0, 0, tn};
            for (int pos = 0; pos < e->pos; pos++)
                wino_f32_winrs_gemm_streaming(e->isa, e->kp, e->cp, 1, &span,
                                              u + pos * r->u_pos, r->u_tile, v + pos * r->v_pos,
                                              r->v_tile, m + (size_t)pos * e->kp * e->cp, e->cp,
                                              t0 == first, NULL);
        }
        /* A^T M A of the group's own M, from its core's cache: the sum over the groups then
         * reads a quarter of the bytes (ResNet-18's conv3_x at batch 8: output phase 0.32 ms when
         * it summed the Ms themselves) */
        if (e->threads == 1) /* output() takes A^T . A from M itself */
            continue;
        float *taps = group_part(r, (int)g, e->off_taps);
        const size_t plane = (size_t)e->kp * e->cp, row = (size_t)OUT * OUT * e->cp;
        for (int k = 0; k < r->d->k; k++)
            e->tf.output(m + (size_t)k * e->cp, e->alpha * (ptrdiff_t)plane, (ptrdiff_t)plane,
                         taps + k * row, (ptrdiff_t)OUT * e->cp, e->cp, e->cp);
    }
}

/* Work items [begin, end): (position, block of BLOCK rows of K), M[pos] += U[pos]^T V[pos]
 * over the chunk's tiles. */
static void multiply(void *arg, long begin, long end, int worker)
{
    const struct run *r = arg;
    const struct wino_f32_bwd_filter_2d *e = r->e;
    const int blocks = (e->kp + BLOCK - 1) / BLOCK;
    const float *v = (const float *)(r->ws + e->off_v), *u = (const float *)(r->ws + e->off_u);
    float *m = (float *)(r->ws + e->off_m);
    const struct wino_winrs_span span = {0, 0, r->tn};
    for (long item = begin; item < end; item++) {
        const int pos = (int)(item / blocks), k0 = (int)(item % blocks) * BLOCK;
        const int rows = e->kp - k0 < BLOCK ? e->kp - k0 : BLOCK;
        if (e->amx) {
            wino_f32_amx_multiply(split_u(r, pos), e->kp, k0, rows, packed_v(r, pos), e->cp, 0,
                                  e->cp, r->tn, m + ((size_t)pos * e->kp + k0) * e->cp, e->cp, 1,
                                  edge_of(r, worker));
            continue;
        }
        wino_f32_winrs_gemm(e->isa, rows, e->cp, 1, &span,
                            u + pos * r->u_pos + k0, r->u_tile, v + pos * r->v_pos,
                            r->v_tile,
                            m + ((size_t)pos * e->kp + k0) * e->cp, e->cp);
    }
}

/* dw[k][c0 .. c0 + cols) = taps (OUT x OUT x cols floats), written or added to with accumulate,
 * in dw's layout. */
static void write_taps(const struct run *r, int k, int c0, int cols, const float *taps)
{
    const struct wino_strides4 s = wino_w_strides(r->d);
    const int end = r->d->c - c0 < cols ? r->d->c - c0 : cols;
    float *dw = r->dw + k * s.a + c0 * s.b;
    for (int i = 0; i < OUT; i++)
        for (int j = 0; j < OUT; j++) {
            const float *t = taps + (i * OUT + j) * cols;
            float *at = dw + i * s.c + j * s.d;
            if (s.b == 1 && !r->e->accumulate)
                memcpy(at, t, sizeof(float) * (size_t)end);
            else if (r->e->accumulate)
                for (int cc = 0; cc < end; cc++)
                    at[cc * s.b] += t[cc];
            else
                for (int cc = 0; cc < end; cc++)
                    at[cc * s.b] = t[cc];
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
    if (s.b == 1 && !r->e->accumulate) {
        r->e->tf.output(m, r->e->alpha * pos_stride, pos_stride, r->dw + k * s.a + c0, s.c, s.d,
                        end);
        return;
    }
    r->e->tf.output(m, r->e->alpha * pos_stride, pos_stride, taps, (ptrdiff_t)OUT * cols, cols,
                    end);
    write_taps(r, k, c0, cols, taps);
}

/* dw[k][c0 .. c0 + cols) asked for with intent to write while the row before is written: there
 * dw lies beyond L2 (9.4 MB on ResNet-18's conv5_x; on a Xeon conv5_x 1.02-1.03x, conv4_x 1.02x
 * faster). */
static void prefetch_dw(const struct run *r, int k, int c0, int cols)
{
    const struct wino_strides4 s = wino_w_strides(r->d);
    const int end = r->d->c - c0 < cols ? r->d->c - c0 : cols;
    if (s.b == 1) /* KRSC: 3 x 3 runs of the channels */
        wino_prefetch_for_write(r->dw + k * s.a + c0, OUT, s.c, OUT, s.d, end);
    else /* KCRS: one run */
        wino_prefetch_for_write(r->dw + k * s.a + c0 * s.b, 1, 0, 1, 0, end * OUT * OUT);
}

/* Output channels [begin, end): dw[k] from all of M, or with several groups the sum of their
 * taps in group order. */
static void output(void *arg, long begin, long end, int worker)
{
    const struct run *r = arg;
    const struct wino_f32_bwd_filter_2d *e = r->e;
    float *taps = stage_of(r, worker) + (size_t)e->pos * e->cp + (size_t)e->tile * e->tile * e->kp;
    const float *m = (const float *)(r->ws + e->off_m);
    const size_t row = (size_t)OUT * OUT * e->cp;
    for (long k = begin; k < end; k++) {
        if (e->mode != WINO_2D_GROUPS || e->threads == 1) {
            put_taps(r, (int)k, 0, e->cp, m + k * e->cp, (ptrdiff_t)e->kp * e->cp, taps);
            continue;
        }
        memcpy(taps, group_part(r, 0, e->off_taps) + k * row, sizeof(float) * row);
        for (int g = 1; g < e->threads; g++) {
            const float *tg = group_part(r, g, e->off_taps) + k * row;
            for (size_t i = 0; i < row; i++)
                taps[i] += tg[i];
        }
        write_taps(r, (int)k, 0, e->cp, taps);
    }
}

/* Blocks [begin, end) of BLOCK x block_cols of K x C, with every tile in the one chunk: the
 * alpha^2 products of the block into the thread's M, then its taps. */
static void multiply_and_output(void *arg, long begin, long end, int worker)
{
    const struct run *r = arg;
    const struct wino_f32_bwd_filter_2d *e = r->e;
    float *taps = stage_of(r, worker) + (size_t)e->pos * e->cp + (size_t)e->tile * e->tile * e->kp;
    float *m = taps + (size_t)OUT * OUT * e->cp;
    const float *v = (const float *)(r->ws + e->off_v), *u = (const float *)(r->ws + e->off_u);
    const int bc = e->block_cols, col_blocks = (e->cp + bc - 1) / bc;
    const size_t m_pos = (size_t)BLOCK * bc; /* floats from a position's block of M to the next */
    const struct wino_winrs_span span = {0, 0, r->tn};
    for (long item = begin; item < end; item++) {
        const int k0 = (int)(item / col_blocks) * BLOCK, c0 = (int)(item % col_blocks) * bc;
        const int rows = e->kp - k0 < BLOCK ? e->kp - k0 : BLOCK;
        const int cols = e->cp - c0 < bc ? e->cp - c0 : bc;
        for (int pos = 0; e->amx && pos < e->pos; pos++)
            wino_f32_amx_multiply(split_u(r, pos), e->kp, k0, rows, packed_v(r, pos), e->cp, c0,
                                  cols, r->tn, m + pos * m_pos, cols, 0,
                                  edge_of(r, worker));
        const float *ub = u + channel_at(r->u_strip, k0);
        for (int pos = 0; !e->amx && pos < e->pos; pos++)
            for (int cs = 0; cs < cols; cs += STRIP) { /* a strip of V at a time */
                const float *vb = v + channel_at(r->v_strip, c0 + cs);
                const struct wino_winrs_next next = {cs ? NULL : ub + (pos + 1) * r->u_pos,
                                                     vb + (pos + 1) * r->v_pos, r->u_tile,
                                                     r->v_tile, r->tn};
                wino_f32_winrs_gemm_streaming(e->isa, rows, cols - cs < STRIP ? cols - cs : STRIP,
                                              1, &span, ub + pos * r->u_pos, r->u_tile,
                                              vb + pos * r->v_pos, r->v_tile,
                                              m + pos * m_pos + cs, cols, 1,
                                              pos + 1 < e->pos ? &next : NULL);
            }
        for (int kk = 0; kk < rows && k0 + kk < r->d->k; kk++) {
            if (e->isa == WINO_ISA_AVX512 && k0 + kk + 1 < r->d->k)
                prefetch_dw(r, k0 + kk + 1, c0, cols);
            put_taps(r, k0 + kk, c0, cols, m + (size_t)kk * cols, (ptrdiff_t)m_pos, taps);
        }
    }
}

void wino_f32_bwd_filter_2d_run(const struct wino_f32_bwd_filter_2d *e,
                                const struct wino_conv2d_desc *d, int p, int q, const float *x,
                                const float *dy, float *dw, void *ws)
{
    struct run r = {e, d, p, q, x, dy, dw, (char *)ws, 0, 0, 0, 0, 0, 0, STRIP, STRIP};
    if (d->layout == WINO_LAYOUT_NCHW) {
        float *xn = (float *)(r.ws + e->off_nhwc);
        float *dyn = xn + round64(sizeof(float) * ((size_t)d->n * d->c * d->h * d->w)) / 4;
        wino_f32_transpose_batched(x, xn, d->n, (size_t)d->c, (size_t)d->h * d->w, e->threads, 0);
        wino_f32_transpose_batched(dy, dyn, d->n, (size_t)d->k, (size_t)p * q, e->threads, 0);
        r.x = xn, r.dy = dyn;
    }
    r.v_pos = e->v_pos, r.v_tile = e->v_pitch;
    r.u_pos = e->u_pos, r.u_tile = e->u_pitch;
    if (e->strips) {
        r.v_tile = r.u_tile = STRIP;
        r.v_strip = r.u_strip = (ptrdiff_t)e->chunk * STRIP;
    }
    if (e->mode == WINO_2D_ONE_CHUNK) {
        r.tn = (int)e->tiles;
        wino_parallel_for(e->threads, r.tn, 1, transform_tiles, &r);
        if (e->amx)
            wino_parallel_for(e->threads, e->pos, 1, split_positions, &r);
        const long blocks =
            (long)((e->kp + BLOCK - 1) / BLOCK) * ((e->cp + e->block_cols - 1) / e->block_cols);
        wino_parallel_for(e->threads, blocks, 1, multiply_and_output, &r);
        return;
    }
    if (e->mode == WINO_2D_GROUPS) {
        wino_parallel_for(e->threads, e->threads, 1, group_products, &r);
        wino_parallel_for(e->threads, d->k, 1, output, &r);
        return;
    }
    memset(r.ws + e->off_m, 0, sizeof(float) * (size_t)e->pos * e->kp * e->cp);
    const long items = (long)e->pos * ((e->kp + BLOCK - 1) / BLOCK);
    for (r.t0 = 0; r.t0 < e->tiles; r.t0 += e->chunk) {
        r.tn = (int)(e->tiles - r.t0 < e->chunk ? e->tiles - r.t0 : e->chunk);
        wino_parallel_for(e->threads, r.tn, 1, transform_tiles, &r);
        if (e->amx)
            wino_parallel_for(e->threads, e->pos, 1, split_positions, &r);
        wino_parallel_for(e->threads, items, 1, multiply, &r);
    }
    wino_parallel_for(e->threads, d->k, 1, output, &r);
}
