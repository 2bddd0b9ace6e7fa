/* Fused WinRS on tensor cores for NHWC tensors whose channels come in 16-byte pieces (see
 * winrs_fused_parts.cuh): FP16 and BF16, and FP32 as "3xTF32" (each operand split into two TF32
 * values, three products: about FP32's accuracy). A thread block owns 64 x 64 of K x C, one
 * filter row and tile, one segment of units, and goes through its units UNITS at a time in
 * three overlapping stages:
 *   1. fetch: cp.async copies the step's units of dy (r taps x 64 channels) and windows of x
 *      (alpha columns x 64 channels) into shared memory, two steps ahead, zeros where a unit is
 *      past the segment, a channel past K or C, or a column in the padding;
 *   2. transform, on tensor cores as well, with FP32 sums. 16 bits: 16 / A units of dy (or x)
 *      stacked, taps x 8 channels, times diag(G, ..., G) (or diag(B^T, ...)) gives U (V) of
 *      those units and channels in one m16n8k16 product; the matrices' entries are split into
 *      their nearest 16-bit values and the rest (a second product where the rest is not zero),
 *      so the transforms are as exact as FP32 ones, and U and V are rounded to T. FP32: 16
 *      channels x 8 / A units' taps times diag(G^T, ...) in m16n8k8 TF32 products, data and
 *      matrix split into two TF32 values each, and U and V split again into two planes of TF32
 *      values, high and low parts. U and V go into planes per alpha, [unit][channel] for 16 bits
 *      and [channel][unit] for TF32;
 *   3. multiply: a warp owns one alpha and 64 / (16 / A) rows of K by all 64 columns of C, and
 *      adds the product of its rows of U and V's columns to its FP32 accumulators (16 bits:
 *      ldmatrix.trans, mma.sync m16n8k16; TF32: ldmatrix of both parts, three m16n8k8 products,
 *      the small ones first).
 * One barrier per step: after it, the copies of step s + 2 start into the raw buffer that step
 * s's transforms have left, and warps multiply step s and transform step s + 1 (two buffers
 * each of raw and transformed data, so that a warp may transform while another still
 * multiplies). At the end the warps' alphas meet in shared memory, each thread applies A^T to
 * the alphas of 8 pairs (k, c) and writes their n taps to dw or its segment's bucket, or
 * (segments in a thread-block cluster) block 0 of the cluster sums every block's taps through
 * distributed shared memory (cluster_sum). */
#include <cooperative_groups.h>
#include <limits.h>

#include "cuda/tensor_core_ptx.cuh"
#include "cuda/winrs_fused_parts.cuh"

#define NHWC_THREADS 512

/* The kernel's sizes for elements of T. */
template <typename T> struct nhwc_shape {
    static constexpr bool TF32 = sizeof(T) == 4;
    /* units per step: the depth of one product (m16n8k16, or m16n8k8 for TF32) */
    static constexpr int UNITS = TF32 ? 8 : 16;
    static constexpr int PIECE = 16 / (int)sizeof(T); /* channels in 16 bytes */
    /* Pitch of a row of 64 channels: 16-bit, 16 bytes past a multiple of 128, so that
     * ldmatrix's 8 rows fall on distinct banks; FP32, 8 banks past a multiple of 32, so that a
     * fragment's 4 rows x 8 columns do. */
    static constexpr int ROW = BLOCK + 8;
    /* Transformed planes of a step per alpha: 16 bits, one of UNITS rows of ROW, 16 bytes past
     * a multiple of 128 so that the transforms' stores to 8 planes fall on distinct banks; TF32,
     * a high and a low part of 64 channels x 8 units each (at tf32_at). */
    static constexpr int PARTS = TF32 ? 2 : 1;
    static constexpr int PLANE = TF32 ? BLOCK * 8 : UNITS * ROW + 8;
};

/* Where unit u of channel c lies in the TF32 planes of alpha a. The two halves of a channel's 8
 * units trade places every 4 channels, so that ldmatrix's 8 rows of 16 bytes fall on distinct
 * banks; within a half the units are permuted by a, so that the transforms' stores of one
 * fragment (4 planes, or 2 planes of 2 units) do. The products see the same permutation of the
 * units in U and V and sum over all of them. */
static __device__ __forceinline__ int tf32_row(int c, int half) /* units 4 half .. + 3 */
{
    return c * 8 + (half ^ ((c >> 2) & 1)) * 4;
}
template <int A> static __device__ __forceinline__ int tf32_at(int c, int u, int a)
{
    const int mix = A == 8 ? (a >> 1) & 3 : a & 2;
    return tf32_row(c, u >> 2) + ((u & 3) ^ mix);
}

