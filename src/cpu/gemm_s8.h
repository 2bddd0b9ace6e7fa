/* Single-threaded INT8 GEMM for the INT8 Winograd element-wise stage (u8 x s8 -> s32, exact),
 * with runtime ISA dispatch (AMX-INT8 -> AVX512-VNNI -> AVX2 -> scalar).
 *
 *   C[i][j] = sum_p (A[i][p] - 128) * B[p][j]   for i < m, j < n, p < k, exactly, as int32.
 *
 * A: m x k uint8, the int8 operand stored offset by +128 (a_u8 = a_s8 + 128), row stride lda
 *    bytes; lda >= wino_s8_gemm_lda(k) and every row readable up to lda bytes (the bytes past k
 *    are ignored: they meet zero rows of packed B).
 * B: given once as k x n int8 row-major (row stride ldb) to wino_s8_gemm_pack_b, which lays it
 *    out for isa and stores the column sums that remove the +128 offset.
 * C: m x n int32, row stride ldc elements; overwritten (no accumulate).
 * m, n, k >= 1. The caller guarantees that no int32 overflows (k * 255 * 128 fits: k <= 65793)
 * and that isa <= wino_s8_isa(). The GEMM never allocates, locks or prints; scratch is 64-byte
 * aligned, at least wino_s8_gemm_scratch_bytes (NULL when that is 0).
 * Design and measured numbers: docs/cpu-gemm-int8.md. */
#ifndef WINO_CPU_GEMM_S8_H
#define WINO_CPU_GEMM_S8_H

#include <stddef.h>
#include <stdint.h>

enum wino_s8_isa { WINO_S8_SCALAR = 0, WINO_S8_AVX2 = 1, WINO_S8_VNNI = 2, WINO_S8_AMX = 3 };

/* The best ISA this CPU and OS support: AVX2 needs the OS's ymm state (wino_cpu_isa);
 * VNNI needs AVX-512 F/BW/VNNI and the OS's zmm state;
 * AMX also AMX-TILE/INT8, the OS's tile state and the Linux permission to use it (requested
 * once per process, on the first call). */
enum wino_s8_isa wino_s8_isa(void);
/* "scalar", "avx2", "avx512-vnni", "amx" ("unknown" otherwise). */
const char *wino_s8_isa_name(enum wino_s8_isa isa);

/* Smallest valid lda: k rounded up to 64 (one AMX tile row), the same for every ISA. */
size_t wino_s8_gemm_lda(int k);

/* Packed B: 64-byte aligned, wino_s8_gemm_packed_b_bytes bytes; pack with the isa that runs. */
size_t wino_s8_gemm_packed_b_bytes(enum wino_s8_isa isa, int k, int n);
void wino_s8_gemm_pack_b(enum wino_s8_isa isa, int k, int n, const int8_t *b, ptrdiff_t ldb,
                         void *packed);

/* Scratch for calls with at most m rows (and these n, k). */
size_t wino_s8_gemm_scratch_bytes(enum wino_s8_isa isa, int m, int n, int k);
void wino_s8_gemm(enum wino_s8_isa isa, int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                  const void *packed_b, int32_t *c, ptrdiff_t ldc, void *scratch);

/* Sets packed B's column sums to zero: its GEMMs then compute sum_p A[i][p] B[p][j], A read as
 * uint8 (a uint8 operand stored as itself), where they computed sum (A - 128) B. */
void wino_s8_gemm_unsigned_a(void *packed_b, int n);

/* What the caller does with rows of C once they are final: fn(ctx, i0, rows) for rows i0 ..
 * i0 + rows - 1, ranges in order, disjoint and covering 0 .. m - 1. */
struct wino_s8_rows_done {
    void (*fn)(void *ctx, int i0, int rows);
    void *ctx;
};

/* The same product with A read in 64-byte chunks from anywhere (an implicit im2col): bytes
 * 64 t .. 64 t + 63 of row i at a + i lda + chunk[t], t < ceil(k / 64); rows may overlap (lda
 * below k). Every chunk must be readable for 64 bytes, and with AMX for the 16 rows of its row
 * tile (rows up to m rounded up to 16: read, their products dropped). VNNI and AMX only
 * (isa >= WINO_S8_VNNI); scratch as for wino_s8_gemm. done (or NULL) is told of the finished
 * rows: with AMX after every 32 rows where all of packed B is at most 256 KiB (one pass over k,
 * one block of columns), so that the caller's epilogue reads them from L1; else once at the
 * end. */
void wino_s8_gemm_chunked(enum wino_s8_isa isa, int m, int n, int k, const uint8_t *a,
                          ptrdiff_t lda, const int32_t *chunk, const void *packed_b, int32_t *c,
                          ptrdiff_t ldc, void *scratch, const struct wino_s8_rows_done *done);

/* ---- internal: shared by gemm_s8.c and the per-ISA files ----------------------------------
 *
 * Packed B, with kp = wino_s8_gemm_lda(k) and np = ceil(n / 16) panels of 16 columns:
 *   int32 negsum[np * 16]          -128 * sum_p B[p][j] (0 past n): the initial accumulator
 * then, for scalar, VNNI and AMX, k quads:
 *   int8  panel[np][kp / 4][16][4] panel[jp][q][jj][t] = B[4q + t][16 jp + jj] (0 past k, n)
 * and for AVX2, whose exact products are 16-bit (vpmaddwd), k pairs:
 *   int8  panel[np][kp / 2][16][2] panel[jp][h][jj][t] = B[2h + t][16 jp + jj] (0 past k, n)
 * A quad panel is the "VNNI format": one k quad of 16 columns is one zmm for vpdpbusd, and 16
 * quads (64 k) of it are one AMX B tile (16 rows x 64 bytes, stride 64); one k pair of a pair
 * panel, sign-extended, is two ymm for vpmaddwd. */
enum { WINO_S8_KPAD = 64, WINO_S8_NPANEL = 16 };

static inline int wino_s8_panels(int n)
{
    return (n + WINO_S8_NPANEL - 1) / WINO_S8_NPANEL;
}
static inline const int32_t *wino_s8_negsum(const void *packed)
{
    return (const int32_t *)packed;
}
/* Panel jp of a packed B with kp = wino_s8_gemm_lda(k) bytes per column and np panels. */
static inline const int8_t *wino_s8_panel(const void *packed, int np, size_t kp, int jp)
{
    return (const int8_t *)packed + (size_t)np * WINO_S8_NPANEL * sizeof(int32_t) +
           (size_t)jp * kp * WINO_S8_NPANEL;
}

/* Per-ISA parts (AMX where wino_amx_int8_usable, cpu/amx.h, says so: see wino_s8_isa). */
size_t wino_s8_gemm_scratch_bytes__avx2(int m, int n, int k);
void wino_s8_gemm__avx2(int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                        const void *packed_b, int32_t *c, ptrdiff_t ldc, void *scratch);
void wino_s8_gemm__vnni(int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                        const void *packed_b, int32_t *c, ptrdiff_t ldc);
void wino_s8_gemm_chunked__vnni(int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                                const int32_t *chunk, const void *packed_b, int32_t *c,
                                ptrdiff_t ldc);
size_t wino_s8_gemm_scratch_bytes__amx(int m, int n, int k);
void wino_s8_gemm__amx(int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                       const void *packed_b, int32_t *c, ptrdiff_t ldc, void *scratch);
void wino_s8_gemm_chunked__amx(int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                               const int32_t *chunk, const void *packed_b, int32_t *c,
                               ptrdiff_t ldc, void *scratch, const struct wino_s8_rows_done *done);

#endif
