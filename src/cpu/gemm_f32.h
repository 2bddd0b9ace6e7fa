/* Single-threaded row-major FP32 GEMM for the Winograd element-wise stage, with runtime ISA
 * dispatch (AVX-512 -> AVX2 -> scalar).
 *
 *   C = A B (accumulate = 0) or C += A B (accumulate = 1)
 *   A: m x k (row stride lda), B: k x n (row stride ldb), C: m x n (row stride ldc), all
 *   row-major with unit stride in the last dimension; strides in elements.
 *
 * m, n, k >= 0 (a zero size is a no-op, except that k == 0 with accumulate == 0 writes zeros).
 * The functions never allocate, lock or print; the caller passes a 64-byte aligned scratch buffer
 * of at least the queried size (NULL is allowed when the size is 0). isa must be <= wino_cpu_isa():
 * that is the caller's duty. Design and measured numbers: docs/cpu-gemm.md. */
#ifndef WINO_CPU_GEMM_F32_H
#define WINO_CPU_GEMM_F32_H

#include <stddef.h>

/* The vector ISAs, and for the packed GEMM only AMX_BF16: AVX-512 with AMX-BF16 tiles, as exact
 * as FP32 (src/cpu/gemm_f32_amx.c; the unpacked GEMM runs AVX-512 there). */
enum wino_isa {
    WINO_ISA_SCALAR = 0,
    WINO_ISA_AVX2 = 1,
    WINO_ISA_AVX512 = 2,
    WINO_ISA_AMX_BF16 = 3
};

/* The best ISA this CPU and OS support (CPUID via __builtin_cpu_supports, plus the OS's XSAVE
 * state: AVX needs ymm state enabled, AVX-512 also opmask and zmm state). */
enum wino_isa wino_cpu_isa(void);
/* The packed GEMM's best: AMX_BF16 where wino_cpu_isa() is AVX512 and the process may use
 * AMX-BF16 tiles (cpu/amx.h), else wino_cpu_isa(). */
enum wino_isa wino_f32_packed_gemm_isa(void);
/* About the bytes of a k x n B packed for isa (FP32, or three BF16 parts on AMX_BF16), in
 * double: planning asks for any k and n, where size_t sums could overflow. */
double wino_f32_gemm_packed_b_estimate(enum wino_isa isa, int k, int n);
/* The same for a B of k x n where AMX_BF16 pays: k >= 256 (its per-call costs, the split of A
 * and the C tiles' loads and stores, are shared by the depth) and its packed B at most 4 MiB
 * (1.5 times the FP32 bytes, read again for every block of rows); else wino_cpu_isa().
 * docs/cpu-gemm.md has the measurements. */
enum wino_isa wino_f32_packed_gemm_isa_for(int k, int n);
/* Rows of A the packed GEMM's kernel takes at once (14 for AVX-512; 32 for AMX_BF16, its 2 x 2
 * tiles, which also runs 16 alone): blocks of rows that are multiples of it leave no partial
 * micro-panels. */
int wino_f32_gemm_kernel_rows(enum wino_isa isa);
/* "scalar", "avx2", "avx512", "amx-bf16" ("unknown" otherwise). */
const char *wino_isa_name(enum wino_isa isa);

/* Bytes of scratch wino_f32_gemm needs for these sizes (0 allowed). */
size_t wino_f32_gemm_scratch_bytes(enum wino_isa isa, int m, int n, int k);
void wino_f32_gemm(enum wino_isa isa, int m, int n, int k, const float *a, ptrdiff_t lda,
                   const float *b, ptrdiff_t ldb, float *c, ptrdiff_t ldc, int accumulate,
                   void *scratch);

/* Pre-packed B (the constant operand of Winograd: the transformed filters). The packed layout
 * depends on isa (and on k and n): pack with the isa that will run, keep k and n.
 * packed: 64-byte aligned, at least wino_f32_gemm_packed_b_bytes(isa, k, n) bytes. */
