/* The ROWS variant of the CUDA forward convolution: one-dimensional Winograd F(m, s) along each
 * output row, with the filter's r rows and the channels as the products' depth, in one kernel on
 * Hopper (sm_90a), NHWC: alpha = m + s - 1 = 8 in FP16 and BF16 (winograd_rows.cu, warp-
 * specialized), or F(4, 3) (alpha 6) in FP16 with V in registers (winograd_rows_registers.cu).
 * C++ callers only. */
#ifndef WINO_CUDA_WINOGRAD_ROWS_H
#define WINO_CUDA_WINOGRAD_ROWS_H

#include <cuda_runtime.h>
#include <stddef.h>

#include "base/conv_desc.h"
#include "base/fast_divisor.h"
#include "wino.h"

#define ROWS_ALPHA 8

/* A layer for the kernel: its sizes and tile, all the kernel needs but the pointers. */
struct wino_rows_plan {
    int n, c, h, w, k, p, q, r, s, pad_h, pad_w;
    int m;                        /* outputs a tile */
    int alpha;                    /* m + s - 1: 8, or 6 (the kernel with V in registers) */
    int tiles_w;                  /* tiles a row: ceil(q / m) */
    /* A block's 64 tiles come in `boxes` boxes of box_h output rows x box_w tiles (powers of
     * two, log2 lg_w and lg_tiles of box_w and box_w box_h), each one request to the tensor
     * memory accelerator a step: box_h rows x cols input columns x 16 channels, box_elems
     * elements apart in shared memory. The boxes tile each image, boxes_w a band of box_h rows,
     * boxes_h bands; total in all. Alpha 6: one box of box_h x box_w tiles a block, its input
     * rows `cols` pixels apart in shared memory. */
    int box_w, box_h, lg_w, lg_tiles, boxes, cols, box_elems;
    int boxes_w, boxes_h, total;
    struct wino_fast_divisor per_band, per_image; /* boxes_w, boxes_h */
    int kblocks, chunks, steps;   /* blocks of 64 output channels (alpha 6: outs), of 16 input
                                   * channels; steps of a tile block: r chunks */
    int outs;                     /* alpha 6: a block's output channels, 32 or 64 */
    int raw_bytes, stage_bytes, stages; /* alpha 6: a chunk's input rows and U in shared memory,
                                         * in `stages` buffers */
    int sms;                      /* the device's SMs */
    int clusters, head, splits;   /* a tile block and 64 output channels each: the first `head`
                                   * one block each, then the rest `splits` blocks each (a
                                   * cluster sharing the chunks), so that the rounds of blocks
                                   * fill the SMs (choose_launches) */
    int relu;
    int bf16;                     /* elements: BF16, else FP16 */
    float at[ROWS_ALPHA][ROWS_ALPHA], g[ROWS_ALPHA][ROWS_ALPHA], bt[ROWS_ALPHA][ROWS_ALPHA];
};

/* Why the kernel cannot run desc on device (NULL: it can). */
const char *wino_rows_refusal(const struct wino_conv2d_desc *desc, int device);
/* Why neither kernel takes F(m, desc->s) for desc (NULL: one does). */
const char *wino_rows_tile_refusal(const struct wino_conv2d_desc *desc, int m);

/* The plan of desc (sizes) with F(m, s) given by its matrices (row-major doubles, at m x alpha,
 * g alpha x s, bt alpha x alpha) on a device of `sms` SMs, or WINO_UNSUPPORTED with more than
 * 2^31 tiles. */
enum wino_status wino_rows_plan_of(const struct wino_conv2d_desc *desc,
                                   const struct wino_conv_sizes *sizes, int m, const double *at,
                                   const double *g, const double *bt, int relu, int sms,
                                   struct wino_rows_plan *plan);

/* The transformed filters' bytes (U), and their making from KRSC weights on stream. */
size_t wino_rows_u_bytes(const struct wino_rows_plan *plan);
cudaError_t wino_rows_filter_transform(const struct wino_rows_plan *plan, const void *w, void *u,
                                       cudaStream_t stream);

/* Once per operator, on its device: the kernel's shared memory limit. */
cudaError_t wino_rows_setup(const struct wino_rows_plan *plan);

/* y from x (16-byte aligned) with U, bias (K floats or NULL) and plan->relu, on stream. */
cudaError_t wino_rows_run(const struct wino_rows_plan *plan, const void *u, const void *x,
                          const float *bias, void *y, cudaStream_t stream);

/* The kernel of alpha 6 (winograd_rows_registers.cu), for the functions above: the plan's
 * boxes and stages, its blocks, U's bytes, and the same steps as above. */
void wino_rows6_plan(struct wino_rows_plan *plan);
/* The plan with `outs` output channels a block (32 or 64): U's layout depends on it, so reshape
 * keeps the operator's. */
void wino_rows6_set_outs(struct wino_rows_plan *plan, int outs);
long long wino_rows6_blocks(const struct wino_rows_plan *plan);
size_t wino_rows6_u_bytes(const struct wino_rows_plan *plan);
cudaError_t wino_rows6_filter_transform(const struct wino_rows_plan *plan, const void *w, void *u,
                                        cudaStream_t stream);
cudaError_t wino_rows6_setup(const struct wino_rows_plan *plan);
cudaError_t wino_rows6_run(const struct wino_rows_plan *plan, const void *u, const void *x,
                           const float *bias, void *y, cudaStream_t stream);

#endif
