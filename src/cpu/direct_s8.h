/* The CPU INT8 direct convolution (docs/int8-winograd.md, "Direct"), any filter, stride,
 * dilation and padding: blocks of output pixels gathered (im2col) into the A operand of the
 * int8 GEMM (src/cpu/gemm_s8.h: AMX, AVX512-VNNI, AVX2 or scalar), a GEMM with the packed
 * weights of each group of output channels, then the requantization; (block, group) items
 * threaded by src/cpu/thread_pool.h. Layers of stride 1 and channels in multiples of 64 on
 * AMX skip the gather (implicit): each thread copies the padded rows of its items into a
 * window of its own, and the GEMM reads each output pixel's taps in place there
 * (wino_s8_gemm_chunked), over "virtual" pixels of the padded width whose extra columns are
 * computed and dropped, telling the rows it has finished so that they are requantized from L1.
 * Bit-exact against src/ref/int8_direct_ref.c. */
#ifndef WINO_CPU_DIRECT_S8_H
#define WINO_CPU_DIRECT_S8_H

#include <stddef.h>
#include <stdint.h>

#include "cpu/gemm_f32.h"
#include "cpu/gemm_s8.h"
#include "op/int8_layer.h"

struct wino_s8_direct {
    struct wino_int8_layer layer; /* owned: Wq and the requantization constants */
    enum wino_s8_isa isa;
    enum wino_isa vector_isa; /* of the requantization */
    void *packed_w;  /* Wq (R S C x K) packed for the GEMM, in groups of output channels */
    int groups, group_k; /* group g: output channels g group_k up to (g + 1) group_k or K,
                          * packed on its own, group_bytes apart, so that threads can share
                          * the channels of a layer of few pixels */
    size_t group_bytes;
    size_t lda;      /* bytes per gathered row */
    int depth, threads;
    int implicit;    /* no gather (above): set by prepare with AMX; may be set before the
                      * workspace query for any GEMM isa >= VNNI where
                      * wino_s8_direct_implicit_takes (the tests run it so on VNNI) */
};

/* Takes ownership of *layer (wino_int8_direct_prepare for desc) and packs its weights for the
 * GEMMs of isa (<= wino_s8_isa()); the requantization uses vector_isa (<= wino_cpu_isa()).
 * Every combination gives the same bytes. */
enum wino_status wino_s8_direct_prepare(struct wino_s8_direct *e,
                                        const struct wino_conv2d_desc *desc,
                                        struct wino_int8_layer *layer, int threads,
                                        enum wino_s8_isa isa, enum wino_isa vector_isa);
void wino_s8_direct_release(struct wino_s8_direct *e); /* safe on a zeroed struct */

/* Whether the implicit path can take desc: stride 1, channels a multiple of 64. */
int wino_s8_direct_implicit_takes(const struct wino_conv2d_desc *desc);

/* Workspace bytes of run() (sets *overflow when they do not fit in size_t). */
size_t wino_s8_direct_workspace_bytes(const struct wino_s8_direct *e,
                                      const struct wino_conv2d_desc *desc, int *overflow);

/* y (NHWC, N x P x Q x K) from x (NHWC); ws as sized above, 64-byte aligned. */
void wino_s8_direct_run(const struct wino_s8_direct *e, const struct wino_conv2d_desc *desc,
                        int p, int q, const void *x, void *y, void *ws);

#endif
