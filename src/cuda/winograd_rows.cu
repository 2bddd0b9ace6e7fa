/* The ROWS variant of the forward convolution (winograd_rows.h): one-dimensional Winograd
 * F(m, s) along each output row, alpha = 8, the design of the WinRS kernels (winrs_fused_nhwc.cu)
 * turned to the forward pass. A tile is m outputs of one output row (image n, row h, columns
 * tw m ..); for alpha position a, filter row i and input channel c its transformed input is
 * V[a][tile][(i, c)] = (B^T x[n][h + i - pad_h][tw m - pad_w ..][c])[a], and
 *     y[tile][j][k] = sum_a A^T[j][a] sum_(i, c) V[a][tile][(i, c)] U[a][(i, c)][k],
 * U = G w along the filter's width, transformed once at create. So the products' depth is r C,
 * every alpha position is one product of 64 tiles x 64 output channels, and the alpha
 * accumulators of a block take 8 x 64 x 64 floats: in registers, with no M in memory (the 2D
 * tile's 36 positions leave room for 32 x 16 blocks only, docs/cuda-winograd.md).
 *
 * A thread block owns 64 tiles, in boxes of box_h output rows x box_w tiles (choose_boxes), and
 * 64 output channels, and goes through r x ceil(C / 16) steps of one filter row and 16 input
 * channels. Warps are specialized:
 *   - requesters (warpgroup 4): they ask the tensor memory accelerator for each step's boxes
 *     (box_h rows x the box's columns x 16 channels; its zero fill is the padding, the channels
 *     past C and the boxes past the layer), warp 0 also for the step's U (8 x 64 x 16, laid out
 *     by the filter transform as wgmma reads it), into RING buffers as they come free;
 *   - producers (warpgroups 0 and 1, 8 warps): they transform the windows on tensor cores (16
 *     channels x 8 taps times diag(B) in m16n8k8, the matrix split into its nearest 16-bit
 *     values and the rest, FP32 sums) and store V's planes with stmatrix;
 *   - consumers (warpgroups 2 and 3): wgmma m64n64k16 per alpha position, 4 positions each.
 * mbarriers pass the steps: full (the accelerator's bytes are in), empty (producers have
 * transformed and consumers multiplied a ring buffer), tf_full / tf_empty for V's planes. At
 * the end the accumulators meet in shared memory and each thread applies A^T to 8 (tile,
 * output channel) pairs, adds the bias, and writes y. */
#include <cooperative_groups.h>
#include <cuda.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <type_traits>

#include "cuda/device_common.h"
#include "cuda/tensor_core_ptx.cuh"
#include "cuda/tensor_core_transform.cuh"
#include "cuda/tensor_map.h"
#include "cuda/winograd_rows.h"
#include "cuda/winrs_tensors.cuh"

static constexpr int A = ROWS_ALPHA;
#define TILES 64 /* a block's tiles: the products' M */
#define OUTS 64  /* a block's output channels: N */
#define CH 16    /* input channels a step: the products' depth */
#define THREADS 512 /* the producers and consumers, who also apply A^T at the end */
#define PRODUCERS 256
#define REQUESTERS 128
/* Buffers of raw windows and U, and of V's planes (the producers transform up to TF - 1 steps
 * ahead). With the requesters, 4 and 4 ran 1.02-1.07x faster than 5 and 3 (H100, FP16,
 * ResNet-18 batch 32 and deeplabv3-r18 batch 1). */
#define RING 4
#define TF 4
/* Registers a thread: the producers and requesters need few, the consumers hold the
 * accumulators; together the 640 threads' 96 each. At the end the 512 threads of the epilogue
 * take EPILOGUE_REGS. */
#define PRODUCER_REGS 64
#define CONSUMER_REGS 160
#define REQUEST_REGS 32
#define EPILOGUE_REGS 112
/* A plane of V: 64 tiles x 16 channels, and 8 elements more, so that the 8 rows of a stored
 * matrix (8 alpha positions, one plane each) fall on distinct banks. */
#define PLANE (TILES * CH + 8)
#define M_PITCH (OUTS + 8) /* floats a tile's row in the accumulators' shared copy */
#define U_STEP (A * OUTS * CH) /* elements of U a step */

/* A step's raw boxes: at most 64 tiles' windows of 8 columns (a box of box_w tiles shares
 * their overlap); boxes whose 256-byte alignment takes more are not chosen. */
