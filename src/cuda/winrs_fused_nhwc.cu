/* Fused WinRS on tensor cores for NHWC tensors whose channels come in 16-byte pieces (see
 * winrs_fused_parts.cuh): FP16 and BF16, and FP32 as "3xTF32" (each operand split into two TF32
 * values, three products: about FP32's accuracy). A thread block owns 64 x 64 of K x C, one
 * filter row and tile, one segment of units, and goes through its units UNITS at a time in
 * three stages. In 16 bits on Hopper (sm_90a code) different warps run them: see
 * specialized_steps (a warpgroup asks the tensor memory accelerator for the units, producer
 * warps transform them, consumer warpgroups multiply with wgmma). Otherwise every warp takes part in each, overlapping across
 * steps (interleaved_steps):
 *   1. fetch: cp.async copies the step's units of dy (r taps x 64 channels) and windows of x
 *      (alpha columns x 64 channels) into shared memory, two steps ahead, zeros where a unit is
 *      past the segment, a channel past K or C, or a column in the padding;
 *   2. transform, on tensor cores as well, with FP32 sums. 16 bits: 16 channels x 8 / A units'
 *      taps of dy (or x) times diag(G^T, ...) (or diag(B, ...)) gives U (V) of those units and
 *      channels in one m16n8k8 product; the matrices' entries are split into their nearest
 *      16-bit values and the rest (a second product where the rest is not zero), so the
 *      transforms are as exact as FP32 ones, and U and V are rounded to T. FP32: 16
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
 * (segments in a thread-block cluster) the cluster's blocks share the sums of every block's
 * taps through distributed shared memory (cluster_sum). */
#include <cooperative_groups.h>
#include <cuda.h>
#include <limits.h>

#include <type_traits>

#include "cuda/device_common.h"
#include "cuda/tensor_core_ptx.cuh"
#include "cuda/tensor_core_transform.cuh"
#include "cuda/tensor_map.h"
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
    /* Transformed planes of a step per alpha: TF32, a high and a low part of 64 channels x 8
     * units each (at tf32_at); 16 bits, one of UNITS x 64 (at plane_at) and 64 / A more, so
     * that the transforms' stores of one fragment (A planes, or 4 planes of 2 units each) fall
     * on distinct banks. */
    static constexpr int PARTS = TF32 ? 2 : 1;
    template <int A> static constexpr int plane() { return TF32 ? BLOCK * 8 : UNITS * BLOCK + 64 / A; }
};

/* Where unit u of channel c lies in a 16-bit plane: in the layout wgmma reads without swizzling,
 * 8 x 8 blocks of 8 units x 8 channels (16 bytes a unit, 128 contiguous bytes a block), the
 * blocks of a unit's 64 channels 128 bytes apart, the second 8 units 1024 bytes after the first
 * (plane_descriptor). ldmatrix reads a block's 8 rows of 16 bytes on distinct banks. */
static __device__ __forceinline__ int plane_at(int u, int c)
{
    return (c >> 3) * 64 + (u >> 3) * 512 + (u & 7) * 8 + (c & 7);
}

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
using tf_planes = T[2][nhwc_shape<T>::PARTS][A][nhwc_shape<T>::template plane<A>()];
/* A step's raw units of one buffer: [dy, x][unit * A + tap][channel]. */
template <typename T, int A>
using raw_rows = T[2][nhwc_shape<T>::UNITS * A][nhwc_shape<T>::ROW];
/* The same as the tensor memory accelerator writes them (16 bits): [dy, x][unit * 8 + tap][64
 * channels], a unit's 8 rows of 128 bytes in 1024 (its taps past r or alpha zero), the 16-byte
 * pieces of row j swizzled to piece ^ (j % 8) so that ldmatrix's 8 rows fall on distinct
 * banks (tma_piece). */
template <typename T> using tma_rows = T[2][nhwc_shape<T>::UNITS * 8][BLOCK];
static __device__ __forceinline__ int tma_piece(int row, int piece) { return piece ^ (row & 7); }

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

/* Stage 1 for a step, by 2 WK warps: warp w < WK copies the A taps of dy of its UNITS / WK
 * units (NHWC: 64 contiguous channels each), warp WK + w the A columns of x of the same units;
 * a lane takes one 16-byte piece of a tap at a time (zeros where the place has no data, and
 * past K or C). */
