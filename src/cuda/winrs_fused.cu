/* Fused WinRS kernels: see src/cuda/winrs_fused.h. */
#include <math.h>
#include <mma.h>
#include <string.h>

#include "cuda/winrs_fused.h"
#include "cuda/winrs_fused_parts.cuh"

/* A block computes a BLOCK x BLOCK tile of K x C. FP32 takes FMA_UNITS units per step, each
 * thread fma_rows(A) x 4 pairs (k, c) for every alpha; the tensor cores take MMA_UNITS (the
 * depth of one 16 x 16 x 16 product), each of THREADS threads' warps 16 x 16 pairs. At most 128
 * registers per thread where the accumulators of alpha 8 live: a whole block fits on an SM. */
#define THREADS 512
#define FMA_UNITS 8
#define MMA_UNITS 16

/* Enough blocks for a few waves over the device's SMs (the NHWC kernel: from a model of its
 * waves); a segment has at least MIN_SEGMENT_UNITS units (a few steps), and there are at most
 * MAX_SEGMENTS. */
#define TARGET_BLOCKS 1024
#define MIN_SEGMENT_UNITS 64
#define MAX_SEGMENTS 256

/* Pair e of a step of `units` units: channel offset ch (of k in dy, of c in x) and unit ul.
 * Neighbouring threads take neighbouring columns (NCHW) or channels (NHWC): coalesced loads. */
static __device__ __forceinline__ void pair_of(const dims &d, int e, int units, int *ch, int *ul)
{
    if (d.nhwc) {
        *ch = e % BLOCK;
        *ul = e / BLOCK;
    } else {
        *ul = e % units;
        *ch = e / units;
    }
}

/* Where a unit of dy lies: image n (-1 past the end of the segment), row p, first column q.
 * Each step's are worked out once, by its first threads, into shared memory. */
struct unit_place {
    int n, p, q;
};

template <int A>
static __device__ __forceinline__ void place_units(const dims &d, const fused_problem<A> &f,
                                                   const block_place &b, long u0, int units,
                                                   unit_place *out)
{
    const int t = threadIdx.x;
    if (t >= units)
        return;
    const long unit = u0 + t, row = unit / f.units;
    const unit_place u = {unit < b.end ? (int)(row / d.p) : -1, (int)(row % d.p),
                          f.q0 + (int)(unit - row * f.units) * f.r};
    out[t] = u;
}

/* The transformed unit of dy (u = G dy[n][k][p][q .. q + r)) and window of x
 * (v = B^T x[n][c][p + row - pad_h][q + j0 + tile n - pad_w + 0 .. alpha)) of one unit, zero
 * past the end of the segment, past the row of dy (a ragged plan's last unit), past K or C, and
 * in the padding. */
template <typename T, int A>
static __device__ __forceinline__ void fetch_pair(const dims &d, const fused_problem<A> &f,
                                                  const block_place &b, const T *__restrict__ x,
                                                  const T *__restrict__ dy, int ch,
                                                  unit_place at, float (&u)[A], float (&v)[A])
{
    float g[A], win[A];
    const bool in = at.n >= 0;
    const int n = at.n, p = at.p, q = at.q;
    const int k = b.k0 + ch, c = b.c0 + ch;
    const int h = p + b.row - d.pad_h, w0 = q + f.j0 + b.tile * f.n - d.pad_w;
    const bool dy_in = in && k < d.k, x_in = in && c < d.c && h >= 0 && h < d.h;
#pragma unroll
    for (int l = 0; l < A; l++)
        g[l] = dy_in && l < f.r && q + l < d.q ? load(dy, dy_at(d, n, k, p, q + l)) : 0.0f;
#pragma unroll
    for (int j = 0; j < A; j++) {
        const int w = w0 + j;
        win[j] = x_in && j < f.alpha && w >= 0 && w < d.w ? load(x, x_at(d, n, c, h, w)) : 0.0f;
    }
#pragma unroll
    for (int a = 0; a < A; a++) {
        float su = 0.0f, sv = 0.0f;
#pragma unroll
        for (int l = 0; l < A; l++) {
            su += f.g[a][l] * g[l];
            sv += f.bt[a][l] * win[l];
        }
        u[a] = su;
        v[a] = sv;
    }
}