/* Two packed 16-bit values to FP32 and back (round to nearest), by winrs_tensors.cuh's element
 * conversions. */
template <typename T> static __device__ __forceinline__ float2 unpack16(unsigned u)
{
    T h[2];
    memcpy(h, &u, 4);
    return make_float2(load(h, 0), load(h, 1));
}
template <typename T> static __device__ __forceinline__ unsigned pack16(float a, float b)
{
    T h[2];
    store(h, 0, a);
    store(h, 1, b);
    unsigned u;
    memcpy(&u, h, 4);
    return u;
}

/* Where a unit's data lies for the copying warps of one kind: the offset of its first element,
 * dy[n][p][q][k0] or x[n][h][w0][c0] (h = p + row - pad_h, w0 its window's first column), and
 * which of its A taps of dy or columns of x hold data (bit j): the row's taps of dy (fewer than
 * r for a ragged plan's last unit), the columns of x in the image, none past the segment. The
 * copies zero-fill the rest; worked out once per unit, so that a copy costs a test and an add. */
struct __align__(16) nhwc_source {
    long long off;
    unsigned bits;
};

/* Places of steps s .. s + PLACE_STEPS - 1 are kept: a step's are worked out three steps before
 * its copies start. */
#define PLACE_STEPS 4

/* A step's places: [dy, x][unit]. */
template <typename T> using step_places = nhwc_source[2][nhwc_shape<T>::UNITS];
/* A step's transformed planes of one buffer: [U, V][part][a][...]. */
template <typename T, int A>
using tf_planes = T[2][nhwc_shape<T>::PARTS][A][nhwc_shape<T>::PLANE];
/* A step's raw units of one buffer: [dy, x][unit * A + tap][channel]. */
template <typename T, int A>
using raw_rows = T[2][nhwc_shape<T>::UNITS * A][nhwc_shape<T>::ROW];

/* The shared memory of a block: the places of the coming steps' units, their raw units of dy
 * and windows of x (every tap written at each step, zeros past r or alpha), and their
 * transforms U and V. */
template <typename T, int A> struct nhwc_smem {
    step_places<T> place[PLACE_STEPS];
    raw_rows<T, A> raw[2];
    tf_planes<T, A> tf[2];
};

/* Bits first .. end - 1, within 0 .. 30. */
static __device__ __forceinline__ unsigned bit_span(int first, int end)
{
    first = min(max(first, 0), 31), end = min(max(end, first), 31);
    return (1u << end) - (1u << first);
}

/* Thread t < UNITS works out the places of unit u0 + t. */
template <typename T, int A>
static __device__ __forceinline__ void place_step(const dims &d, const fused_problem<A> &f,
                                                  const block_place &b, long u0,
                                                  step_places<T> &out)
{
    const int t = threadIdx.x;
    if (t >= nhwc_shape<T>::UNITS)
        return;
    /* below 2^31 (winrs_fused_nhwc_takes), past the segment too */
    const int unit = (int)min(u0 + t, f.total_units);
    const int row = wino_fast_divide(unit, f.per_row), n = wino_fast_divide(row, f.per_image);
    const int p = row - n * d.p;
    const int q = f.q0 + (unit - row * f.units) * f.r;
    const int h = p + b.row - d.pad_h, w0 = q + f.j0 + b.tile * f.n - d.pad_w;
    const bool in = u0 + t < b.end;
    nhwc_source s;
    s.off = (((long long)n * d.p + p) * d.q + q) * d.k + b.k0;
    s.bits = in ? bit_span(0, min(f.r, d.q - q)) : 0u;
    out[0][t] = s;
    s.off = (((long long)n * d.h + h) * d.w + w0) * d.c + b.c0;
    s.bits = in && h >= 0 && h < d.h ? bit_span(-w0, min(f.alpha, d.w - w0)) : 0u;
    out[1][t] = s;
}

/* Stage 1 for a step: warp w of the first half copies the A taps of dy of its UNITS / 8 units
 * (NHWC: 64 contiguous channels each), warp w of the second half the A columns of x of the
 * same units; a lane takes one 16-byte piece of a tap at a time (zeros where the place has no
 * data, and past K or C). */
