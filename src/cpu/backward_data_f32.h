/* FP32 direct backward-data convolution for every valid descriptor (any filter, padding, stride,
 * dilation, either layout), as GEMMs over the taps that reach each input pixel.
 *
 * With stride s, input row h receives tap i from output row (h + pad - i*dilation) / s only when
 * that division is exact, which depends on h mod s alone: the input pixels fall into s_h x s_w
 * phases, and all pixels of one phase take the same taps. Per phase, one GEMM per block of its
 * pixels multiplies the gathered dy values of those taps (pixels x taps K) by the weights of
 * those taps (taps K x C), packed once at create, so no multiplication by an inserted zero is
 * done (a transposed convolution computed as a dilated forward one would do s_h s_w times the
 * work). Threaded (the thread pool) over blocks of pixels.
 *
 * Layers of few input channels take the scatter form instead, whose GEMMs are R S C wide
 * rather than C: per block of dy pixels, dy (pixels x K) times the weights (K x R S C) gives each
 * pixel's contribution to the R x S input pixels its taps reach, which are then added there;
 * threads own bands of input rows. */
#ifndef WINO_CPU_BACKWARD_DATA_F32_H
#define WINO_CPU_BACKWARD_DATA_F32_H

#include <stddef.h>

#include "cpu/gemm_f32.h"
#include "wino.h"

/* Layers of fewer input channels take the scatter form; AUTO runs the direct path instead of
 * Winograd up to WINO_BWD_DATA_AUTO_DIRECT_MAX_C of them, where the scatter form measured
 * faster than Winograd's GEMMs, which are C columns wide too (docs/training.md). */
#define WINO_BWD_DATA_SCATTER_BELOW_C 16
#define WINO_BWD_DATA_AUTO_DIRECT_MAX_C 4

struct wino_f32_backward_data {
    int threads;
    enum wino_isa isa;
    int scatter;        /* the scatter form (above), with bands of rows an image */
    int bands;
    int phase_rows, phase_cols; /* phases along each axis that receive taps (<= R, <= S) */
    int *taps_h, *taps_w; /* per phase row / column: its residue, how many taps, which (see .c) */
    void **w;           /* per phase (row-major): (taps K) x C weights packed for the GEMM;
                         * the scatter form: one K x (R S C) */
    int max_inner;      /* the largest taps K of a phase; the scatter form: K */
    int block;          /* input pixels a GEMM: a work item; the scatter form: dy pixels */
    size_t a_bytes, c_bytes, gemm_bytes; /* per thread, 64-byte multiples */
};

/* Rearranges and packs the weights (K x C x R x S as desc->layout says) of a validated FP32
 * descriptor. threads >= 1. Returns WINO_SUCCESS, WINO_OUT_OF_MEMORY, or WINO_INVALID_ARGUMENT
 * when a size overflows. */
enum wino_status wino_f32_backward_data_prepare(struct wino_f32_backward_data *bd,
                                                const struct wino_conv2d_desc *desc,
                                                const float *weights, int threads);
void wino_f32_backward_data_release(struct wino_f32_backward_data *bd);

size_t wino_f32_backward_data_workspace_bytes(const struct wino_f32_backward_data *bd);

/* dx from dy (output size p x q); ws 64-byte aligned, workspace_bytes long. */
void wino_f32_backward_data_run(const struct wino_f32_backward_data *bd,
                                const struct wino_conv2d_desc *desc, int p, int q,
                                const float *dy, float *dx, void *ws);

#endif
