/* Fused Winograd kernels (Mazaheri et al. (EuroSys'20) section 3.2, "fused"): one block takes
 * BT tiles and BK output channels through all three stages without M leaving the chip, or
 * (fused output) through the GEMMs and the output transform from a V the non-fused input
 * transform wrote once, which saves that transform's repetition for every BK channels.
 *
 * For every chunk of input channels the block transforms its tiles' windows into shared memory
 * (V; fused output: copies them), copies the matching transformed filters (U, from create) with
 * cp.async meanwhile, and
 * accumulates the alpha^2 products M[pos] += V[pos] U[pos]^T in registers: on tensor cores
 * (mma.sync m16n8k16 FP16 -> FP32, m16n8k32 INT8 -> INT32) or on CUDA cores for FP32. After
 * the last chunk M goes through shared memory to the output transform (bias, ReLU or the INT8
 * requantization) and straight to y. Every thread holds 64 accumulators: BT x BK = 32 x 32 at
 * alpha 4, 32 x 16 at alpha 6, so the input transform is repeated once per BK output channels:
 * the price of not writing V and M to memory, which the planner weighs per layer. */
#include "cuda/tensor_core_ptx.cuh"
#include "cuda/winograd_tile_io.cuh"

/* The block of tiles x output channels, and its threads (64 accumulators each). */
template <int A> struct fused_block {
    enum { A2 = A * A, BT = 32, BK = A <= 4 ? 32 : 16, THREADS = A2 * BT * BK / 64 };
    enum { MP = BK + 8 }; /* row pitch of M in shared memory: conflict-free fragment stores */
};

/* Float tensors (T = float or __half) in and out; V from the generated transforms in FP32. */
template <typename T, int M, int R> struct float_io {
    enum { A = M + R - 1 };
    typedef float v_t;
    typedef float m_t;
    const T *x;
    T *y;
    const float *bias;
    int relu;

    __device__ __forceinline__ void input(const struct wino_cuda_shape &s, int n, int th, int tw,
                                          int c, float v[A][A]) const
    {
        float d[A][A];
        gather_window<T, float, A>(x, s, n, th * M - s.pad_h, tw * M - s.pad_w, c, d);
        tile_fn<M, R>::input(d, v);
    }
    __device__ __forceinline__ void output(const struct wino_cuda_shape &s, int n, int th, int tw,
                                           int k, const float mm[A][A]) const
    {
        float yy[M][M];
        tile_fn<M, R>::output(mm, yy);
        store_output_tile<T, M>(y, s, n, th, tw, k, yy, bias ? bias[k] : 0.0f, relu);
    }
};

/* INT8 in and out (NHWC), the integer steps of docs/int8-winograd.md; X: int8_t or uint8_t x. */
template <int M, typename X> struct s8_io {
    enum { A = M + 2 };
    typedef int8_t v_t;
    typedef int m_t;
    const void *x;
    void *y;
    const float *scale, *bias;
    struct wino_cuda_s8_consts k;

    __device__ __forceinline__ void input(const struct wino_cuda_shape &s, int n, int th, int tw,
                                          int c, int8_t v[A][A]) const
    {
        const int h0 = th * M - s.pad_h, w0 = tw * M - s.pad_w;
        int d[A][A];
        gather_window<X, int, A>((const X *)x, s, n, h0, w0, c, d);
        s8_input_tile<M>(d, k.f_a, v);
    }
    __device__ __forceinline__ void output(const struct wino_cuda_shape &s, int n, int th, int tw,
                                           int kk, const int mm[A][A]) const
    {
        int q[M][M];
        s8_output_tile<M>(mm, scale[kk], bias[kk], k.lo, k.hi, q);
        unsigned out[M][M];
#pragma unroll
        for (int i = 0; i < M; i++)
#pragma unroll
            for (int j = 0; j < M; j++)
                out[i][j] = (unsigned)(uint8_t)q[i][j];
        s8_store_tile<M, 1>(y, s, n, th, tw, kk, out);
    }
};

static __device__ __forceinline__ void put(float *p, float v)
{
    *p = v;
}
static __device__ __forceinline__ void put(__half *p, float v)
{
    *p = __float2half_rn(v);
}
static __device__ __forceinline__ void put(int8_t *p, int8_t v)
{
    *p = v;
}

/* The image, tile row and tile column of the block's tiles (n = -1 past the last tile), found
 * once per block: dividing for every (tile, channel) would cost more than the transforms. */