template <typename T, int A>
static __device__ __forceinline__ void fetch_step(const dims &d, const block_place &b,
                                                  const step_places<T> &place, const T *x,
                                                  const T *dy, raw_rows<T, A> &raw)
{
    typedef nhwc_shape<T> S;
    constexpr int LANES = BLOCK / S::PIECE, TAPS = 32 / LANES; /* per tap, taps per copy */
    constexpr int UNITS = S::UNITS / 8;                        /* per warp */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, ch = lane % LANES * S::PIECE;
    const int kind = warp / 8, u0 = UNITS * (warp % 8);
    const T *from = kind ? x : dy;
    const int pitch = kind ? d.c : d.k;
    const bool ch_in = (kind ? b.c0 + ch < d.c : b.k0 + ch < d.k);
#pragma unroll
    for (int i = 0; i < UNITS * A / TAPS; i++) {
        const int e = lane / LANES + TAPS * i, ul = u0 + e / A, j = e % A;
        const nhwc_source s = place[kind][ul];
        const bool ok = ch_in && (s.bits >> j & 1u);
        cp_async16(&raw[kind][ul * A + j][ch],
                   from + (ok ? s.off + (j * pitch + ch) : 0), ok ? 16 : 0);
    }
}

/* The transforms' matrix m as lane's operand: 16 bits, diag(m, ..., m) (16 / A copies, A x A)
 * as the A operand of m16n8k16 in T's nearest values (hi) and the rest (lo); TF32,
 * diag(m^T, ..., m^T) (8 / A copies) as the B operand of m16n8k8 in two TF32 parts (hi[0..1],
 * lo[0..1]). */
template <typename T, int A>
static __device__ void diag_fragments(const float (&m)[A][A], unsigned (&hi)[4],
                                      unsigned (&lo)[4])
{
    const int lane = threadIdx.x % 32;
    if constexpr (nhwc_shape<T>::TF32) {
        for (int i = 0; i < 4; i++) {
            const int k = lane % 4 + 4 * i, n = lane / 4;
            hi[i] = lo[i] = 0;
            if (i < 2 && k / A == n / A)
                split_tf32(m[n % A][k % A], hi[i], lo[i]);
        }
    } else {
        for (int i = 0; i < 4; i++) {
            const int row = lane / 4 + 8 * (i % 2), col = 2 * (lane % 4) + 8 * (i / 2);
            float e[2];
            for (int j = 0; j < 2; j++)
                e[j] = row / A == (col + j) / A ? m[row % A][(col + j) % A] : 0.0f;
            hi[i] = pack16<T>(e[0], e[1]);
            const float2 h = unpack16<T>(hi[i]);
            lo[i] = pack16<T>(e[0] - h.x, e[1] - h.y);
        }
    }
}

/* Stage 2: warps 0-7 transform the units of dy into U, warps 8-15 the windows of x into V.
 * 16 bits: a warp takes UNITS * A / 128 groups of 16 / A units x 16 channels. TWO: the matrix
 * of the warp's kind needs its second product (the same in the whole warp). */
template <typename T, int A, bool TWO>
static __device__ __forceinline__ void transform_jobs(const unsigned (&hi)[4],
                                                      const unsigned (&lo)[4],
                                                      const raw_rows<T, A> &raw,
                                                      tf_planes<T, A> &tf)
{
    constexpr int ROW = nhwc_shape<T>::ROW, JOBS = A * (BLOCK / 16) / 8; /* per warp */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, kind = warp / 8;
#pragma unroll
    for (int i = 0; i < JOBS; i++) {
        const int job = warp % 8 * JOBS + i, rows = job / (BLOCK / 16) * 16;
        const int ch = job % (BLOCK / 16) * 16;
        unsigned frag[4];
        ldmatrix_x4_trans(frag, &raw[kind][rows + lane % 16][ch + 8 * (lane / 16)]);
#pragma unroll
        for (int t = 0; t < 2; t++) {
            float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            mma_op<T>::run(acc, hi, frag + 2 * t);
            if (TWO)
                mma_op<T>::run(acc, lo, frag + 2 * t);
            const int c = ch + 8 * t + 2 * (lane % 4);
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int r = rows + lane / 4 + 8 * half, unit = r / A, a = r % A;
                *(unsigned *)&tf[kind][0][a][unit * ROW + c] =
                    pack16<T>(acc[2 * half], acc[2 * half + 1]);
            }
        }
    }
}

/* Stage 2 in TF32: a warp takes A / 2 groups of 16 channels x 8 raw rows (8 / A units' taps),
 * split into TF32 pairs; the small products first. The results, split again, go to the high
 * and low planes. */
