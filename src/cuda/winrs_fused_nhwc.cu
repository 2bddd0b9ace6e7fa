/* Fused WinRS on tensor cores for 16-bit NHWC tensors whose channels come in 16-byte pieces
 * (see winrs_fused_parts.cuh). A thread block owns 64 x 64 of K x C, one filter row and tile,
 * one segment of units, and goes through its units NHWC_UNITS at a time in three overlapping
 * stages:
 *   1. fetch: cp.async copies the step's units of dy (r taps x 64 channels) and windows of x
 *      (alpha columns x 64 channels) into shared memory, two steps ahead, zeros where a unit is
 *      past the segment, a channel past K or C, or a column in the padding;
 *   2. transform: U = G dy_unit and V = B^T x_window in FP32 (a thread per unit and 4 channels of
 *      dy or x), rounded to T into [alpha][unit][channel] rows;
 *   3. multiply: per alpha, each of the 16 warps adds the 16 x 16 product of its rows of U and
 *      columns of V (ldmatrix.trans, mma.sync m16n8k16) to its FP32 accumulators.
 * One barrier per step: the raw data has three buffers and the transformed two, so a warp may
 * transform step s + 1 while another still multiplies step s. At the end A^T turns the alpha
 * accumulators into the n taps in registers, as in winrs_fused.cu. */
#include "cuda/tensor_core_ptx.cuh"
#include "cuda/winrs_fused_parts.cuh"

#define NHWC_THREADS 512
#define NHWC_UNITS 16 /* units per step: the depth of one m16n8k16 product */
#define PIECE 8       /* 16-bit channels in 16 bytes */
#define ROW (BLOCK + 8) /* pitch of a transformed row: ldmatrix's 8 rows fall on distinct banks */

/* Two packed 16-bit values to FP32 and back (round to nearest). */
template <typename T> struct pair16;
template <> struct pair16<__half> {
    static __device__ __forceinline__ float2 unpack(unsigned u)
    {
        __half2 h;
        memcpy(&h, &u, 4);
        return __half22float2(h);
    }
    static __device__ __forceinline__ unsigned pack(float a, float b)
    {
        const __half2 h = __floats2half2_rn(a, b);
        unsigned u;
        memcpy(&u, &h, 4);
        return u;
    }
};
template <> struct pair16<__nv_bfloat16> {
    static __device__ __forceinline__ float2 unpack(unsigned u)
    {
        __nv_bfloat162 h;
        memcpy(&h, &u, 4);
        return __bfloat1622float2(h);
    }
    static __device__ __forceinline__ unsigned pack(float a, float b)
    {
        const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
        unsigned u;
        memcpy(&u, &h, 4);
        return u;
    }
};

/* The shared memory of a block: raw units and windows, and their transforms. */
template <typename T, int A> struct nhwc_smem {
    T dy[3][NHWC_UNITS][A][BLOCK];
    T x[3][NHWC_UNITS][A][BLOCK];
    T u[2][A][NHWC_UNITS][ROW];
    T v[2][A][NHWC_UNITS][ROW];
};

/* Stage 1 for the step of units u0 ..: warp w copies unit u0 + w, its lanes the 16-byte pieces
 * of its taps of dy and columns of x. */
template <typename T, int A>
static __device__ __forceinline__ void fetch_step(const dims &d, const fused_problem<A> &f,
                                                  const block_place &b, long u0, const T *x,
                                                  const T *dy, T (*rdy)[A][BLOCK],
                                                  T (*rx)[A][BLOCK])
{
    const int ul = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long unit = u0 + ul;
    const bool in = unit < b.end;
    int n = 0, p = 0, q = 0;
    if (in) {
        const long row = unit / f.units;
        n = (int)(row / d.p);
        p = (int)(row - (long)n * d.p);
        q = f.q0 + (int)(unit - row * f.units) * f.r;
    }
    const int h = p + b.row - d.pad_h, w0 = q + f.j0 + b.tile * f.n - d.pad_w;
    const bool h_in = in && h >= 0 && h < d.h;
    for (int e = lane; e < (f.r + f.alpha) * PIECE; e += 32) {
        const int tap = e / PIECE, ch = e % PIECE * PIECE;
        if (tap < f.r) {
            const bool ok = in && b.k0 + ch < d.k;
            cp_async16(&rdy[ul][tap][ch], ok ? dy + dy_at(d, n, b.k0 + ch, p, q + tap) : dy,
                       ok ? 16 : 0);
        } else {
            const int j = tap - f.r, w = w0 + j;
            const bool ok = h_in && b.c0 + ch < d.c && w >= 0 && w < d.w;
            cp_async16(&rx[ul][j][ch], ok ? x + x_at(d, n, b.c0 + ch, h, w) : x, ok ? 16 : 0);
        }
    }
}

