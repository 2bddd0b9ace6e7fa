/* INT8 GEMM, AMX-INT8: 2 x 2 blocks of 16 x 16 int32 C tiles over packed B (gemm_s8.h).
 *
 * Tiles (palette 1, all 16 rows x 64 bytes): tmm0-3 C (tmm0 + 2 r + c: row tile r, column tile
 * c), tmm4-5 A (16 rows x 64 bytes of k, loaded in place with stride lda), tmm6-7 B (16 k quads
 * of one 16-column panel, contiguous: stride 64). Per 64 k: 4 tile loads, 4 TDPBUSD (u8 x s8, as
 * vpdpbusd, so the same +128 compensation applies). The C tiles start from the packed
 * -128 * column sums, loaded with stride 0 (the same 64 bytes for all 16 rows), so full tiles
 * are stored straight into C. Edge tiles (rows past m, columns past n) go through a scratch
 * tile and masked AVX-512 stores; the last m % 16 rows of A are copied, zero padded, into
 * scratch so that no tile load reads past A.
 *
 * Loops: blocks of B columns (<= B_BLOCK_BYTES packed, stays in L2; all of B for k, n <= 512)
 *          passes over k (all of k, or PASS_TILES tiles where B is large: C carried in C)
 *            32-row blocks of A (32 x kp bytes, <= 16 KiB for k <= 512: stays in L1)
 *              32-column B pairs of the block, streamed from L2 (contiguous: prefetch friendly).
 * (Measured against the other order, A streamed past an L1-resident B pair: 0-20 % faster.)
 * Whether AMX may run: cpu/amx.h. */
#include "cpu/gemm_s8.h"

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)

#include <immintrin.h>
#include <string.h>

#include "cpu/amx.h"

#define TGT __attribute__((target("amx-tile,amx-int8,avx512f")))

#define B_BLOCK_BYTES (1024 * 1024)
/* Packed B between ONE_PASS_BYTES and B_BLOCK_BYTES is taken in passes of PASS_TILES k tiles,
 * C carried from pass to pass, so that every 32 rows read a pass of B from L1 rather than all
 * of B from L2; otherwise all of k at once. Measured on a Xeon with AMX, the implicit GEMMs of
 * ResNet-18 layers: 14 x 14 x 256 (590 KB of B) 60% -> 72% of the AMX peak on one core, and
 * the layer at batch 8 on 2 cores 0.292 -> 0.255 ms; 28 x 28 x 128 (147 KB) 74% in one pass,
 * 69% in passes; 7 x 7 x 512 (2.4 MB, blocks of columns) 0.87 -> 1.07 ms on one core. */
#define ONE_PASS_BYTES (256 * 1024)
#define PASS_TILES 12

size_t wino_s8_gemm_scratch_bytes__amx(int m, int n, int k)
{
    (void)m, (void)n;
    /* A tail (16 rows of kp bytes, used when m % 16 != 0) plus one C tile: enough for every
     * m, so one scratch serves the GEMMs of any row count. */
    return 16 * wino_s8_gemm_lda(k) + 16 * 16 * sizeof(int32_t);
}

/* One row tile (16 rows of A at a, stride as bytes) or two (rows 16.. at a2, stride as2), times
 * one or two column tiles, over k tiles kk0 .. kk1 - 1 of 64 k (tile kk of A at + chunk[kk], or
 * + 64 kk where chunk is NULL; of B at b + 1024 kk); C tiles tmm0-3 start from the column sums
 * at negsum, or (negsum NULL) hold what the caller loaded. mt and nt are constants in every
 * instance. */