#define RAW_BYTES (TILES * A * CH * 2)
template <typename T> struct rows_stage {
    T raw[RAW_BYTES / sizeof(T)]; /* boxes, 32-byte swizzled (raw_piece) */
    T u[A][OUTS * CH];            /* k_major_at */
};
template <typename T> struct rows_smem {
    rows_stage<T> ring[RING]; /* first: 1024-byte aligned */
    T v[TF][A][PLANE];
};
struct rows_barriers {
    uint64_t full[RING], empty[RING], tf_full[TF], tf_empty[TF];
};
static constexpr size_t larger(size_t a, size_t b) { return a > b ? a : b; }
template <typename T> static constexpr size_t barriers_at()
{
    return (larger(sizeof(rows_smem<T>), (size_t)A * TILES * M_PITCH * sizeof(float)) + 15) / 16 *
           16;
}
template <typename T> static constexpr int smem_bytes()
{
    return (int)(barriers_at<T>() + sizeof(rows_barriers));
}

#if WINO_WGMMA
/* Where element (row, ch) of a 16-channel K-major operand lies (V: row = tile; U: row = output
 * channel): wgmma's layout without swizzling, 8 rows x 8 channels in 128 contiguous bytes, the
 * second 8 channels 128 bytes on, the next 8 rows 256 bytes on (k_major_descriptor). */
static __device__ __forceinline__ int k_major_at(int row, int ch)
{
    return (row >> 3) * 128 + (ch >> 3) * 64 + (row & 7) * 8 + (ch & 7);
}

/* The accelerator's 32-byte swizzle: the two 16-byte pieces of a raw row trade places in rows
 * 4-7 of every 8, so that ldmatrix's 8 rows fall on distinct banks. */
static __device__ __forceinline__ int raw_piece(int row, int piece)
{
    return piece ^ (row >> 2 & 1);
}

/* Box bi of the layer: image, first output row and first tile; n = N past the boxes (the
 * accelerator reads zeros there). */
struct box_place {
    int n, h0, tw0;
};
static __device__ __forceinline__ box_place box_of(const wino_rows_plan &p, int bi)
{
    box_place at;
    const int band = wino_fast_divide(bi, p.per_band);
    at.n = wino_fast_divide(band, p.per_image);
    at.h0 = (band - at.n * p.boxes_h) * p.box_h;
    at.tw0 = (bi - band * p.boxes_w) * p.box_w;
    if (bi >= p.total)
        at.n = p.n;
    return at;
}

/* Shared-space addresses of the ring's stages and the mbarriers, worked out once
 * (smem_address); element i of an mbarrier array lies 8 i bytes on. */
struct rows_addresses {
    unsigned ring, full, empty, tf_full, tf_empty;
    template <typename T>
    __device__ __forceinline__ rows_addresses(rows_smem<T> &sm, rows_barriers &bar)
    {
        ring = smem_address(&sm.ring[0]);
        full = smem_address(&bar);
        empty = full + (unsigned)offsetof(rows_barriers, empty);
        tf_full = full + (unsigned)offsetof(rows_barriers, tf_full);
        tf_empty = full + (unsigned)offsetof(rows_barriers, tf_empty);
    }
};

/* Step s as filter row i of channel chunk `chunk` (i = s % r), advanced a step at a time: a
 * division by r at each request took two dozen instructions. */
struct rows_step {
    int i = 0, chunk = 0;
    __device__ __forceinline__ void advance(int r)
    {
        if (++i == r)
            i = 0, chunk++;
    }
};

/* Requesting warp w asks for box w + 4 l (lane l) of step `step` (filter row i, channel chunk)
 * at `mine`, warp 0 also for the step's U, into the ring's stage at shared address st (its
 * mbarrier `full`). A step has at most 64 boxes: lanes 0-15, and lane 31 for U. */
template <typename T>
static __device__ __forceinline__ void request_step(const wino_rows_plan &p, rows_step step,
                                                    const box_place &mine, const T *u, int kb,
                                                    const CUtensorMap &x_map, unsigned st,
                                                    unsigned full)
{
    const int lane = threadIdx.x % 32, warp = (threadIdx.x - THREADS) / 32;
    const int i = step.i, chunk = step.chunk;
    const int mine_count = (p.boxes - warp + 3) / 4; /* boxes w, w + 4, .. below p.boxes */
    if (lane == 0)
        mbarrier_arrive_expect(full, mine_count * p.box_h * p.cols * CH * (unsigned)sizeof(T) +
                                         (warp == 0 ? U_STEP * (unsigned)sizeof(T) : 0u));
    __syncwarp();
    if (lane < mine_count)
        tma_load_4d(st + (unsigned)((warp + 4 * lane) * p.box_elems * sizeof(T)), &x_map,
                    chunk * CH, mine.tw0 * p.m - p.pad_w, mine.h0 + i - p.pad_h, mine.n, full);
    else if (warp == 0 && lane == 31)
        bulk_load(st + (unsigned)offsetof(rows_stage<T>, u),
                  u + ((size_t)(kb * p.chunks + chunk) * p.r + i) * U_STEP, U_STEP * sizeof(T),
                  full);
}

