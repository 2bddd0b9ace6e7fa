/* Block sizes shared by the ISA GEMM files (included by them, not a public header). The includer
 * defines the constants NR (panel width) and KC (largest k block) first. */
#ifndef WINO_CPU_GEMM_F32_BLOCKS_H
#define WINO_CPU_GEMM_F32_BLOCKS_H

#include <stddef.h>

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

/* n rounded up to whole panels. */
static int npad(int n)
{
    return (n + NR - 1) / NR * NR;
}

#endif