template <int A, bool TWO>
static __device__ __forceinline__ void transform_jobs_tf32(const unsigned (&hi)[4],
                                                           const unsigned (&lo)[4],
                                                           const raw_rows<float, A> &raw,
                                                           tf_planes<float, A> &tf)
{
    constexpr int JOBS = A * (BLOCK / 16) / 8; /* per warp */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, kind = warp / 8;
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int i = 0; i < JOBS; i++) {
        const int job = warp % 8 * JOBS + i, rows = job / (BLOCK / 16) * 8;
        const int ch = job % (BLOCK / 16) * 16;
        unsigned a_hi[4], a_lo[4];
#pragma unroll
        for (int e = 0; e < 4; e++) /* (channel g + 8 (e % 2), row t + 4 (e / 2)) */
            split_tf32(raw[kind][rows + t + 4 * (e / 2)][ch + g + 8 * (e % 2)], a_hi[e], a_lo[e]);
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        mma_op<float>::run(acc, a_lo, hi);
        if (TWO)
            mma_op<float>::run(acc, a_hi, lo);
        mma_op<float>::run(acc, a_hi, hi);
#pragma unroll
        for (int e = 0; e < 4; e++) { /* (channel g + 8 (e / 2), unit's a: column 2 t + e % 2) */
            const int n = 2 * t + e % 2;
            const int at = tf32_at<A>(ch + g + 8 * (e / 2), rows / A + n / A, n % A);
            unsigned h, l;
            split_tf32(acc[e], h, l);
            tf[kind][0][n % A][at] = __uint_as_float(h);
            tf[kind][1][n % A][at] = __uint_as_float(l);
        }
    }
}

template <typename T, int A>
static __device__ __forceinline__ void transform_step(const unsigned (&hi)[4],
                                                      const unsigned (&lo)[4], bool two,
                                                      const raw_rows<T, A> &raw,
                                                      tf_planes<T, A> &tf)
{
    if constexpr (nhwc_shape<T>::TF32) {
        if (two)
            transform_jobs_tf32<A, true>(hi, lo, raw, tf);
        else
            transform_jobs_tf32<A, false>(hi, lo, raw, tf);
    } else {
        if (two)
            transform_jobs<T, A, true>(hi, lo, raw, tf);
        else
            transform_jobs<T, A, false>(hi, lo, raw, tf);
    }
}

/* Stage 3: each alpha's 64 x 64 product belongs to 16 / A warps, a warp to one alpha: warp w
 * takes alpha w / (16 / A) and the rows of K that its place among them gives (32 for A = 8, 16
 * for A = 4), all 64 columns of C. A warp then reads its rows of U once and V once per step:
 * with 16 x 16 of every alpha per warp, the fragments' reads from shared memory were 2.7 times
 * as many and kept it busy (ResNet-18 conv2_x, FP16: short-scoreboard stalls the first cause). */
template <int A> struct warp_tile {
    static constexpr int WARPS = 16 / A;                 /* per alpha */
    static constexpr int ROWS = BLOCK / WARPS;           /* of K per warp */
    static constexpr int MT = ROWS / 16;                 /* 16-row tiles per warp */
    static constexpr int NT = BLOCK / 8;                 /* 8-column tiles of C */
    static __device__ __forceinline__ int alpha() { return threadIdx.x / 32 / WARPS; }
    static __device__ __forceinline__ int k0() { return threadIdx.x / 32 % WARPS * ROWS; }
};
template <int A> using accumulators = float[warp_tile<A>::MT][warp_tile<A>::NT][4];

