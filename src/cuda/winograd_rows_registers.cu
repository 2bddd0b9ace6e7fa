/* The ROWS variant's kernel of alpha 6 (winograd_rows.h): F(4, 3) along each output row in
 * FP16, V transformed in registers straight into the A operand of wgmma (its register form), so
 * that V never passes through shared memory and no warps are set apart to make it.
 *
 * A tile is 4 outputs of one output row; for alpha position a, filter row i and input channel c
 *     V[a][tile][(i, c)] = (B^T x[n][h + i - pad_h][4 tw - pad_w ..][c])[a],
 *     y[tile][j][k] = sum_a A^T[j][a] sum_(i, c) V[a][tile][(i, c)] U[a][(i, c)][k],
 * U = G w along the filter's width (transformed once at create). A block is one warpgroup: a box
 * of box_h output rows x box_w tiles (64 tiles) and `outs` output channels, 6 accumulators of
 * wgmma m64n32 or m64n64 a thread: 32 channels (96 registers, three blocks an SM) or 64 (192
 * registers, two blocks an SM, each transform shared by twice the products; where the blocks
 * still fill the SMs). Per chunk of 16 input channels the tensor memory accelerator brings the
 * box's box_h + r - 1 input rows (16 channels, rows of `cols` pixels: cols = 1 mod 4, so that the
 * four rows of a fragment fall on distinct banks) and the chunk's U (r x 6 x outs x 16, laid out
 * as wgmma reads it) into a stage; per filter row each thread loads its two tiles' 6 taps x 4
 * channels, applies B^T in FP16 pairs (the generator's recipe, unrolled at compile time: 16
 * operations for 6 positions), and the warpgroup multiplies the 6 positions with U. At the end
 * each thread holds all 6 positions of its (tile, output channel) pairs and applies A^T in
 * registers: no shared memory, no barrier; a quad then trades its words so that each lane
 * writes 8 adjacent channels of a pixel (16 bytes: whole sectors a warp) where K % 8 == 0.
 *
 * Fragment layout: warp w of the block takes rows 4 (w / (box_w / 4)) .. + 3 and tiles 4 (w %
 * (box_w / 4)) .. + 3 of the box; its fragment row g (lane / 4) is the tile at row g % 4, column
 * g / 4, row g + 8 the tile two columns on. A thread holds input channels 4 t .. 4 t + 3 (t =
 * lane % 4) of its tiles, wgmma's k = 2 t, 2 t + 1, 2 t + 8, 2 t + 9: U's channels are permuted
 * to match (filter_transform6). */
#include <cuda.h>

#include "cuda/device_common.h"
#include "cuda/generated/wino_rows_tiles.cuh"
#include "cuda/tensor_core_ptx.cuh"
#include "cuda/tensor_map.h"
#include "cuda/winograd_rows.h"

#define A6 6
#define TILES6 64
#define CH6 16                    /* input channels a chunk: wgmma's K */
#define THREADS6 128
#define SMEM6_PER_SM (227 * 1024) /* what an SM's blocks may take */

/* A block's output channels (wgmma's N) are `outs`, 32 or 64; U of one alpha position, filter
 * row and chunk is a plane of outs x 16; blocks_per_sm6 blocks an SM (their accumulators'
 * registers allow no more). */
static __host__ __device__ constexpr int u_plane6(int outs) { return outs * CH6; }
static __host__ __device__ constexpr int blocks_per_sm6(int outs) { return outs == 32 ? 3 : 2; }

/* The box of box_w tiles x 64 / box_w rows, and the raw rows' pitch in pixels (= 1 mod 4). */
static __host__ __device__ constexpr int box_rows6(int box_w) { return TILES6 / box_w; }
static __host__ __device__ constexpr int pitch6(int box_w)
{
    return 4 * box_w + 2 + ((1 - (4 * box_w + 2)) % 4 + 4) % 4;
}

#if WINO_WGMMA
/* Step k and output i of the generated recipes of F(4, 3): B^T (BT) and A^T (AT), constants for
 * the compiler. */
