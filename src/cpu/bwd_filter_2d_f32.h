/* FP32 backward-filter convolution of 3 x 3 filters (stride 1, dilation 1) on the CPU with the 2D
 * Winograd tile F(3x3, 4x4) (or F(3x3, 5x5) where it needs fewer products): dy in 4 x 4 tiles is
 * the "filter" of a forward F(3x3, 4x4) over the 6 x 6 window of x at each tile, so that
 *     dW = A^T [ sum over the tiles of (G dy G^T) (.) (B^T x B) ] A,
 * 36 products per (tile, k, c) where direct convolution takes 144 and WinRS's F(3, 6) 64. The
 * sum is alpha^2 GEMMs M[pos] += U[pos]^T V[pos] (K x tiles by tiles x C, WinRS's GEMM) over
 * chunks of tiles (three orders, by M's size: below); A^T . A of M at the end. Windows inside the
 * maps are read in place; NCHW tensors are first copied to NHWC in the workspace. */
#ifndef WINO_CPU_BWD_FILTER_2D_F32_H
#define WINO_CPU_BWD_FILTER_2D_F32_H

#include <stddef.h>

#include "cpu/transform_table.h"
#include "cpu/winrs_f32.h"
#include "wino.h"

/* How the products are ordered (CHOOSE: by M's size and the tiles', the library's way):
 * GROUPS: each thread's share of the tiles into an M of its own, chunk by chunk (small M);
 * ONE_CHUNK: every tile at once, then M in blocks, never all of it;
 * CHUNKS: one M, chunks of tiles transformed and multiplied in parallel. */
enum wino_f32_bwd_2d_mode { WINO_2D_CHOOSE, WINO_2D_GROUPS, WINO_2D_ONE_CHUNK, WINO_2D_CHUNKS };

struct wino_f32_bwd_filter_2d {
    int threads, accumulate;
    enum wino_isa isa;
    /* the products of ONE_CHUNK and CHUNKS on AMX-BF16 tiles (wino_f32_amx_multiply, as exact as
     * FP32) where K and C are both at least AMX_CHANNELS and the machine has them: each
     * position's U and V of a chunk split once (a_bytes, b_bytes each, at off_a and off_b), and
     * the last EDGE_BYTES of each thread's staging the GEMMs' edge blocks */
    int amx;
    size_t a_bytes, b_bytes, off_a, off_b;
    int tile, alpha, pos;          /* dy's tile side (4 or 5), alpha = tile + 2, alpha^2 */
    struct wino_f32_transforms tf; /* F(3x3, tile x tile) */
    int kp, cp;                    /* K and C padded to 16 */
    int tiles_h, tiles_w, chunk;   /* dy's tiles an image; tiles transformed at a time */
    int v_pitch, u_pitch;          /* floats of a tile's V (U) at one position */
    /* ONE_CHUNK on FMA: each position's V and U in strips of STRIP channels, a strip of every
     * tile after the other (bwd_filter_2d_f32.c) */
    int strips;
    int piece;      /* channels a transform call writes at once */
    int block_cols; /* ONE_CHUNK: columns of C a block of M */
    ptrdiff_t v_pos, u_pos; /* floats from a position's V (U) of a chunk to the next one's */
    enum wino_f32_bwd_2d_mode mode;
    long tiles;
    /* the workspace: V and U of a chunk (and their splits), M, each thread's staging, NHWC copies
     * (NCHW); with groups, per group (worker_bytes apart): M, V and U of a chunk, staging, with
     * several groups its taps (K x 3 x 3 x cp), then NHWC copies */
    size_t off_v, off_u, off_m, off_stage, off_taps, off_nhwc, worker_bytes, bytes;
};

/* 1 when the tile serves desc: 3 x 3 filters, stride 1, dilation 1. */
int wino_f32_bwd_filter_2d_takes(const struct wino_conv2d_desc *desc);

/* The tiles AUTO asks of a layer before it takes the 2D tile over the direct path: with fewer,
 * M's 36 K C floats (written and read back) outweigh the products the tiles save. ResNet-18's
 * conv5_x (7 x 7, 512 channels) on a Zen 3: the direct path 1.9x faster at batch 1 (4 tiles)
 * and 1.4x at batch 2, the tiles 1.16x faster at batch 4 (16 tiles); 14 x 14 maps at batch 1 (9
 * tiles of 5 x 5) alike. */
#define WINO_BWD_2D_MIN_TILES 12

/* The tiles of a layer that the tile serves (output p x q): images x tile rows x tile columns. */
long wino_f32_bwd_filter_2d_tiles(const struct wino_conv2d_desc *desc, int p, int q);

/* Plans a validated FP32 descriptor (output p x q) that the tile serves; threads >= 1; mode
 * WINO_2D_CHOOSE, or one named (the tests run each). */
enum wino_status wino_f32_bwd_filter_2d_prepare(struct wino_f32_bwd_filter_2d *e,
                                                const struct wino_conv2d_desc *desc, int p, int q,
                                                int threads, int accumulate,
                                                enum wino_f32_bwd_2d_mode mode);
size_t wino_f32_bwd_filter_2d_workspace_bytes(const struct wino_f32_bwd_filter_2d *e);

/* dw (overwritten, or added to with accumulate) from x and dy; ws 64-byte aligned. */
void wino_f32_bwd_filter_2d_run(const struct wino_f32_bwd_filter_2d *e,
                                const struct wino_conv2d_desc *desc, int p, int q, const float *x,
                                const float *dy, float *dw, void *ws);

#endif
