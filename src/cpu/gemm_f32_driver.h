/* The loop nest around an ISA's microkernels, shared by the ISA GEMM files (included by them,
 * not a public header): the public entry points of src/cpu/gemm_f32.h for one ISA, named by the
 * includer's WINO_GEMM_NAME(f). The includer defines MR, NC, TGT and
 *   pack_b_block(kc, nc, b, ldb, dst): a kc x nc block of B into NR-column panels;
 *   macro(m, nc, kc, a, lda, bp, c, ldc, accumulate, ap): C (+)= A B for one packed block,
 * and includes gemm_f32_blocks.h. With WINO_GEMM_STUB defined instead (a compiler or CPU family
 * without these instructions) the entry points exist but are never dispatched to.
 *
 * Packed B layout: the k blocks (kc_step) in order; the block starting at row pc holds
 * npad(n) / NR panels of kc x NR floats, so it starts at float pc * npad(n) and its panel
 * j0 / NR at + j0 * kc. */

#ifndef WINO_GEMM_STUB

/* One A micro-panel of kc columns, with room for a row stride padded by 16 floats (the copy of a
 * micro-panel whose lda would alias in L1). */
static size_t a_scratch_bytes(int kc)
{
    return round64((size_t)MR * (size_t)A_LD(kc) * sizeof(float));
}

static void zero_c(int m, int n, float *c, ptrdiff_t ldc)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            c[(ptrdiff_t)i * ldc + j] = 0.0f;
}

size_t WINO_GEMM_NAME(wino_f32_gemm_scratch_bytes)(int m, int n, int k)
{
    (void)m;
    if (k <= 0 || n <= 0)
        return 0;
    const int kc = kc_step(k), nc = n < NC ? n : NC;
    return round64((size_t)kc * (size_t)npad(nc) * sizeof(float)) + a_scratch_bytes(kc);
}

TGT void WINO_GEMM_NAME(wino_f32_gemm)(int m, int n, int k, const float *a, ptrdiff_t lda,
                                       const float *b, ptrdiff_t ldb, float *c, ptrdiff_t ldc,
                                       int accumulate, void *scratch)
{
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        if (!accumulate)
            zero_c(m, n, c, ldc);
        return;
    }
    const int kstep = kc_step(k), ncmax = n < NC ? n : NC;
    float *bp = (float *)scratch;
    float *ap =
        (float *)((char *)scratch + round64((size_t)kstep * (size_t)npad(ncmax) * sizeof(float)));
    for (int jc = 0; jc < n; jc += NC) {
        const int nc = n - jc < NC ? n - jc : NC;
        for (int pc = 0; pc < k; pc += kstep) {
            const int kc = k - pc < kstep ? k - pc : kstep;
            pack_b_block(kc, nc, b + (ptrdiff_t)pc * ldb + jc, ldb, bp);
            macro(m, nc, kc, a + pc, lda, bp, c + jc, ldc, accumulate || pc > 0, ap);
        }
    }
}

size_t WINO_GEMM_NAME(wino_f32_gemm_packed_b_bytes)(int k, int n)
{
    if (k <= 0 || n <= 0)
        return 0;
    return (size_t)k * (size_t)npad(n) * sizeof(float);
}

TGT void WINO_GEMM_NAME(wino_f32_gemm_pack_b)(int k, int n, const float *b, ptrdiff_t ldb,
                                              void *packed)
{
    if (k <= 0 || n <= 0)
        return;
    const size_t np = (size_t)npad(n);
    const int kstep = kc_step(k);
    for (int pc = 0; pc < k; pc += kstep) {
        const int kc = k - pc < kstep ? k - pc : kstep;
        pack_b_block(kc, n, b + (ptrdiff_t)pc * ldb, ldb, (float *)packed + (size_t)pc * np);
    }
}

size_t WINO_GEMM_NAME(wino_f32_gemm_packed_scratch_bytes)(int m, int n, int k)
{
    (void)m;
    (void)n;
    if (k <= 0)
        return 0;
    return a_scratch_bytes(kc_step(k));
}

TGT void WINO_GEMM_NAME(wino_f32_gemm_packed)(int m, int n, int k, const float *a, ptrdiff_t lda,
                                              const void *packed_b, float *c, ptrdiff_t ldc,
                                              int accumulate, void *scratch)
{
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        if (!accumulate)
            zero_c(m, n, c, ldc);
        return;
    }
    const size_t np = (size_t)npad(n);
    const float *bpk = (const float *)packed_b;
    const int kstep = kc_step(k);
    for (int pc = 0; pc < k; pc += kstep) {
        const int kc = k - pc < kstep ? k - pc : kstep;
        const float *blk = bpk + (size_t)pc * np;
        for (int jc = 0; jc < n; jc += NC) {
            const int nc = n - jc < NC ? n - jc : NC;
            macro(m, nc, kc, a + pc, lda, blk + (size_t)jc * (size_t)kc, c + jc, ldc,
                  accumulate || pc > 0, (float *)scratch);
        }
    }
}

#else /* WINO_GEMM_STUB */

size_t WINO_GEMM_NAME(wino_f32_gemm_scratch_bytes)(int m, int n, int k)
{
    (void)m, (void)n, (void)k;
    return 0;
}
void WINO_GEMM_NAME(wino_f32_gemm)(int m, int n, int k, const float *a, ptrdiff_t lda,
                                   const float *b, ptrdiff_t ldb, float *c, ptrdiff_t ldc,
                                   int accumulate, void *scratch)
{
    (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc;
    (void)accumulate, (void)scratch;
}
size_t WINO_GEMM_NAME(wino_f32_gemm_packed_b_bytes)(int k, int n)
{
    (void)k, (void)n;
    return 0;
}
void WINO_GEMM_NAME(wino_f32_gemm_pack_b)(int k, int n, const float *b, ptrdiff_t ldb,
                                          void *packed)
{
    (void)k, (void)n, (void)b, (void)ldb, (void)packed;
}
size_t WINO_GEMM_NAME(wino_f32_gemm_packed_scratch_bytes)(int m, int n, int k)
{
    (void)m, (void)n, (void)k;
    return 0;
}
void WINO_GEMM_NAME(wino_f32_gemm_packed)(int m, int n, int k, const float *a, ptrdiff_t lda,
                                          const void *packed_b, float *c, ptrdiff_t ldc,
                                          int accumulate, void *scratch)
{
    (void)m, (void)n, (void)k, (void)a, (void)lda, (void)packed_b, (void)c, (void)ldc;
    (void)accumulate, (void)scratch;
}

#endif