/* The requesters: each step's boxes and U into the ring, as soon as the producers have
 * transformed and the consumers multiplied what a stage held. (When the producers asked for
 * them themselves, a step waited for their requests too.) */
template <typename T>
static __device__ void request(const wino_rows_plan &p, int tb, int kb, int first, int steps,
                               const T *u, const CUtensorMap &x_map, rows_smem<T> &sm,
                               rows_barriers &bar)
{
    const box_place mine =
        box_of(p, tb * p.boxes + (threadIdx.x - THREADS) / 32 + 4 * (threadIdx.x % 32));
    const rows_addresses at(sm, bar);
    constexpr unsigned STAGE = sizeof(rows_stage<T>);
    rows_step step;
    step.i = first % p.r, step.chunk = first / p.r;
    ring_place<RING> slot;
    for (int s = 0; s < steps; s++, step.advance(p.r), slot.advance()) {
        if (s >= RING) /* the producers and consumers of step s - RING are done with it */
            mbarrier_wait(at.empty + 8 * slot.at, slot.parity ^ 1u);
        request_step<T>(p, step, mine, u, kb, x_map, at.ring + slot.at * STAGE,
                        at.full + 8 * slot.at);
    }
}

/* V of a step from its windows: a warp takes 4 groups of 2 tiles' windows (8 columns each) x
 * 16 channels; transposed, times diag(B) they give 16 channels x 8 alphas of a tile, stored
 * transposed (a row per alpha position, each into its plane). Every group's load first, then
 * the products, then the stores: ldmatrix and stmatrix are volatile asm, kept in program order,
 * so group by group each load waited for the last group's store (as in WinRS's transform_jobs). */
template <typename T, bool TWO>
static __device__ __forceinline__ void transform(const wino_rows_plan &p, unsigned hi,
                                                 unsigned lo, const rows_stage<T> &st,
                                                 T (&v)[A][PLANE])
{
    constexpr int JOBS = TILES * A / 16 / (PRODUCERS / 32);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, m = lane / 8, part = m % 2;
    unsigned frag[JOBS][4], out[JOBS][4];
    int row[JOBS];
#pragma unroll
    for (int j = 0; j < JOBS; j++) {
        row[j] = (warp * JOBS + j) * 16 + 8 * (m / 2) + lane % 8;
        const int t = row[j] / A, in = t & ((1 << p.lg_tiles) - 1); /* tile, its place in its box */
        const int at = (in >> p.lg_w) * p.cols + (in & (p.box_w - 1)) * p.m + row[j] % A;
        ldmatrix_x4_trans(frag[j], &st.raw[(t >> p.lg_tiles) * p.box_elems + at * CH +
                                           8 * raw_piece(at, part)]);
    }
#pragma unroll
    for (int j = 0; j < JOBS; j++)
#pragma unroll
        for (int kb = 0; kb < 2; kb++) {
            float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            mma_k8<T>::run(acc, frag[j] + 2 * kb, hi);
            if (TWO)
                mma_k8<T>::run(acc, frag[j] + 2 * kb, lo);
            out[j][2 * kb] = pack16<T>(acc[0], acc[1]);
            out[j][2 * kb + 1] = pack16<T>(acc[2], acc[3]);
        }
#pragma unroll
    for (int j = 0; j < JOBS; j++)
        stmatrix_x4_trans(&v[row[j] % A][k_major_at(row[j] / A, 8 * part)], out[j]);
}

/* The producers of `steps` steps. */
template <typename T>
static __device__ void produce(const wino_rows_plan &p, int steps, rows_smem<T> &sm,
                               rows_barriers &bar)
{
    unsigned hi, lo;
    diag_fragment16<T, A>(p.bt, hi, lo);
    const bool two = __any_sync(0xffffffffu, lo != 0u);
    const rows_addresses at(sm, bar);
    ring_place<RING> now;
    ring_place<TF> slot;
    for (int s = 0; s < steps; s++, now.advance(), slot.advance()) {
        mbarrier_wait(at.full + 8 * now.at, now.parity);
        if (s >= TF) /* the products of step s - TF are done */
            mbarrier_wait(at.tf_empty + 8 * slot.at, slot.parity ^ 1u);
        if (two)
            transform<T, true>(p, hi, lo, sm.ring[now.at], sm.v[slot.at]);
        else
            transform<T, false>(p, hi, lo, sm.ring[now.at], sm.v[slot.at]);
        fence_proxy_async(); /* the products read the planes through wgmma */
        mbarrier_arrive(at.tf_full + 8 * slot.at);
        __syncwarp();
        if (threadIdx.x % 32 == 0)
            mbarrier_arrive(at.empty + 8 * now.at);
    }
}