enum rows6_recipe { BT, AT };
static __device__ constexpr wino_rows_step recipe_step(rows6_recipe r, int k)
{
    constexpr wino_rows_step bt[] = WINO_ROWS_BT_F4_3_STEPS, at[] = WINO_ROWS_AT_F4_3_STEPS;
    return r == BT ? bt[k] : at[k];
}
static __device__ constexpr int recipe_output(rows6_recipe r, int i)
{
    constexpr int bt[] = WINO_ROWS_BT_F4_3_OUTPUTS, at[] = WINO_ROWS_AT_F4_3_OUTPUTS;
    return r == BT ? bt[i] : at[i];
}

/* The operations of a recipe on FP16 pairs and on floats. */
struct half2_ops {
    typedef __half2 T;
    static __device__ __forceinline__ T add(T a, T b) { return __hadd2(a, b); }
    static __device__ __forceinline__ T sub(T a, T b) { return __hsub2(a, b); }
    static __device__ __forceinline__ T neg(T a) { return __hneg2(a); }
    static __device__ __forceinline__ T fma(float c, T a, T b)
    {
        return __hfma2(__float2half2_rn(c), a, b);
    }
    static __device__ __forceinline__ T mul(float c, T a)
    {
        return __hmul2(__float2half2_rn(c), a);
    }
};
struct float_ops {
    typedef float T;
    static __device__ __forceinline__ T add(T a, T b) { return a + b; }
    static __device__ __forceinline__ T sub(T a, T b) { return a - b; }
    static __device__ __forceinline__ T neg(T a) { return -a; }
    static __device__ __forceinline__ T fma(float c, T a, T b) { return fmaf(c, a, b); }
    static __device__ __forceinline__ T mul(float c, T a) { return c * a; }
};

/* y = the recipe R of STEPS steps on x (N inputs, M outputs), unrolled: every index and
 * constant is known at compile time, so the values stay in registers. */
template <rows6_recipe R, int STEPS, class O, int N, int M>
static __device__ __forceinline__ void run_recipe(const typename O::T (&x)[N],
                                                  typename O::T (&y)[M])
{
    typename O::T v[N + STEPS];
#pragma unroll
    for (int j = 0; j < N; j++)
        v[j] = x[j];
#pragma unroll
    for (int k = 0; k < STEPS; k++) {
        const wino_rows_step st = recipe_step(R, k);
        const typename O::T a = v[st.a], b = v[st.b];
        v[N + k] = st.op == WINO_ROWS_ADD   ? O::add(a, b)
                   : st.op == WINO_ROWS_SUB ? O::sub(a, b)
                   : st.op == WINO_ROWS_MUL ? O::mul(st.c, a)
                   : st.op == WINO_ROWS_FMA ? O::fma(st.c, a, b)
                   : st.op == WINO_ROWS_FMS ? O::fma(st.c, a, O::neg(b))
                                            : O::neg(a);
    }
#pragma unroll
    for (int i = 0; i < M; i++)
        y[i] = v[recipe_output(R, i)];
}

/* D (64 x N, FP32) += A (64 x 16, FP16 in registers: mma.sync's m16n8k16 A fragment of each
 * warp's 16 rows) B (16 x N at descriptor b, K-major), N 32 or 64. */
static __device__ __forceinline__ void wgmma_rs(float (&d)[16], const unsigned (&a)[4],
                                               uint64_t b)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
                 "{%16, %17, %18, %19}, %20, p, 1, 1, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}
static __device__ __forceinline__ void wgmma_rs(float (&d)[32], const unsigned (&a)[4],
                                               uint64_t b)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, "
                 "%31}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
                   "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
                   "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}

static __device__ __forceinline__ __half2 as_half2(unsigned v)
{
    return *reinterpret_cast<__half2 *>(&v);
}
static __device__ __forceinline__ unsigned as_bits(__half2 v)
{
    return *reinterpret_cast<unsigned *>(&v);
}

/* A quad's 4 x 4 words transposed: lane t's w[nb] (output channels 8 nb + 2 t, + 1) becomes
 * w[u] = lane u's word of channels 8 t + 2 u, + 1, so that each lane holds 8 adjacent
 * channels (16 bytes) and a warp's store covers whole sectors. */
