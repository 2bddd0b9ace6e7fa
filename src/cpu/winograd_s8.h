/* The CPU INT8 Winograd engine (docs/int8-winograd.md): integer input transform, clip and
 * quantize to int8, alpha^2 int8 GEMMs (src/cpu/gemm_s8.h: AMX, AVX512-VNNI, AVX2 or scalar),
 * integer output transform and requantization, over blocks of tiles that stay in cache (the fused
 * template), threaded by src/cpu/thread_pool.h. Bit-exact against src/ref/int8_winograd_ref.c. */
#ifndef WINO_CPU_WINOGRAD_S8_H
#define WINO_CPU_WINOGRAD_S8_H

#include <stddef.h>

#include "op/int8_layer.h"
#include "cpu/gemm_s8.h"
#include "cpu/winograd_s8_transforms.h"

struct wino_s8_engine {
    struct wino_int8_layer layer; /* owned: Uq and the requantization constants */
    enum wino_s8_isa isa;
    enum wino_isa vector_isa; /* of the transforms and the requantization */
    /* Uq[pos] (C x K) packed for the GEMM in chunks of `chunk` columns of K, [chunk][pos]: a
     * block's GEMMs and output transforms go chunk by chunk, so that its int32 M stays in L2
     * for blocks of many tiles, which read the filters fewer times */
    void *packed_u;
    size_t packed_bytes; /* bytes of one packed chunk (a 64-byte multiple) */
    size_t lda;          /* bytes per GEMM row of transformed activations */
    int threads, tile_block, chunk;
    wino_s8_input_fn *input;
    wino_s8_output_fn *output;
    wino_s8_widen_fn *widen;
};

/* Takes ownership of *layer (prepared for desc) and packs its weights for the int8 GEMMs of
 * gemm_isa (<= wino_s8_isa()); the transforms and requantization use vector_isa (<=
 * wino_cpu_isa()). Every combination gives the same bytes. */
enum wino_status wino_s8_engine_prepare(struct wino_s8_engine *e,
                                        const struct wino_conv2d_desc *desc,
                                        struct wino_int8_layer *layer, int threads,
                                        enum wino_s8_isa gemm_isa, enum wino_isa vector_isa);
void wino_s8_engine_release(struct wino_s8_engine *e);

/* Workspace bytes of run() (sets *overflow when they do not fit in size_t). */
size_t wino_s8_engine_workspace_bytes(const struct wino_s8_engine *e,
                                      const struct wino_conv2d_desc *desc, int *overflow);

/* y (NHWC, P x Q) from x (NHWC); ws as sized above, 64-byte aligned. */
void wino_s8_engine_run(const struct wino_s8_engine *e, const struct wino_conv2d_desc *desc,
                        int p, int q, const void *x, void *y, void *ws);

#endif
