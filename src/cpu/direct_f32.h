/* FP32 direct convolution as im2col + GEMM (src/cpu/gemm_f32.h), for every valid descriptor
 * (any filter, padding, stride, dilation), threaded with OpenMP over column blocks. The columns
 * of a block of output pixels are built in a per-thread buffer, so the workspace stays small. */
#ifndef WINO_CPU_DIRECT_F32_H
#define WINO_CPU_DIRECT_F32_H

#include <stddef.h>

#include "cpu/epilogue.h"
#include "cpu/gemm_f32.h"
#include "wino.h"

struct wino_f32_direct {
    int threads;
    int block;         /* output pixels per column block */
    enum wino_isa isa;
    float *w;          /* NCHW: K x (C R S); NHWC: (R S C) x K, as the GEMM wants them */
    size_t col_bytes;  /* per thread, 64-byte multiple */
    size_t gemm_bytes; /* per thread, 64-byte multiple */
};

/* Copies the weights (laid out as desc->layout says) into GEMM order. threads >= 1. Returns
 * WINO_SUCCESS, WINO_OUT_OF_MEMORY, or WINO_INVALID_ARGUMENT when a size overflows. */
enum wino_status wino_f32_direct_prepare(struct wino_f32_direct *dc,
                                         const struct wino_conv2d_desc *desc,
                                         const float *weights, int threads);
void wino_f32_direct_release(struct wino_f32_direct *dc);

size_t wino_f32_direct_workspace_bytes(const struct wino_f32_direct *dc);

void wino_f32_direct_run(const struct wino_f32_direct *dc, const struct wino_conv2d_desc *desc,
                         int p, int q, const float *x, const struct wino_epilogue *ep, float *y,
                         void *ws);

#endif