/* Consumer warpgroup g multiplies alpha positions 4 g .. 4 g + 3 of every step; the
 * accumulators end in shared memory, m[a][tile][output channel]. */
template <typename T>
static __device__ void consume(int steps, rows_smem<T> &sm, rows_barriers &bar, float *m)
{
    const int group = (threadIdx.x - PRODUCERS) / 128, lane = threadIdx.x % 32;
    float acc[A / 2][32];
#pragma unroll
    for (int a = 0; a < A / 2; a++)
#pragma unroll
        for (int e = 0; e < 32; e++)
            acc[a][e] = 0.0f;
    const rows_addresses at(sm, bar);
    /* this group's first alpha position in V's planes and U of slot and stage 0 */
    const unsigned v0 = smem_address(&sm.v[0][group * (A / 2)][0]);
    const unsigned u0 = smem_address(&sm.ring[0].u[group * (A / 2)][0]);
    constexpr unsigned V_PLANE = sizeof(sm.v[0][0]), V_SLOT = sizeof(sm.v[0]);
    constexpr unsigned U_PLANE = sizeof(sm.ring[0].u[0]), STAGE = sizeof(rows_stage<T>);
    ring_place<RING> now;
    ring_place<TF> slot;
    for (int s = 0; s < steps; s++, now.advance(), slot.advance()) {
        mbarrier_wait(at.tf_full + 8 * slot.at, slot.parity);
        mbarrier_wait(at.full + 8 * now.at, now.parity); /* U */
        wgmma_fence();
        const unsigned v = v0 + slot.at * V_SLOT, uu = u0 + now.at * STAGE;
#pragma unroll
        for (int a = 0; a < A / 2; a++)
            wgmma_op<T>::run_k_major(acc[a], k_major_descriptor(v + a * V_PLANE),
                                     k_major_descriptor(uu + a * U_PLANE));
        wgmma_commit();
        wgmma_wait<1>(); /* step s - 1's products have read their operands */
        if (s > 0 && lane == 0) {
            mbarrier_arrive(at.tf_empty + 8 * ((slot.at + TF - 1) % TF));
            mbarrier_arrive(at.empty + 8 * ((now.at + RING - 1) % RING));
        }
    }
    wgmma_wait<0>();
    __syncthreads(); /* every thread's, the producers' too: the accumulators go over the planes */
    const int w = threadIdx.x / 32 % 4;
#pragma unroll
    for (int a = 0; a < A / 2; a++)
#pragma unroll
        for (int nt = 0; nt < OUTS / 8; nt++)
            fragment_to_shared(reinterpret_cast<const float(&)[4]>(acc[a][4 * nt]),
                               m + (group * (A / 2) + a) * TILES * M_PITCH, 16 * w, 8 * nt,
                               M_PITCH);
}

/* A^T over the accumulators m[a][tile][k], the bias and ReLU: thread t takes output channel
 * t % 64 of tiles t / 64 + 8 i, i < 8 (consecutive threads, consecutive channels of y). SPLIT:
 * the accumulators are summed over the cluster's blocks (each one's share of the channel
 * steps), and this block takes the i with i % splits = its rank; the unsplit kernel keeps
 * plain shared loads (the cluster's generic ones cost it 5-13%, measured). */