static __device__ __forceinline__ void quad_transpose(unsigned (&w)[4], int t)
{
#pragma unroll
    for (int b = 0; b < 2; b++) {
        const unsigned got = __shfl_xor_sync(0xffffffffu, (t & 2) ? w[b] : w[b + 2], 2);
        if (t & 2)
            w[b] = got;
        else
            w[b + 2] = got;
    }
#pragma unroll
    for (int b = 0; b < 4; b += 2) {
        const unsigned got = __shfl_xor_sync(0xffffffffu, (t & 1) ? w[b] : w[b + 1], 1);
        if (t & 1)
            w[b] = got;
        else
            w[b + 1] = got;
    }
}
#endif

template <int BOX_W, int OUTS>
__global__ void __launch_bounds__(THREADS6, blocks_per_sm6(OUTS))
    rows_registers(const __grid_constant__ wino_rows_plan p,
                   const __grid_constant__ CUtensorMap x_map, const __half *__restrict__ u,
                   const float *__restrict__ bias, __half *__restrict__ y, bool wide_y)
{
#if WINO_WGMMA
    constexpr int BOX_H = box_rows6(BOX_W), PITCH = pitch6(BOX_W), ACROSS = BOX_W / 4;
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ uint64_t full[3];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int kb = blockIdx.x % p.kblocks;
    int box = blockIdx.x / p.kblocks;
    const int bx = box % p.boxes_w;
    box /= p.boxes_w;
    const int by = box % p.boxes_h, n = box / p.boxes_h;
    const int h0 = by * BOX_H, tw0 = bx * BOX_W;
    const unsigned smem0 = smem_address(smem), full0 = smem_address(full);
    if (threadIdx.x < 3)
        mbarrier_init(&full[threadIdx.x], 1);
    __syncthreads();
    const unsigned raw_bytes = CH6 * PITCH * (BOX_H + p.r - 1) * 2;
    constexpr int PLANE = u_plane6(OUTS);
    const unsigned u_bytes = p.r * A6 * PLANE * 2;
    const __half *u_block = u + (size_t)kb * p.chunks * p.r * A6 * PLANE;
    /* thread 0 asks for chunk's rows and U into stage */
    auto request = [&](int chunk, int stage) {
        if (threadIdx.x == 0 && chunk < p.chunks) {
            const unsigned st = smem0 + stage * p.stage_bytes, bar = full0 + 8 * stage;
            mbarrier_arrive_expect(bar, raw_bytes + u_bytes);
            tma_load_4d(st, &x_map, chunk * CH6, tw0 * 4 - p.pad_w, h0 - p.pad_h, n, bar);
            bulk_load(st + p.raw_bytes, u_block + (size_t)chunk * p.r * A6 * PLANE, u_bytes, bar);
        }
    };
    for (int s = 0; s < p.stages - 1; s++)
        request(s, s);

    /* this thread's first tile (fragment row g): its first pixel's address in stage 0; the
     * second (row g + 8) is 8 pixels on. Kept, with U's descriptor, in registers: the compiler
     * would otherwise work both out again at every step (about 20 instructions of a step's
     * 122) */
    const int trow = 4 * (warp / ACROSS) + g % 4, tcol = 4 * (warp % ACROSS) + g / 4;
    const unsigned tile_at = kept(smem0 + (trow * PITCH + tcol * 4) * CH6 * 2 + 8 * t);
    /* U's descriptor in stage 0; in other places its address field (bits 0-13: the byte
     * address / 16, below 2^14 in an SM's shared memory) grows by the offset / 16 */
    const uint64_t u_descriptor = kept(k_major_descriptor(smem0 + p.raw_bytes));
    float acc[A6][OUTS / 2];
#pragma unroll
    for (int a = 0; a < A6; a++)
#pragma unroll
        for (int e = 0; e < OUTS / 2; e++)
            acc[a][e] = 0.0f;
    unsigned frag[A6][4];
    int chunk = 0, i = 0, stage = 0;
    unsigned parity = 0;
    for (int s = 0; s < p.chunks * p.r; s++) {
        if (i == 0) {
            /* Every warp is done with the stage the next request fills. (Per-stage empty
             * barriers instead, measured on an H200: 0.96x. Thread 0's wait for them inside
             * the loop made the compiler keep the step's counters and descriptors in vector
             * registers and move them over at every step, 20 instructions more.) */
            __syncthreads();
            request(chunk + p.stages - 1, stage ? stage - 1 : p.stages - 1);
            mbarrier_wait(full0 + 8 * stage, parity);
        }
        const unsigned row_at = tile_at + stage * p.stage_bytes + i * (PITCH * CH6 * 2);
#pragma unroll
        for (int j = 0; j < 2; j++) {
            __half2 lo[A6], hi[A6], v_lo[A6], v_hi[A6];
            const unsigned at = row_at + j * (8 * CH6 * 2);
#pragma unroll
            for (int e = 0; e < A6; e++) {
                unsigned a0, a1;
                asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n"
                             : "=r"(a0), "=r"(a1)
                             : "r"(at + e * CH6 * 2));
                lo[e] = as_half2(a0), hi[e] = as_half2(a1);
            }
            run_recipe<BT, WINO_ROWS_BT_F4_3_STEP_COUNT, half2_ops>(lo, v_lo);
            run_recipe<BT, WINO_ROWS_BT_F4_3_STEP_COUNT, half2_ops>(hi, v_hi);
#pragma unroll
            for (int a = 0; a < A6; a++)
                frag[a][j] = as_bits(v_lo[a]), frag[a][2 + j] = as_bits(v_hi[a]);
        }
        wgmma_fence();
        const uint64_t ub = u_descriptor + ((stage * p.stage_bytes + i * A6 * PLANE * 2) >> 4);
#pragma unroll
        for (int a = 0; a < A6; a++)
            wgmma_rs(acc[a], frag[a], ub + a * (PLANE * 2 >> 4));
        wgmma_commit();
        /* frag is written again at the next step: with products still reading it, ptxas
         * would serialize them (its warning C7513) */
        wgmma_wait<0>();
        if (++i == p.r) {
            i = 0, chunk++;
            if (++stage == p.stages)
                stage = 0, parity ^= 1u;
        }
    }

    /* A^T in registers: acc[a][4 nb + 2 j + b] is position a of tile j, output channel
     * k0 + 8 nb + b (k0 = kb OUTS + 2 t); w[e][nb] that pair at the tile's output e, as FP16 */
    const int k0 = kb * OUTS + 2 * t;
    float b0[OUTS / 8], b1[OUTS / 8];