template <int BT> struct block_tiles {
    int n[BT], th[BT], tw[BT];

    __device__ __forceinline__ void find(const struct wino_cuda_shape &s, long long tile0)
    {
        for (int t = threadIdx.x; t < BT; t += blockDim.x) {
            n[t] = -1, th[t] = tw[t] = 0;
            if (tile0 + t < s.t0 + s.tn)
                wino_cuda_tile_of(&s, tile0 + t, &n[t], &th[t], &tw[t]);
        }
    }
};

/* Transforms the block's BT tiles x BC channels from c0 into V: element (pos, t, c) at
 * v + Layout::at(pos, t, c). Channels vary fastest across threads (coalesced NHWC loads). */
template <typename E, class Layout, int BC, class IO, int A, int BT, int THREADS>
static __device__ __forceinline__ void stage_input(const IO &io, const struct wino_cuda_shape &s,
                                                   const block_tiles<BT> &tiles, int c0, E *v)
{
    for (int i = threadIdx.x; i < BT * BC; i += THREADS) {
        const int t = i / BC, c = i % BC;
        typename IO::v_t vv[A][A];
        if (tiles.n[t] >= 0) {
            io.input(s, tiles.n[t], tiles.th[t], tiles.tw[t], c0 + c, vv);
        } else {
#pragma unroll
            for (int a = 0; a < A; a++)
#pragma unroll
                for (int b = 0; b < A; b++)
                    vv[a][b] = 0;
        }
#pragma unroll
        for (int a = 0; a < A; a++)
#pragma unroll
            for (int b = 0; b < A; b++)
                put(v + Layout::at(a * A + b, t, c), vv[a][b]);
    }
}

/* The output transform of the block's M (shared memory, [pos][tile][MP]) into y. */
template <class IO, int A, int BT, int BK, int MP, int THREADS>
static __device__ __forceinline__ void stage_output(const IO &io,
                                                    const struct wino_cuda_shape &s,
                                                    const block_tiles<BT> &tiles, int k0,
                                                    const typename IO::m_t *ms)
{
    for (int i = threadIdx.x; i < BT * BK; i += THREADS) {
        const int t = i / BK, k = i % BK;
        if (tiles.n[t] < 0 || k0 + k >= s.k)
            continue;
        typename IO::m_t mm[A][A];
#pragma unroll
        for (int a = 0; a < A; a++)
#pragma unroll
            for (int b = 0; b < A; b++)
                mm[a][b] = ms[((a * A + b) * BT + t) * MP + k];
        io.output(s, tiles.n[t], tiles.th[t], tiles.tw[t], k0 + k, mm);
    }
}

/* Rows of 32 bytes of channels in shared memory, padded to 48 so that the fragment loads of a
 * warp (8 rows x 4 words) hit 32 different banks. */
enum { ROW_WORDS = 12 };

/* Starts copying the 32 channel bytes from c0 of rows r0 .. r0 + R - 1 of each position of a
 * [pos][rows][cp] tensor into shared rows of ROW_WORDS words (two 16-byte cp.async each); zeros
 * for rows >= rows and channels >= cp. */
template <typename E, int R, int THREADS>
static __device__ __forceinline__ void copy_rows(unsigned *dst, const E *src, int positions,
                                                 int rows, int r0, int cp, int c0)
{
    for (int i = threadIdx.x; i < positions * R * 2; i += THREADS) {
        const int piece = i & 1, row = i >> 1, pos = row / R, r = r0 + row % R;
        const int c = c0 + piece * (16 / (int)sizeof(E));
        const int ok = r < rows && c < cp;
        cp_async16(dst + row * ROW_WORDS + piece * 4,
                   ok ? src + ((long long)pos * rows + r) * cp + c : src, ok ? 16 : 0);
    }
}

template <typename E, int BT> struct mma_v_layout {
    static __device__ __forceinline__ int at(int pos, int t, int c)
    {
        return (pos * BT + t) * ROW_WORDS * (4 / (int)sizeof(E)) + c;
    }
};

/* The tiles s.t0 .. s.t0 + s.tn - 1 from x to y (FROM_V 0), or from their transformed input v
 * (V[pos][tile - t0][cp], the non-fused input transform's) to y (FROM_V 1). Without the input
 * transform's registers two blocks fit on an SM, which hide each other's copies (H100, INT8
 * F(4x4,3x3) on deeplabv3-r18 conv2: 0.115 -> 0.100 ms). */