template <typename T, bool SPLIT>
static __device__ void output_transform(const wino_rows_plan &p, int tb, int kb, int rank,
                                        const float *m, const float *bias, T *y)
{
    const int kl = threadIdx.x % OUTS, k = kb * OUTS + kl;
    if (k >= p.k)
        return;
    const float b = bias ? bias[k] : 0.0f;
    const int stride = SPLIT ? p.splits : 1;
#pragma unroll 1
    for (int i = SPLIT ? rank : 0; i < TILES * OUTS / THREADS; i += stride) {
        const int tl = threadIdx.x / OUTS + 8 * i, in = tl & ((1 << p.lg_tiles) - 1);
        const box_place box = box_of(p, tb * p.boxes + (tl >> p.lg_tiles));
        const int h = box.h0 + (in >> p.lg_w), w0 = (box.tw0 + (in & (p.box_w - 1))) * p.m;
        if (box.n >= p.n || h >= p.p || w0 >= p.q)
            continue;
        float mv[A];
        if constexpr (SPLIT) {
#pragma unroll
            for (int a = 0; a < A; a++)
                mv[a] = 0.0f;
            for (int q = 0; q < p.splits; q++) {
                const float *mq = cooperative_groups::this_cluster().map_shared_rank(m, q);
#pragma unroll
                for (int a = 0; a < A; a++)
                    mv[a] += mq[(a * TILES + tl) * M_PITCH + kl];
            }
        } else {
#pragma unroll
            for (int a = 0; a < A; a++)
                mv[a] = m[(a * TILES + tl) * M_PITCH + kl];
        }
        T *row = y + (((size_t)box.n * p.p + h) * p.q + w0) * p.k + k;
#pragma unroll
        for (int j = 0; j < A; j++) {
            if (j >= p.m || w0 + j >= p.q)
                break;
            float sum = b;
#pragma unroll
            for (int a = 0; a < A; a++)
                sum = fmaf(p.at[j][a], mv[a], sum);
            if (p.relu)
                sum = fmaxf(sum, 0.0f);
            store(row, (size_t)j * p.k, sum);
        }
    }
}
#endif

/* The clusters from first_cluster on; SPLIT: launched in clusters of p.splits blocks
 * (choose_launches). */
template <typename T, bool SPLIT>
__global__ void __launch_bounds__(THREADS + REQUESTERS, 1)
    rows_fused(const __grid_constant__ wino_rows_plan p, int first_cluster,
               const T *__restrict__ u, const float *__restrict__ bias, T *__restrict__ y,
               const __grid_constant__ CUtensorMap x_map)
{
#if WINO_WGMMA
    extern __shared__ __align__(1024) unsigned char smem[];
    rows_smem<T> &sm = *(rows_smem<T> *)smem;
    rows_barriers &bar = *(rows_barriers *)(smem + barriers_at<T>());
    /* a cluster of p.splits blocks: one tile block and 64 output channels, each block a share
     * of the channel steps */
    const int rank = SPLIT ? (int)cooperative_groups::this_cluster().block_rank() : 0;
    const int cluster =
        (SPLIT ? (int)(blockIdx.x / p.splits) : (int)blockIdx.x) + first_cluster;
    const int kb = cluster % p.kblocks, tb = cluster / p.kblocks;
    const int splits = SPLIT ? p.splits : 1;
    const int chunk0 = rank * p.chunks / splits, chunk1 = (rank + 1) * p.chunks / splits;
    const int first = chunk0 * p.r, steps = (chunk1 - chunk0) * p.r;
    if constexpr (!SPLIT) /* the split launch after this one may take SMs as they come free */
        grid_launch_dependents();
    if (threadIdx.x < RING) {
        mbarrier_init(&bar.full[threadIdx.x], REQUESTERS / 32);
        mbarrier_init(&bar.empty[threadIdx.x], THREADS / 32);
    }
    if (threadIdx.x < TF) {
        mbarrier_init(&bar.tf_full[threadIdx.x], PRODUCERS);
        mbarrier_init(&bar.tf_empty[threadIdx.x], (THREADS - PRODUCERS) / 32);
    }
    __syncthreads();
    if (threadIdx.x < PRODUCERS) {
        registers_down<PRODUCER_REGS>();
        produce<T>(p, steps, sm, bar);
        __syncthreads(); /* the consumers' (consume): the shared memory is theirs now */
        registers_up<EPILOGUE_REGS>();
    } else if (threadIdx.x < THREADS) {
        registers_up<CONSUMER_REGS>();
        consume<T>(steps, sm, bar, (float *)smem);
        registers_down<EPILOGUE_REGS>();
    } else {
        /* no part in the epilogue (its registers are the requesters' too), only in the block's
         * barriers below */
        registers_down<REQUEST_REGS>();
        request<T>(p, tb, kb, first, steps, u, x_map, sm, bar);
        __syncthreads(); /* the consumers' (consume) */
        if constexpr (SPLIT) {
            cooperative_groups::this_cluster().sync();
            cooperative_groups::this_cluster().sync();
            grid_dependency_wait(); /* below */
        } else {
            __syncthreads();
        }
        return;
    }
    if constexpr (SPLIT) /* every accumulator of the cluster is in shared memory */
        cooperative_groups::this_cluster().sync();
    else
        __syncthreads();
    output_transform<T, SPLIT>(p, tb, kb, rank, (const float *)smem, bias, y);
    if constexpr (SPLIT) {
        cooperative_groups::this_cluster().sync(); /* the other blocks have read this one's */
        /* The split launch may run beside the whole blocks' launch (launch); it ends after it,
         * so that what follows on the stream sees all of y. */
        grid_dependency_wait();
    }
#else
    __trap(); /* sm_90a only: wino_rows_refusal refuses other GPUs */
#endif
}