#pragma unroll
    for (int nb = 0; nb < OUTS / 8; nb++) {
        const int k = k0 + 8 * nb;
        b0[nb] = bias && k < p.k ? bias[k] : 0.0f;
        b1[nb] = bias && k + 1 < p.k ? bias[k + 1] : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < 2; j++) {
        const int oh = h0 + trow, tw = tw0 + tcol + 2 * j;
        const bool tile_in = n < p.n && oh < p.p && tw < p.tiles_w;
        __half *row = y + (((size_t)n * p.p + oh) * p.q + (size_t)tw * 4) * p.k;
        unsigned w[4][OUTS / 8];
#pragma unroll
        for (int nb = 0; nb < OUTS / 8; nb++) {
            float m0[A6], m1[A6], y0[4], y1[4];
#pragma unroll
            for (int a = 0; a < A6; a++)
                m0[a] = acc[a][4 * nb + 2 * j], m1[a] = acc[a][4 * nb + 2 * j + 1];
            run_recipe<AT, WINO_ROWS_AT_F4_3_STEP_COUNT, float_ops>(m0, y0);
            run_recipe<AT, WINO_ROWS_AT_F4_3_STEP_COUNT, float_ops>(m1, y1);
#pragma unroll
            for (int e = 0; e < 4; e++) {
                float s0 = y0[e] + b0[nb], s1 = y1[e] + b1[nb];
                if (p.relu)
                    s0 = fmaxf(s0, 0.0f), s1 = fmaxf(s1, 0.0f);
                w[e][nb] = as_bits(__floats2half2_rn(s0, s1));
            }
        }
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const bool out = tile_in && tw * 4 + e < p.q;
            __half *pixel = row + (size_t)e * p.k;
            if (wide_y) { /* K % 8 == 0, y on 16 bytes: lane t writes channels kb OUTS + 32 h
                           * + 8 t .. of each 32 (h) */
#pragma unroll
                for (int h = 0; h < OUTS / 32; h++) {
                    unsigned (&q)[4] = *reinterpret_cast<unsigned (*)[4]>(&w[e][4 * h]);
                    quad_transpose(q, t);
                    const int k = kb * OUTS + 32 * h + 8 * t;
                    if (out && k < p.k)
                        *(uint4 *)(pixel + k) = make_uint4(q[0], q[1], q[2], q[3]);
                }
                continue;
            }
#pragma unroll
            for (int nb = 0; nb < OUTS / 8; nb++) {
                const int k = k0 + 8 * nb;
                if (!out || k >= p.k)
                    continue;
                const __half2 pair = as_half2(w[e][nb]);
                if (k + 1 < p.k && !(p.k & 1)) {
                    *(__half2 *)(pixel + k) = pair;
                } else {
                    pixel[k] = __low2half(pair);
                    if (k + 1 < p.k)
                        pixel[k + 1] = __high2half(pair);
                }
            }
        }
    }