TGT static inline __attribute__((always_inline)) void
block(const int mt, const int nt, int kk0, int kk1, const uint8_t *a, size_t as,
      const uint8_t *a2, size_t as2, const int32_t *chunk, const int8_t *b, size_t bs,
      const int32_t *negsum)
{
    int kk;
    if (negsum) {
        _tile_loadd(0, negsum, 0);
        if (nt == 2)
            _tile_loadd(1, negsum + 16, 0);
        if (mt == 2) {
            _tile_loadd(2, negsum, 0);
            if (nt == 2)
                _tile_loadd(3, negsum + 16, 0);
        }
    }
    for (kk = kk0, b += 1024 * (ptrdiff_t)kk0; kk < kk1; kk++, b += 1024) {
        const ptrdiff_t at = chunk ? chunk[kk] : 64 * (ptrdiff_t)kk;
        _tile_loadd(4, a + at, as);
        _tile_loadd(6, b, 64);
        _tile_dpbusd(0, 4, 6);
        if (nt == 2) {
            _tile_loadd(7, b + bs, 64);
            _tile_dpbusd(1, 4, 7);
        }
        if (mt == 2) {
            _tile_loadd(5, a2 + at, as2);
            _tile_dpbusd(2, 5, 6);
            if (nt == 2)
                _tile_dpbusd(3, 5, 7);
        }
    }
}

/* Writes C tile t (rows: how many of its 16 rows exist, w: columns) to c. */
#define STORE_TILE(t, c, ldc, rows, w, tmp)                                                        \
    do {                                                                                           \
        if ((rows) == 16 && (w) == 16) {                                                           \
            _tile_stored(t, c, (ldc) * (ptrdiff_t)sizeof(int32_t));                                \
        } else {                                                                                   \
            _tile_stored(t, tmp, 64);                                                              \
            copy_rows(tmp, c, ldc, rows, w);                                                       \
        }                                                                                          \
    } while (0)

/* Loads C tile t from c, what an earlier pass over k stored there (the same edges). The copy
 * into tmp must stay before the load: GCC 12's tileloadd asm declares no memory input. */
#define LOAD_TILE(t, c, ldc, rows, w, tmp)                                                         \
    do {                                                                                           \
        if ((rows) == 16 && (w) == 16) {                                                           \
            _tile_loadd(t, c, (ldc) * (ptrdiff_t)sizeof(int32_t));                                 \
        } else {                                                                                   \
            copy_in(c, ldc, rows, w, tmp);                                                         \
            __asm__ volatile("" : : : "memory");                                                   \
            _tile_loadd(t, tmp, 64);                                                               \
            __asm__ volatile("" : : : "memory");                                                   \
        }                                                                                          \
    } while (0)

TGT static void copy_rows(const int32_t *tmp, int32_t *c, ptrdiff_t ldc, int rows, int w)
{
    const __mmask16 mask = (__mmask16)(0xffffu >> (16 - w));
    int r;
    for (r = 0; r < rows; r++)
        _mm512_mask_storeu_epi32(c + (ptrdiff_t)r * ldc, mask, _mm512_load_si512(tmp + 16 * r));
}

TGT static void copy_in(const int32_t *c, ptrdiff_t ldc, int rows, int w, int32_t *tmp)
{
    const __mmask16 mask = (__mmask16)(0xffffu >> (16 - w));
    for (int r = 0; r < 16; r++)
        _mm512_store_si512(tmp + 16 * r, r < rows ? _mm512_maskz_loadu_epi32(
                                                        mask, c + (ptrdiff_t)r * ldc)
                                                  : _mm512_setzero_si512());
}

/* What one GEMM call works on: A (rows past mfull from atail), packed B, C. */
struct operands {
    int m, n, np, mfull;
    const uint8_t *a, *atail;
    ptrdiff_t lda, ldc;
    size_t kp, bs;
    const int32_t *chunk, *negsum;
    const void *packed_b;
    int32_t *c, *tmp;
    const struct wino_s8_rows_done *done; /* told after each 32 rows, or NULL */
};

/* OP(t, c, rows, w) for the block's C tiles that exist: row tile r, column tile c in
 * tmm0 + 2 r + c (in pass_of_rows, with its ci, ci1, r0, r1, w0, w1, nt, ldc and tmp). */