/* out[a][unit][ch .. ch + 4) = sum over l < taps of m[a][l] raw[l][ch .. ch + 4), a < alpha. */
template <typename T, int A>
static __device__ __forceinline__ void transform4(const float (&m)[A][A], int taps, int alpha,
                                                  const T (*raw)[BLOCK], int ch,
                                                  T (*out)[NHWC_UNITS][ROW], int unit)
{
    float in[A][4];
#pragma unroll
    for (int l = 0; l < A; l++) {
        float2 lo = make_float2(0.0f, 0.0f), hi = lo;
        if (l < taps) {
            const uint2 w = *(const uint2 *)&raw[l][ch];
            lo = pair16<T>::unpack(w.x);
            hi = pair16<T>::unpack(w.y);
        }
        in[l][0] = lo.x, in[l][1] = lo.y, in[l][2] = hi.x, in[l][3] = hi.y;
    }
#pragma unroll
    for (int a = 0; a < A; a++) {
        if (a >= alpha)
            break;
        float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int l = 0; l < A; l++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                s[i] += m[a][l] * in[l][i];
        const uint2 w = {pair16<T>::pack(s[0], s[1]), pair16<T>::pack(s[2], s[3])};
        *(uint2 *)&out[a][unit][ch] = w;
    }
}

/* Stage 2: warps 0-7 transform the units of dy, warps 8-15 the windows of x. */
template <typename T, int A>
static __device__ __forceinline__ void transform_step(const fused_problem<A> &f,
                                                      const T (*rdy)[A][BLOCK],
                                                      const T (*rx)[A][BLOCK],
                                                      T (*tu)[NHWC_UNITS][ROW],
                                                      T (*tv)[NHWC_UNITS][ROW])
{
    const int i = threadIdx.x % (NHWC_THREADS / 2), unit = i / 16, ch = i % 16 * 4;
    if (threadIdx.x < NHWC_THREADS / 2)
        transform4<T, A>(f.g, f.r, f.alpha, rdy[unit], ch, tu, unit);
    else
        transform4<T, A>(f.bt, f.alpha, f.alpha, rx[unit], ch, tv, unit);
}

/* Stage 3: warp w adds U[a] (its 16 rows of K) x V[a] (its 16 columns of C) to acc[a]. */
template <typename T, int A>
static __device__ __forceinline__ void multiply_step(int alpha, const T (*tu)[NHWC_UNITS][ROW],
                                                     const T (*tv)[NHWC_UNITS][ROW],
                                                     float (&acc)[A][2][4])
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, m = lane / 8, r = lane % 8;
    const int wk = 16 * (warp / 4), wc = 16 * (warp % 4);
#pragma unroll
    for (int a = 0; a < A; a++) {
        if (a >= alpha)
            break;
        unsigned fu[4], fv[4];
        /* A's fragments: (k 0-7, units 0-7), (k 8-15, 0-7), (k 0-7, 8-15), (k 8-15, 8-15);
         * B's: (units 0-7, c 0-7), (8-15, c 0-7), (0-7, c 8-15), (8-15, c 8-15). */
        ldmatrix_x4_trans(fu, &tu[a][r + 8 * (m / 2)][wk + 8 * (m % 2)]);
        ldmatrix_x4_trans(fv, &tv[a][r + 8 * (m % 2)][wc + 8 * (m / 2)]);
        mma_op<T>::run(acc[a][0], fu, fv);
        mma_op<T>::run(acc[a][1], fu, fv + 2);
    }
}