/* U[kb][chunk][i][a][k_major_at(k, c)] = (G w[k][i][.][c])[a] for output channels kb 64 + k
 * and input channels chunk 16 + c, zeros past K and C. */
template <typename T>
__global__ void rows_filter_transform(const __grid_constant__ wino_rows_plan p, const T *w, T *u,
                                      long long count)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= count)
        return;
    const int e = (int)(idx % (OUTS * CH));
    long long rest = idx / (OUTS * CH);
    const int a = (int)(rest % A);
    rest /= A;
    const int i = (int)(rest % p.r);
    rest /= p.r;
    const int chunk = (int)(rest % p.chunks), kb = (int)(rest / p.chunks);
    const int k = kb * OUTS + (e >> 7) * 8 + (e >> 3 & 7);
    const int c = chunk * CH + (e >> 6 & 1) * 8 + (e & 7);
    float sum = 0.0f;
    if (k < p.k && c < p.c)
        for (int j = 0; j < p.s; j++)
            sum = fmaf(p.g[a][j], load(w, (((size_t)k * p.r + i) * p.s + j) * p.c + c), sum);
    store(u, (size_t)idx, sum);
}

const char *wino_rows_refusal(const struct wino_conv2d_desc *d, int device)
{
    if (d->dtype != WINO_DTYPE_F16 && d->dtype != WINO_DTYPE_BF16)
        return "the ROWS variant is FP16 and BF16";
    if (d->layout != WINO_LAYOUT_NHWC)
        return "the ROWS variant reads NHWC tensors";
    if (d->c % 8)
        return "the ROWS variant needs C a multiple of 8 (rows of x on 16-byte boundaries)";
    if (d->s < 2 || d->s > ROWS_ALPHA - 1)
        return "the ROWS variant takes filters 2 to 7 wide (alpha 8)";
#if WINO_CUDA_SM90A
    const int cc = compute_capability(device);
    if (!cc)
        return "the ROWS variant: the device's compute capability is unknown";
    if (cc != 90)
        return "the ROWS variant runs on Hopper (sm_90) only";
    return NULL;
#else
    (void)device;
    return "the ROWS variant needs the component built for sm_90 (CMAKE_CUDA_ARCHITECTURES=90)";
#endif
}

const char *wino_rows_tile_refusal(const struct wino_conv2d_desc *d, int m)
{
    const int alpha = m + d->s - 1;
    if (alpha == ROWS_ALPHA)
        return NULL;
    if (alpha != 6 || d->s != 3)
        return "the ROWS variant takes F(m, s) with m + s - 1 = 8, or F(4, 3)";
    if (d->dtype != WINO_DTYPE_F16)
        return "the ROWS variant's F(4, 3) is FP16 (its input transform runs in FP16 pairs)";
    return NULL;
}

/* The boxes of the plan (box_w x box_h tiles, powers of two): of those the accelerator and the
 * shared memory take, the cheapest by a model of a step's time, max(1, requests a warp) over
 * the fraction of the block's tiles that are outputs (the rest: past the map's edges, or of
 * the last block). A step's products take about as long as a warp's one request; more
 * requests a warp add up (each a round through the uniform registers). Wider boxes read the
 * s - 1 columns that neighbouring windows share once (a quarter of their bytes' weight), and
 * fewer boxes break ties. */
static void choose_boxes(struct wino_rows_plan *p)
{
    double best = 0.0;
    for (int lw = 0; lw <= 6; lw++)
        for (int lh = 0; lw + lh <= 6; lh++) {
            const int bw = 1 << lw, bh = 1 << lh, boxes = TILES >> (lw + lh);
            const int cols = bw * p->m + p->s - 1;
            const int elems = (bh * cols * CH + 127) / 128 * 128; /* 256-byte aligned */
            if (cols > 256 || boxes * elems * 2 > RAW_BYTES)
                continue;
            const long boxes_w = (p->tiles_w + bw - 1) / bw, boxes_h = (p->p + bh - 1) / bh;
            const long total = (long)p->n * boxes_w * boxes_h;
            const long slots = (total + boxes - 1) / boxes * TILES;
            const double used = (double)p->n * p->p * p->tiles_w / (double)slots;
            const double cost = (boxes > 8 ? boxes / 8.0 : 1.0) / used *
                                (1.0 + 0.25 * ((double)cols / (bw * p->m) - 1.0)) *
                                (1.0 + 0.01 * boxes);
            if (best == 0.0 || cost < best * 0.999) {
                best = cost;
                p->box_w = bw, p->box_h = bh, p->lg_w = lw, p->lg_tiles = lw + lh;
                p->boxes = boxes, p->cols = cols, p->box_elems = elems;
                p->boxes_w = (int)boxes_w, p->boxes_h = (int)boxes_h;
            }
        }
}