/* The planes past alpha hold zeros: their warps skip the products. */
template <typename T, int A>
static __device__ __forceinline__ void multiply_step(const fused_problem<A> &f,
                                                     const tf_planes<T, A> &tf,
                                                     accumulators<A> &acc)
{
    typedef warp_tile<A> W;
    constexpr int ROW = nhwc_shape<T>::ROW;
    const int a = W::alpha(), wk = W::k0(), lane = threadIdx.x % 32, m = lane / 8, r = lane % 8;
    if (a >= f.alpha)
        return;
    if constexpr (nhwc_shape<T>::TF32) {
        /* A's fragments: (k 0-7, units 0-3), (k 8-15, 0-3), (k 0-7, 4-7), (k 8-15, 4-7);
         * B's: (c 0-7, units 0-3), (c 0-7, 4-7), (c 8-15, 0-3), (c 8-15, 4-7). */
        unsigned u_hi[W::MT][4], u_lo[W::MT][4];
#pragma unroll
        for (int mt = 0; mt < W::MT; mt++) {
            const int u_at = tf32_row(wk + 16 * mt + r + 8 * (m % 2), m / 2);
            ldmatrix_x4(u_hi[mt], &tf[0][0][a][u_at]);
            ldmatrix_x4(u_lo[mt], &tf[0][1][a][u_at]);
        }
#pragma unroll
        for (int ct = 0; ct < W::NT / 2; ct++) {
            unsigned v_hi[4], v_lo[4];
            const int v_at = tf32_row(16 * ct + r + 8 * (m / 2), m % 2);
            ldmatrix_x4(v_hi, &tf[1][0][a][v_at]);
            ldmatrix_x4(v_lo, &tf[1][1][a][v_at]);
#pragma unroll
            for (int mt = 0; mt < W::MT; mt++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    /* The step's sum apart, then added in FP32: the tensor cores' own additions
                     * truncate, and over the thousands of steps of a segment their bias grew
                     * to 7e-5 relative L1 (winrs-bfc b8_64) where FP32 adds stay near 1e-6. */
                    float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                    mma_op<float>::run(part, u_lo[mt], v_hi + 2 * h);
                    mma_op<float>::run(part, u_hi[mt], v_lo + 2 * h);
                    mma_op<float>::run(part, u_hi[mt], v_hi + 2 * h);
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        acc[mt][2 * ct + h][e] += part[e];
                }
        }
    } else {
        /* A's fragments: (k 0-7, units 0-7), (k 8-15, 0-7), (k 0-7, 8-15), (k 8-15, 8-15);
         * B's: (units 0-7, c 0-7), (8-15, c 0-7), (0-7, c 8-15), (8-15, c 8-15). */
        unsigned fu[W::MT][4];
#pragma unroll
        for (int mt = 0; mt < W::MT; mt++)
            ldmatrix_x4_trans(fu[mt],
                              &tf[0][0][a][(r + 8 * (m / 2)) * ROW + wk + 16 * mt + 8 * (m % 2)]);
#pragma unroll
        for (int ct = 0; ct < W::NT / 2; ct++) {
            unsigned fv[4];
            ldmatrix_x4_trans(fv, &tf[1][0][a][(r + 8 * (m % 2)) * ROW + 16 * ct + 8 * (m / 2)]);
#pragma unroll
            for (int mt = 0; mt < W::MT; mt++) {
                mma_op<T>::run(acc[mt][2 * ct], fu[mt], fv);
                mma_op<T>::run(acc[mt][2 * ct + 1], fu[mt], fv + 2);
            }
        }
    }
}

/* The pairs (k, c) of the block whose taps thread t works out at the end: c = t % 64 and
 * k = t / 64 + 8 i, i < PAIRS (consecutive threads, consecutive channels of C). */
#define PAIRS (BLOCK * BLOCK / NHWC_THREADS)
#define M_PITCH (BLOCK + 8) /* floats a row of K in the accumulators' shared copy */

/* A^T over the block's accumulators: the warps' alphas meet in shared memory (m[a][k][c], over
 * the step buffers), then thread t takes its pairs' alphas and makes their n taps. */
template <int A>
static __device__ __forceinline__ void taps_of(const fused_problem<A> &f,
                                               const accumulators<A> &acc, float *m,
                                               float (&taps)[PAIRS][A])
{
    typedef warp_tile<A> W;
    const int a = W::alpha(), wk = W::k0(), lane = threadIdx.x % 32;
    __syncthreads(); /* the last products have read the shared memory */
#pragma unroll
    for (int mt = 0; mt < W::MT; mt++)
#pragma unroll
        for (int nt = 0; nt < W::NT; nt++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int k = wk + 16 * mt + lane / 4 + 8 * h, c = 8 * nt + 2 * (lane % 4);
                *(float2 *)&m[(a * BLOCK + k) * M_PITCH + c] =
                    make_float2(acc[mt][nt][2 * h], acc[mt][nt][2 * h + 1]);
            }
    __syncthreads();
    const int c = threadIdx.x % BLOCK, k0 = threadIdx.x / BLOCK;
#pragma unroll
    for (int i = 0; i < PAIRS; i++) {
        float mv[A];
#pragma unroll
        for (int b = 0; b < A; b++)
            mv[b] = m[(b * BLOCK + k0 + 8 * i) * M_PITCH + c];
#pragma unroll
        for (int jj = 0; jj < A; jj++) {
            float s = 0.0f;
#pragma unroll
            for (int b = 0; b < A; b++)
                s += f.at[jj][b] * mv[b];
            taps[i][jj] = s;
        }
    }
}

/* The blocks of a cluster are the segments of one 64 x 64 block, filter row and tile: each
 * puts its taps into its shared memory (part), and block 0 adds them up in rank order with
 * Kahan summation and writes dw. */
template <typename T, int A>
static __device__ void cluster_sum(const dims &d, const fused_problem<A> &f,
                                   const block_place &b, const float (&taps)[PAIRS][A], T *dw,
                                   int overwrite, float *part)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    const int c = b.c0 + threadIdx.x % BLOCK, k0 = b.k0 + threadIdx.x / BLOCK;
    __syncthreads(); /* every thread has read its alphas from the shared memory */