template <typename T, int A>
__global__ void __launch_bounds__(NHWC_THREADS, 1)
    fused_nhwc(dims d, fused_problem<A> f, const T *__restrict__ x, const T *__restrict__ dy,
               T *dw, float *buckets, int overwrite)
{
    extern __shared__ __align__(16) unsigned char smem_bytes[];
    nhwc_smem<T, A> &sm = *(nhwc_smem<T, A> *)smem_bytes;
    const block_place b = place_of(d, f);
    const long steps = b.end > b.begin ? (b.end - b.begin + NHWC_UNITS - 1) / NHWC_UNITS : 0;
    float acc[A][2][4];
#pragma unroll
    for (int a = 0; a < A; a++)
#pragma unroll
        for (int t = 0; t < 2; t++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[a][t][e] = 0.0f;
    for (int s = 0; s < 2; s++) {
        if (s < steps)
            fetch_step(d, f, b, b.begin + s * NHWC_UNITS, x, dy, sm.dy[s], sm.x[s]);
        cp_async_commit();
    }
    cp_async_wait<1>();
    __syncthreads();
    if (steps > 0)
        transform_step(f, sm.dy[0], sm.x[0], sm.u[0], sm.v[0]);
    for (long s = 0; s < steps; s++) {
        const int now = (int)(s & 1), raw_next = (int)((s + 1) % 3);
        if (s + 2 < steps)
            fetch_step(d, f, b, b.begin + (s + 2) * NHWC_UNITS, x, dy, sm.dy[(s + 2) % 3],
                       sm.x[(s + 2) % 3]);
        cp_async_commit();
        cp_async_wait<1>(); /* this thread's copies of step s + 1 are in */
        __syncthreads();    /* everyone's, and the transforms of step s */
        multiply_step<T, A>(f.alpha, sm.u[now], sm.v[now], acc);
        if (s + 1 < steps)
            transform_step(f, sm.dy[raw_next], sm.x[raw_next], sm.u[now ^ 1], sm.v[now ^ 1]);
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int k0 = b.k0 + 16 * (warp / 4) + lane / 4, c0 = b.c0 + 16 * (warp % 4) + 2 * (lane % 4);
#pragma unroll
    for (int jj = 0; jj < A; jj++) {
        if (jj >= f.n)
            break;
#pragma unroll
        for (int t = 0; t < 2; t++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int k = k0 + 8 * (e / 2), c = c0 + 8 * t + e % 2;
                float s = 0.0f;
#pragma unroll
                for (int a = 0; a < A; a++)
                    s += f.at[jj][a] * acc[a][t][e];
                if (k < d.k && c < d.c)
                    put(d, dw, buckets, overwrite, k, c, b.row, f.j0 + b.tile * f.n + jj, s);
            }
    }
}

bool winrs_fused_nhwc_fits(const dims &d, const void *x, const void *dy)
{
    return d.nhwc && d.k % PIECE == 0 && d.c % PIECE == 0 && (uintptr_t)x % 16 == 0 &&
           (uintptr_t)dy % 16 == 0;
}

template <typename T, int A>
cudaError_t winrs_fused_nhwc_launch(const dims &d, const fused_problem<A> &f, dim3 grid,
                                    const T *x, const T *dy, T *dw, float *buckets,
                                    int overwrite, cudaStream_t stream)
{
    const int smem = (int)sizeof(nhwc_smem<T, A>);
    const cudaError_t e = cudaFuncSetAttribute(
        fused_nhwc<T, A>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess)
        return e;
    fused_nhwc<T, A><<<grid, NHWC_THREADS, smem, stream>>>(d, f, x, dy, dw, buckets, overwrite);
    return cudaGetLastError();
}

#define WINO_NHWC_LAUNCH(T, A)                                                                 \
    template cudaError_t winrs_fused_nhwc_launch<T, A>(const dims &, const fused_problem<A> &, \
                                                       dim3, const T *, const T *, T *, float *, \
                                                       int, cudaStream_t);
WINO_NHWC_LAUNCH(__half, 4)
WINO_NHWC_LAUNCH(__half, WINRS_FUSED_MAX_ALPHA)
WINO_NHWC_LAUNCH(__nv_bfloat16, 4)
WINO_NHWC_LAUNCH(__nv_bfloat16, WINRS_FUSED_MAX_ALPHA)
#undef WINO_NHWC_LAUNCH