/* The FP32 kernel's rows of K per thread for alpha <= A: 4 (256 threads) where the
 * accumulators are few, 2 (512 threads, within 128 registers) for alpha 8; measured on the H100
 * (b2_64 of winrs-bfc: 0.61 ms with 4 rows for alpha 4, 0.81 with 2). */
static constexpr __host__ __device__ int fma_rows(int a) { return a <= 4 ? 4 : 2; }
static constexpr __host__ __device__ int fma_threads(int a) { return 16 * BLOCK / fma_rows(a); }

/* FP32 on CUDA cores. U and V of a step go through shared memory; the next step's are fetched
 * into registers while this one is multiplied. Thread (ty, tx) holds M[a][k][c] for the TK rows
 * k = TK ty .. and c = 4 tx .. 4 tx + 3: a warp reads 2 distinct vectors of U and 16 float4 of
 * V. */
template <int A>
__global__ void __launch_bounds__(fma_threads(A), 1)
    fused_fma(dims d, fused_problem<A> f, const float *__restrict__ x,
              const float *__restrict__ dy, float *dw, float *buckets, int overwrite)
{
    constexpr int TK = fma_rows(A), NT = fma_threads(A), PAIRS = BLOCK * FMA_UNITS / NT;
    __shared__ __align__(16) float us[A][FMA_UNITS][BLOCK + 4]; /* + 4: no bank conflicts on */
    __shared__ __align__(16) float vs[A][FMA_UNITS][BLOCK + 4]; /* the NCHW stores */
    const block_place b = place_of(d, f);
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    float acc[A][TK][4];
#pragma unroll
    for (int a = 0; a < A; a++)
#pragma unroll
        for (int i = 0; i < TK; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
                acc[a][i][j] = 0.0f;
    __shared__ unit_place at[2][FMA_UNITS]; /* this step's units and the next's */
    float u[PAIRS][A], v[PAIRS][A];
    int ch[PAIRS], ul[PAIRS];
    place_units(d, f, b, b.begin, FMA_UNITS, at[0]);
    __syncthreads();
#pragma unroll
    for (int e = 0; e < PAIRS; e++) {
        pair_of(d, threadIdx.x + e * NT, FMA_UNITS, &ch[e], &ul[e]);
        fetch_pair(d, f, b, x, dy, ch[e], at[0][ul[e]], u[e], v[e]);
    }
    int next = 1;
    for (long u0 = b.begin; u0 < b.end; u0 += FMA_UNITS, next ^= 1) {
        place_units(d, f, b, u0 + FMA_UNITS, FMA_UNITS, at[next]);
#pragma unroll
        for (int e = 0; e < PAIRS; e++)
#pragma unroll
            for (int a = 0; a < A; a++) {
                us[a][ul[e]][ch[e]] = u[e][a];
                vs[a][ul[e]][ch[e]] = v[e][a];
            }
        __syncthreads();
        if (u0 + FMA_UNITS < b.end)
#pragma unroll
            for (int e = 0; e < PAIRS; e++)
                fetch_pair(d, f, b, x, dy, ch[e], at[next][ul[e]], u[e], v[e]);
#pragma unroll
        for (int t = 0; t < FMA_UNITS; t++)
#pragma unroll
            for (int a = 0; a < A; a++) {
                if (a >= f.alpha)
                    break;
                float uu[TK];
                if constexpr (TK == 4) {
                    const float4 uk = *(const float4 *)&us[a][t][4 * ty];
                    uu[0] = uk.x, uu[1] = uk.y, uu[2] = uk.z, uu[3] = uk.w;
                } else {
                    const float2 uk = *(const float2 *)&us[a][t][2 * ty];
                    uu[0] = uk.x, uu[1] = uk.y;
                }
                const float4 vc = *(const float4 *)&vs[a][t][4 * tx];
                const float vv[4] = {vc.x, vc.y, vc.z, vc.w};
#pragma unroll
                for (int i = 0; i < TK; i++)
#pragma unroll
                    for (int j = 0; j < 4; j++)
                        acc[a][i][j] += uu[i] * vv[j];
            }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TK; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int k = b.k0 + TK * ty + i, c = b.c0 + 4 * tx + j;
            if (k >= d.k || c >= d.c)
                continue;
#pragma unroll
            for (int jj = 0; jj < A; jj++) {
                if (jj >= f.n)
                    break;
                float s = 0.0f;
#pragma unroll
                for (int a = 0; a < A; a++)
                    s += f.at[jj][a] * acc[a][i][j];
                put(d, dw, buckets, overwrite, k, c, b.row, f.j0 + b.tile * f.n + jj, s);
            }
        }
}

/* FP16 and BF16 on tensor cores: U and V rounded to T in shared memory (U as K x units, V as
 * units x C), FP32 accumulators per alpha; warp w holds k = 16 (w / 4) .. + 16 and c = 16 (w % 4)
 * .. + 16 (one fragment). A^T is applied to the accumulators element by element (the fragments
 * of every alpha have the same layout), and the results leave through shared memory. */
template <typename T, int A>
__global__ void __launch_bounds__(THREADS, 1)
    fused_mma(dims d, fused_problem<A> f, const T *__restrict__ x, const T *__restrict__ dy,
              T *dw, float *buckets, int overwrite)
{
    using namespace nvcuda;
    constexpr int PAIRS = BLOCK * MMA_UNITS / THREADS, LDU = MMA_UNITS + 8, LDV = BLOCK + 8;
    constexpr int LDO = 16 + 4, IN_BYTES = A * (BLOCK * LDU + MMA_UNITS * LDV) * (int)sizeof(T);
    constexpr int OUT_BYTES = THREADS / 32 * 16 * LDO * (int)sizeof(float);
    __shared__ __align__(128) unsigned char smem[IN_BYTES > OUT_BYTES ? IN_BYTES : OUT_BYTES];
    T(*us)[BLOCK][LDU] = (T(*)[BLOCK][LDU])smem;
    T(*vs)[MMA_UNITS][LDV] = (T(*)[MMA_UNITS][LDV])(smem + A * BLOCK * LDU * sizeof(T));
    const block_place b = place_of(d, f);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, wk = 16 * (warp / 4),
              wc = 16 * (warp % 4);
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[A];
#pragma unroll
    for (int a = 0; a < A; a++)
        wmma::fill_fragment(acc[a], 0.0f);
    __shared__ unit_place at[2][MMA_UNITS]; /* this step's units and the next's */
    place_units(d, f, b, b.begin, MMA_UNITS, at[0]);
    int now = 0;
    for (long u0 = b.begin; u0 < b.end; u0 += MMA_UNITS, now ^= 1) {
        __syncthreads(); /* at[now] is written, and the last step's products are done */
#pragma unroll 1 /* one pair's values at a time: registers for the accumulators */
        for (int e = 0; e < PAIRS; e++) {
            int ch, ul;
            float u[A], v[A];
            pair_of(d, threadIdx.x + e * THREADS, MMA_UNITS, &ch, &ul);
            fetch_pair(d, f, b, x, dy, ch, at[now][ul], u, v);
#pragma unroll
            for (int a = 0; a < A; a++) {
                store(&us[a][ch][ul], 0, u[a]);
                store(&vs[a][ul][ch], 0, v[a]);
            }
        }
        place_units(d, f, b, u0 + MMA_UNITS, MMA_UNITS, at[now ^ 1]);
        __syncthreads();
#pragma unroll
        for (int a = 0; a < A; a++) {
            if (a >= f.alpha)
                break;
            wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fu;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fv;
            wmma::load_matrix_sync(fu, &us[a][wk][0], LDU);
            wmma::load_matrix_sync(fv, &vs[a][0][wc], LDV);
            wmma::mma_sync(acc[a], fu, fv, acc[a]);
        }
    }
    __syncthreads(); /* the products are done: the outputs take over the shared memory */
    float(*out)[LDO] = (float(*)[LDO])(smem + warp * 16 * LDO * sizeof(float));
#pragma unroll
    for (int jj = 0; jj < A; jj++) {
        if (jj >= f.n)
            break;
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> o;
#pragma unroll
        for (int e = 0; e < o.num_elements; e++) {
            float s = 0.0f;
#pragma unroll
            for (int a = 0; a < A; a++)
                s += f.at[jj][a] * acc[a].x[e];
            o.x[e] = s;
        }
        wmma::store_matrix_sync(&out[0][0], o, LDO, wmma::mem_row_major);
        __syncwarp();
        for (int e = lane; e < 256; e += 32) {
            const int k = b.k0 + wk + e / 16, c = b.c0 + wc + e % 16;
            if (k < d.k && c < d.c)
                put(d, dw, buckets, overwrite, k, c, b.row, f.j0 + b.tile * f.n + jj,
                    out[e / 16][e % 16]);
        }
        __syncwarp();
    }
}

/* dw's taps j0 .. j0 + tiles n of every row (+)= the sum of the segments' buckets, with Kahan
 * summation. */
template <typename T>
__global__ void sum_buckets(dims d, int j0, int taps, int segments, const float *buckets, T *dw,
                            int overwrite)
{
    const long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long)d.k * d.c * d.r * taps)
        return;
    const int c = (int)(t % d.c), k = (int)(t / d.c % d.k);
    const long rest = t / d.c / d.k;
    const int row = (int)(rest / taps), tap = j0 + (int)(rest % taps);
    const size_t in = krsc_at(d, k, c, row, tap), stride = (size_t)d.k * d.c * d.r * d.s;
    float sum = 0.0f, lost = 0.0f;