size_t wino_f32_gemm_packed_b_bytes(enum wino_isa isa, int k, int n);
void wino_f32_gemm_pack_b(enum wino_isa isa, int k, int n, const float *b, ptrdiff_t ldb,
                          void *packed);
/* Same as wino_f32_gemm with B given packed; scratch: wino_f32_gemm_packed_scratch_bytes. */
size_t wino_f32_gemm_packed_scratch_bytes(enum wino_isa isa, int m, int n, int k);
void wino_f32_gemm_packed(enum wino_isa isa, int m, int n, int k, const float *a, ptrdiff_t lda,
                          const void *packed_b, float *c, ptrdiff_t ldc, int accumulate,
                          void *scratch);

/* Per-ISA entry points (same contracts; used by the dispatcher above). */
size_t wino_f32_gemm_scratch_bytes__avx512(int m, int n, int k);
void wino_f32_gemm__avx512(int m, int n, int k, const float *a, ptrdiff_t lda, const float *b,
                           ptrdiff_t ldb, float *c, ptrdiff_t ldc, int accumulate, void *scratch);
size_t wino_f32_gemm_packed_b_bytes__avx512(int k, int n);
void wino_f32_gemm_pack_b__avx512(int k, int n, const float *b, ptrdiff_t ldb, void *packed);
size_t wino_f32_gemm_packed_scratch_bytes__avx512(int m, int n, int k);
void wino_f32_gemm_packed__avx512(int m, int n, int k, const float *a, ptrdiff_t lda,
                                  const void *packed_b, float *c, ptrdiff_t ldc, int accumulate,
                                  void *scratch);

size_t wino_f32_gemm_scratch_bytes__avx2(int m, int n, int k);
void wino_f32_gemm__avx2(int m, int n, int k, const float *a, ptrdiff_t lda, const float *b,
                         ptrdiff_t ldb, float *c, ptrdiff_t ldc, int accumulate, void *scratch);
size_t wino_f32_gemm_packed_b_bytes__avx2(int k, int n);
void wino_f32_gemm_pack_b__avx2(int k, int n, const float *b, ptrdiff_t ldb, void *packed);
size_t wino_f32_gemm_packed_scratch_bytes__avx2(int m, int n, int k);
void wino_f32_gemm_packed__avx2(int m, int n, int k, const float *a, ptrdiff_t lda,
                                const void *packed_b, float *c, ptrdiff_t ldc, int accumulate,
                                void *scratch);

/* AMX-BF16, as exact as FP32 (src/cpu/gemm_f32_amx.c): only where wino_amx_bf16_usable
 * (cpu/amx.h) says yes. */
size_t wino_f32_gemm_packed_b_bytes__amx(int k, int n);
void wino_f32_gemm_pack_b__amx(int k, int n, const float *b, ptrdiff_t ldb, void *packed);
size_t wino_f32_gemm_packed_scratch_bytes__amx(int m, int n, int k);
void wino_f32_gemm_packed__amx(int m, int n, int k, const float *a, ptrdiff_t lda,
                               const void *packed_b, float *c, ptrdiff_t ldc, int accumulate,
                               void *scratch);
/* Operands split once for many AMX-BF16 GEMMs: A = at^T (at: k x m, rows ldat apart) into
 * wino_f32_amx_split_bytes(m, k) bytes (64-byte aligned); B packed as above. Then
 * C (m x n) = or += rows i0 .. i0 + m - 1 of A (split with a_rows rows; i0 a multiple of 16)
 * times columns j0 .. j0 + n - 1 of B (packed with b_cols columns; j0 a multiple of 32), over k;
 * edge: 4 KiB of 64-byte aligned scratch. */
size_t wino_f32_amx_split_bytes(int m, int k);
void wino_f32_amx_split_at(int m, int k, const float *at, ptrdiff_t ldat, void *split);
void wino_f32_amx_multiply(const void *split, int a_rows, int i0, int m, const void *packed_b,
                           int b_cols, int j0, int n, int k, float *c, ptrdiff_t ldc,
                           int accumulate, void *edge);

#endif
