/* CPUID and the OS-enabled register state (XCR0), shared by the runtime ISA checks of the FP32
 * and INT8 GEMMs. Only on x86-64 with GCC or Clang (WINO_CPU_X86 defined); elsewhere every
 * check answers "scalar". */
#ifndef WINO_CPU_CPU_FEATURES_H
#define WINO_CPU_CPU_FEATURES_H

#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define WINO_CPU_X86 1

/* CPUID (leaf, subleaf) -> r[0..3] = eax, ebx, ecx, edx. */
void wino_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t r[4]);

/* XCR0 (the register state the OS saves), or 0 when the OS has not enabled XSAVE
 * (CPUID.1:ECX.OSXSAVE clear, where xgetbv would fault). */
uint64_t wino_xcr0(void);

/* The largest basic CPUID leaf. */
uint32_t wino_cpuid_max_leaf(void);
#endif

#endif
