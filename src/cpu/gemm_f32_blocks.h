/* Block sizes shared by the ISA GEMM files (included by them, not a public header). The includer
 * defines the constants MR (micro-panel rows), NR (panel width) and KC (largest k block) first. */
#ifndef WINO_CPU_GEMM_F32_BLOCKS_H
#define WINO_CPU_GEMM_F32_BLOCKS_H

#include <stddef.h>
#include <string.h>

static size_t round64(size_t x)
{
    return (x + 63) & ~(size_t)63;
}

/* k is split into nearly equal blocks of at most KC. */
static int kc_step(int k)
{
    int nb = (k + KC - 1) / KC;
    if (nb < 1)
        nb = 1;
    return (k + nb - 1) / nb;
}

/* X(r) for every row count of a micro-panel kernel, up to 6 (AVX2's MR) or 14 (AVX-512's): the
 * ISA files instantiate one kernel per exact row count. */
#define WINO_ROW_COUNTS_6(X) X(1) X(2) X(3) X(4) X(5) X(6)
#define WINO_ROW_COUNTS_14(X) WINO_ROW_COUNTS_6(X) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14)

/* The m rows of A are cut into micro_panels(m) nearly equal micro-panels of at most MR rows
 * (m = 16 with MR = 14: 8 + 8), micro-panel pi having micro_panel_rows(m, np, pi) of them: each
 * runs the kernel of its exact row count, with no padded rows. */
static int micro_panels(int m)
{
    return (m + MR - 1) / MR;
}
static int micro_panel_rows(int m, int np, int pi)
{
    return m / np + (pi < m % np);
}

/* Row stride of the copy of an A micro-panel whose lda is a multiple of 1024 floats (its rows
 * would share L1 sets): kc + 16 floats, kc <= KC. */
#define A_LD(kc) ((kc) + 16)

/* mr x kc of A (row stride lda) -> the copy in ap (row stride A_LD(kc)). */
static void copy_a_panel(int mr, int kc, const float *a, ptrdiff_t lda, float *ap)
{
    for (int i = 0; i < mr; i++)
        memcpy(ap + (ptrdiff_t)i * A_LD(kc), a + (ptrdiff_t)i * lda, sizeof(float) * (size_t)kc);
}

/* n rounded up to whole panels. */
static int npad(int n)
{
    return (n + NR - 1) / NR * NR;
}

#endif