#pragma unroll 8 /* the loads of 8 buckets in flight at once (0.14 waves of threads) */
    for (int s = 0; s < segments; s++) {
        const float y = buckets[s * stride + in] - lost, next = sum + y;
        lost = (next - sum) - y;
        sum = next;
    }
    const size_t at = dw_at(d, k, c, row, tap);
    store(dw, at, overwrite ? sum : load(dw, at) + sum);
}

/* The blocks of BLOCK x BLOCK that K x C takes (place_of's count on the device). */
static long kc_blocks_of(const dims &d)
{
    return (long)((d.k + BLOCK - 1) / BLOCK) * ((d.c + BLOCK - 1) / BLOCK);
}

winrs_grid winrs_fused_grid(const dims &d, const wino_cuda_winrs_problem &pr,
                            size_t element_bytes, int device, double bucket_budget)
{
    const long kc_blocks = kc_blocks_of(d);
    const double blocks = (double)kc_blocks * d.r * pr.tiles;
    const double units = (double)d.n * d.p * pr.units;
    const double bucket = 4.0 * d.k * d.c * d.r * d.s;
    const double by_units = fmin((double)MAX_SEGMENTS, floor(units / MIN_SEGMENT_UNITS));
    const double most = fmin(by_units, floor(bucket_budget / bucket));
    if (winrs_fused_nhwc_takes(d, element_bytes)) {
        const int cluster_most = (int)fmin(by_units, (double)winrs_fused_nhwc_cluster_max(device));
        return winrs_fused_nhwc_grid(device, element_bytes, (long)units, (int)kc_blocks,
                                     d.r * pr.tiles, cluster_most, most < 2 ? 1 : (int)most);
    }
    winrs_grid g = {1, 0, 0, 0};
    if (most >= 2)
        g.segments = (int)fmax(1.0, fmin(ceil(TARGET_BLOCKS / blocks), most));
    return g;
}