template <typename E, class IO, int M, int R, int FROM_V>
__global__ void __launch_bounds__(fused_block<M + R - 1>::THREADS, FROM_V ? 2 : 1)
    fused_mma(const E *u, const E *v, struct wino_cuda_shape s, IO io)
{
    enum { A = M + R - 1 };
    typedef fused_block<A> B;
    typedef mma_op<E> op;
    typedef typename op::acc_t acc_t;
    enum { BC = 32 / sizeof(E), MT = B::BT / 16, NT = B::BK / 8, PW = 16 / (MT * NT) };
    extern __shared__ __align__(16) unsigned smem[];
    unsigned *vs = smem;                                /* [A2][BT][ROW_WORDS] */
    unsigned *us = smem + B::A2 * B::BT * ROW_WORDS;    /* [A2][BK][ROW_WORDS] */
    __shared__ block_tiles<B::BT> tiles;
    const int tl0 = blockIdx.x * B::BT; /* the block's first tile in the chunk */
    tiles.find(s, s.t0 + tl0);           /* read after the first barrier */
    const int k0 = blockIdx.y * B::BK;
    const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, tig = threadIdx.x % 4;
    acc_t acc[PW][MT][NT][4] = {};
    for (int c0 = 0; c0 < s.cp; c0 += BC) {
        copy_rows<E, B::BK, B::THREADS>(us, u, B::A2, s.kp, k0, s.cp, c0);
        if (FROM_V) {
            copy_rows<E, B::BT, B::THREADS>(vs, v, B::A2, s.tn, tl0, s.cp, c0);
        } else {
            if (c0 == 0)
                __syncthreads(); /* tiles */
            stage_input<E, mma_v_layout<E, B::BT>, BC, IO, A, B::BT, B::THREADS>(io, s, tiles,
                                                                               c0, (E *)vs);
        }
        cp_async_wait_all();
        __syncthreads();
#pragma unroll
        for (int p = 0; p < PW; p++) {
            const int pos = warp * PW + p;
            unsigned a[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                const unsigned *r0 = vs + (pos * B::BT + mt * 16 + g) * ROW_WORDS;
                const unsigned *r1 = r0 + 8 * ROW_WORDS;
                a[mt][0] = r0[tig], a[mt][1] = r1[tig];
                a[mt][2] = r0[4 + tig], a[mt][3] = r1[4 + tig];
            }
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                const unsigned *rb = us + (pos * B::BK + nt * 8 + g) * ROW_WORDS;
                const unsigned b[2] = {rb[tig], rb[4 + tig]};
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
                    op::run(acc[p][mt][nt], a[mt], b);
            }
        }
        __syncthreads();
    }
    acc_t *ms = (acc_t *)smem; /* [A2][BT][MP], over V and U */
#pragma unroll
    for (int p = 0; p < PW; p++)
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                acc_t *at = ms + ((warp * PW + p) * B::BT + mt * 16 + g) * B::MP + nt * 8 + 2 * tig;
                at[0] = acc[p][mt][nt][0], at[1] = acc[p][mt][nt][1];
                at[8 * B::MP] = acc[p][mt][nt][2], at[8 * B::MP + 1] = acc[p][mt][nt][3];
            }
    __syncthreads();
    stage_output<IO, A, B::BT, B::BK, B::MP, B::THREADS>(io, s, tiles, k0, ms);
}

/* FP32 on CUDA cores: each thread owns one position and 8 tiles x 8 output channels; V and U
 * are stored channel-major ([pos][c][tile], [pos][c][k]) so that these are float4 loads. */
enum { F32_BC = 8 };
template <int BT> struct fma_v_layout {
    static __device__ __forceinline__ int at(int pos, int t, int c)
    {
        return (pos * F32_BC + c) * (BT + 4) + t;
    }
};