/* The launches of a layer's clusters (a tile block and 64 output channels each): the first
 * `head` as one block each, the rest shared by `splits` blocks (a cluster of 2, 4 or 8, each
 * block rank * chunks / splits .. of the chunks) in a second launch. By a model of the rounds
 * of blocks (one block an SM): a block costs its steps and about OVERHEAD steps more (the
 * pipeline's start, the epilogue), a split block a step more for each block whose accumulators
 * its epilogue sums, a second launch about LAUNCH steps; a split is taken where it saves a
 * twentieth (a tenth left wino-grid g128_1024 and g256_256 whole, 1.09x and 1.05x slower on an
 * H100). Splitting only the clusters past the whole rounds fills a last, partial round
 * (ResNet-18 conv3_x at batch 32: 160 clusters of 24 steps took two rounds of whole blocks on
 * an H100's 132 SMs; 132 whole, then 28 in clusters of 4, ran 1.16x faster). */
static void choose_launches(long long clusters, int chunks, int r, int sms, long long *head,
                            int *splits)
{
    const int OVERHEAD = 4, LAUNCH = 2;
    const double whole = chunks * r + OVERHEAD;
    const double unsplit = (double)((clusters + sms - 1) / sms) * whole;
    double best = unsplit;
    *head = clusters, *splits = 1;
    for (int s = 2; s <= 8 && s <= chunks; s *= 2) {
        const double share = (double)((chunks + s - 1) / s * r) + OVERHEAD + s;
        for (long long h = 0; h < clusters; h += sms) { /* whole rounds, then the split rest */
            const double cost = (double)((h + sms - 1) / sms) * whole + (h ? LAUNCH : 0) +
                                (double)(((clusters - h) * s + sms - 1) / sms) * share;
            if (cost < best && cost < unsplit * 0.95)
                best = cost, *head = h, *splits = s;
        }
    }
}

enum wino_status wino_rows_plan_of(const struct wino_conv2d_desc *d,
                                   const struct wino_conv_sizes *sz, int m, const double *at,
                                   const double *g, const double *bt, int relu, int sms,
                                   struct wino_rows_plan *p)
{
    memset(p, 0, sizeof *p);
    p->n = d->n, p->c = d->c, p->h = d->h, p->w = d->w, p->k = d->k, p->p = sz->p, p->q = sz->q;
    p->r = d->r, p->s = d->s, p->pad_h = d->pad_h, p->pad_w = d->pad_w;
    p->m = m;
    p->alpha = m + d->s - 1;
    p->tiles_w = (sz->q - 1) / m + 1;
    p->chunks = (d->c + CH - 1) / CH;
    p->relu = relu;
    p->bf16 = d->dtype == WINO_DTYPE_BF16;
    p->sms = sms > 0 ? sms : 1;
    for (int a = 0; a < p->alpha; a++) {
        for (int j = 0; j < m; j++)
            p->at[j][a] = (float)at[j * p->alpha + a];
        for (int j = 0; j < d->s; j++)
            p->g[a][j] = (float)g[a * d->s + j];
        for (int b = 0; b < p->alpha; b++)
            p->bt[a][b] = (float)bt[a * p->alpha + b];
    }
    if (p->alpha != ROWS_ALPHA) {
        wino_rows6_plan(p);
        return wino_rows6_blocks(p) > INT_MAX ? WINO_UNSUPPORTED : WINO_SUCCESS;
    }
    choose_boxes(p); /* 1 x 1 boxes always fit */
    const long long total = (long long)d->n * p->boxes_h * p->boxes_w;
    const long long blocks = (total + p->boxes - 1) / p->boxes * ((d->k + OUTS - 1) / OUTS);
    if (total * TILES > INT_MAX || blocks > INT_MAX)
        return WINO_UNSUPPORTED;
    p->total = (int)total;
    p->kblocks = (d->k + OUTS - 1) / OUTS;
    p->steps = p->chunks * d->r;
    long long head = 0;
    choose_launches(blocks, p->chunks, d->r, p->sms, &head, &p->splits);
    if (blocks * p->splits > INT_MAX)
        return WINO_UNSUPPORTED;
    p->clusters = (int)blocks, p->head = (int)head;
    p->per_band = wino_fast_divisor_of(p->boxes_w);
    p->per_image = wino_fast_divisor_of(p->boxes_h);
    return WINO_SUCCESS;
}