#pragma unroll
    for (int jj = 0; jj < A; jj++) {
        if (jj >= f.n)
            break;
#pragma unroll
        for (int i = 0; i < PAIRS; i++)
            part[(jj * PAIRS + i) * NHWC_THREADS + threadIdx.x] = taps[i][jj];
    }
    cluster.sync();
    if (cluster.block_rank() == 0) {
        const int blocks = (int)cluster.num_blocks();
        for (int jj = 0; jj < f.n; jj++)
#pragma unroll
            for (int i = 0; i < PAIRS; i++) {
                const int at = (jj * PAIRS + i) * NHWC_THREADS + threadIdx.x;
                float sum = 0.0f, lost = 0.0f;
                for (int r = 0; r < blocks; r++) {
                    const float y = cluster.map_shared_rank(part, r)[at] - lost, next = sum + y;
                    lost = (next - sum) - y;
                    sum = next;
                }
                const int k = k0 + 8 * i;
                if (k < d.k && c < d.c)
                    put(d, dw, (float *)NULL, overwrite, k, c, b.row, f.j0 + b.tile * f.n + jj,
                        sum);
            }
    }
    cluster.sync(); /* block 0 has read every block's part */
#else
    __trap(); /* clusters need sm_90; the host plans none below it */
#endif
}

/* Writes the block's taps into a KCRS dw (NCHW layers staged in NHWC) in the order of dw's
 * addresses, through shared memory: from each thread's pairs (k, c), a warp's stores of one tap
 * fell R x S elements apart, a sector each (ResNet-18 conv5_x, FP16, H100: the kernel took
 * 127.6 us on the staged copies against 119.3 us writing a KRSC dw). */
template <typename T, int A>
static __device__ void put_kcrs(const dims &d, const fused_problem<A> &f, const block_place &b,
                                const float (&taps)[PAIRS][A], T *dw, int overwrite,
                                float *smem)
{
    const int n = f.n, c = threadIdx.x % BLOCK, k0 = threadIdx.x / BLOCK;
    __syncthreads(); /* every thread has read its alphas from the shared memory */
#pragma unroll
    for (int jj = 0; jj < A; jj++) {
        if (jj >= n)
            break;
#pragma unroll
        for (int i = 0; i < PAIRS; i++)
            smem[((k0 + 8 * i) * BLOCK + c) * n + jj] = taps[i][jj];
    }
    __syncthreads();
    for (int e = threadIdx.x; e < BLOCK * BLOCK * n; e += NHWC_THREADS) {
        const int jj = e % n, cc = e / n % BLOCK, k = e / n / BLOCK;
        if (b.k0 + k < d.k && b.c0 + cc < d.c) {
            const size_t at = dw_at(d, b.k0 + k, b.c0 + cc, b.row, f.j0 + b.tile * n + jj);
            store(dw, at, overwrite ? smem[e] : load(dw, at) + smem[e]);
        }
    }
}

