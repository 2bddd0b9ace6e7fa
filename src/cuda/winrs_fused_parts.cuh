/* What the fused WinRS kernels (winrs_fused.cu, winrs_fused_nhwc.cu) share: a problem's
 * matrices as kernel parameters, where a thread block works, and how it writes its part of dW. */
#ifndef WINO_CUDA_WINRS_FUSED_PARTS_CUH
#define WINO_CUDA_WINRS_FUSED_PARTS_CUH

#include <string.h>

#include "base/fast_divisor.h"
#include "cuda/winrs_cuda.h"
#include "cuda/winrs_fused.h"
#include "cuda/winrs_tensors.cuh"

/* A thread block computes a BLOCK x BLOCK tile of K x C. */
#define BLOCK 64

/* The most segments summed across a thread-block cluster (the portable cluster size). */
#define WINRS_CLUSTER_MAX 8

/* F(n, r) for the kernels: the matrices zero-padded to A x A at a fixed stride, so that the
 * unrolled loops index the kernel parameters with constants and need no bounds. */
template <int A> struct fused_problem {
    int n, r, alpha, q0, units, j0, tiles;
    int kc0; /* the K x C block of blockIdx.x 0 (winrs_grid's head) */
    long total_units, segment_units;
    /* units a row and rows an image (d.p), for the tensor-core kernel's places of each step */
    wino_fast_divisor per_row, per_image;
    float g[A][A], bt[A][A], at[A][A];
};

template <int A>
static fused_problem<A> fused_problem_of(const dims &d, const wino_cuda_winrs_problem &pr,
                                         int segments)
{
    fused_problem<A> f;
    memset(&f, 0, sizeof f);
    f.n = pr.n, f.r = pr.r, f.alpha = pr.n + pr.r - 1;
    f.q0 = pr.q0, f.units = pr.units, f.j0 = pr.j0, f.tiles = pr.tiles;
    f.total_units = (long)d.n * d.p * pr.units;
    f.segment_units = (f.total_units + segments - 1) / segments;
    f.per_row = wino_fast_divisor_of(pr.units);
    f.per_image = wino_fast_divisor_of(d.p);
    for (int a = 0; a < f.alpha; a++) {
        for (int l = 0; l < pr.r; l++)
            f.g[a][l] = pr.g[a * pr.r + l];
        for (int b = 0; b < f.alpha; b++)
            f.bt[a][b] = pr.bt[a * f.alpha + b];
    }
    for (int j = 0; j < pr.n; j++)
        for (int a = 0; a < f.alpha; a++)
            f.at[j][a] = pr.at[j * f.alpha + a];
    return f;
}

/* Where a block works: its K x C tile, its filter row and tile, its segment of units. */
struct block_place {
    int k0, c0, row, tile;
    long begin, end;
};

template <int A> static __device__ block_place place_of(const dims &d, const fused_problem<A> &f)
{
    block_place b;
    const int kblocks = (d.k + BLOCK - 1) / BLOCK, kc = (int)blockIdx.x + f.kc0;
    b.k0 = kc % kblocks * BLOCK;
    b.c0 = kc / kblocks * BLOCK;
    b.row = (int)blockIdx.y / f.tiles;
    b.tile = (int)blockIdx.y % f.tiles;
    b.begin = (long)blockIdx.z * f.segment_units;
    b.end = min(f.total_units, b.begin + f.segment_units);
    return b;
}

/* Writes value, the part of dW[k][c][row][tap] of the block's segment: into its bucket, or into
 * dw (overwritten or added to). */
template <typename T>
static __device__ __forceinline__ void put(const dims &d, T *dw, float *buckets, int overwrite,
                                           int k, int c, int row, int tap, float value)
{
    if (buckets) {
        buckets[(size_t)blockIdx.z * d.k * d.c * d.r * d.s + krsc_at(d, k, c, row, tap)] =
            value;
    } else {
        const size_t at = dw_at(d, k, c, row, tap);
        store(dw, at, overwrite ? value : load(dw, at) + value);
    }
}

/* The tensor-core kernel of winrs_fused_nhwc.cu takes what winrs_fused_nhwc_takes says, at run
 * time with x and dy on 16-byte boundaries (fits); T is float, __half or __nv_bfloat16, A 4 or
 * WINRS_FUSED_MAX_ALPHA. */
bool winrs_fused_nhwc_fits(const dims &d, size_t element_bytes, const void *x, const void *dy);
/* The most segments it sums across a thread-block cluster on device (1: none). */
int winrs_fused_nhwc_cluster_max(int device);
/* Its grid: units units, kc_blocks x rows thread blocks per segment (blocks of K x C, filter
 * rows x tiles), at most bucket_most segments summed in buckets or at most cluster_most summed in
 * a cluster; from a model of its rounds of blocks over device's SMs for elements of
 * element_bytes. */
winrs_grid winrs_fused_nhwc_grid(int device, size_t element_bytes, long units, int kc_blocks,
                                 int rows, int cluster_most, int bucket_most);
/* Lets its kernels have the shared memory they need on the current device (once, at create). */
cudaError_t winrs_fused_nhwc_prepare(void);
/* Launches it on grid (K x C blocks from f.kc0, filter rows x tiles, segments) in blocks of
 * `threads` (winrs_grid's); in_cluster: the segments are one cluster, whose blocks sum their
 * taps and write dw (buckets unused). */
template <typename T, int A>
cudaError_t winrs_fused_nhwc_launch(const dims &d, const fused_problem<A> &f, dim3 grid,
                                    int in_cluster, int threads, const T *x, const T *dy, T *dw,
                                    float *buckets, int overwrite, cudaStream_t stream);

#endif
