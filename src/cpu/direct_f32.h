/* FP32 direct convolution as im2col + GEMM (src/cpu/gemm_f32.h), for every valid descriptor
 * (any filter, padding, stride, dilation), threaded over blocks of output pixels
 * (src/cpu/thread_pool.h).
 * It computes in NHWC: a block's rows of taps (R S C per output pixel) are built in a per-thread
 * buffer and multiplied by the weights (R S C x K), packed once at create; NCHW tensors are
 * transposed into the workspace and back. */
#ifndef WINO_CPU_DIRECT_F32_H
#define WINO_CPU_DIRECT_F32_H

#include <stddef.h>

#include "cpu/epilogue.h"
#include "cpu/gemm_f32.h"
#include "wino.h"

struct wino_f32_direct {
    int threads;
    int block;         /* output pixels per block (GEMM rows) */
    enum wino_isa isa;
    void *w;           /* (R S C) x K weights packed for the GEMM */
    size_t col_bytes;  /* per thread, 64-byte multiple */
    size_t gemm_bytes; /* per thread, 64-byte multiple */
    size_t x_bytes, y_bytes; /* NCHW: NHWC copies of x and y, 64-byte multiples */
    size_t workspace_bytes;  /* threads x (col_bytes + gemm_bytes) + x_bytes + y_bytes */
};

/* Reorders and packs the weights (laid out as desc->layout says); 1 <= threads <=
 * WINO_MAX_THREADS. Returns WINO_SUCCESS, WINO_OUT_OF_MEMORY, or WINO_INVALID_ARGUMENT when a
 * size (the workspace included) overflows. */
enum wino_status wino_f32_direct_prepare(struct wino_f32_direct *dc,
                                         const struct wino_conv2d_desc *desc,
                                         const float *weights, int threads);
void wino_f32_direct_release(struct wino_f32_direct *dc);

/* Sets the blocks and workspace of a prepared dc for desc's batch and image sizes (the other
 * fields as at prepare). WINO_INVALID_ARGUMENT, dc unchanged, when a size overflows. */
enum wino_status wino_f32_direct_shape(struct wino_f32_direct *dc,
                                       const struct wino_conv2d_desc *desc);

size_t wino_f32_direct_workspace_bytes(const struct wino_f32_direct *dc);

void wino_f32_direct_run(const struct wino_f32_direct *dc, const struct wino_conv2d_desc *desc,
                         int p, int q, const float *x, const struct wino_epilogue *ep, float *y,
                         void *ws);

#endif
