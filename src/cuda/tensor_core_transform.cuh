/* What the 16-bit tensor-core kernels share around their products (winrs_fused_nhwc.cu,
 * winograd_rows.cu): packed 16-bit pairs, a transform matrix as an m16n8k8 operand, and
 * accumulator fragments into shared memory. */
#ifndef WINO_CUDA_TENSOR_CORE_TRANSFORM_CUH
#define WINO_CUDA_TENSOR_CORE_TRANSFORM_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <string.h>

/* Two packed 16-bit values to FP32 and back (round to nearest). */
template <typename T> static __device__ __forceinline__ float2 unpack16(unsigned u);
template <> __device__ __forceinline__ float2 unpack16<__half>(unsigned u)
{
    __half2 h;
    memcpy(&h, &u, 4);
    return __half22float2(h);
}
template <> __device__ __forceinline__ float2 unpack16<__nv_bfloat16>(unsigned u)
{
    __nv_bfloat162 h;
    memcpy(&h, &u, 4);
    return __bfloat1622float2(h);
}
template <typename T> static __device__ __forceinline__ unsigned pack16(float a, float b);
template <> __device__ __forceinline__ unsigned pack16<__half>(float a, float b)
{
    const __half2 h = __floats2half2_rn(a, b);
    unsigned u;
    memcpy(&u, &h, 4);
    return u;
}
template <> __device__ __forceinline__ unsigned pack16<__nv_bfloat16>(float a, float b)
{
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    unsigned u;
    memcpy(&u, &h, 4);
    return u;
}

/* A transform's matrix m as lane's B operand of m16n8k8: diag(m^T, ..., m^T) (8 / A copies of
 * A x A), in T's nearest values (hi) and the rest (lo), so that two products are as exact as
 * FP32 sums. Lane holds rows k, k + 1 of column n. */
template <typename T, int A>
static __device__ void diag_fragment16(const float (&m)[A][A], unsigned &hi, unsigned &lo)
{
    const int lane = threadIdx.x % 32, k = 2 * (lane % 4), n = lane / 4;
    float e[2];
    for (int j = 0; j < 2; j++)
        e[j] = (k + j) / A == n / A ? m[n % A][(k + j) % A] : 0.0f;
    hi = pack16<T>(e[0], e[1]);
    const float2 h = unpack16<T>(hi);
    lo = pack16<T>(e[0] - h.x, e[1] - h.y);
}

/* A 16 x 8 accumulator fragment (mma.sync's m16n8, also each 8 columns of wgmma's) at rows
 * row0 .., columns col0 .. of the row-major floats m (pitch floats a row). */
static __device__ __forceinline__ void fragment_to_shared(const float (&frag)[4], float *m,
                                                          int row0, int col0, int pitch)
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int row = row0 + lane / 4 + 8 * h, col = col0 + 2 * (lane % 4);
        *(float2 *)&m[row * pitch + col] = make_float2(frag[2 * h], frag[2 * h + 1]);
    }
}

#endif