cudaError_t winrs_fused_prepare(void) { return winrs_fused_nhwc_prepare(); }

size_t winrs_fused_bucket_bytes(const dims &d, const winrs_grid &g)
{
    return g.segments < 2 || g.in_cluster
               ? 0
               : (size_t)g.segments * d.k * d.c * d.r * d.s * sizeof(float);
}

/* The NHWC kernel where it fits (nhwc: with the segments in a cluster, or in buckets), the
 * other kernels elsewhere: FP32 on CUDA cores, 16 bits with wmma. */
template <int A, typename T>
static cudaError_t launch(const dims &d, const fused_problem<A> &f, dim3 grid, int nhwc,
                          const winrs_grid &g, const T *x, const T *dy, T *dw, float *buckets,
                          int overwrite, cudaStream_t s)
{
    if (nhwc)
        return winrs_fused_nhwc_launch<T, A>(d, f, grid, g.in_cluster, g.threads, x, dy, dw,
                                             buckets, overwrite, s);
    if constexpr (sizeof(T) == 4)
        fused_fma<A><<<grid, fma_threads(A), 0, s>>>(d, f, x, dy, dw, buckets, overwrite);
    else
        fused_mma<T, A><<<grid, THREADS, 0, s>>>(d, f, x, dy, dw, buckets, overwrite);
    return cudaGetLastError();
}