template <typename T, int A>
__global__ void __launch_bounds__(NHWC_THREADS, 1)
    fused_nhwc(dims d, fused_problem<A> f, const T *__restrict__ x, const T *__restrict__ dy,
               T *dw, float *buckets, int overwrite, int in_cluster)
{
    extern __shared__ __align__(16) unsigned char smem_bytes[];
    nhwc_smem<T, A> &sm = *(nhwc_smem<T, A> *)smem_bytes;
    const block_place b = place_of(d, f);
    constexpr int UNITS = nhwc_shape<T>::UNITS;
    const int steps = b.end > b.begin ? (int)((b.end - b.begin + UNITS - 1) / UNITS) : 0;
    const int kind = threadIdx.x / (NHWC_THREADS / 2);
    unsigned hi[4], lo[4];
    diag_fragments<T, A>(kind ? f.bt : f.g, hi, lo);
    const bool rest = (lo[0] | lo[1] | lo[2] | lo[3]) != 0; /* a second product for G or B^T */
    const bool g_rest = __syncthreads_or(!kind && rest), bt_rest = __syncthreads_or(kind && rest);
    const bool two = kind ? bt_rest : g_rest;
    accumulators<A> acc;
#pragma unroll
    for (int mt = 0; mt < warp_tile<A>::MT; mt++)
#pragma unroll
        for (int nt = 0; nt < warp_tile<A>::NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[mt][nt][e] = 0.0f;
    for (int s = 0; s < PLACE_STEPS; s++)
        place_step<T>(d, f, b, b.begin + (long)s * UNITS, sm.place[s]);
    __syncthreads(); /* the first places are in */
    if (steps > 0)
        fetch_step<T, A>(d, b, sm.place[0], x, dy, sm.raw[0]);
    cp_async_wait_all();
    __syncthreads();
    if (steps > 0)
        transform_step<T, A>(hi, lo, two, sm.raw[0], sm.tf[0]);
    if (steps > 1)
        fetch_step<T, A>(d, b, sm.place[1], x, dy, sm.raw[1]);
    cp_async_commit();
    /* step s's places in sm.place[s % 4], raw data in sm.raw[s % 2], transforms in sm.tf[s % 2] */
    for (int s = 0; s < steps; s++) {
        const int now = s % 2;
        cp_async_wait<0>(); /* this thread's copies of step s + 1 are in */
        __syncthreads(); /* everyone's, the transforms of step s, the places of s + 3 */
        if (s + PLACE_STEPS < steps) /* its slot's last reader, step s's fetch, is done */
            place_step<T>(d, f, b, b.begin + (long)(s + PLACE_STEPS) * UNITS,
                          sm.place[s % PLACE_STEPS]);
        if (s + 2 < steps) /* into step s's raw data, transformed before the barrier */
            fetch_step<T, A>(d, b, sm.place[(s + 2) % PLACE_STEPS], x, dy, sm.raw[now]);
        cp_async_commit();
        multiply_step<T, A>(f, sm.tf[now], acc);
        if (s + 1 < steps)
            transform_step<T, A>(hi, lo, two, sm.raw[now ^ 1], sm.tf[now ^ 1]);
    }
    float taps[PAIRS][A];
    taps_of(f, acc, (float *)smem_bytes, taps);
    if (in_cluster) {
        cluster_sum(d, f, b, taps, dw, overwrite, (float *)smem_bytes);
        return;
    }
    if (!buckets && !d.dw_nhwc) {
        put_kcrs(d, f, b, taps, dw, overwrite, (float *)smem_bytes);
        return;
    }
    const int c = b.c0 + threadIdx.x % BLOCK, k0 = b.k0 + threadIdx.x / BLOCK;
#pragma unroll
    for (int jj = 0; jj < A; jj++) {
        if (jj >= f.n)
            break;
#pragma unroll
        for (int i = 0; i < PAIRS; i++)
            if (k0 + 8 * i < d.k && c < d.c)
                put(d, dw, buckets, overwrite, k0 + 8 * i, c, b.row, f.j0 + b.tile * f.n + jj,
                    taps[i][jj]);
    }
}

int winrs_fused_nhwc_cluster_max(int device)
{
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess)
        return 1;
    return major >= 9 ? WINRS_CLUSTER_MAX : 1;
}

/* The model's cost of s segments: one block per SM; a block costs its steps of `step` units
 * plus about OVERHEAD steps of filling the pipeline and writing its accumulators, and in a
 * cluster about a step more per segment, block 0 adding up the others' taps one by one. */
static double waves_cost(long units, int step, int blocks, int sms, int s, int clusters)
{
    const double OVERHEAD = 4.0;
    return ceil((double)blocks * s / sms) *
           (ceil((double)units / s / step) + OVERHEAD + (clusters ? s : 0));
}

/* The fewest segments up to most within 3% of the cheapest (fewer partial sums), and its cost;
 * in clusters, only powers of two: a cluster's blocks must be resident at once in one GPC, and
 * other sizes leave SMs idle (ResNet-18 conv4_x, FP16, H100: one kind of units in 5 segments
 * in clusters took 0.138 ms, where the 2 + 2 segments of two kinds had taken 0.094). */
static int cheapest(long units, int step, int blocks, int sms, int first, int most, int clusters,
                    double *cost)
{
    int best = first;
    *cost = waves_cost(units, step, blocks, sms, first, clusters);
    for (int s = first + 1; s <= most; s++) {
        if (clusters && (s & (s - 1)))
            continue;
        const double c = waves_cost(units, step, blocks, sms, s, clusters);
        if (c < *cost * 0.97)
            *cost = c, best = s;
    }
    return best;
}

