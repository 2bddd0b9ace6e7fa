/* FP32 backward-filter convolution on the CPU: the direct path for every valid descriptor, and
 * what it shares with WinRS (src/cpu/winrs_f32.h): segments of dy computed apart into buckets,
 * reduced with Kahan summation.
 *
 * Direct: dW (K x C R S, one row per output channel in dw's own layout) is the sum over the
 * pixels of dy of dy[pixel]^T (K) times the pixel's row of taps of x (C R S, im2col): GEMMs of
 * K x pixels by pixels x (a block of dW's columns). A work item is one segment of dy rows and
 * one block of columns, so threads share out the columns first and split dy only when the
 * columns are too few; every segment but the first writes a bucket in the workspace. */
#ifndef WINO_CPU_BACKWARD_FILTER_F32_H
#define WINO_CPU_BACKWARD_FILTER_F32_H

#include <stddef.h>

#include "cpu/gemm_f32.h"
#include "wino.h"

/* Segments of dy to compute apart so that threads get enough work items: about four items per
 * thread when a segment gives items_per_segment, at most max_segments, and few enough that the
 * segments - 1 buckets of dw_elems floats stay within a quarter of the data (x, dy and dw:
 * data_elems floats). */
int wino_backward_filter_segments(long items_per_segment, int threads, long max_segments,
                                  size_t dw_elems, size_t data_elems);

/* dw[e] = (dw[e]) + buckets[0][e] + ... + buckets[extra - 1][e] for e < count, summed with
 * Kahan's compensation; bucket z starts at buckets + z * bucket_stride. */
void wino_f32_buckets_reduce(float *dw, const float *buckets, size_t bucket_stride, int extra,
                             size_t count, int threads);

struct wino_dw_column;

struct wino_f32_backward_filter_direct {
    int threads;
    enum wino_isa isa;
    int segments;    /* ranges of dy rows (image, output row) computed apart */
    int col_block;   /* dW columns per work item */
    int pix_block;   /* dy pixels per GEMM */
    int accumulate;  /* dw += dW */
    struct wino_dw_column *cols; /* per dW column: where its x element lies (see .c) */
    size_t a_bytes, b_bytes, gemm_bytes, bucket_floats; /* 64-byte multiples (bucket: floats) */
};

/* Plans a validated FP32 descriptor. threads >= 1. Returns WINO_SUCCESS, WINO_OUT_OF_MEMORY, or
 * WINO_INVALID_ARGUMENT when a size overflows. */
enum wino_status wino_f32_backward_filter_direct_prepare(struct wino_f32_backward_filter_direct *bf,
                                                         const struct wino_conv2d_desc *desc,
                                                         int threads, int accumulate);
void wino_f32_backward_filter_direct_release(struct wino_f32_backward_filter_direct *bf);

size_t wino_f32_backward_filter_direct_workspace_bytes(
    const struct wino_f32_backward_filter_direct *bf);

/* dw from x and dy (output size p x q); ws 64-byte aligned, workspace_bytes long. */
void wino_f32_backward_filter_direct_run(const struct wino_f32_backward_filter_direct *bf,
                                         const struct wino_conv2d_desc *desc, int p, int q,
                                         const float *x, const float *dy, float *dw, void *ws);

#endif