/* The blocks of K x C from kc0 to kc1 as g says (its segments, in a cluster or not). */
template <int A, typename T>
static cudaError_t launch_fused(const dims &d, const wino_cuda_winrs_problem &pr, int kc0,
                                int kc1, const winrs_grid &g, int nhwc, const T *x, const T *dy,
                                T *dw, float *buckets, int overwrite, cudaStream_t s)
{
    fused_problem<A> f = fused_problem_of<A>(d, pr, g.segments);
    f.kc0 = kc0;
    const dim3 grid((unsigned)(kc1 - kc0), (unsigned)(d.r * pr.tiles), (unsigned)g.segments);
    return launch<A>(d, f, grid, nhwc, g, x, dy, dw,
                     g.segments > 1 && !g.in_cluster ? buckets : NULL, overwrite, s);
}

/* g's launches: the head's blocks of K x C whole, then the rest in g.segments segments. */
template <int A, typename T>
static cudaError_t launch_grid(const dims &d, const wino_cuda_winrs_problem &pr,
                               const winrs_grid &g, int nhwc, const T *x, const T *dy, T *dw,
                               float *buckets, int overwrite, cudaStream_t s)
{
    const int kc_blocks = (int)kc_blocks_of(d);
    if (g.head > 0) {
        const winrs_grid whole = {1, 0, 0, g.threads};
        const cudaError_t e = launch_fused<A>(d, pr, 0, g.head, whole, nhwc, x, dy, dw, buckets,
                                              overwrite, s);
        if (e != cudaSuccess)
            return e;
    }
    return launch_fused<A>(d, pr, g.head, kc_blocks, g, nhwc, x, dy, dw, buckets, overwrite, s);
}

template <typename T>
cudaError_t winrs_fused_enqueue(const dims &d, const wino_cuda_winrs_problem &pr,
                                const winrs_grid &planned, const T *x, const T *dy, T *dw,
                                float *buckets, int overwrite, cudaStream_t stream)
{
    /* Segments planned for a cluster have no buckets: where the NHWC kernel cannot take the
     * tensors after all (not on 16-byte boundaries), one segment. */
    const int nhwc = winrs_fused_nhwc_fits(d, sizeof(T), x, dy);
    winrs_grid g = planned;
    if (g.in_cluster && !nhwc)
        g.segments = 1, g.in_cluster = 0, g.head = 0;
    const cudaError_t e =
        pr.n + pr.r - 1 <= 4
            ? launch_grid<4>(d, pr, g, nhwc, x, dy, dw, buckets, overwrite, stream)
            : launch_grid<WINRS_FUSED_MAX_ALPHA>(d, pr, g, nhwc, x, dy, dw, buckets, overwrite,
                                                 stream);
    if (e != cudaSuccess)
        return e;
    if (g.segments > 1 && !g.in_cluster) {
        const int taps = pr.tiles * pr.n;
        const long outs = (long)d.k * d.c * d.r * taps;
        sum_buckets<T><<<(unsigned)((outs + 255) / 256), 256, 0, stream>>>(
            d, pr.j0, taps, g.segments, buckets, dw, overwrite);
    }
    return cudaGetLastError();
}

template cudaError_t winrs_fused_enqueue<float>(const dims &, const wino_cuda_winrs_problem &,
                                                const winrs_grid &, const float *, const float *,
                                                float *, float *, int, cudaStream_t);
template cudaError_t winrs_fused_enqueue<__half>(const dims &, const wino_cuda_winrs_problem &,
                                                 const winrs_grid &, const __half *,
                                                 const __half *, __half *, float *, int,
                                                 cudaStream_t);
template cudaError_t winrs_fused_enqueue<__nv_bfloat16>(const dims &,
                                                        const wino_cuda_winrs_problem &,
                                                        const winrs_grid &,
                                                        const __nv_bfloat16 *,
                                                        const __nv_bfloat16 *, __nv_bfloat16 *,
                                                        float *, int, cudaStream_t);
