/* WinRS backward-filter convolution on CUDA (src/cuda/winrs_cuda.cu), FP32, FP16 and BF16,
 * stride 1 and dilation 1, any R x S and padding, either layout. The algorithm of
 * src/cpu/winrs_f32.h: row i of dW[k][c] is a 1D correlation summed over every row of dy; a row
 * of dy is split into units of r columns, a filter row into tiles of n taps, and each (unit,
 * tile) is a 1D Winograd problem F(n, r) with dy's unit as the filter:
 *     dW[k][c][i][j0 .. j0 + n) += A^T [(G dy_unit) .* (B^T x_window)].
 * The fused kernels (winrs_fused.h) do it all on chip; the non-fused stages run on the
 * caller's stream, over chunks of units: U = G dy (alpha x units x K), V = B^T x for every
 * filter row i and tile (alpha x units x C each), the alpha GEMMs M += U^T V per (i, tile) in
 * cuBLAS (FP32 accumulation; FP16 and BF16 operands on tensor cores), the units of a chunk in
 * groups summed into buckets of M, then dW = A^T (the buckets' Kahan sum). The runtime plans
 * the kernels (the CPU planner's fastest pair, section 4.1) and hands them over with their
 * matrices: the component does no planning of its own. */
#ifndef WINO_CUDA_WINRS_CUDA_H
#define WINO_CUDA_WINRS_CUDA_H

#include <stddef.h>

#include "base/conv_desc.h"
#include "wino.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Up to two kinds of units, each with tiles of n taps and one tile of the rest. */
#define WINO_CUDA_WINRS_MAX_PROBLEMS 4

/* One kind of units of dy with one kind of tiles of dW's rows: F(n, r), alpha = n + r - 1. */
struct wino_cuda_winrs_problem {
    int n, r;
    int q0, units; /* per row of dy: units of r columns from column q0 */
    int j0, tiles; /* per row of dW: tiles of n taps from tap j0 */
    int first;     /* 1: the first problem to write its taps (dw = A^T M, or += with accumulate);
                    * 0: adds to what an earlier problem wrote */
    float at[WINO_MAX_ALPHA * WINO_MAX_ALPHA]; /* A^T, n x alpha, row-major */
    float g[WINO_MAX_ALPHA * WINO_MAX_ALPHA];  /* G, alpha x r */
    float bt[WINO_MAX_ALPHA * WINO_MAX_ALPHA]; /* B^T, alpha x alpha */
};

/* The largest alpha of the fused kernels (their products stay in registers). */
#define WINO_CUDA_WINRS_FUSED_MAX_ALPHA 8

struct wino_cuda_winrs_plan {
    int fused; /* 1: the fused kernels (src/cuda/winrs_fused.h, alpha <= FUSED_MAX_ALPHA); 0:
                * the non-fused stages */
    int problems;
    struct wino_cuda_winrs_problem p[WINO_CUDA_WINRS_MAX_PROBLEMS];
    int accumulate; /* dw += dW instead of dw = dW */
};

struct wino_cuda_winrs;

/* The component's WinRS operator (struct wino_cuda_ops.winrs): create on ctx's device for a
 * validated FP32, FP16 or BF16 descriptor with stride 1 and dilation 1 and its plan (sets the
 * workspace bytes run needs); reshape to other sizes with the plan for them; run (dw from x and
 * dy on stream, a stream of the device: no allocation, no synchronization); destroy (NULL is
 * fine);
 * segments. */
struct wino_cuda_winrs_ops {
    enum wino_status (*create)(const struct wino_conv2d_desc *desc,
                               const struct wino_conv_sizes *sizes,
                               const struct wino_context *ctx,
                               const struct wino_cuda_winrs_plan *plan,
                               struct wino_cuda_winrs **winrs, size_t *workspace_bytes);
    enum wino_status (*reshape)(struct wino_cuda_winrs *winrs,
                                const struct wino_conv2d_desc *desc,
                                const struct wino_conv_sizes *sizes,
                                const struct wino_cuda_winrs_plan *plan,
                                size_t *workspace_bytes);
    enum wino_status (*run)(struct wino_cuda_winrs *winrs, const void *x, const void *dy,
                            void *dw, void *workspace, size_t workspace_bytes, void *stream);
    void (*destroy)(struct wino_cuda_winrs *winrs);
    /* The partial sums added with Kahan summation: the fused kernels' segments (the most of any
     * problem), or the non-fused stages' groups of units (buckets of M). */
    int (*segments)(const struct wino_cuda_winrs *winrs);
};

/* The component's table (src/cuda/winrs_cuda.cu). */
extern const struct wino_cuda_winrs_ops wino_cuda_winrs_ops;

/* The runtime's way to it: the loaded component's table, or NULL (WINO_UNSUPPORTED recorded:
 * no component, no device) (src/op/cuda_loader.c). */
const struct wino_cuda_winrs_ops *wino_cuda_winrs(void);

#ifdef __cplusplus
}
#endif

#endif
