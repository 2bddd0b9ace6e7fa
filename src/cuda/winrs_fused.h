/* Fused WinRS kernels (src/cuda/winrs_fused.cu): one kernel per F(n, r) problem fetches units
 * of dy and windows of x, transforms them in registers (U = G dy, V = B^T x), multiplies them
 * in shared memory (alpha products M[a] += U[a]^T V[a] of a 64 x 64 block of K x C: FP16 and
 * BF16 on tensor cores with FP32 accumulation, FP32 as 3xTF32 on tensor cores in NHWC and on
 * CUDA cores otherwise) and transforms M to dW with
 * A^T while it is still in registers: U, V and M never reach device memory. The units of a
 * problem are cut into segments, one thread block per segment, filter row, tile and block of
 * K x C; with more than one segment each writes its part of dW into a bucket of the workspace
 * and a last kernel sums the buckets with Kahan summation. */
#ifndef WINO_CUDA_WINRS_FUSED_H
#define WINO_CUDA_WINRS_FUSED_H

#include <cuda_runtime.h>
#include <stddef.h>

#include "cuda/winrs_cuda.h"
#include "cuda/winrs_tensors.cuh"

/* The largest alpha of a fused kernel: its products M stay in registers (alpha x 16 per
 * thread). */
#define WINRS_FUSED_MAX_ALPHA WINO_CUDA_WINRS_FUSED_MAX_ALPHA

/* How a problem's thread blocks run: its units in `segments` segments, summed in buckets or
 * (in_cluster) across a thread-block cluster (the NHWC kernel, up to WINRS_CLUSTER_MAX segments:
 * no buckets); head > 0 (the NHWC kernel, with in_cluster): the first `head` blocks of K x C
 * first, one segment each, then the others in clusters of `segments`, so that the rounds of
 * blocks fill the SMs; threads: a block's, for the NHWC kernel (its warp-specialized form has a
 * warpgroup more). */
struct winrs_grid {
    int segments, in_cluster, head, threads;
};

/* The grid of pr's units for d and elements of element_bytes on device: enough thread blocks to
 * fill the device (see the .cu), their buckets within bucket_budget bytes. */
winrs_grid winrs_fused_grid(const dims &d, const wino_cuda_winrs_problem &pr,
                            size_t element_bytes, int device, double bucket_budget);

/* Whether the tensor-core kernel (winrs_fused_nhwc.cu) takes d: NHWC tensors with K and C in
 * 16-byte pieces (multiples of 8 for 16 bits, 4 for FP32) of element_bytes each. */
bool winrs_fused_nhwc_takes(const dims &d, size_t element_bytes);

/* Sets up the fused kernels on the current device (once per operator, at create). */
cudaError_t winrs_fused_prepare(void);

/* The bytes of buckets that grid g needs for d (0 for one segment or in a cluster). */
size_t winrs_fused_bucket_bytes(const dims &d, const winrs_grid &g);

/* Enqueues pr's kernels on stream: dw's taps of pr = (overwrite ? 0 : dw) + pr's dW; buckets
 * holds winrs_fused_bucket_bytes(d, g) bytes. T is float, __half or __nv_bfloat16. */
template <typename T>
cudaError_t winrs_fused_enqueue(const dims &d, const wino_cuda_winrs_problem &pr,
                                const winrs_grid &g, const T *x, const T *dy, T *dw,
                                float *buckets, int overwrite, cudaStream_t stream);

#endif