#else
    __trap(); /* sm_90a only: wino_rows_tile_refusal refuses other GPUs */
#endif
}

/* U[kb][chunk][i][a][k_major(row, l)] = (G w[kb outs + row][i][.][chunk 16 + phi(l)])[a],
 * zeros past K and C; phi maps wgmma's k = l to the thread's channels (4 t .. 4 t + 3 hold
 * k = 2 t, 2 t + 1, 2 t + 8, 2 t + 9). */
__global__ void rows_filter_transform6(const __grid_constant__ wino_rows_plan p, const __half *w,
                                       __half *u, long long count)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= count)
        return;
    const int plane = u_plane6(p.outs);
    const int pos = (int)(idx % plane);
    long long rest = idx / plane;
    const int a = (int)(rest % A6);
    rest /= A6;
    const int i = (int)(rest % p.r);
    rest /= p.r;
    const int chunk = (int)(rest % p.chunks), kb = (int)(rest / p.chunks);
    const int row = (pos >> 7) * 8 + (pos >> 3 & 7), l = (pos >> 6 & 1) * 8 + (pos & 7);
    const int k = kb * p.outs + row;
    const int c = chunk * CH6 + 4 * ((l & 7) >> 1) + 2 * (l >> 3) + (l & 1);
    float sum = 0.0f;
    if (k < p.k && c < p.c)
        for (int j = 0; j < p.s; j++)
            sum = fmaf(p.g[a][j], __half2float(w[(((size_t)k * p.r + i) * p.s + j) * p.c + c]),
                       sum);
    u[idx] = __float2half_rn(sum);
}

/* A stage: the raw rows (on 128 bytes) and U of a chunk. */
static int stage_bytes6(int box_w, int r, int outs, int *raw_bytes)
{
    *raw_bytes = (CH6 * pitch6(box_w) * (box_rows6(box_w) + r - 1) * 2 + 127) / 128 * 128;
    return *raw_bytes + r * A6 * u_plane6(outs) * 2;
}

/* Stages of stage_bytes each: three where the SM's blocks fit them, else two. */
static int stages6(int stage_bytes, int outs)
{
    return 3 * blocks_per_sm6(outs) * stage_bytes <= SMEM6_PER_SM ? 3 : 2;
}

/* The boxes of tiles of all images: the blocks of each block of output channels. */
static long long boxes6(const struct wino_rows_plan *p)
{
    return (long long)p->n * p->boxes_h * p->boxes_w;
}

void wino_rows6_plan(struct wino_rows_plan *p)
{
    /* the box that wastes the fewest tiles past the map's edges; wider ones break ties */
    long best = -1;
    for (int w = 16; w >= 4; w /= 2) {
        const int h = box_rows6(w);
        const long slots = (long)((p->tiles_w + w - 1) / w * w) * ((p->p + h - 1) / h * h);
        if (best < 0 || slots < best)
            best = slots, p->box_w = w;
    }
    p->box_h = box_rows6(p->box_w);
    p->cols = pitch6(p->box_w);
    p->boxes_w = (p->tiles_w + p->box_w - 1) / p->box_w;
    p->boxes_h = (p->p + p->box_h - 1) / p->box_h;
    /* 64 output channels a block where their blocks still fill three quarters of the SMs
     * (twice the products a transform; H200: 1.07-1.47x faster than 32 on 128 blocks and more,
     * 0.84-0.87x on 16-64), else 32 */
    const long long blocks64 = boxes6(p) * ((p->k + 63) / 64);
    wino_rows6_set_outs(p, p->k > 32 && 4 * blocks64 >= 3LL * p->sms ? 64 : 32);
}