#define EACH_C_TILE(OP)                                                                            \
    do {                                                                                           \
        OP(0, ci, r0, w0);                                                                         \
        if (nt == 2)                                                                               \
            OP(1, ci + 16, r0, w1);                                                                \
        if (r1 > 0) {                                                                              \
            OP(2, ci1, r1, w0);                                                                    \
            if (nt == 2)                                                                           \
                OP(3, ci1 + 16, r1, w1);                                                           \
        }                                                                                          \
    } while (0)
#define LOAD_C(t, c, rows, w) LOAD_TILE(t, c, ldc, rows, w, tmp)
#define STORE_C(t, c, rows, w) STORE_TILE(t, c, ldc, rows, w, tmp)

/* k tiles kk0 .. kk1 - 1 of B's panels jb .. jend - 1 for all rows: C starts from the column
 * sums where kk0 is 0, else from what the last pass stored in C. */
TGT static inline __attribute__((always_inline)) void pass_of_rows(const struct operands *o,
                                                                   int jb, int jend, int kk0,
                                                                   int kk1)
{
    const ptrdiff_t ldc = o->ldc;
    int32_t *tmp = o->tmp;
    for (int i = 0; i < o->m; i += 32) {
        /* Row tile r reads A in place when its 16 rows exist, else the padded copy. */
        const uint8_t *a0 = i < o->mfull ? o->a + (ptrdiff_t)i * o->lda : o->atail;
        const uint8_t *a1 = i + 16 < o->mfull ? o->a + (ptrdiff_t)(i + 16) * o->lda : o->atail;
        const size_t as0 = i < o->mfull ? (size_t)o->lda : o->kp;
        const size_t as1 = i + 16 < o->mfull ? (size_t)o->lda : o->kp;
        const int r0 = o->m - i < 16 ? o->m - i : 16;
        const int r1 = o->m - i - 16 < 16 ? o->m - i - 16 : 16; /* <= 0: one row tile */
        for (int jp = jb; jp < jend; jp += 2) {
            const int nt = jend - jp < 2 ? 1 : 2, j0 = jp * WINO_S8_NPANEL;
            const int w0 = o->n - j0 < 16 ? o->n - j0 : 16;
            const int w1 = o->n - j0 - 16 < 16 ? o->n - j0 - 16 : 16; /* used when nt == 2 */
            const int8_t *b = wino_s8_panel(o->packed_b, o->np, o->kp, jp);
            int32_t *ci = o->c + (ptrdiff_t)i * ldc + j0, *ci1 = ci + 16 * ldc;
            /* the first pass starts from the packed -128 column sums */
            const int32_t *ns = kk0 == 0 ? o->negsum + j0 : NULL;
            if (kk0 > 0)
                EACH_C_TILE(LOAD_C);
            if (r1 > 0 && nt == 2)
                block(2, 2, kk0, kk1, a0, as0, a1, as1, o->chunk, b, o->bs, ns);
            else if (r1 > 0)
                block(2, 1, kk0, kk1, a0, as0, a1, as1, o->chunk, b, o->bs, ns);
            else if (nt == 2)
                block(1, 2, kk0, kk1, a0, as0, a1, as1, o->chunk, b, o->bs, ns);
            else
                block(1, 1, kk0, kk1, a0, as0, a1, as1, o->chunk, b, o->bs, ns);
            EACH_C_TILE(STORE_C);
        }
        if (o->done)
            o->done->fn(o->done->ctx, i, o->m - i < 32 ? o->m - i : 32);
    }
}
#undef STORE_C
#undef LOAD_C
#undef EACH_C_TILE

/* The GEMM of wino_s8_gemm__amx (chunk NULL: rows of A past the last full row tile copied,
 * zero padded, into scratch) and of wino_s8_gemm_chunked__amx (every row tile read in place). */