template <class IO, int M, int R>
__global__ void __launch_bounds__(fused_block<M + R - 1>::THREADS)
    fused_fma(const float *u, struct wino_cuda_shape s, IO io)
{
    enum { A = M + R - 1 };
    typedef fused_block<A> B;
    enum { VP = B::BT + 4, UP = B::BK + 4, GROUPS = B::BT / 8 * (B::BK / 8) };
    extern __shared__ __align__(16) float fsmem[];
    float *vs = fsmem;                          /* [A2][F32_BC][VP] */
    float *us = fsmem + B::A2 * F32_BC * VP;    /* [A2][F32_BC][UP] */
    __shared__ block_tiles<B::BT> tiles;
    tiles.find(s, s.t0 + (long long)blockIdx.x * B::BT); /* read after the first barrier */
    const int k0 = blockIdx.y * B::BK;
    const int pos = threadIdx.x / GROUPS, tg = threadIdx.x % GROUPS / (B::BK / 8),
              kg = threadIdx.x % (B::BK / 8);
    float acc[8][8] = {};
    for (int c0 = 0; c0 < s.cp; c0 += F32_BC) {
        /* U rows of 4 channels, transposed into [pos][c][k]; k fastest: conflict-free stores */
        for (int i = threadIdx.x; i < B::A2 * 2 * B::BK; i += B::THREADS) {
            const int k = i % B::BK, piece = i / B::BK % 2, p = i / B::BK / 2;
            const int c = c0 + 4 * piece;
            float4 w = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (k0 + k < s.kp && c < s.cp)
                w = *(const float4 *)(u + ((long long)p * s.kp + k0 + k) * s.cp + c);
            float *at = us + (p * F32_BC + 4 * piece) * UP + k;
            at[0] = w.x, at[UP] = w.y, at[2 * UP] = w.z, at[3 * UP] = w.w;
        }
        if (c0 == 0)
            __syncthreads(); /* tiles */
        stage_input<float, fma_v_layout<B::BT>, F32_BC, IO, A, B::BT, B::THREADS>(io, s, tiles,
                                                                                 c0, vs);
        __syncthreads();
#pragma unroll
        for (int c = 0; c < F32_BC; c++) {
            const float *vr = vs + (pos * F32_BC + c) * VP + tg * 8;
            const float *ur = us + (pos * F32_BC + c) * UP + kg * 8;
            const float4 v0 = *(const float4 *)vr, v1 = *(const float4 *)(vr + 4);
            const float4 u0 = *(const float4 *)ur, u1 = *(const float4 *)(ur + 4);
            const float vv[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
            const float uu[8] = {u0.x, u0.y, u0.z, u0.w, u1.x, u1.y, u1.z, u1.w};
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    acc[i][j] = fmaf(vv[i], uu[j], acc[i][j]);
        }
        __syncthreads();
    }
    float *ms = fsmem; /* [A2][BT][MP], over V and U */
#pragma unroll
    for (int i = 0; i < 8; i++) {
        float *at = ms + (pos * B::BT + tg * 8 + i) * B::MP + kg * 8;
        *(float4 *)at = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        *(float4 *)(at + 4) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
    __syncthreads();
    stage_output<IO, A, B::BT, B::BK, B::MP, B::THREADS>(io, s, tiles, k0, ms);
}

/* Shared memory of a launch: the larger of V + U and M. */
template <int A> static size_t fused_smem_bytes(size_t v_and_u)
{
    typedef fused_block<A> B;
    const size_t m = (size_t)B::A2 * B::BT * B::MP * 4;
    return v_and_u > m ? v_and_u : m;
}

/* The tiles with fused kernels: F(2x2, 3x3) and F(4x4, 3x3). */
#define WINO_FUSED_TILES(X) X(2, 3) X(4, 3)

int wino_cuda_has_fused(int m, int r)
{
#define WINO_HAS(tm, tr) if (m == tm && r == tr) return 1;
    WINO_FUSED_TILES(WINO_HAS)
#undef WINO_HAS
    return 0;
}

/* Each launcher either launches (setup 0) or, once at create, raises the shared-memory limit
 * of the kernels it launches (setup 1), so that run() only launches. */
template <typename E, class IO, int M, int R>
static cudaError_t launch_mma(int setup, const struct wino_cuda_shape *s, const E *u, const E *v,
                              const IO &io, cudaStream_t stream)
{
    typedef fused_block<M + R - 1> B;
    const size_t smem =
        fused_smem_bytes<M + R - 1>((size_t)B::A2 * (B::BT + B::BK) * ROW_WORDS * 4);
    const dim3 grid((unsigned)((s->tn + B::BT - 1) / B::BT),
                    (unsigned)((s->k + B::BK - 1) / B::BK));
    if (setup) {
        const cudaError_t e = cudaFuncSetAttribute(
            fused_mma<E, IO, M, R, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        return e != cudaSuccess ? e
                                : cudaFuncSetAttribute(fused_mma<E, IO, M, R, 0>,
                                                       cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                       (int)smem);
    }
    if (v)
        fused_mma<E, IO, M, R, 1><<<grid, B::THREADS, smem, stream>>>(u, v, *s, io);
    else
        fused_mma<E, IO, M, R, 0><<<grid, B::THREADS, smem, stream>>>(u, v, *s, io);
    return cudaGetLastError();
}

template <class IO, int M, int R>
static cudaError_t launch_fma(int setup, const struct wino_cuda_shape *s, const float *u,
                              const IO &io, cudaStream_t stream)
{
    typedef fused_block<M + R - 1> B;
    const size_t smem = fused_smem_bytes<M + R - 1>((size_t)B::A2 * F32_BC *
                                                    (B::BT + 4 + B::BK + 4) * 4);
    if (setup)
        return cudaFuncSetAttribute(fused_fma<IO, M, R>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    const dim3 grid((unsigned)((s->tn + B::BT - 1) / B::BT),
                    (unsigned)((s->k + B::BK - 1) / B::BK));
    fused_fma<IO, M, R><<<grid, B::THREADS, smem, stream>>>(u, *s, io);
    return cudaGetLastError();
}

static cudaError_t fused(int setup, const struct wino_cuda_shape *s, int half, const void *u,
                         const void *v, const void *x, const float *bias, int relu, void *y,
                         cudaStream_t stream)
{
#define WINO_LAUNCH(tm, tr)                                                                    \
    if (s->m == tm && s->r == tr) {                                                            \
        if (half) {                                                                            \
            const float_io<__half, tm, tr> io = {(const __half *)x, (__half *)y, bias, relu};  \
            return launch_mma<__half, float_io<__half, tm, tr>, tm, tr>(                       \
                setup, s, (const __half *)u, (const __half *)v, io, stream);                \
        }                                                                                      \
        if (v)                                                                                 \
            return cudaErrorInvalidValue; /* FP32 runs fully fused only */                     \
        const float_io<float, tm, tr> io = {(const float *)x, (float *)y, bias, relu};         \
        return launch_fma<float_io<float, tm, tr>, tm, tr>(setup, s, (const float *)u, io,    \
                                                           stream);                           \
    }
    WINO_FUSED_TILES(WINO_LAUNCH)
#undef WINO_LAUNCH
    return cudaErrorInvalidValue;
}

static cudaError_t s8_fused(int setup, const struct wino_cuda_shape *s,
                            const struct wino_cuda_s8_consts *k, const signed char *u,
                            const signed char *v, const void *x, const float *scale,
                            const float *bias, void *y, cudaStream_t stream)
{
#define WINO_LAUNCH(tm, tr)                                                                    \
    if (s->m == tm && s->r == tr) {                                                            \
        if (k->x_signed) {                                                                     \
            const s8_io<tm, int8_t> io = {x, y, scale, bias, *k};                              \
            return launch_mma<int8_t, s8_io<tm, int8_t>, tm, tr>(                              \
                setup, s, (const int8_t *)u, (const int8_t *)v, io, stream);                \
        }                                                                                      \
        const s8_io<tm, uint8_t> io = {x, y, scale, bias, *k};                                 \
        return launch_mma<int8_t, s8_io<tm, uint8_t>, tm, tr>(                                 \
            setup, s, (const int8_t *)u, (const int8_t *)v, io, stream);                    \
    }
    WINO_FUSED_TILES(WINO_LAUNCH)
#undef WINO_LAUNCH
    return cudaErrorInvalidValue;
}

cudaError_t wino_cuda_fused_setup(const struct wino_cuda_shape *s, int half)
{
    return fused(1, s, half, NULL, NULL, NULL, NULL, 0, NULL, NULL);
}

cudaError_t wino_cuda_fused(const struct wino_cuda_shape *s, int half, const void *u,
                            const void *v, const void *x, const float *bias, int relu, void *y,
                            cudaStream_t stream)
{
    return fused(0, s, half, u, v, x, bias, relu, y, stream);
}

cudaError_t wino_cuda_s8_fused_setup(const struct wino_cuda_shape *s,
                                     const struct wino_cuda_s8_consts *k)
{
    return s8_fused(1, s, k, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}

cudaError_t wino_cuda_s8_fused(const struct wino_cuda_shape *s,
                               const struct wino_cuda_s8_consts *k, const signed char *u,
                               const signed char *v, const void *x, const float *scale,
                               const float *bias, void *y, cudaStream_t stream)
{
    return s8_fused(0, s, k, u, v, x, scale, bias, y, stream);
}