void wino_rows6_set_outs(struct wino_rows_plan *p, int outs)
{
    p->outs = outs;
    p->kblocks = (p->k + outs - 1) / outs;
    p->stage_bytes = stage_bytes6(p->box_w, p->r, outs, &p->raw_bytes);
    p->stages = stages6(p->stage_bytes, outs);
}

long long wino_rows6_blocks(const struct wino_rows_plan *p)
{
    return boxes6(p) * p->kblocks;
}

size_t wino_rows6_u_bytes(const struct wino_rows_plan *p)
{
    return (size_t)p->kblocks * p->chunks * p->r * A6 * u_plane6(p->outs) * 2;
}

cudaError_t wino_rows6_filter_transform(const struct wino_rows_plan *p, const void *w, void *u,
                                        cudaStream_t stream)
{
    const long long count = (long long)wino_rows6_u_bytes(p) / 2;
    rows_filter_transform6<<<(unsigned)((count + 255) / 256), 256, 0, stream>>>(
        *p, (const __half *)w, (__half *)u, count);
    return cudaGetLastError();
}

/* The kernels of OUTS output channels a block (every box width) may take `bytes` of shared
 * memory. */
template <int OUTS> static cudaError_t set_shared6(int bytes)
{
    const cudaFuncAttribute max = cudaFuncAttributeMaxDynamicSharedMemorySize;
    cudaError_t e = cudaFuncSetAttribute(rows_registers<16, OUTS>, max, bytes);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(rows_registers<8, OUTS>, max, bytes);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(rows_registers<4, OUTS>, max, bytes);
    return e;
}

cudaError_t wino_rows6_setup(const struct wino_rows_plan *p)
{
    /* the most any box and stage count takes for r, since reshape() may change both */
    int bytes = 0, raw = 0;
    for (int w = 4; w <= 16; w *= 2) {
        const int stage = stage_bytes6(w, p->r, p->outs, &raw);
        const int most = stages6(stage, p->outs) * stage;
        bytes = most > bytes ? most : bytes;
    }
    return p->outs == 64 ? set_shared6<64>(bytes) : set_shared6<32>(bytes);
}

/* The kernel of the plan's box width and OUTS output channels a block, on stream. */
template <int OUTS>
static void launch6(const struct wino_rows_plan *p, const CUtensorMap &x_map, const __half *u,
                    const float *bias, __half *y, bool wide, cudaStream_t stream)
{
    const unsigned blocks = (unsigned)wino_rows6_blocks(p);
    const size_t bytes = (size_t)p->stages * p->stage_bytes;
    if (p->box_w == 16)
        rows_registers<16, OUTS><<<blocks, THREADS6, bytes, stream>>>(*p, x_map, u, bias, y, wide);
    else if (p->box_w == 8)
        rows_registers<8, OUTS><<<blocks, THREADS6, bytes, stream>>>(*p, x_map, u, bias, y, wide);
    else
        rows_registers<4, OUTS><<<blocks, THREADS6, bytes, stream>>>(*p, x_map, u, bias, y, wide);
}

cudaError_t wino_rows6_run(const struct wino_rows_plan *p, const void *u, const void *x,
                           const float *bias, void *y, cudaStream_t stream)
{
    CUtensorMap x_map;
    const cudaError_t e =
        wino_nhwc_tensor_map(&x_map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, x, p->n, p->h, p->w,
                             p->c, CH6, p->cols, p->box_h + p->r - 1, CU_TENSOR_MAP_SWIZZLE_NONE);
    if (e != cudaSuccess)
        return e;
    const bool wide = p->k % 8 == 0 && (uintptr_t)y % 16 == 0;
    if (p->outs == 64)
        launch6<64>(p, x_map, (const __half *)u, bias, (__half *)y, wide, stream);
    else
        launch6<32>(p, x_map, (const __half *)u, bias, (__half *)y, wide, stream);
    return cudaGetLastError();
}