TGT static void gemm(int m, int n, int k, const uint8_t *a, ptrdiff_t lda, const int32_t *chunk,
                     const void *packed_b, int32_t *c, ptrdiff_t ldc, void *scratch,
                     const struct wino_s8_rows_done *done)
{
    const int np = wino_s8_panels(n), kt = (k + 63) / 64;
    const size_t kp = wino_s8_gemm_lda(k), bs = kp * WINO_S8_NPANEL, b_bytes = (size_t)np * bs;
    /* k tiles a pass, and panels a block (even) of B's pass within B_BLOCK_BYTES */
    const int pass = b_bytes > ONE_PASS_BYTES && b_bytes <= B_BLOCK_BYTES ? PASS_TILES : kt;
    int npb = (int)(B_BLOCK_BYTES / ((size_t)(pass < kt ? pass : kt) * 1024)) / 2 * 2;
    struct operands o = {m, n, np, chunk ? (m + 15) / 16 * 16 : m / 16 * 16, a,
                         (uint8_t *)scratch + 16 * 16 * sizeof(int32_t), lda, ldc, kp, bs,
                         chunk, wino_s8_negsum(packed_b), packed_b, c, (int32_t *)scratch,
                         NULL};
    if (npb < 2)
        npb = 2;
    if (o.mfull < m) {
        uint8_t *atail = (uint8_t *)o.atail;
        for (int i = 0; i < 16; i++) {
            if (o.mfull + i < m)
                memcpy(atail + (size_t)i * kp, a + (ptrdiff_t)(o.mfull + i) * lda, kp);
            else
                memset(atail + (size_t)i * kp, 0, kp);
        }
        /* GCC 12's tileloadd asm declares no memory input: keep the copy before the loads. */
        __asm__ volatile("" : : : "memory");
    }
    wino_amx_tiles_16x64();

    if (npb >= np && pass >= kt) { /* one pass, one block: the rows are final as they go */
        o.done = done;
        pass_of_rows(&o, 0, np, 0, kt);
    } else {
        for (int jb = 0; jb < np; jb += npb)
            for (int kk0 = 0; kk0 < kt; kk0 += pass)
                pass_of_rows(&o, jb, np - jb < npb ? np : jb + npb, kk0,
                             kt - kk0 < pass ? kt : kk0 + pass);
        if (done)
            done->fn(done->ctx, 0, m);
    }
    _tile_release();
}

TGT void wino_s8_gemm__amx(int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                           const void *packed_b, int32_t *c, ptrdiff_t ldc, void *scratch)
{
    gemm(m, n, k, a, lda, NULL, packed_b, c, ldc, scratch, NULL);
}

TGT void wino_s8_gemm_chunked__amx(int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                                   const int32_t *chunk, const void *packed_b, int32_t *c,
                                   ptrdiff_t ldc, void *scratch,
                                   const struct wino_s8_rows_done *done)
{
    gemm(m, n, k, a, lda, chunk, packed_b, c, ldc, scratch, done);
}

#else /* no AMX build or not Linux: never dispatched to (wino_amx_int8_usable says no) */

size_t wino_s8_gemm_scratch_bytes__amx(int m, int n, int k)
{
    (void)m, (void)n, (void)k;
    return 0;
}

void wino_s8_gemm__amx(int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                       const void *packed_b, int32_t *c, ptrdiff_t ldc, void *scratch)
{
    (void)m, (void)n, (void)k, (void)a, (void)lda, (void)packed_b, (void)c, (void)ldc,
        (void)scratch;
}

void wino_s8_gemm_chunked__amx(int m, int n, int k, const uint8_t *a, ptrdiff_t lda,
                               const int32_t *chunk, const void *packed_b, int32_t *c,
                               ptrdiff_t ldc, void *scratch, const struct wino_s8_rows_done *done)
{
    (void)m, (void)n, (void)k, (void)a, (void)lda, (void)chunk, (void)packed_b, (void)c,
        (void)ldc, (void)scratch, (void)done;
}

#endif
