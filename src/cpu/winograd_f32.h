/* The FP32 Winograd engine for the default tiles: generated input / filter / output transforms
 * (src/cpu/generated) around alpha^2 GEMMs over channels (src/cpu/gemm_f32.h), threaded by
 * src/cpu/thread_pool.h. Tiles are the GEMM rows and channels its columns: V (alpha^2 x tiles x C) times the
 * packed filters U (alpha^2 x C x K) gives M (alpha^2 x tiles x K); the transforms take channels
 * as their vector lanes. Two variants share the stages:
 *  - non-fused: the whole transformed input V (alpha^2 x C x T tiles) is built, then alpha^2
 *    GEMMs, then the output transform (Mazaheri et al. (EuroSys'20)'s non-fused template);
 *  - fused: a block of tiles goes through all three stages while it stays in cache (the CPU
 *    counterpart of Mazaheri et al. (EuroSys'20)'s fused template). */
#ifndef WINO_CPU_WINOGRAD_F32_H
#define WINO_CPU_WINOGRAD_F32_H

#include <stddef.h>

#include "cpu/epilogue.h"
#include "cpu/gemm_f32.h"
#include "cpu/transform_table.h"
#include "wino.h"

struct wino_f32_engine {
    int m, r, alpha;
    int fused;      /* 1: fused blocks of tile_block tiles; 0: non-fused */
    int tile_block; /* tiles per block (fused) or per transform chunk (non-fused) */
    int threads;
    enum wino_isa isa;
    struct wino_f32_transforms tf;
    void *U;             /* alpha^2 transformed filter matrices (C x K), each packed for the GEMM */
    size_t packed_bytes; /* bytes of one packed matrix (a 64-byte multiple) */
};

/* 1 if F(m x m, r x r) has generated transforms. */
int wino_f32_engine_has_tile(int m, int r);

/* The variant to use when the caller leaves it to wino: fused when there are at least four fused
 * blocks of tiles per thread to share out (each block reads all the filters: with fewer, the
 * non-fused variant, which reads them once, wins; ResNet-18 conv3_x at batch 1, 4 blocks of 14
 * tiles: 0.34 ms fused, 0.30 ms non-fused) and the filters fit the last-level cache, non-fused
 * (parallel over channels and the alpha^2 GEMMs) otherwise. */
int wino_f32_engine_prefers_fused(int m, int r, const struct wino_conv2d_desc *desc, long tiles,
                                  int threads);

/* Transforms the filters of desc (stride 1, dilation 1, R == S == r, FP32; checked by the caller)
 * once; 1 <= threads <= WINO_MAX_THREADS. Returns WINO_SUCCESS or WINO_OUT_OF_MEMORY. */
enum wino_status wino_f32_engine_prepare(struct wino_f32_engine *e,
                                         const struct wino_conv2d_desc *desc,
                                         const float *weights, int m, int fused, int threads);
void wino_f32_engine_release(struct wino_f32_engine *e);

/* Workspace bytes run needs (a multiple of 64), or 0 with *overflow = 1 if it overflows. */
size_t wino_f32_engine_workspace_bytes(const struct wino_f32_engine *e,
                                       const struct wino_conv2d_desc *desc, int p, int q,
                                       int *overflow);

/* y = epilogue(conv(x)) with the prepared filters; ws 64-byte aligned, workspace_bytes long. */
void wino_f32_engine_run(const struct wino_f32_engine *e, const struct wino_conv2d_desc *desc,
                         int p, int q, const float *x, const struct wino_epilogue *ep, float *y,
                         void *ws);

#endif