template <typename T, int A, int WK>
static __device__ __forceinline__ void fetch_step(const dims &d, const block_place &b,
                                                  const step_places<T> &place, const T *x,
                                                  const T *dy, raw_rows<T, A> &raw)
{
    typedef nhwc_shape<T> S;
    constexpr int LANES = BLOCK / S::PIECE, TAPS = 32 / LANES; /* per tap, taps per copy */
    constexpr int UNITS = S::UNITS / WK;                       /* per warp */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, ch = lane % LANES * S::PIECE;
    const int kind = warp / WK, u0 = UNITS * (warp % WK);
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

/* The transforms' matrix m as lane's operand: diag(m^T, ..., m^T) (8 / A copies, A x A) as
 * the B operand of m16n8k8, 16 bits: in T's nearest values (hi[0]) and the rest (lo[0]); TF32:
 * in two TF32 parts (hi[0..1], lo[0..1]). */
template <typename T, int A>
static __device__ void diag_fragments(const float (&m)[A][A], unsigned (&hi)[4],
                                      unsigned (&lo)[4])
{
    const int lane = threadIdx.x % 32;
    for (int i = 0; i < 4; i++)
        hi[i] = lo[i] = 0;
    if constexpr (nhwc_shape<T>::TF32) {
        for (int i = 0; i < 2; i++) {
            const int k = lane % 4 + 4 * i, n = lane / 4;
            if (k / A == n / A)
                split_tf32(m[n % A][k % A], hi[i], lo[i]);
        }
    } else {
        diag_fragment16<T, A>(m, hi[0], lo[0]);
    }
}

/* Jobs a warp loads before it multiplies and stores them (transform_jobs). Against one at a time
 * (H100, FP16 NHWC, batch 32): 2 made ResNet-18 1.13x and VGG-16 1.15x faster, 4 1.16x and
 * 1.20x, 8 the same as 4 with a spill. */
#define TRANSFORM_BATCH 4

/* Stage 2: warps 0 .. WK - 1 transform the units of dy into U, warps WK .. 2 WK - 1 the
 * windows of x into V. 16 bits: a warp takes UNITS * A * 8 / (WK * 128) groups of 16 raw rows
 * (16 / A units' taps) x 16 channels; each 8 rows, transposed (16 channels x 8 / A units'
 * taps), times diag(m^T, ...) in an m16n8k8 product gives 16 channels x those units' alphas,
 * stored transposed into the planes. (With the data as the B operand of m16n8k16 and the
 * block-diagonal matrix as A, two of A's four registers were zeros that ptxas rebuilt with
 * moves for every product.) The jobs go in batches (transform_jobs); a batch's jobs are
 * consecutive groups of 16 channels of the same rows.
 *
 * Where a thread's loads and stores of them lie: byte offsets from a step's raw units (RAW, both
 * kinds) and planes. A job's stores lie 16 channels (128 elements of a plane) on from the last
 * one's; its loads, whose pieces are swizzled (tma_piece), have an offset each, the same from
 * batch to batch but for the rows: with more than one batch, a batch is 4 jobs (all 64
 * channels) and its rows are 16 on from the last batch's, 16 / A units (in the TMA's layout
 * 16 / A * 8 rows, which keeps the swizzle). */
template <typename T, int A, int WK, typename RAW> struct transform_places {
    static constexpr int JOBS = A * (BLOCK / 16) / WK; /* per warp */
    static constexpr int BATCH = JOBS < TRANSFORM_BATCH ? JOBS : TRANSFORM_BATCH;
    static constexpr int BATCHES = JOBS / BATCH;
    static constexpr bool TMA = std::is_same<RAW, tma_rows<T>>::value;
    static constexpr int ROWS = std::extent<RAW, 1>::value, PITCH = std::extent<RAW, 2>::value;
    static constexpr unsigned NEXT_STORE = 128 * sizeof(T);
    static constexpr unsigned NEXT_LOADS = (TMA ? 16 / A * 8 : 16) * PITCH * sizeof(T);
    static_assert(JOBS % BATCH == 0 && (BLOCK / 16) % BATCH == 0, "a batch's jobs share rows");
    static_assert(BATCHES == 1 || (BATCH == BLOCK / 16 && 16 % A == 0), "batches 16 rows on");
    unsigned load[BATCH], store[BATCHES];
    __device__ __forceinline__ transform_places()
    {
        constexpr int PLANE = nhwc_shape<T>::template plane<A>();
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, kind = warp / WK;
        /* lane's row of matrix lane / 8: rows + 8 (m / 2) + lane % 8, channels ch + 8 (m % 2) */
        const int m = lane / 8, part = m % 2;
#pragma unroll
        for (int b = 0; b < BATCHES; b++) {
            const int job = warp % WK * JOBS + b * BATCH, rows = job / (BLOCK / 16) * 16;
            const int ch = job % (BLOCK / 16) * 16, row = rows + 8 * (m / 2) + lane % 8;
            if (b == 0) { /* the later batches' loads: NEXT_LOADS on each */
#pragma unroll
                for (int i = 0; i < BATCH; i++) {
                    const int piece = ch / 8 + 2 * i + part;
                    int at = kind * ROWS + row, col = 8 * piece;
                    if constexpr (TMA) { /* unit row / A, tap row % A */
                        at = kind * ROWS + row / A * 8 + row % A;
                        col = 8 * tma_piece(at, piece);
                    }
                    load[i] = (unsigned)((at * PITCH + col) * sizeof(T));
                }
            }
            /* column j of rows' block kb is alpha (rows + 8 kb + j) % A of unit (...) / A:
             * each row of a stored matrix goes to a plane of its own */
            const int plane = (kind * nhwc_shape<T>::PARTS * A + row % A) * PLANE;
            store[b] = (unsigned)((plane + plane_at(row / A, ch + 8 * part)) * sizeof(T));
        }
    }
    /* The offsets, opaque to the compiler from here on: worked out once before the steps, not
     * again from the thread's index at each. */
    __device__ __forceinline__ void keep()
    {
#pragma unroll
        for (int i = 0; i < BATCH; i++)
            load[i] = kept(load[i]);
#pragma unroll
        for (int b = 0; b < BATCHES; b++)
            store[b] = kept(store[b]);
    }
};

/* The jobs of a warp for the planes of its kind (above). TWO: the matrix of the warp's kind
 * needs its second product (the same in the whole warp). */
template <typename T, int A, int WK, bool TWO, typename RAW>
static __device__ __forceinline__ void transform_jobs(const unsigned (&hi)[4],
                                                      const unsigned (&lo)[4],
                                                      const transform_places<T, A, WK, RAW> &p,
                                                      const RAW &raw, tf_planes<T, A> &tf)
{
    typedef transform_places<T, A, WK, RAW> P;
    const char *from = (const char *)&raw;
    char *to = (char *)&tf;
    /* The jobs in batches: every load of a batch, then its products, then its stores. The
     * loads and stores are volatile asm, which the compiler keeps in program order, so job by
     * job each waited for the last one's store: one chain of dependent instructions per job
     * (Nsight Compute, ResNet-18 conv2_x FP16: the products' short-scoreboard stalls first
     * among the producers' samples). */
#pragma unroll
    for (int b = 0; b < P::BATCHES; b++) {
        /* [job][2 kb + h]: rows rows + 8 kb .., channels 8 h .. */
        unsigned frag[P::BATCH][4], out[P::BATCH][4];
#pragma unroll
        for (int i = 0; i < P::BATCH; i++)
            ldmatrix_x4_trans(frag[i], from + p.load[i] + b * P::NEXT_LOADS);
#pragma unroll
        for (int i = 0; i < P::BATCH; i++)
#pragma unroll
            for (int kb = 0; kb < 2; kb++) {
                float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                mma_k8<T>::run(acc, frag[i] + 2 * kb, hi[0]);
                if (TWO)
                    mma_k8<T>::run(acc, frag[i] + 2 * kb, lo[0]);
                out[i][2 * kb] = pack16<T>(acc[0], acc[1]);
                out[i][2 * kb + 1] = pack16<T>(acc[2], acc[3]);
            }
#pragma unroll
        for (int i = 0; i < P::BATCH; i++)
            stmatrix_x4_trans(to + p.store[b] + i * P::NEXT_STORE, out[i]);
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

/* Stage 2 for a step: 16 bits at places worked out before (transform_places), or where the
 * step's own call works them out; TF32. */
template <typename T, int A, int WK, typename RAW>
static __device__ __forceinline__ void transform_step(const unsigned (&hi)[4],
                                                      const unsigned (&lo)[4], bool two,
                                                      const transform_places<T, A, WK, RAW> &p,
                                                      const RAW &raw, tf_planes<T, A> &tf)
{
    if (two)
        transform_jobs<T, A, WK, true>(hi, lo, p, raw, tf);
    else
        transform_jobs<T, A, WK, false>(hi, lo, p, raw, tf);
}
template <typename T, int A, int WK, typename RAW>
static __device__ __forceinline__ void transform_step(const unsigned (&hi)[4],
                                                      const unsigned (&lo)[4], bool two,
                                                      const RAW &raw, tf_planes<T, A> &tf)
{
    if constexpr (nhwc_shape<T>::TF32) {
        static_assert(WK == 8, "TF32 transforms take 16 warps");
        if (two)
            transform_jobs_tf32<A, true>(hi, lo, raw, tf);
        else
            transform_jobs_tf32<A, false>(hi, lo, raw, tf);
    } else {
        transform_step<T, A, WK>(hi, lo, two, transform_places<T, A, WK, RAW>(), raw, tf);
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
            ldmatrix_x4_trans(fu[mt], &tf[0][0][a][plane_at(r + 8 * (m / 2),
                                                            wk + 16 * mt + 8 * (m % 2))]);
#pragma unroll
        for (int ct = 0; ct < W::NT / 2; ct++) {
            unsigned fv[4];
            ldmatrix_x4_trans(fv, &tf[1][0][a][plane_at(r + 8 * (m % 2), 16 * ct + 8 * (m / 2))]);
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

/* A^T over the block's accumulators, which the warps have put into shared memory (m[a][k][c],
 * over the step buffers; a 16 x 8 fragment at fragment_to_shared): the n taps of thread t's
 * pair i. */
template <int A>
static __device__ __forceinline__ void pair_taps(const fused_problem<A> &f, const float *m,
                                                 int i, float (&taps)[A])
{
    const int c = threadIdx.x % BLOCK, k0 = threadIdx.x / BLOCK;
    float mv[A];
#pragma unroll
    for (int b = 0; b < A; b++)
        mv[b] = m[(b * BLOCK + k0 + 8 * i) * M_PITCH + c];
#pragma unroll
    for (int jj = 0; jj < A; jj++) {
        if (jj >= f.n) /* the taps past n are never written: 5 / 8 of the work at n = 3 */
            break;
        float s = 0.0f;
#pragma unroll
        for (int b = 0; b < A; b++)
            s += f.at[jj][b] * mv[b];
        taps[jj] = s;
    }
}

/* The taps of all of thread t's pairs. */
template <int A>
static __device__ __forceinline__ void taps_of(const fused_problem<A> &f, const float *m,
                                               float (&taps)[PAIRS][A])
{
#pragma unroll
    for (int i = 0; i < PAIRS; i++)
        pair_taps(f, m, i, taps[i]);
}

/* The blocks of a cluster are the segments of one 64 x 64 block, filter row and tile: each
 * puts its taps into its shared memory (part); then block q adds up the taps of the pairs i
 * with i % blocks == q over every block's part, in rank order with Kahan summation, and writes
 * dw. (Block 0 alone, one remote load after another, made a cluster of two blocks of 14 steps
 * take 35 us where a whole block of 28 took 39: ResNet-18 conv5_x FP16, H100.) */
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
    const int blocks = (int)cluster.num_blocks();
    const float *parts[WINRS_CLUSTER_MAX];
#pragma unroll
    for (int r = 0; r < WINRS_CLUSTER_MAX; r++)
        parts[r] = cluster.map_shared_rank(part, r < blocks ? r : 0);
    for (int i = (int)cluster.block_rank(); i < PAIRS; i += blocks) {
        const int k = k0 + 8 * i;
#pragma unroll
        for (int jj = 0; jj < A; jj++) {
            if (jj >= f.n)
                break;
            const int at = (jj * PAIRS + i) * NHWC_THREADS + threadIdx.x;
            float v[WINRS_CLUSTER_MAX]; /* every block's load in flight at once */
#pragma unroll
            for (int r = 0; r < WINRS_CLUSTER_MAX; r++)
                v[r] = r < blocks ? parts[r][at] : 0.0f;
            float sum = 0.0f, lost = 0.0f;
#pragma unroll
            for (int r = 0; r < WINRS_CLUSTER_MAX; r++) {
                const float y = v[r] - lost, next = sum + y;
                lost = r < blocks ? (next - sum) - y : lost;
                sum = r < blocks ? next : sum;
            }
            if (k < d.k && c < d.c)
                put(d, dw, (float *)NULL, overwrite, k, c, b.row, f.j0 + b.tile * f.n + jj,
                    sum);
        }
    }
    cluster.sync(); /* every block has read every block's part */
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

/* The step loop of 16 warps that each fetch, transform and multiply (TF32, and 16 bits on GPUs
 * without warpgroup products): one barrier per step, after which the copies of step s + 2
 * start into the raw buffer that step s's transforms have left, and warps multiply step s and
 * transform step s + 1. The accumulators end in shared memory (taps_of). */
template <typename T, int A>
static __device__ void interleaved_steps(const dims &d, const fused_problem<A> &f,
                                         const block_place &b, int steps, const T *x,
                                         const T *dy, nhwc_smem<T, A> &sm)
{
    constexpr int UNITS = nhwc_shape<T>::UNITS;
    for (int s = 0; s < PLACE_STEPS; s++)
        place_step<T>(d, f, b, b.begin + (long)s * UNITS, sm.place[s]);
    const int kind = threadIdx.x / (NHWC_THREADS / 2);
    unsigned hi[4], lo[4];
    diag_fragments<T, A>(kind ? f.bt : f.g, hi, lo);
    const bool rest = (lo[0] | lo[1] | lo[2] | lo[3]) != 0; /* a second product for G or B^T */
    /* (the barriers: the first places are in too) */
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
    if (steps > 0)
        fetch_step<T, A, 8>(d, b, sm.place[0], x, dy, sm.raw[0]);
    cp_async_wait_all();
    __syncthreads();
    if (steps > 0)
        transform_step<T, A, 8>(hi, lo, two, sm.raw[0], sm.tf[0]);
    if (steps > 1)
        fetch_step<T, A, 8>(d, b, sm.place[1], x, dy, sm.raw[1]);
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
            fetch_step<T, A, 8>(d, b, sm.place[(s + 2) % PLACE_STEPS], x, dy, sm.raw[now]);
        cp_async_commit();
        multiply_step<T, A>(f, sm.tf[now], acc);
        if (s + 1 < steps)
            transform_step<T, A, 8>(hi, lo, two, sm.raw[now ^ 1], sm.tf[now ^ 1]);
    }
    typedef warp_tile<A> W;
    __syncthreads(); /* the last products have read the shared memory */
#pragma unroll
    for (int mt = 0; mt < W::MT; mt++)
#pragma unroll
        for (int nt = 0; nt < W::NT; nt++)
            fragment_to_shared(acc[mt][nt], (float *)&sm + W::alpha() * BLOCK * M_PITCH,
                               W::k0() + 16 * mt, 8 * nt, M_PITCH);
}

/* Warp specialization (16 bits, sm_90a): warpgroup 4 asks the tensor memory accelerator for each
 * step's units (request), warpgroups 0 and 1 transform them into U and V (warps 0-3 dy, warps
 * 4-7 x), warpgroups 2 and 3 multiply them with wgmma straight from the planes, each A / 2
 * alphas of 64 x 64 (128 FP32 accumulators a thread for A = 8). Steps are handed over through
 * mbarriers: the raw units (raw_full: their bytes have arrived; raw_empty: the 8 producing warps
 * have transformed them) in RAW_STAGES buffers, the planes (full: the producers' 256 threads
 * have stored them; empty: the consumers' 8 warps have multiplied them) in TF_STAGES. With
 * every warp doing every stage, a step waited at one barrier for the longest chain of copies,
 * transforms and products (0.46 instructions issued per scheduler and cycle, ResNet-18 conv2_x
 * FP16); here the products overlap the next steps' fetch and transforms. */
#define PRODUCER_THREADS 256
#define REQUEST_THREADS 128
#define WS_THREADS (NHWC_THREADS + REQUEST_THREADS)
#define RAW_STAGES 5
#define TF_STAGES 2
/* Registers a thread: the producers and requesters need few, the consumers hold the
 * accumulators; together the 640 threads' 96 each. At the end the 512 threads of the epilogue
 * take EPILOGUE_REGS. */
#define PRODUCER_REGS 64
#define CONSUMER_REGS 160
#define REQUEST_REGS 32
#define EPILOGUE_REGS 112

template <typename T, int A> struct ws_smem {
    tma_rows<T> raw[RAW_STAGES]; /* first: 1024-byte aligned, as the swizzle needs */
    tf_planes<T, A> tf[TF_STAGES];
};
/* The mbarriers: full and empty for the planes (above), and for the raw buffers raw_full (the
 * tensor memory accelerator has written a step's units) and raw_empty (the 8 producing warps
 * have transformed them). */
struct ws_barriers {
    uint64_t full[TF_STAGES], empty[TF_STAGES], raw_full[RAW_STAGES], raw_empty[RAW_STAGES];
};
/* Shared memory at the end of the kernel, over the steps' bytes: the accumulators (taps_of),
 * the taps of a cluster's block (cluster_sum) or of a KCRS dw (put_kcrs). */
static constexpr size_t larger(size_t a, size_t b) { return a > b ? a : b; }
template <int A> static constexpr size_t end_bytes()
{
    return larger(A * BLOCK * M_PITCH, larger(BLOCK * BLOCK * A, A * PAIRS * NHWC_THREADS)) *
           sizeof(float);
}
/* Where the mbarriers lie: past everything else the kernel puts in shared memory, so that no
 * other use overwrites them. */
template <typename T, int A> static constexpr size_t ws_barriers_at()
{
    return (larger(larger(sizeof(ws_smem<T, A>), sizeof(nhwc_smem<T, A>)), end_bytes<A>()) + 15) /
           16 * 16;
}

#if WINO_WGMMA
template <int A> using ws_accumulators = float[A / 2][32];

/* The 16-bit plane (plane_at) at shared address at as wgmma's operand, without swizzling: the
 * next 8 of its 64 rows (A) or columns (B) 128 bytes on ("stride"), the next 8 units 1024 bytes
 * on ("leading"). */
static __device__ __forceinline__ uint64_t plane_descriptor(unsigned at)
{
    return (at & 0x3ffff) >> 4 | (uint64_t)(1024 >> 4) << 16 | (uint64_t)(128 >> 4) << 32;
}

/* Shared-space addresses of the steps' buffers and mbarriers, worked out once (smem_address);
 * element i of an mbarrier array lies 8 i bytes on. */
template <typename T> struct ws_addresses {
    unsigned raw, full, empty, raw_full, raw_empty;
    template <int A>
    __device__ __forceinline__ ws_addresses(ws_smem<T, A> &sm, ws_barriers &bar)
    {
        raw = smem_address(&sm.raw[0]);
        full = smem_address(&bar);
        empty = full + (unsigned)offsetof(ws_barriers, empty);
        raw_full = full + (unsigned)offsetof(ws_barriers, raw_full);
        raw_empty = full + (unsigned)offsetof(ws_barriers, raw_empty);
    }
    __device__ __forceinline__ unsigned raw_buffer(int i) const
    {
        return raw + (unsigned)(i * sizeof(tma_rows<T>));
    }
};

/* Requesting warp w (of REQUEST_THREADS / 32) asks the tensor memory accelerator for units 4 w
 * .. 4 w + 3 of a step, those from u0 on: lanes 0-3 for their r taps of dy, lanes 4-7 for their
 * alpha columns of x, at coordinates (channel, column, row, image), those outside the tensors
 * zero, a unit past the segment at image N (all zero), into the raw buffer at shared address
 * raw. Lane 0 first expects the warp's bytes on the buffer's mbarrier (raw_full); the requests
 * take uniform registers, one lane at a time. */
template <typename T, int A>
static __device__ __forceinline__ void request_step(const dims &d, const fused_problem<A> &f,
                                                    const block_place &b, int u0,
                                                    const CUtensorMap &dy_map,
                                                    const CUtensorMap &x_map, unsigned raw,
                                                    unsigned raw_full)
{
    const int lane = threadIdx.x % 32, warp = (threadIdx.x - NHWC_THREADS) / 32, kind = lane / 4;
    if (lane == 0)
        mbarrier_arrive_expect(raw_full, 4 * (f.r + f.alpha) * BLOCK * (unsigned)sizeof(T));
    __syncwarp();
    if (lane >= 8)
        return;
    const int u = 4 * warp + lane % 4; /* every unit index below 2^31: winrs_fused_nhwc_takes */
    const int unit = min(u0 + u, (int)f.total_units);
    const int row = wino_fast_divide(unit, f.per_row), image = wino_fast_divide(row, f.per_image);
    const int p = row - image * d.p, q = f.q0 + (unit - row * f.units) * f.r;
    const int n = u0 + u < (int)b.end ? image : d.n;
    const unsigned at = raw + (unsigned)((kind * nhwc_shape<T>::UNITS + u) * 8 * BLOCK * sizeof(T));
    if (kind == 0)
        tma_load_4d(at, &dy_map, b.k0, q, p, n, raw_full);
    else
        tma_load_4d(at, &x_map, b.c0, q + f.j0 + b.tile * f.n - d.pad_w, p + b.row - d.pad_h,
                    n, raw_full);
}

/* The requesting warps: every step's units into the raw buffers, as soon as the producers have
 * transformed what a buffer held. (When the producers asked for them themselves, four requests
 * a warp and step, those requests were half of the instructions of the producers' step.) */
template <typename T, int A>
static __device__ void request(const dims &d, const fused_problem<A> &f, const block_place &b,
                               int steps, const CUtensorMap &dy_map, const CUtensorMap &x_map,
                               const ws_addresses<T> &at)
{
    constexpr int UNITS = nhwc_shape<T>::UNITS;
    ring_place<RAW_STAGES> slot;
    for (int s = 0; s < steps; s++, slot.advance()) {
        if (s >= RAW_STAGES) /* the 8 producing warps have transformed its last step */
            mbarrier_wait(at.raw_empty + 8 * slot.at, slot.parity ^ 1u);
        request_step<T, A>(d, f, b, (int)b.begin + s * UNITS, dy_map, x_map,
                           at.raw_buffer(slot.at), at.raw_full + 8 * slot.at);
    }
}

template <typename T, int A>
static __device__ void produce(int steps, bool two, const unsigned (&hi)[4],
                               const unsigned (&lo)[4], ws_smem<T, A> &sm, ws_barriers &bar)
{
    const ws_addresses<T> at(sm, bar);
    /* what the steps take from the thread's index, kept in registers (transform_places) */
    transform_places<T, A, 4, tma_rows<T>> places;
    places.keep();
    const unsigned lane = kept(threadIdx.x % 32);
    ring_place<RAW_STAGES> now;
    ring_place<TF_STAGES> slot;
    for (int s = 0; s < steps; s++, now.advance(), slot.advance()) {
        mbarrier_wait(at.raw_full + 8 * now.at, now.parity);
        if (s >= TF_STAGES) /* the products of step s - TF_STAGES are done */
            mbarrier_wait(at.empty + 8 * slot.at, slot.parity ^ 1u);
        transform_step<T, A, 4>(hi, lo, two, places, sm.raw[now.at], sm.tf[slot.at]);
        fence_proxy_async(); /* the products read the planes through wgmma */
        mbarrier_arrive(at.full + 8 * slot.at);
        __syncwarp();
        if (lane == 0)
            mbarrier_arrive(at.raw_empty + 8 * now.at);
    }
}

template <typename T, int A>
static __device__ void consume(int steps, ws_smem<T, A> &sm, ws_barriers &bar,
                               ws_accumulators<A> &acc)
{
    const int group = (threadIdx.x - PRODUCER_THREADS) / 128;
    const ws_addresses<T> at(sm, bar);
    /* the planes of step 0's U, alpha group * A / 2, and what separates the others from them */
    const unsigned u0 = smem_address(&sm.tf[0][0][0][group * (A / 2)][0]);
    constexpr unsigned PLANE = sizeof(sm.tf[0][0][0][0]), STAGE = sizeof(sm.tf[0]);
    constexpr unsigned V = sizeof(sm.tf[0][0]);
    static_assert(PLANE % 16 == 0 && STAGE % 16 == 0 && V % 16 == 0, "16-byte planes");
    /* u0's descriptor; another plane's differs in the address field alone (bits 0-13: the byte
     * address / 16, below 2^14 in an SM's shared memory), by its offset / 16. Its address
     * field, and the lane, kept in registers: the compiler otherwise built every descriptor
     * again from the thread's index at each step. */
    const uint64_t u_descriptor = plane_descriptor(u0);
    const unsigned u_field = kept((unsigned)u_descriptor), high = u_descriptor >> 32;
    const unsigned lane = kept(threadIdx.x % 32);
    auto descriptor = [&](unsigned offset) {
        return (uint64_t)high << 32 | (u_field + offset / 16);
    };
    ring_place<TF_STAGES> slot;
    /* Two steps a pass, one in each stage, whose planes' offsets are then constants. (Left to
     * itself, the compiler took four at alpha 4, and ptxas serialized the products: its
     * warning C7515.) */
#pragma unroll 2
    for (int s = 0; s < steps; s++, slot.advance()) {
        const unsigned u = slot.at * STAGE;
        mbarrier_wait(at.full + 8 * slot.at, slot.parity);
        /* every alpha, those past the problem's too (zeros): ptxas serializes products issued
         * under a condition */
        wgmma_fence();
#pragma unroll
        for (int i = 0; i < A / 2; i++)
            wgmma_op<T>::run(acc[i], descriptor(u + i * PLANE), descriptor(u + V + i * PLANE));
        wgmma_commit();
        /* Step s - 1's products have read their planes. (Waiting for step s's own products
         * here instead, to hand its planes back a step sooner, made the 2 x 2 layers of
         * winrs-bfc 5-7% slower in FP16 on an H200, whose short alpha-4 steps then waited for
         * every step's products, and the 3 x 3 layers at most 1% faster.) */
        wgmma_wait<1>();
        if (s > 0 && lane == 0)
            mbarrier_arrive(at.empty + 8 * ((slot.at + TF_STAGES - 1) % TF_STAGES));
    }
    wgmma_wait<0>();
}

/* The steps of a block; true in the requesting warps, which take no part in the epilogue (the
 * epilogue's registers are theirs too): they go through its barriers in requesters_tail. */
template <typename T, int A>
static __device__ bool specialized_steps(const dims &d, const fused_problem<A> &f,
                                         const block_place &b, int steps,
                                         const CUtensorMap &dy_map, const CUtensorMap &x_map,
                                         unsigned char *smem)
{
    ws_smem<T, A> &sm = *(ws_smem<T, A> *)smem;
    ws_barriers &bar = *(ws_barriers *)(smem + ws_barriers_at<T, A>());
    const bool producer = threadIdx.x < PRODUCER_THREADS;
    const int kind = threadIdx.x / 128; /* producers: 0 dy, 1 x */
    unsigned hi[4], lo[4];
    diag_fragments<T, A>(kind ? f.bt : f.g, hi, lo);
    const bool rest = producer && (lo[0] | lo[1] | lo[2] | lo[3]) != 0;
    const bool g_rest = __syncthreads_or(kind == 0 && rest);
    const bool bt_rest = __syncthreads_or(kind == 1 && rest);
    if (threadIdx.x < TF_STAGES) {
        mbarrier_init(&bar.full[threadIdx.x], PRODUCER_THREADS);
        mbarrier_init(&bar.empty[threadIdx.x], (NHWC_THREADS - PRODUCER_THREADS) / 32);
    }
    if (threadIdx.x < RAW_STAGES) {
        mbarrier_init(&bar.raw_full[threadIdx.x], REQUEST_THREADS / 32);
        mbarrier_init(&bar.raw_empty[threadIdx.x], PRODUCER_THREADS / 32);
    }
    /* the taps of dy past r and columns of x past alpha, which no copy writes, are zeros: a
     * thread takes a 16-byte piece of a unit's rows in a stage and zeroes it in those rows (a
     * loop over every piece of the buffers, 160 KB, took 3% of a ResNet-18 conv2_x block) */
    constexpr int UNITS = nhwc_shape<T>::UNITS;
    for (int e = threadIdx.x; e < RAW_STAGES * UNITS * 8; e += WS_THREADS) {
        const int piece = e % 8, unit = e / 8 % UNITS, stage = e / 8 / UNITS;
        for (int row = f.r; row < 8; row++)
            ((uint4 *)&sm.raw[stage][0][unit * 8 + row][0])[piece] = make_uint4(0, 0, 0, 0);
        for (int row = f.alpha; row < 8; row++)
            ((uint4 *)&sm.raw[stage][1][unit * 8 + row][0])[piece] = make_uint4(0, 0, 0, 0);
    }
    __syncthreads(); /* the barriers are set up, the zeros in */
    if (producer) {
        registers_down<PRODUCER_REGS>();
        produce<T, A>(steps, kind ? bt_rest : g_rest, hi, lo, sm, bar);
        /* Every warp's reads of the raw buffers are done before the consumers put the
         * accumulators over them. The mbarriers order them too (each producer thread's
         * arrival on full releases its reads, and the consumers wait for the last step's), but
         * compute-sanitizer's racecheck does not follow mbarriers: with a barrier of the
         * consumers alone here it reported the accumulators' stores against the transforms'
         * ldmatrix. */
        __syncthreads();
        registers_up<EPILOGUE_REGS>();
    } else if (threadIdx.x < NHWC_THREADS) {
        registers_up<CONSUMER_REGS>();
        ws_accumulators<A> acc;
#pragma unroll
        for (int i = 0; i < A / 2; i++)
#pragma unroll
            for (int e = 0; e < 32; e++)
                acc[i][e] = 0.0f;
        consume<T, A>(steps, sm, bar, acc);
        __syncthreads(); /* every warp is done with the raw buffers and planes */
        const int group = (threadIdx.x - PRODUCER_THREADS) / 128, w = threadIdx.x / 32 % 4;
#pragma unroll
        for (int i = 0; i < A / 2; i++)
#pragma unroll
            for (int nt = 0; nt < BLOCK / 8; nt++)
                fragment_to_shared(reinterpret_cast<const float(&)[4]>(acc[i][4 * nt]),
                                   (float *)smem + (group * (A / 2) + i) * BLOCK * M_PITCH,
                                   16 * w, 8 * nt, M_PITCH);
        registers_down<EPILOGUE_REGS>();
    } else {
        registers_down<REQUEST_REGS>();
        request<T, A>(d, f, b, steps, dy_map, x_map, ws_addresses<T>(sm, bar));
        return true;
    }
    return false;
}

/* The requesting warps' part in the barriers of the rest of the kernel, which count the whole
 * block: the accumulators' way into shared memory (specialized_steps), then fused_nhwc's end,
 * with put_kcrs's or cluster_sum's own (krsc: the epilogue is put_krsc, which has none). */
static __device__ void requesters_tail(bool krsc, int in_cluster)
{
    __syncthreads(); /* the producers' reads of the raw buffers are done */
    __syncthreads(); /* every accumulator is in shared memory */
    if (krsc)
        return;
    __syncthreads(); /* put_kcrs: every thread has read its alphas; cluster_sum: likewise */
    if (in_cluster) {
        cooperative_groups::this_cluster().sync(); /* every part is in */
        cooperative_groups::this_cluster().sync(); /* every part has been read */
    } else {
        __syncthreads(); /* put_kcrs: the taps are in shared memory */
    }
}
#endif

/* Works out the block's taps from its accumulators in shared memory (m) and writes them into
 * its bucket or a KRSC dw: thread t's pairs (k0 + 8 i, c) lie 8 R S C elements apart, their
 * taps C apart, so that the addresses are sums (a KRSC offset of each element took about 12
 * instructions: 10% of a ResNet-18 conv2_x block's time, FP16). One pair at a time, in a loop:
 * unrolled over the pairs, the code (both kinds of stores, every tap up to A) ran to thousands
 * of instructions that each warp fetched once, and the warps stalled on instruction fetch
 * (ResNet-18 conv2_x FP16: 5% of the kernel's samples). */
template <typename T, int A>
static __device__ void put_krsc(const dims &d, const fused_problem<A> &f, const block_place &b,
                                const float *m, T *dw, float *buckets, int overwrite)
{
    const int c = b.c0 + threadIdx.x % BLOCK, k0 = b.k0 + threadIdx.x / BLOCK;
    const size_t pair_step = (size_t)8 * d.r * d.s * d.c;
    size_t at = krsc_at(d, k0, c, b.row, f.j0 + b.tile * f.n);
    if (buckets)
        buckets += (size_t)blockIdx.z * d.k * d.c * d.r * d.s;
    if (c >= d.c)
        return;
#pragma unroll 1
    for (int i = 0; i < PAIRS; i++, at += pair_step) {
        if (k0 + 8 * i >= d.k)
            break;
        float taps[A];
        pair_taps(f, m, i, taps);
#pragma unroll
        for (int jj = 0; jj < A; jj++) {
            if (jj >= f.n)
                break;
            const size_t e = at + (size_t)jj * d.c;
            if (buckets)
                buckets[e] = taps[jj];
            else
                store(dw, e, overwrite ? taps[jj] : load(dw, e) + taps[jj]);
        }
    }
}

/* Threads of a block: with warp specialization (16 bits, sm_90a code) a warpgroup of requests
 * beside the 512 of the other kernels (the host's count: block_threads). */
template <typename T> static constexpr int fused_nhwc_threads()
{
    return WINO_WGMMA && !nhwc_shape<T>::TF32 ? WS_THREADS : NHWC_THREADS;
}

/* dy_map and x_map: dy and x for the tensor memory accelerator (16 bits), boxes of 64 channels
 * x r taps of dy and x alpha columns of x (winrs_fused_nhwc_launch). */
template <typename T, int A>
__global__ void __launch_bounds__(fused_nhwc_threads<T>(), 1)
    fused_nhwc(dims d, fused_problem<A> f, const T *__restrict__ x, const T *__restrict__ dy,
               T *dw, float *buckets, int overwrite, int in_cluster,
               const __grid_constant__ CUtensorMap dy_map, const __grid_constant__ CUtensorMap x_map)
{
    extern __shared__ __align__(1024) unsigned char smem_bytes[];
    nhwc_smem<T, A> &sm = *(nhwc_smem<T, A> *)smem_bytes;
    const block_place b = place_of(d, f);
    constexpr int UNITS = nhwc_shape<T>::UNITS;
    const int steps = b.end > b.begin ? (int)((b.end - b.begin + UNITS - 1) / UNITS) : 0;
#if WINO_WGMMA
    if constexpr (!nhwc_shape<T>::TF32) {
        if (specialized_steps<T, A>(d, f, b, steps, dy_map, x_map, smem_bytes)) {
            requesters_tail(!in_cluster && (buckets || d.dw_nhwc), in_cluster);
            return;
        }
    } else
#endif
        interleaved_steps<T, A>(d, f, b, steps, x, dy, sm);
    __syncthreads(); /* every accumulator is in shared memory */
    if (!in_cluster && (buckets || d.dw_nhwc)) {
        put_krsc(d, f, b, (const float *)smem_bytes, dw, buckets, overwrite);
        return;
    }
    float taps[PAIRS][A];
    taps_of(f, (const float *)smem_bytes, taps);
    if (in_cluster)
        cluster_sum(d, f, b, taps, dw, overwrite, (float *)smem_bytes);
    else
        put_kcrs(d, f, b, taps, dw, overwrite, (float *)smem_bytes);
}

int winrs_fused_nhwc_cluster_max(int device)
{
    return compute_capability(device) >= 90 ? WINRS_CLUSTER_MAX : 1;
}

/* The model's cost of s segments: one block per SM; a block costs its steps of `step` units
 * plus about OVERHEAD steps of filling the pipeline and writing its accumulators, and in a
 * cluster about a step more per segment, the blocks adding up each other's taps. */
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

/* The blocks of K x C whole (one segment, in a first launch) before the others in clusters of
 * most `segments`, where that fills the SMs' rounds better: the model's cost of that pair of
 * launches (a second launch about LAUNCH steps), or of none if no split beats `cost` by a tenth.
 * A layer of 64 blocks of K x C whose rounds of whole blocks leave most SMs idle in the last
 * one gains (FP16 on an H100: winrs-bfc b5_512 and b7_512, 14 x 14 x 512, 1.11x and 1.08x). */
static winrs_grid split_rounds(long units, int step, int kc_blocks, int rows, int sms,
                               int cluster_most, double cost)
{
    const double LAUNCH = 2.0;
    winrs_grid g = {1, 0, 0, 0};
    double best = cost * 0.9;
    for (int s = 2; s <= cluster_most; s *= 2)
        for (int head = 1; head < kc_blocks; head++) {
            const double c = waves_cost(units, step, head * rows, sms, 1, 0) + LAUNCH +
                             waves_cost(units, step, (kc_blocks - head) * rows, sms, s, 1);
            if (c < best)
                best = c, g.segments = s, g.in_cluster = 1, g.head = head;
        }
    return g;
}

/* The threads of a block on device: 16 bits run the warp-specialized steps where the GPU runs
 * the sm_90a code (fused_nhwc_threads). */
static int block_threads(int device, size_t element_bytes)
{
#if WINO_CUDA_SM90A
    if (element_bytes == 2 && compute_capability(device) == 90)
        return WS_THREADS;
#else
    (void)device, (void)element_bytes;
#endif
    return NHWC_THREADS;
}

winrs_grid winrs_fused_nhwc_grid(int device, size_t element_bytes, long units, int kc_blocks,
                                 int rows, int cluster_most, int bucket_most)
{
    const int step = element_bytes == 4 ? nhwc_shape<float>::UNITS : nhwc_shape<__half>::UNITS;
    const int blocks = kc_blocks * rows;
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        sms < 1)
        sms = 132;
    double bucket_cost = 0.0, cluster_cost = 0.0;
    winrs_grid g = {cheapest(units, step, blocks, sms, 1, bucket_most, 0, &bucket_cost), 0, 0,
                    block_threads(device, element_bytes)};
    if (cluster_most < 2)
        return g;
    /* Clusters only where they save a sixth of the model's time: on the H100 eight segments in
     * clusters of eight ran up to 1.4x slower than the same eight in buckets (VGG-16 conv3_2
     * and conv4_1, FP16, batch 32), where two in clusters of two gained 1.4x over one segment
     * (ResNet-18 conv4_x). */
    const int clustered = cheapest(units, step, blocks, sms, 2, cluster_most, 1, &cluster_cost);
    double cost = bucket_cost;
    if (cluster_cost < bucket_cost * 0.85)
        g.segments = clustered, g.in_cluster = 1, cost = cluster_cost;
    winrs_grid split = split_rounds(units, step, kc_blocks, rows, sms, cluster_most, cost);
    split.threads = g.threads;
    return split.head ? split : g;
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

/* A block's shared memory: the steps', then (over the same bytes) its accumulators and taps;
 * 16 bits, for the warp-specialized steps where the GPU has them, and their mbarriers. */
template <typename T, int A> static constexpr int block_smem_bytes()
{
    return nhwc_shape<T>::TF32 ? (int)larger(sizeof(nhwc_smem<T, A>), end_bytes<A>())
                               : (int)(ws_barriers_at<T, A>() + sizeof(ws_barriers));
}

template <typename T, int A> static cudaError_t allow_smem(void)
{
    return cudaFuncSetAttribute(fused_nhwc<T, A>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                block_smem_bytes<T, A>());
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

/* An NHWC tensor of 16-bit T (n x rows x cols x channels) for the tensor memory accelerator:
 * boxes of 64 channels x `box` columns, 128-byte swizzled (tma_rows), zeros outside. */
template <typename T>
static cudaError_t tensor_map(CUtensorMap *map, const T *at, int n, int rows, int cols,
                              int channels, int box)
{
    const CUtensorMapDataType type = std::is_same<T, __half>::value
                                         ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                         : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    return wino_nhwc_tensor_map(map, type, sizeof(T), at, n, rows, cols, channels, BLOCK, box, 1,
                                CU_TENSOR_MAP_SWIZZLE_128B);
}

template <typename T, int A>
cudaError_t winrs_fused_nhwc_launch(const dims &d, const fused_problem<A> &f, dim3 grid,
                                    int in_cluster, int threads, const T *x, const T *dy, T *dw,
                                    float *buckets, int overwrite, cudaStream_t stream)
{
    CUtensorMap dy_map, x_map; /* 16 bits: where the GPU has warp specialization */
    memset(&dy_map, 0, sizeof dy_map);
    memset(&x_map, 0, sizeof x_map);
    if constexpr (!nhwc_shape<T>::TF32) {
        cudaError_t e = tensor_map(&dy_map, dy, d.n, d.p, d.q, d.k, f.r);
        if (e == cudaSuccess)
            e = tensor_map(&x_map, x, d.n, d.h, d.w, d.c, f.alpha);
        if (e != cudaSuccess)
            return e;
    }
    const int smem = block_smem_bytes<T, A>();
    cudaLaunchConfig_t config = {};
    cudaLaunchAttribute cluster[1];
    config.gridDim = grid;
    config.blockDim = dim3((unsigned)threads);
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
                              in_cluster, dy_map, x_map);
}

#define WINO_NHWC_LAUNCH(T, A)                                                                 \
    template cudaError_t winrs_fused_nhwc_launch<T, A>(const dims &, const fused_problem<A> &, \
                                                       dim3, int, int, const T *, const T *,    \
                                                       T *, float *, int, cudaStream_t);
WINO_NHWC_LAUNCH(float, 4)
WINO_NHWC_LAUNCH(float, WINRS_FUSED_MAX_ALPHA)
WINO_NHWC_LAUNCH(__half, 4)
WINO_NHWC_LAUNCH(__half, WINRS_FUSED_MAX_ALPHA)
WINO_NHWC_LAUNCH(__nv_bfloat16, 4)
WINO_NHWC_LAUNCH(__nv_bfloat16, WINRS_FUSED_MAX_ALPHA)
#undef WINO_NHWC_LAUNCH
