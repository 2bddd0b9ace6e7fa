/* The PTX the tensor-core kernels share (winograd_fused_kernels.cu, winrs_fused_nhwc.cu):
 * asynchronous 16-byte copies into shared memory, fragment loads, the warp-level products
 * mma.sync for FP16, BF16, TF32 (FP32 accumulators) and INT8 (INT32), and in sm_90a code
 * Hopper's warpgroup products, mbarriers and register moves. */
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

/* Four 8 x 8 matrices of 16-bit elements into shared memory, transposed: the reverse of
 * ldmatrix_x4_trans, lane l giving the address of row l % 8 of matrix l / 8 as stored; r[m] is
 * lane's part of matrix m before the transpose, its row l / 4, 32-bit column l % 4 (an m16n8
 * accumulator fragment, packed to 16 bits). sm_90 (Hopper); before it, each lane stores its
 * elements where the rows' lanes point. */
static __device__ __forceinline__ void stmatrix_x4_trans(void *row, const unsigned r[4])
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const unsigned a = (unsigned)__cvta_generic_to_shared(row);
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(a),
                 "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
#else
    const int lane = threadIdx.x % 32;
    for (int m = 0; m < 4; m++)
        for (int e = 0; e < 2; e++) { /* element (lane / 4, 2 (lane % 4) + e) */
            const int j = 2 * (lane % 4) + e;
            char *at = (char *)__shfl_sync(0xffffffffu, (uintptr_t)row, 8 * m + j);
            *(unsigned short *)(at + 2 * (lane / 4)) = (unsigned short)(r[m] >> (16 * e));
        }
#endif
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
/* The same with K = 8 (m16n8k8): A 16 x 8 (two registers), B 8 x 8 (one). */
template <typename E> struct mma_k8;
#define WINO_MMA_K8(E, TYPE)                                                                   \
    template <> struct mma_k8<E> {                                                             \
        static __device__ __forceinline__ void run(float d[4], const unsigned a[2], unsigned b) \
        {                                                                                      \
            asm volatile("mma.sync.aligned.m16n8k8.row.col.f32." TYPE "." TYPE                 \
                         ".f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"                 \
                         : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                      \
                         : "r"(a[0]), "r"(a[1]), "r"(b));                                      \
        }                                                                                      \
    };
WINO_MMA_K8(__half, "f16")
WINO_MMA_K8(__nv_bfloat16, "bf16")
#undef WINO_MMA_K8
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

/* Hopper's warp specialization, which only sm_90a code has (WINO_WGMMA): warpgroup products
 * (wgmma), mbarriers between the warps that produce a step's operands and those that multiply
 * them, and setmaxnreg to move registers from the ones to the others. */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define WINO_WGMMA 1
/* The 128 threads of a warpgroup add A B to their FP32 fragments of D (64 x 64: warp w of the
 * group rows 16 w .. + 15, each 8 columns as mma.sync's m16n8 fragment), A (64 x 16) and B
 * (16 x 64) read from shared memory through descriptors, both with their 64 rows (A) or columns
 * (B) contiguous ("MN-major"). Asynchronous: wgmma_commit closes a group of products,
 * wgmma_wait waits for them; shared memory written by ordinary stores needs fence_proxy_async
 * (by the writers) before a product reads it. */
static __device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
static __device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int PENDING> static __device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
}
static __device__ __forceinline__ void fence_proxy_async()
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
/* Programmatic dependent launch: a kernel launched with programmatic stream serialization may
 * start once every block of the kernel before it has called grid_launch_dependents (or exited);
 * grid_dependency_wait waits until that kernel has finished and its writes are visible. */
static __device__ __forceinline__ void grid_launch_dependents()
{
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}
static __device__ __forceinline__ void grid_dependency_wait()
{
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
}
/* D += A B, m64n64k16: run with A and B MN-major (the transposes of wgmma's default K-major,
 * TRANS 1), run_k_major with both K-major (TRANS 0). */
template <typename E> struct wgmma_op;
#define WINO_WGMMA_16BIT(E, TYPE)                                                              \
    template <> struct wgmma_op<E> {                                                           \
        template <int TRANS>                                                                   \
        static __device__ __forceinline__ void product(float (&d)[32], uint64_t a, uint64_t b) \
        {                                                                                      \
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                            \
                         "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " "       \
                         "{%0, %1, %2, %3, %4, %5, %6, %7, "                                   \
                         "%8, %9, %10, %11, %12, %13, %14, %15, "                              \
                         "%16, %17, %18, %19, %20, %21, %22, %23, "                            \
                         "%24, %25, %26, %27, %28, %29, %30, %31}, "                           \
                         "%32, %33, p, 1, 1, %35, %35;\n}\n"                                   \
                         : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]),                     \
                           "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),                     \
                           "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),                   \
                           "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),                 \
                           "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),                 \
                           "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),                 \
                           "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),                 \
                           "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])                  \
                         : "l"(a), "l"(b), "r"(1), "n"(TRANS));                                \
        }                                                                                      \
        static __device__ __forceinline__ void run(float (&d)[32], uint64_t a, uint64_t b)     \
        {                                                                                      \
            product<1>(d, a, b);                                                               \
        }                                                                                      \
        static __device__ __forceinline__ void run_k_major(float (&d)[32], uint64_t a,         \
                                                           uint64_t b)                         \
        {                                                                                      \
            product<0>(d, a, b);                                                               \
        }                                                                                      \
    };
