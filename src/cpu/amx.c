/* Linux gives a process the AMX tile data state only on request (arch_prctl
 * ARCH_REQ_XCOMP_PERM); without it the first tile instruction faults. The probe asks once per
 * process (pthread_once) and reports AMX unusable if CPUID, XCR0 or the request say no. */
#define _GNU_SOURCE
#include "cpu/amx.h"

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cpu/cpu_features.h"

#define ARCH_GET_XCOMP_PERM 0x1022
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int tiles_ok, int8_ok, bf16_ok;

static void probe(void)
{
    uint32_t r[4];
    unsigned long perm = 0;
    if (wino_cpuid_max_leaf() < 0xd)
        return;
    wino_cpuid(7, 0, r);
    if (!((r[3] >> 24) & 1u)) /* AMX-TILE */
        return;
    if ((wino_xcr0() & (3ull << 17)) != (3ull << 17)) /* XTILECFG, XTILEDATA */
        return;
    if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0)
        return;
    if (syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM, &perm) != 0)
        return;
    tiles_ok = (perm >> XFEATURE_XTILEDATA) & 1u;
    int8_ok = tiles_ok && ((r[3] >> 25) & 1u);
    bf16_ok = tiles_ok && ((r[3] >> 22) & 1u);
}

int wino_amx_int8_usable(void)
{
    return pthread_once(&probe_once, probe) == 0 && int8_ok;
}

int wino_amx_bf16_usable(void)
{
    return pthread_once(&probe_once, probe) == 0 && bf16_ok;
}

/* The ldtilecfg operand (64 bytes). */
struct tile_config {
    uint8_t palette, start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

/* ldtilecfg with the whole 64-byte operand as the asm input (GCC 12's _tile_loadconfig names
 * only its first 8 bytes, so the compiler could drop the stores that fill the rest). */
__attribute__((target("amx-tile"))) void wino_amx_tiles_16x64(void)
{
    struct tile_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) {
        cfg.colsb[t] = 64;
        cfg.rows[t] = 16;
    }
    __asm__ volatile("ldtilecfg %0" : : "m"(cfg));
}

#else /* no AMX: never used */

int wino_amx_int8_usable(void)
{
    return 0;
}

int wino_amx_bf16_usable(void)
{
    return 0;
}

void wino_amx_tiles_16x64(void)
{
}

#endif