int winrs_fused_nhwc_segments(int device, size_t element_bytes, long units, int blocks,
                              int cluster_most, int bucket_most, int *in_cluster)
{
    const int step = element_bytes == 4 ? nhwc_shape<float>::UNITS : nhwc_shape<__half>::UNITS;
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        sms < 1)
        sms = 132;
    double bucket_cost = 0.0, cluster_cost = 0.0;
    const int in_buckets = cheapest(units, step, blocks, sms, 1, bucket_most, 0, &bucket_cost);
    *in_cluster = 0;
    if (cluster_most < 2)
        return in_buckets;
    /* Clusters only where they save a sixth of the model's time: on the H100 eight segments in
     * clusters of eight ran up to 1.4x slower than the same eight in buckets (VGG-16 conv3_2
     * and conv4_1, FP16, batch 32), where two in clusters of two gained 1.4x over one segment
     * (ResNet-18 conv4_x). */
    const int clustered = cheapest(units, step, blocks, sms, 2, cluster_most, 1, &cluster_cost);
    if (cluster_cost >= bucket_cost * 0.85)
        return in_buckets;
    *in_cluster = 1;
    return clustered;
}

bool winrs_fused_nhwc_takes(const dims &d, size_t element_bytes)
{
    const int piece = 16 / (int)element_bytes;
    return (element_bytes == 2 || element_bytes == 4) && d.nhwc && d.k % piece == 0 &&
           d.c % piece == 0 &&
           (long)d.n * d.p * d.q < INT_MAX;
}

bool winrs_fused_nhwc_fits(const dims &d, size_t element_bytes, const void *x, const void *dy)
{
    return winrs_fused_nhwc_takes(d, element_bytes) && (uintptr_t)x % 16 == 0 &&
           (uintptr_t)dy % 16 == 0;
}

template <typename T, int A> static cudaError_t allow_smem(void)
{
    static_assert(A * BLOCK * M_PITCH * sizeof(float) <= sizeof(nhwc_smem<T, A>) &&
                      BLOCK * BLOCK * A * sizeof(float) <= sizeof(nhwc_smem<T, A>) &&
                      A * PAIRS * NHWC_THREADS * sizeof(float) <= sizeof(nhwc_smem<T, A>),
                  "a block's accumulators and taps fit in its shared memory");
    return cudaFuncSetAttribute(fused_nhwc<T, A>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)sizeof(nhwc_smem<T, A>));
}

cudaError_t winrs_fused_nhwc_prepare(void)
{
    cudaError_t e = allow_smem<float, 4>();
    if (e == cudaSuccess)
        e = allow_smem<float, WINRS_FUSED_MAX_ALPHA>();
    if (e == cudaSuccess)
        e = allow_smem<__half, 4>();
    if (e == cudaSuccess)
        e = allow_smem<__half, WINRS_FUSED_MAX_ALPHA>();
    if (e == cudaSuccess)
        e = allow_smem<__nv_bfloat16, 4>();
    if (e == cudaSuccess)
        e = allow_smem<__nv_bfloat16, WINRS_FUSED_MAX_ALPHA>();
    return e;
}

template <typename T, int A>
cudaError_t winrs_fused_nhwc_launch(const dims &d, const fused_problem<A> &f, dim3 grid,
                                    int in_cluster, const T *x, const T *dy, T *dw,
                                    float *buckets, int overwrite, cudaStream_t stream)
{
    const int smem = (int)sizeof(nhwc_smem<T, A>);
    cudaLaunchConfig_t config = {};
    cudaLaunchAttribute cluster[1];
    config.gridDim = grid;
    config.blockDim = dim3(NHWC_THREADS);
    config.dynamicSmemBytes = (size_t)smem;
    config.stream = stream;
    if (in_cluster) { /* the segments of a block of K x C, filter row and tile */
        cluster[0].id = cudaLaunchAttributeClusterDimension;
        cluster[0].val.clusterDim.x = 1;
        cluster[0].val.clusterDim.y = 1;
        cluster[0].val.clusterDim.z = grid.z;
        config.attrs = cluster;
        config.numAttrs = 1;
    }
    return cudaLaunchKernelEx(&config, fused_nhwc<T, A>, d, f, x, dy, dw, buckets, overwrite,
                              in_cluster);
}

#define WINO_NHWC_LAUNCH(T, A)                                                                 \
    template cudaError_t winrs_fused_nhwc_launch<T, A>(const dims &, const fused_problem<A> &, \
                                                       dim3, int, const T *, const T *, T *,    \
                                                       float *, int, cudaStream_t);
WINO_NHWC_LAUNCH(float, 4)
WINO_NHWC_LAUNCH(float, WINRS_FUSED_MAX_ALPHA)
WINO_NHWC_LAUNCH(__half, 4)
WINO_NHWC_LAUNCH(__half, WINRS_FUSED_MAX_ALPHA)
WINO_NHWC_LAUNCH(__nv_bfloat16, 4)
WINO_NHWC_LAUNCH(__nv_bfloat16, WINRS_FUSED_MAX_ALPHA)
#undef WINO_NHWC_LAUNCH
