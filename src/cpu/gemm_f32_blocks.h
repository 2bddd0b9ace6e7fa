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

/* n rounded up to whole panels. */
static int npad(int n)
{
    return (n + NR - 1) / NR * NR;
}

#endif