size_t wino_rows_u_bytes(const struct wino_rows_plan *p)
{
    if (p->alpha != ROWS_ALPHA)
        return wino_rows6_u_bytes(p);
    return (size_t)p->kblocks * p->chunks * p->r * U_STEP * 2;
}

cudaError_t wino_rows_filter_transform(const struct wino_rows_plan *p, const void *w, void *u,
                                       cudaStream_t stream)
{
    if (p->alpha != ROWS_ALPHA)
        return wino_rows6_filter_transform(p, w, u, stream);
    const long long count = (long long)wino_rows_u_bytes(p) / 2;
    const unsigned blocks = (unsigned)((count + 255) / 256);
    if (p->bf16)
        rows_filter_transform<__nv_bfloat16><<<blocks, 256, 0, stream>>>(
            *p, (const __nv_bfloat16 *)w, (__nv_bfloat16 *)u, count);
    else
        rows_filter_transform<__half><<<blocks, 256, 0, stream>>>(*p, (const __half *)w,
                                                                  (__half *)u, count);
    return cudaGetLastError();
}

template <typename T> static cudaError_t allow_smem()
{
    cudaError_t e = cudaFuncSetAttribute(rows_fused<T, false>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         smem_bytes<T>());
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(rows_fused<T, true>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes<T>());
    return e;
}

cudaError_t wino_rows_setup(const struct wino_rows_plan *p)
{
    if (p->alpha != ROWS_ALPHA)
        return wino_rows6_setup(p);
    return p->bf16 ? allow_smem<__nv_bfloat16>() : allow_smem<__half>();
}

/* The grids of p on stream: the first p->head clusters one block each, then the rest in
 * clusters of p->splits blocks. */
template <typename T>
static cudaError_t launch(const struct wino_rows_plan *p, const T *u, const float *bias, T *y,
                          const CUtensorMap &x_map, cudaStream_t stream)
{
    if (p->head > 0) {
        rows_fused<T, false><<<(unsigned)p->head, THREADS + REQUESTERS, smem_bytes<T>(),
                               stream>>>(*p, 0, u, bias, y, x_map);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess || p->head == p->clusters)
            return e;
    }
    const unsigned blocks = (unsigned)((p->clusters - p->head) * p->splits);
    cudaLaunchAttribute attrs[2];
    attrs[0].id = cudaLaunchAttributeClusterDimension;
    attrs[0].val.clusterDim.x = (unsigned)p->splits;
    attrs[0].val.clusterDim.y = 1;
    attrs[0].val.clusterDim.z = 1;
    /* After whole blocks, the split clusters start on the SMs that the whole blocks' last round
     * leaves free instead of after all of it: the two launches write different tiles of y. */
    attrs[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[1].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(THREADS + REQUESTERS);
    config.dynamicSmemBytes = smem_bytes<T>();
    config.stream = stream;
    config.attrs = attrs;
    config.numAttrs = p->head > 0 ? 2 : 1;
    const cudaError_t e =
        cudaLaunchKernelEx(&config, rows_fused<T, true>, *p, p->head, u, bias, y, x_map);
    return e != cudaSuccess ? e : cudaGetLastError();
}

cudaError_t wino_rows_run(const struct wino_rows_plan *p, const void *u, const void *x,
                          const float *bias, void *y, cudaStream_t stream)
{
    if ((uintptr_t)x % 16)
        return cudaErrorMisalignedAddress;
    if (p->alpha != ROWS_ALPHA)
        return wino_rows6_run(p, u, x, bias, y, stream);
    CUtensorMap x_map;
    const cudaError_t e = wino_nhwc_tensor_map(
        &x_map, p->bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
        x, p->n, p->h, p->w, p->c, CH, p->cols, p->box_h, CU_TENSOR_MAP_SWIZZLE_32B);
    if (e != cudaSuccess)
        return e;
    if (p->bf16)
        return launch(p, (const __nv_bfloat16 *)u, bias, (__nv_bfloat16 *)y, x_map, stream);
    return launch(p, (const __half *)u, bias, (__half *)y, x_map, stream);
}
