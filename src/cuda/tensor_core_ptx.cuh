/* The PTX the tensor-core kernels share (winograd_fused_kernels.cu, winrs_fused_nhwc.cu):
 * asynchronous 16-byte copies into shared memory, fragment loads, and the warp-level products
 * mma.sync for FP16, BF16, TF32 (FP32 accumulators) and INT8 (INT32). */
#ifndef WINO_CUDA_TENSOR_CORE_PTX_CUH
#define WINO_CUDA_TENSOR_CORE_PTX_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

/* Copies 16 bytes from src to dst, of which the first `bytes` (0 or 16) are read and the rest
 * are zero; the copy is complete after cp_async_wait. */
static __device__ __forceinline__ void cp_async16(void *dst, const void *src, int bytes)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src),
                 "r"(bytes));
}
static __device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
/* Waits until at most PENDING of this thread's committed groups are still in flight. */
template <int PENDING> static __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
}
static __device__ __forceinline__ void cp_async_wait_all()
{
    cp_async_commit();
    cp_async_wait<0>();
}

/* Four 8 x 8 matrices of 16-bit elements (or 8 x 4 of 32-bit ones): lane l gives the address
 * of row l % 8 of matrix l / 8 (16 contiguous bytes); r[m] is lane's fragment of matrix m, its
 * row l / 4, 32-bit column l % 4. */
static __device__ __forceinline__ void ldmatrix_x4(unsigned r[4], const void *row)
{
    const unsigned a = (unsigned)__cvta_generic_to_shared(row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}
/* The same, transposed (16-bit elements): r[m] is lane's fragment of matrix m transposed. */
static __device__ __forceinline__ void ldmatrix_x4_trans(unsigned r[4], const void *row)
{
    const unsigned a = (unsigned)__cvta_generic_to_shared(row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}

/* One warp-level product D += A B on tensor cores: A 16 x K (row-major), B K x 8 (column-major),
 * K = 32 bytes of E; the fragments as PTX lays them out for row.col. */
template <typename E> struct mma_op;
/* FP16 and BF16: m16n8k16 with FP32 accumulators, PTX type TYPE. */
#define WINO_MMA_16BIT(E, TYPE)                                                                \
    template <> struct mma_op<E> {                                                             \
        typedef float acc_t;                                                                   \
        static __device__ __forceinline__ void run(float d[4], const unsigned a[4],            \
                                                   const unsigned b[2])                        \
        {                                                                                      \
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE                \
                         ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"       \
                         : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                      \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1])); \
        }                                                                                      \
    };
WINO_MMA_16BIT(__half, "f16")
WINO_MMA_16BIT(__nv_bfloat16, "bf16")
#undef WINO_MMA_16BIT
/* FP32 operands as TF32 (m16n8k8): the tensor cores read the top 19 bits of each (split_tf32). */
template <> struct mma_op<float> {
    typedef float acc_t;
    static __device__ __forceinline__ void run(float d[4], const unsigned a[4], const unsigned b[2])
    {
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
};
/* v as the sum of two TF32 values, hi nearest to v and lo nearest to the rest: their products
 * (hi hi' + hi lo' + lo hi', "3xTF32") are within about 2^-20 of the exact product, relatively.
 * Both are rounded to nearest, ties away (cvt.rna's rounding), by adding half a TF32 unit to the
 * bits: the tensor cores read only an operand's top 19 bits, so lo needs no cut, and v - hi is
 * exact. Four instructions, where two cvt.rna.tf32.f32 and the subtraction take nine. */
static __device__ __forceinline__ void split_tf32(float v, unsigned &hi, unsigned &lo)
{
    const unsigned half_unit = 0x1000u, cut = 0xffffe000u;
    hi = (__float_as_uint(v) + half_unit) & cut;
    lo = __float_as_uint(v - __uint_as_float(hi)) + half_unit;
}
template <> struct mma_op<int8_t> {
    typedef int acc_t;
    static __device__ __forceinline__ void run(int d[4], const unsigned a[4], const unsigned b[2])
    {
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
};

#endif