WINO_WGMMA_16BIT(__half, "f16")
WINO_WGMMA_16BIT(__nv_bfloat16, "bf16")
#undef WINO_WGMMA_16BIT

/* A K-major operand of 16 channels (8 x 8 blocks of 128 bytes; its rows: tiles or output
 * channels, 64 of V or U in winograd_rows.cu, 32 of U in winograd_rows_registers.cu) at shared
 * address a, for wgmma: channels 8 .. 15 128 bytes on ("leading"), the next 8 rows 256 bytes on
 * ("stride"). */
static __device__ __forceinline__ uint64_t k_major_descriptor(unsigned a)
{
    return (a & 0x3ffff) >> 4 | (uint64_t)(128 >> 4) << 16 | (uint64_t)(256 >> 4) << 32;
}

/* p's address in the shared space. Volatile, so that it is worked out once where it is written
 * and kept: ptxas otherwise works the address of dynamic shared memory out again at each use
 * (an S2R of the CTA's id in its cluster and two more instructions), five times a step in the
 * WinRS producers' loop. */
static __device__ __forceinline__ unsigned smem_address(const void *p)
{
    unsigned a;
    asm volatile("{\n.reg .u64 s;\ncvta.to.shared.u64 s, %1;\ncvt.u32.u64 %0, s;\n}\n"
                 : "=r"(a)
                 : "l"((uint64_t)p));
    return a;
}
/* v, opaque to the compiler from here on: a value worked out once before a loop stays in a
 * register instead of being worked out again from the thread's index at each pass. */
static __device__ __forceinline__ unsigned kept(unsigned v)
{
    asm volatile("" : "+r"(v));
    return v;
}
static __device__ __forceinline__ uint64_t kept(uint64_t v)
{
    asm volatile("" : "+l"(v));
    return v;
}
/* An mbarrier in shared memory that completes a phase when `count` threads have arrived. */
static __device__ __forceinline__ void mbarrier_init(uint64_t *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)),
                 "r"(count)
                 : "memory");
}
/* Arrives (release: this thread's earlier writes are seen by whoever waits for the phase) on
 * the mbarrier at shared address a (smem_address). */
static __device__ __forceinline__ void mbarrier_arrive(unsigned a)
{
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(a) : "memory");
}
/* Waits until the phase of the given parity (the k-th completion has parity k % 2) is done. */
static __device__ __forceinline__ void mbarrier_wait(unsigned a, unsigned parity)
{
    asm volatile("{\n.reg .pred done;\nwait_%=:\n"
                 "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra wait_%=;\n}\n" ::"r"(a),
                 "r"(parity)
                 : "memory");
}
/* Arrives and expects `bytes` more from asynchronous copies before the phase completes. */
static __device__ __forceinline__ void mbarrier_arrive_expect(unsigned a, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(a), "r"(bytes)
                 : "memory");
}
/* The tensor memory accelerator: the box of a 4D tensor (the CUtensorMap, a __grid_constant__
 * kernel parameter) at coordinates c0 (innermost) .. c3 into shared memory at shared address d,
 * elements outside the tensor zero; the bytes count on the mbarrier at b. */
static __device__ __forceinline__ void tma_load_4d(unsigned d, const void *map, int c0, int c1,
                                                   int c2, int c3, unsigned b)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(d),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(b)
                 : "memory");
}
/* `bytes` contiguous bytes (a multiple of 16, both addresses on 16-byte boundaries) from
 * global memory into shared memory at shared address d by the tensor memory accelerator; they
 * count on the mbarrier at b. */
static __device__ __forceinline__ void bulk_load(unsigned d, const void *src, unsigned bytes,
                                                 unsigned b)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1], %2, [%3];\n" ::"r"(d),
                 "l"(src), "r"(bytes), "r"(b)
                 : "memory");
}
/* Step s's place in a ring of N buffers and the parity of that buffer's use, (s % N, s / N % 2),
 * advanced a step at a time (worked out from s at each use, the divisions by 5 took a dozen
 * instructions a step in the WinRS producers' loop). */
template <int N> struct ring_place {
    int at = 0;
    unsigned parity = 0;
    __device__ __forceinline__ void advance()
    {
        if (++at == N)
            at = 0, parity ^= 1u;
    }
};

/* The warpgroup's registers a thread from here on (a multiple of 8): fewer gives them back to
 * the block, more waits until the block has them. */
template <int REGS> static __device__ __forceinline__ void registers_down()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS> static __device__ __forceinline__ void registers_up()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
#else
#define WINO_WGMMA 0
#endif

#endif
