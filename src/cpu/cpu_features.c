#include "cpu/cpu_features.h"

#ifdef WINO_CPU_X86

void wino_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t r[4])
{
    uint32_t a = leaf, b, c = subleaf, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    r[0] = a;
    r[1] = b;
    r[2] = c;
    r[3] = d;
}

uint32_t wino_cpuid_max_leaf(void)
{
    uint32_t r[4];
    wino_cpuid(0, 0, r);
    return r[0];
}

uint64_t wino_xcr0(void)
{
    uint32_t r[4], lo, hi;
    wino_cpuid(1, 0, r);
    if (!((r[2] >> 27) & 1u)) /* OSXSAVE */
        return 0;
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0)); /* xgetbv(0) */
    return ((uint64_t)hi << 32) | lo;
}

#else
typedef int wino_cpu_features_unused; /* ISO C wants a declaration in every file */
#endif
